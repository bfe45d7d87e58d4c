"""The explorer of the output-projection chapter: per-layer attention parameters of the concat form
(heads of width d_head, then W_O) against the sum form (full-width value maps, no W_O), above both forms'
value and output maps drawn head by head (:func:`geron_lib.notebook.diagrams.output_projection_diagram`)."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.ticker import FuncFormatter

from ...config import EncoderConfig
from ...costs.params import attention_param_items
from ...validate import check_int
from ..diagrams.attention import output_projection_diagram
from ..diagrams.canvas import SIZES, SMALL
from ..explorer import Explorer
from ..plots import PALETTE
from .embeddings import CHARTS_HEIGHT, two_panels

FORM_LABELS = {"concat": "concat + W_O", "sum": "sum, no W_O"}
ROLES = ("query_key", "value", "output")
ROLE_LABELS = {"query_key": "W_Q, W_K", "value": "values", "output": "output (W_O, b_O)"}


def head_counts(hidden_size: int, max_heads: int = 64) -> list[int]:
    """The numbers of heads that divide ``hidden_size``, up to ``max_heads``: the only selectable ones."""
    H = check_int("hidden_size", hidden_size, minimum=1)
    max_heads = check_int("max_heads", max_heads, minimum=1)
    return [h for h in range(1, min(H, max_heads) + 1) if H % h == 0]


def _draw(fig, H: int, h: int, max_heads: int) -> dict:
    """Stacked bars of both forms' parameters, and sum / concat against every valid h."""
    items = {form: attention_param_items(H, h, form) for form in FORM_LABELS}
    totals = {form: sum(parts.values()) for form, parts in items.items()}
    heads = head_counts(H, max_heads)
    ratios = [sum(attention_param_items(H, n, "sum").values()) / totals["concat"] for n in heads]
    if not fig.axes:
        bars_ax, ratio_ax, _ = two_panels(fig, "output_projection", width_ratios=(1, 1.4), left=0.1,
                                          wspace=0.3)
        bottom = np.zeros(2)
        for role, colour in zip(ROLES, (PALETTE[5], PALETTE[1], PALETTE[3]), strict=True):
            bars_ax.bar(list(FORM_LABELS.values()), [1, 1], bottom=bottom, color=colour,
                        label=ROLE_LABELS[role])
        for x in range(2):
            bars_ax.text(x, 0, "", ha="center", va="bottom", fontsize=SMALL)
        bars_ax.set_ylabel("parameters per layer (millions)")
        bars_ax.legend(loc="upper left", frameon=False)
        ratio_ax.plot([], [], "o-", color=PALETTE[6], label="whole sublayer, with biases")
        ratio_ax.plot([], [], ":", color=PALETTE[0], label="values and output, no biases (h / 2)")
        ratio_ax.plot([], [], "o", ms=11, mfc="none", mec=PALETTE[0], mew=2)
        ratio_ax.axhline(1, color="0.5", lw=0.8)
        ratio_ax.set_xscale("log", base=2)
        ratio_ax.set_yscale("log", base=2)
        for axis in (ratio_ax.xaxis, ratio_ax.yaxis):
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ratio_ax.set_xlabel("h, heads (divisors of H)")
        ratio_ax.set_ylabel("sum / concat parameters")
        ratio_ax.legend(loc="upper left", frameon=False)
    bars_ax, ratio_ax, diagram = fig.axes
    for role, container in zip(ROLES, bars_ax.containers, strict=True):
        for x, (form, rect) in enumerate(zip(FORM_LABELS, container, strict=True)):
            below = sum(items[form][r] for r in ROLES[: ROLES.index(role)])
            rect.set_y(below / 1e6)
            rect.set_height(items[form][role] / 1e6)
            bars_ax.texts[x].set_position((x, totals[form] / 1e6))
            bars_ax.texts[x].set_text(f"{totals[form]:,}")
    bars_ax.set_ylim(0, 1.65 * max(totals.values()) / 1e6)  # the legend above the bars
    bars_ax.set_title(f"H = {H}, h = {h}, d_head = {H // h}", fontsize=SMALL)
    line, half, here = ratio_ax.lines[:3]
    line.set_data(heads, ratios)
    half.set_data(heads, [n / 2 for n in heads])
    ratio = totals["sum"] / totals["concat"]
    here.set_data([h], [ratio])
    ratio_ax.set_xlim(0.8, max(heads) * 1.25)
    ratio_ax.set_ylim(min(0.4, min(ratios) / 1.3), max(ratios + [n / 2 for n in heads]) * 1.5)
    ratio_ax.set_title(f"sum / concat = {ratio:.2f}", fontsize=SMALL)
    output_projection_diagram(EncoderConfig(hidden_size=H, num_attention_heads=h), ax=diagram)
    return {"concat": totals["concat"], "sum": totals["sum"], "ratio": ratio, "heads": heads,
            "ratios": ratios, "items": items}


def heads_explorer(H: int = 768, h: int = 12, *, max_heads: int = 64) -> Explorer:
    """Sliders for H and h (its options are the divisors of H, so every pair is valid) driving the
    per-layer parameters of both forms and their ratio."""
    H = check_int("H", H, minimum=32)
    h = check_int("h", h, minimum=1)
    max_heads = check_int("max_heads", max_heads, minimum=1)
    options = head_counts(H, max_heads)
    if h not in options:
        raise ValueError(f"h must divide H ({H}) and be at most max_heads ({max_heads}): one of {options}; "
                         f"got {h!r}")
    H_slider = widgets.IntSlider(value=H, min=32, max=max(2048, H), step=32, description="H (hidden)",
                                 continuous_update=False)
    h_slider = widgets.SelectionSlider(options=options, value=h, description="h (heads)",
                                       continuous_update=False)

    def keep_heads_dividing(change):
        """Registered before the explorer's own observers, so that it never draws an invalid pair."""
        valid = head_counts(change["new"], max_heads)
        nearest = min(valid, key=lambda n: (abs(n - h_slider.value), n))
        h_slider.options = valid  # ipywidgets selects valid[0] here; then the nearest count
        h_slider.value = nearest

    H_slider.observe(keep_heads_dividing, names="value")
    return Explorer({"H": H_slider, "h": h_slider}, lambda fig, H, h: _draw(fig, H, h, max_heads),
                    width=SIZES["output_projection"][0], height=CHARTS_HEIGHT + SIZES["output_projection"][1],
                    alt="Per-layer attention parameters of the concat and the sum forms as stacked bars, "
                        "and the ratio sum / concat against the number of heads, above both forms drawn head "
                        "by head: W_V's column blocks and W_O's row blocks, one colour per head, beside the "
                        "h full-width value maps of the sum form")
