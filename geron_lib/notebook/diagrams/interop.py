"""Appendix A1's picture: one linear weight as transformers stores it, (out, in), against the library's
(in, out), with the names of one layer's weight matrices in both (:func:`weight_layout_diagram`)."""

from __future__ import annotations

import os

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ...config import EncoderConfig
from ...interop.hf_weights import hf_names
from ...validate import check_type
from .canvas import LABEL, ROLE, SMALL, Canvas, arrow, line_height, text, tint, title

#: The side (inches) of a weight's longer dimension in the picture; the other is drawn to scale.
_SIDE = 1.7


def weight_layout_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """weight (F, H) -> W_1 = weight^T (H, F): the feed-forward sublayer's first weight as nn.Linear keeps
    it, (out, in), computing x weight^T + b, and as geron_lib keeps it, (in, out), computing x W + b, each
    drawn to scale; beside them, the state-dict name of each of the first layer's weight matrices."""
    check_type("config", config, EncoderConfig)
    c = Canvas(ax, "weight_layout")
    H, F = config.hidden_size, config.intermediate_size
    title(c, "One layer's weights: transformers' (out, in) against the library's (in, out)")

    def matrix(name: str, x: float, rows: int, cols: int, colour, caption: str, formula: str):
        scale = _SIDE / max(rows, cols)
        w, h = max(cols * scale, 0.08), max(rows * scale, 0.08)
        c.patch(f"box-{name}", Rectangle, xy=(x - w / 2, 2.05 - h / 2), width=w, height=h,
                facecolor=tint(colour), edgecolor=colour, linewidth=1.2)
        text(c, f"{name}_caption", (x, 0.92), caption, SMALL, ha="center", va="top")
        text(c, f"{name}_formula", (x, 0.92 - 2 * line_height(SMALL)), formula, SMALL, ha="center",
             va="top")
        return w

    left, right = 1.1, 4.0
    w_left = matrix("theirs", left, F, H, ROLE["ffn"], f"nn.Linear's weight\n(out, in) = ({F}, {H})",
                    r"$y = x\,\mathrm{weight}^\top + b$")
    w_right = matrix("ours", right, H, F, ROLE["ffn"], f"the library's $W_1$\n(in, out) = ({H}, {F})",
                     r"$y = x W_1 + b_1$")
    arrow(c, (left + w_left / 2 + 0.1, 2.05), (right - w_right / 2 - 0.1, 2.05), "transpose")
    text(c, "transpose", ((left + right) / 2 + 0.05, 2.2), "transposed\non loading", SMALL, ha="center",
         va="bottom")

    names = {ours.rsplit(".", 1)[-1]: theirs for ours, theirs in hf_names(config).items()
             if ours.startswith("layers.0.") and ours.rsplit(".", 1)[-1].startswith("W_")}
    prefix = os.path.commonprefix(list(names.values()))
    prefix = prefix[:prefix.rfind(".") + 1]
    x0, top = 5.25, c.height - 0.75
    text(c, "map_heading", (x0, top), f"layer 0 of {config.model_type}, under", LABEL, va="top")
    wrapped = _wrap(prefix, 30)
    text(c, "map_prefix", (x0, top - line_height(LABEL)), wrapped, SMALL, va="top", family="monospace")
    y = top - line_height(LABEL) - (wrapped.count("\n") + 1.5) * line_height(SMALL)
    for ours, theirs in names.items():
        text(c, f"map_{ours}", (x0, y), f"${ours.replace('_', '_{', 1)}}}$  <-  {theirs[len(prefix):]}",
             SMALL, va="top")
        y -= line_height(SMALL) * 1.15
    text(c, "map_rest", (x0, y - 0.1), "each transposed; biases, gains and\ntables copied as they are", SMALL,
         va="top", color="#555555", style="italic")
    listed = "; ".join(f"{ours} <- {theirs[len(prefix):]}" for ours, theirs in names.items())
    alt = (f"The feed-forward sublayer's first weight at H = {H}, F = {F}: transformers' nn.Linear stores it "
           f"as (out, in) = ({F}, {H}) and computes x weight-transposed plus b; the library stores W_1 as "
           f"(in, out) = ({H}, {F}) and computes x W_1 + b_1, so loading transposes it. The first layer's "
           f"weight matrices, under {prefix}: {listed}; each is transposed, and biases, layer-norm gains "
           f"and tables are copied as they are.")
    return c.done(alt)


def _wrap(name: str, width: int) -> str:
    """A dotted name broken after its dots into lines of at most ``width`` characters (a longer part keeps
    a line of its own)."""
    lines = [""]
    for part in name.split(".")[:-1]:
        if lines[-1] and len(lines[-1]) + len(part) + 1 > width:
            lines.append("")
        lines[-1] += part + "."
    return "\n".join(lines)
