"""One look for every figure: a colour-blind-safe palette on an opaque white background."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
from matplotlib.figure import Figure

#: Okabe and Ito's colour-blind-safe palette (black first).
PALETTE = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")

STYLE = {
    "axes.prop_cycle": mpl.cycler(color=PALETTE[1:] + PALETTE[:1]),
    "figure.facecolor": "white",  # opaque, so dark text stays readable under a dark theme
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
}


def new_figure(nrows: int = 1, ncols: int = 1, *, width: float = 8.0, height: float = 3.5):
    """``(fig, axes)`` outside pyplot's state (never shown twice), in the book's style."""
    with mpl.rc_context(STYLE):
        fig = Figure(figsize=(width, height), layout="constrained")
        return fig, fig.subplots(nrows, ncols, squeeze=True)


def fixed_layout(fig: Figure) -> None:
    """Drop the figure's layout engine (place axes by hand): with one, every PNG is drawn twice, once
    to lay it out, which doubles the cost of a slider update."""
    with mpl.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)


def perplexity_axis(ax, label: str = r"perplexity $\exp(\mathcal{L})$"):
    """ppl = exp(L): a right-hand axis that reads a loss axis in nats as perplexity (returned)."""
    twin = ax.secondary_yaxis("right", functions=(_exp, _log))
    twin.set_ylabel(label)
    ax.spines["right"].set_visible(True)
    return twin


def _exp(x):
    return np.exp(np.clip(x, -50, 50))  # clipped: matplotlib also maps far-off limits through it


def _log(x):
    return np.log(np.maximum(x, 1e-300))
