"""The two ALBERT explorers: moving a slider changes the plotted numbers as the formulas say."""

import numpy as np
import pytest
from figure_checks import arrows, boxes, count, layout_problems, numbers, scrubber_frames

from geron_lib import count_parameters
from geron_lib.costs.params import stored_copies
from geron_lib.notebook.widgets.embeddings import albert_style, embedding_explorer
from geron_lib.notebook.widgets.sharing import DEPTHS, TIMING_CONFIG, measure_timings, sharing_explorer


@pytest.fixture(scope="module")
def emb():
    return embedding_explorer()


def test_embedding_explorer_follows_the_formulas(emb):
    d = emb.set(E=128, V=30000, H=768)
    assert d["direct"] == 30000 * 768 and d["factorised"] == 30000 * 128 + 128 * 768 + 768
    up = emb.set(E=256)
    assert up["factorised"] - d["factorised"] == 128 * (30000 + 768)  # each unit of E costs V + H
    assert up["direct"] == d["direct"] and up["break_even"] == d["break_even"]
    assert up["model_factorised"] - d["model_factorised"] == 128 * (30000 + 512 + 2 + 2 + 768)
    bigger_v = emb.set(V=50265)
    assert bigger_v["direct"] - up["direct"] == (50265 - 30000) * 768
    assert bigger_v["factorised"] - up["factorised"] == (50265 - 30000) * 256
    assert bigger_v["break_even"] == pytest.approx(768 * 50264 / (50265 + 768))
    wide = emb.set(H=4096)
    assert wide["model_direct"] == count_parameters(albert_style(50265, 4096, None)).total
    assert wide["model_factorised"] == count_parameters(albert_style(50265, 4096, 256)).total


def test_embedding_explorer_draws_its_numbers(emb):
    d = emb.set(E=512, V=1000, H=768)
    left, right, _diagram = emb.fig.axes
    curve, direct, breakeven, marker = left.lines
    assert marker.get_ydata()[0] == pytest.approx(d["factorised"] / 1e6)
    assert direct.get_ydata()[0] == pytest.approx(d["direct"] / 1e6)
    assert breakeven.get_xdata()[0] == pytest.approx(d["break_even"])
    assert d["factorised"] > d["direct"]  # V = 1000 is small: E = 512 is past the break-even
    assert right.lines[-1].get_ydata()[0] == pytest.approx(d["model_factorised"] / 1e6)
    assert max(left.get_ylim()) > max(curve.get_ydata())  # limits follow the data


@pytest.mark.parametrize("V, H", [(1000, 768), (30000, 256), (250000, 4096)])
def test_factorised_curves_keep_the_projection_up_to_E_equals_H(emb, V, H):
    d = emb.set(V=V, H=H, E=H)
    left, right, _diagram = emb.fig.axes
    x, y = left.lines[0].get_data()
    assert x[0] == 1 and x[-1] == H
    np.testing.assert_allclose(y, (V * x + x * H + H) / 1e6)  # V E + E H + H everywhere, E = H too
    assert d["factorised"] - d["direct"] == H * H + H  # at E = H the projection is all that differs
    assert d["model_factorised"] - d["model_direct"] == H * H + H
    assert right.lines[0].get_ydata()[-1] == pytest.approx(d["model_factorised"] / 1e6)
    assert left.lines[1].get_ydata()[0] == pytest.approx(V * H / 1e6)  # the direct table, its own line


def test_E_slider_maximum_follows_H_and_E_above_H_is_refused():
    emb = embedding_explorer(E=512)
    E = emb.controls["E"]
    assert E.max == 768
    d = emb.set(H=256)  # E moves down to the new maximum, on the slider itself
    assert E.max == 256 and E.value == 256 and d["E"] == 256
    assert d["factorised"] == 30000 * 256 + 256 * 256 + 256
    with pytest.raises(ValueError, match="E must be at most H = 256"):
        emb.set(E=512)
    assert E.value == 256 and emb.data["E"] == 256  # refused, nothing changed
    emb.set(H=4096, E=2048)
    assert E.max == 4096 and emb.data["E"] == 2048
    with pytest.raises(ValueError, match=r"E \(1024\) must be at most H \(768\)"):
        emb.scrubber("t", E=[128, 1024], H=[768])  # the scrubber draws through the same check
    page = emb.scrubber("t", E=[64, 128], H=[256, 768]).data
    assert page.count('class="geron-scrub-frame"') == 4


@pytest.mark.parametrize("kwargs, error", [
    (dict(E=100), ValueError), (dict(E=1024), ValueError), (dict(V=12345), ValueError),
    (dict(H=700), ValueError), (dict(E="big"), TypeError), (dict(E=512, H=256), ValueError)])
def test_embedding_explorer_refuses(kwargs, error):
    with pytest.raises(error, match="|".join(kwargs)):
        embedding_explorer(**kwargs)


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


def test_embedding_explorer_draws_the_embedding_path_below(emb):
    d = emb.set(E=128, V=30000, H=768)
    assert count(emb.fig, "token_table") == 30000 * 128
    assert count(emb.fig, "token_table") + count(emb.fig, "W_P") == d["factorised"]  # V E + (E H + H)
    assert count(emb.fig, "embeddings") == count_parameters(albert_style(30000, 768, 128)).embeddings
    assert len(boxes(emb.fig, "W_P")) == 1
    d = emb.set(E=768)  # E = H: the factorised table keeps its projection
    assert len(boxes(emb.fig, "W_P")) == 1 and count(emb.fig, "W_P") == 768 * 768 + 768
    assert count(emb.fig, "token_table") + count(emb.fig, "W_P") == d["factorised"]
    emb.set(H=256)  # E follows H down
    assert numbers(emb.fig, "detail-token_table") == [30000, 256]
    for E, V, H in ((16, 250000, 4096), (1024, 1000, 4096), (16, 1000, 256), (512, 128000, 2048)):
        emb.set(H=H, E=E, V=V)
        assert layout_problems(emb.fig) == [], (E, V, H)
    emb.set(E=128, V=30000, H=768)
    narrow, wide = scrubber_frames(emb.scrubber("t", E=[128, 768]).data)
    bottom = slice(int(0.6 * narrow.shape[0]), None)  # the diagram panel
    assert not np.array_equal(narrow[bottom], wide[bottom])


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
