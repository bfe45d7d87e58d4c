"""The output-projection chapter's explorer: the counts it plots, the head counts it offers, its frames."""

import numpy as np
import pytest
from figure_checks import boxes, count, layout_problems, scrubber_frames

from geron_lib.costs.params import attention_params
from geron_lib.notebook.widgets.attention import head_counts, heads_explorer


def test_explorer_offers_only_divisible_pairs():
    e = heads_explorer()
    assert e.data["concat"] == attention_params(768, 12, "concat")
    assert e.data["sum"] == attention_params(768, 12, "sum")
    assert e.data["ratio"] == e.data["sum"] / e.data["concat"]
    assert list(e.controls["h"].options) == head_counts(768)
    assert head_counts(768) == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
    seen = []
    e.controls["h"].observe(lambda _: seen.append(e.values), names="value")
    e.set(H=1024)  # 12 does not divide 1024: h moves to the nearest divisor
    assert e.values["h"] in (8, 16) and 1024 % e.values["h"] == 0
    assert all(v["H"] % v["h"] == 0 for v in seen)
    assert list(e.controls["h"].options) == [1, 2, 4, 8, 16, 32, 64]
    e.set(H=96, h=3)
    assert e.data["sum"] == attention_params(96, 3, "sum")
    assert e.data["heads"] == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48]
    bars = e.fig.axes[0].containers
    assert sum(rect.get_height() for c in bars for rect in c[:1]) * 1e6 == pytest.approx(e.data["concat"])
    with pytest.raises(ValueError, match="h must divide H"):
        heads_explorer(768, 5)
    with pytest.raises(TypeError, match="h must be an integer"):
        heads_explorer(768, True)


def test_explorer_scrubber_frames():
    e = heads_explorer(384, 4)
    page = e.scrubber("heads", H=[192, 384], h=[1, 4, 12]).data
    assert len(scrubber_frames(page)) == 6
    assert e.values == {"H": 384, "h": 4}


def test_explorer_draws_both_forms_head_by_head_below():
    e = heads_explorer()
    for H, h in ((768, 12), (2048, 64), (32, 1), (32, 32), (384, 3), (1024, 16)):
        e.set(H=H)
        e.set(h=h)
        assert e.values == {"H": H, "h": h}
        assert len(boxes(e.fig, "W_V_head")) == len(boxes(e.fig, "W_O_head")) == h
        assert count(e.fig, "concat") == e.data["concat"] and count(e.fig, "sum") == e.data["sum"]
        assert layout_problems(e.fig) == [], (H, h)
    e.set(H=768)
    e.set(h=12)
    frames = scrubber_frames(e.scrubber("heads", h=[4, 12]).data)
    bottom = slice(int(0.6 * frames[0].shape[0]), None)  # the diagram panel
    assert not np.array_equal(frames[0][bottom], frames[1][bottom])
