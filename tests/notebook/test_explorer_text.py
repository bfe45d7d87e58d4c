"""Every explorer of the book, built as its notebook builds it, shows every text of its figure (tick labels,
legends and titles included) at 11 px or more in the book's column, at its first setting and at the corners
of the grid its notebook's scrubber pre-draws, and with no layout problem."""

import itertools

import matplotlib.text
import numpy as np
import pytest
from figure_checks import MIN_PX, layout_problems, shown_px

from geron_lib.notebook.explorer import PNG_DPI
from geron_lib.notebook.widgets.attention import heads_explorer
from geron_lib.notebook.widgets.budget import budget_explorer
from geron_lib.notebook.widgets.embeddings import embedding_explorer
from geron_lib.notebook.widgets.masking import masking_explorer
from geron_lib.notebook.widgets.sharing import DEPTHS, SHARING, TIMING_CONFIG, sharing_explorer

# made-up times of the shape measure_timings() returns: the notebook measures them, which a text check
# does not need
TIMINGS = {"depths": DEPTHS, "seconds": {m: np.array(DEPTHS) * 1e-3 * k for k, m in enumerate(SHARING, 1)},
           "config": TIMING_CONFIG, "seq_len": 64}
# (build as the notebook does, the grid of the notebook's scrubber)
BOOK = {
    "01 embedding_explorer()": (embedding_explorer, dict(E=[32, 768], V=[1000, 250000], H=[768, 2048])),
    "02 sharing_explorer(timings)": (lambda: sharing_explorer(TIMINGS),
                                     dict(L=[1, 24], sharing=["all", "none"])),
    "03 heads_explorer(H=768, h=12)": (lambda: heads_explorer(H=768, h=12), dict(H=[384, 1536], h=[1, 16])),
    "04 masking_explorer()": (masking_explorer, dict(epoch=[1, 8], mask_prob=[0.15, 0.5])),
    "05 budget_explorer()": (budget_explorer, dict(E=[128, 768], sharing=["none", "all"], L=[12, 24])),
}


def column_px(points: float, width_inches: float) -> float:
    """How tall a text of ``points`` shows in the column when its figure is a PNG at PNG_DPI: the PNG is
    ``width_inches * PNG_DPI`` CSS px at its natural size, as an SVG of ``width_inches * PNG_DPI / 96``
    inches would be, and its texts scale with it."""
    return shown_px(points * PNG_DPI / 96, width_inches * PNG_DPI / 96)


def test_column_px_is_the_pngs_scale():
    assert column_px(10.75, 9) == pytest.approx(10.75 * 672 / (9 * 72))  # 720 px wide: scaled to 672
    assert column_px(10.75, 7.5) == pytest.approx(10.75 * 80 / 72)  # 600 px wide: shown at its size


def _too_small(fig) -> list[str]:
    fig.canvas.draw()  # makes the tick labels of the current limits
    width = fig.get_figwidth()
    shown = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
    assert len(shown) > 10
    return [f"{t.get_text()!r}: {t.get_fontsize()} pt, {column_px(t.get_fontsize(), width):.2f} px"
            for t in shown if column_px(t.get_fontsize(), width) < MIN_PX]


@pytest.mark.parametrize("name", BOOK)
def test_every_text_of_the_explorer_shows_at_11_px(name):
    build, grid = BOOK[name]
    explorer = build()
    assert _too_small(explorer.fig) == []
    assert layout_problems(explorer.fig) == []
    for combo in itertools.product(*grid.values()):
        explorer.set(**dict(zip(grid, combo, strict=True)))
        assert _too_small(explorer.fig) == [], combo
        assert layout_problems(explorer.fig) == [], combo
