"""The factorised-embeddings explorer: moving a slider changes the plotted numbers as the formulas say."""

import numpy as np
import pytest
from figure_checks import boxes, count, layout_problems, numbers, scrubber_frames

from geron_lib import count_parameters
from geron_lib.notebook.widgets.embeddings import albert_style, embedding_explorer


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
    assert len(scrubber_frames(page)) == 4


@pytest.mark.parametrize("kwargs, error", [
    (dict(E=100), ValueError), (dict(E=1024), ValueError), (dict(V=12345), ValueError),
    (dict(H=700), ValueError), (dict(E="big"), TypeError), (dict(E=512, H=256), ValueError)])
def test_embedding_explorer_refuses(kwargs, error):
    with pytest.raises(error, match="|".join(kwargs)):
        embedding_explorer(**kwargs)


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
