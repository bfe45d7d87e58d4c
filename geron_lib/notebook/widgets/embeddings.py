"""The factorised-embedding explorer: sliders for E (d_embed), V and H drive the token-table count
(factorised against direct) and the whole model's count, marking the current E and the break-even width,
above the embedding path drawn at that E (:func:`geron_lib.notebook.diagrams.embedding_diagram`).

The explorer's E is the width of a *factorised* table: it keeps its E -> H projection up to E = H, where
it costs V H + H^2 + H, more than the direct V H table, which is drawn as its own line. E is at most H:
the E slider's maximum follows the H slider.
"""

from __future__ import annotations

import functools

import ipywidgets as widgets
import numpy as np
import traitlets
from matplotlib.ticker import MaxNLocator

from ...config import EncoderConfig
from ...costs.params import count_parameters
from ...studies.factorised import break_even_width, token_embedding_params
from ...validate import check_int
from ..diagrams.canvas import SIZES, SMALL
from ..diagrams.embeddings import embedding_diagram
from ..explorer import Explorer
from ..plots import PALETTE, fixed_layout

VOCAB_SIZES = (1000, 5000, 30000, 50265, 128000, 250000)
HIDDEN_SIZES = (256, 512, 768, 1024, 2048, 4096)
E_STEP = 16  # the E slider's step and least value; every H above is a multiple of it


def albert_style(vocab_size: int, hidden_size: int, embedding_size: int | None, *,
                 projection: bool | None = None) -> EncoderConfig:
    """ALBERT's recipe at width H: 12 layers sharing one block, heads of 64, FFN 4H, 512 positions;
    ``projection`` is ``EncoderConfig.embedding_projection`` (True: an E -> H map at E = H too)."""
    return EncoderConfig(vocab_size=vocab_size, embedding_size=embedding_size, hidden_size=hidden_size,
                         num_hidden_layers=12, num_attention_heads=hidden_size // 64,
                         intermediate_size=4 * hidden_size, hidden_act="gelu_new", model_type="albert",
                         sharing="all", embedding_projection=projection)


def _factorised(V: int, H: int, E: int) -> EncoderConfig:
    """The model with a factorised table of width E: its projection is kept at E = H too."""
    return albert_style(V, H, E, projection=True)


def embedding_numbers(E: int, V: int, H: int) -> dict:
    """Every number the explorer plots for one setting; E above H is refused, never clamped."""
    if E > H:
        raise ValueError(f"E ({E}) must be at most H ({H}): a factorised table is at most as wide as the "
                         "hidden states")
    return {"E": E, "V": V, "H": H,
            "direct": token_embedding_params(V, H),
            "factorised": token_embedding_params(V, H, E, projection=True),
            "break_even": break_even_width(V, H),
            "model_direct": count_parameters(albert_style(V, H, None)).total,
            "model_factorised": count_parameters(_factorised(V, H, E)).total}


CHARTS_HEIGHT = 4.0  # inches of the two charts, above the diagram
WIDTH = 9.0  # inches: the diagrams' width, so that 10.75-point text shows at 11.1 px in the book's column


def two_panels(fig, diagram: str, *, width_ratios=(1, 1), left: float = 0.09, wspace: float = 0.3):
    """Two axes side by side at fixed margins (no layout engine: see :func:`geron_lib.plots.fixed_layout`),
    above an axes of the height ``diagram`` needs (:data:`geron_lib.notebook.diagrams.SIZES`), returned
    third. The charts leave 0.6 inches above them for titles of two lines."""
    fixed_layout(fig)
    inch = 1 / fig.get_figheight()
    below = SIZES[diagram][1] * inch
    charts = fig.subplots(1, 2, width_ratios=width_ratios,
                          gridspec_kw=dict(left=left, right=0.98, bottom=below + 0.52 * inch,
                                           top=1 - 0.6 * inch, wspace=wspace))
    return (*charts, fig.add_axes((0, 0, 1, below)))


def _draw_axes(fig):
    left, right, diagram = two_panels(fig, "embedding")
    left.plot([], [], color=PALETTE[5], label=r"factorised: $VE + EH + H$")
    left.axhline(0, color=PALETTE[0], ls="--", lw=1, label=r"direct table: $VH$")
    left.axvline(0, color=PALETTE[6], ls=":", lw=1.5, label=r"break-even $E^*$")
    left.plot([], [], "o", color=PALETTE[5], ms=7)
    left.set(xlabel=r"$E$ (d_embed)", ylabel="token table (millions)")
    left.legend(loc="upper left")
    right.plot([], [], color=PALETTE[3], label=r"factorised at $E$")
    right.axhline(0, color=PALETTE[0], ls="--", lw=1, label=r"direct table (no $W_P$)")
    right.plot([], [], "o", color=PALETTE[3], ms=7)
    right.set(xlabel=r"$E$ (d_embed)", ylabel="whole model (millions)")
    right.legend(loc="upper left")
    for ax in (left, right):  # few ticks: text is most of the cost of a redraw
        ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.yaxis.set_major_locator(MaxNLocator(5))
    return left, right, diagram


@functools.lru_cache(maxsize=64)
def _curves(V: int, H: int) -> tuple[np.ndarray, list[float], list[float]]:
    """The E grid and both panels' curves (millions) at V and H: counted once, reused while E moves.
    The factorised curves keep the projection up to E = H."""
    grid = np.unique(np.linspace(1, H, 97).astype(int))
    return (grid, [token_embedding_params(V, H, e, projection=True) / 1e6 for e in grid],
            [count_parameters(_factorised(V, H, e)).total / 1e6 for e in grid])


def _plot(fig, E, V, H) -> dict:
    d = embedding_numbers(E, V, H)
    left, right, diagram = fig.axes if fig.axes else _draw_axes(fig)
    grid, table, model = _curves(V, H)
    curve, direct, breakeven, marker = left.lines
    curve.set_data(grid, table)
    direct.set_ydata([d["direct"] / 1e6] * 2)
    breakeven.set_xdata([d["break_even"]] * 2)
    marker.set_data([d["E"]], [d["factorised"] / 1e6])
    saved = d["direct"] - d["factorised"]
    verdict = (f"saves {saved / 1e6:,.2f}M ({saved / d['direct']:.0%})" if saved >= 0
               else f"costs {-saved / 1e6:,.2f}M more")
    left.set_title(f"V = {V:,}, H = {H}, E = {d['E']}:\n{verdict}; E* = {d['break_even']:,.1f}",
                  fontsize=SMALL)
    m_curve, m_direct, m_marker = right.lines
    m_curve.set_data(grid, model)
    m_direct.set_ydata([d["model_direct"] / 1e6] * 2)
    m_marker.set_data([d["E"]], [d["model_factorised"] / 1e6])
    right.set_title(f"ALBERT-style, 12 shared layers:\n{d['model_factorised'] / 1e6:,.2f}M "
                    f"against {d['model_direct'] / 1e6:,.2f}M", fontsize=SMALL)
    for ax, curve_y, line_y in ((left, table, d["direct"]), (right, model, d["model_direct"])):
        ax.set_xlim(0, H * 1.02)
        ax.set_ylim(0, max(max(curve_y), line_y / 1e6) * 1.1)
    embedding_diagram(_factorised(V, H, E), ax=diagram)
    return d


class _WidthSlider(widgets.IntSlider):
    """An IntSlider that refuses a value above its maximum (ipywidgets would clamp it silently). Lowering
    the maximum below the value still moves the value down to it, visibly, on the slider."""

    @traitlets.validate("value")
    def _validate_value(self, proposal):
        if proposal["value"] > self.max:
            raise ValueError(f"E must be at most H = {self.max}, got {proposal['value']}")
        return super()._validate_value(proposal)


def embedding_explorer(E: int = 128, V: int = 30000, H: int = 768) -> Explorer:
    """Sliders for E, V and H (E's maximum is H); the plotted numbers are in ``.data`` (see
    :func:`embedding_numbers`)."""
    for name, value, options in (("V", V, VOCAB_SIZES), ("H", H, HIDDEN_SIZES)):
        if check_int(name, value, minimum=1) not in options:
            raise ValueError(f"{name} must be one of the slider's values {options}, got {value}")
    E = check_int("E", E, minimum=E_STEP)
    if E > H or E % E_STEP:
        raise ValueError(f"E must be a multiple of {E_STEP} between {E_STEP} and H = {H}, got {E}")
    style = {"description_width": "initial"}
    controls = {
        "E": _WidthSlider(E, min=E_STEP, max=H, step=E_STEP, description="E (d_embed)", style=style),
        "V": widgets.SelectionSlider(options=VOCAB_SIZES, value=V, description="V (vocabulary)", style=style),
        "H": widgets.SelectionSlider(options=HIDDEN_SIZES, value=H, description="H (hidden)", style=style),
    }

    def follow_H(change):  # registered before the explorer's own observer: E is valid when it redraws
        controls["E"].max = change["new"]

    controls["H"].observe(follow_H, names="value")
    return Explorer(controls, _plot, width=WIDTH, height=CHARTS_HEIGHT + SIZES["embedding"][1],
                    alt="Token-embedding and whole-model parameter counts against the embedding width E, "
                        "factorised (lookup and projection) beside the direct V x H table, above the "
                        "embedding path at that E: the V x E token table, the position and token-type "
                        "tables, the layer norm at width E and the E x H projection W_P, each with its "
                        "parameter count")
