"""The cross-layer sharing explorer: moving a slider changes the plotted numbers as the formulas say."""

import numpy as np
import pytest
from figure_checks import arrows, boxes, count, layout_problems, scrubber_frames

from geron_lib import count_parameters
from geron_lib.costs.params import stored_copies
from geron_lib.notebook.widgets.embeddings import albert_style
from geron_lib.notebook.widgets.sharing import DEPTHS, TIMING_CONFIG, measure_timings, sharing_explorer


def _fake_timings():
    # counting parts are tested exactly; the time panel gets made-up, linear "measurements"
    seconds = {m: np.array(DEPTHS) * 1e-3 * k for k, m in enumerate(("none", "all", "attention", "ffn"), 1)}
    return {"depths": DEPTHS, "seconds": seconds, "config": TIMING_CONFIG, "seq_len": 8}


def test_sharing_explorer_follows_the_formulas():
    e = sharing_explorer(_fake_timings())
    at12 = e.set(L=12, H=768, sharing="all")
    at24 = e.set(L=24)
    assert at24["params"]["all"] == at12["params"]["all"]  # depth costs no parameters when all shared
    c = count_parameters(albert_style(30000, 768, 128))
    ln = 2 * 768
    for mode, per_layer in (("none", c.attention_per_layer + c.ffn_per_layer + 2 * ln),
                            ("attention", c.ffn_per_layer + ln), ("ffn", c.attention_per_layer + ln)):
        assert at24["params"][mode] - at12["params"][mode] == 12 * per_layer == 12 * at24["per_layer"][mode]
    assert at24["seconds"] == pytest.approx(24e-3 * 2)  # the 'all' curve of the fake timings
    ffn = e.set(sharing="ffn")
    assert ffn["seconds"] == pytest.approx(24e-3 * 4)
    left, right, _diagram = e.fig.axes
    assert left.lines[-1].get_ydata()[0] == pytest.approx(ffn["params"]["ffn"] / 1e6)
    assert [line.get_linewidth() for line in left.lines[:4]] == [1.2, 1.2, 1.2, 3]
    wide = e.set(H=4096)
    assert wide["params"]["all"] == count_parameters(albert_style(30000, 4096, 128)).total


def test_measured_timings_have_the_right_shape():
    # their shape only: that each depth times a forward through that many layers is counted, not timed, in
    # tests/studies/test_depth.py (no test's verdict depends on the machine's speed)
    small = TIMING_CONFIG.replace(hidden_size=16, intermediate_size=32, num_attention_heads=2)
    t = measure_timings(small, seq_len=4, repeats=1)
    assert set(t["seconds"]) == {"none", "all", "attention", "ffn"}
    assert all(s.shape == (len(DEPTHS),) and np.all(s > 0) for s in t["seconds"].values())
    assert t["depths"] == DEPTHS and t["config"] == small and t["seq_len"] == 4


@pytest.mark.parametrize("kwargs, match", [
    (dict(L=5), "L must be one of"), (dict(H=100), "H must be one of"), (dict(sharing="some"), "sharing"),
    (dict(timings={"depths": (1, 2)}), "timings")])
def test_sharing_explorer_refuses(kwargs, match):
    kwargs.setdefault("timings", _fake_timings())
    with pytest.raises(ValueError, match=match):
        sharing_explorer(**kwargs)


def test_sharing_explorer_draws_the_stack_below():
    e = sharing_explorer(_fake_timings())
    for L, H, sharing in ((24, 768, "none"), (24, 4096, "all"), (1, 256, "attention"), (8, 2048, "ffn")):
        d = e.set(L=L, H=H, sharing=sharing)
        config = albert_style(30000, H, 128).replace(num_hidden_layers=L, sharing=sharing)
        c = count_parameters(config)
        assert len(arrows(e.fig, "attention")) == len(arrows(e.fig, "ffn")) == len(boxes(e.fig, "layer")) == L
        assert (len(boxes(e.fig, "attention")), len(boxes(e.fig, "ffn"))) == stored_copies(config)
        assert count(e.fig, "encoder") == c.encoder == d["params"][sharing] - c.embeddings
        assert layout_problems(e.fig) == [], (L, H, sharing)
    frames = scrubber_frames(e.scrubber("s", sharing=["all", "none"]).data)
    bottom = slice(int(0.6 * frames[0].shape[0]), None)
    assert not np.array_equal(frames[0][bottom], frames[1][bottom])
