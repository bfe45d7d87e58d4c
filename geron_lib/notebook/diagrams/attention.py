"""Chapter 3's pictures: the attention output projection (:func:`output_projection_diagram`), concat then
W_O against the summed full-width maps W'_V,i, splitting and merging heads (:func:`head_split_diagram`),
each head's d_head columns of the values meeting its d_head rows of W_O, and the change of basis G that
slips between a head's factors and leaves their products alone (:func:`basis_change_diagram`)."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ...config import EncoderConfig
from ...costs.params import attention_param_items, redundant_attention_params
from ...validate import check_type
from .canvas import (
    LABEL,
    ROLE,
    SMALL,
    Canvas,
    arrow,
    count_text,
    head_colour,
    line_height,
    plural,
    text,
    tint,
    title,
)


def _strips(c: Canvas, name: str, x0, y0, w, ht, h: int, *, rows: bool = False):
    """A w x ht rectangle cut into h coloured strips, one per head: columns, or with ``rows`` rows (head 1
    on top)."""
    for i in range(h):
        step = (ht if rows else w) / h
        xy, sw, sh = ((x0, y0 + ht - (i + 1) * step), w, step) if rows else ((x0 + i * step, y0), step, ht)
        c.patch(f"box-{name}_head{i + 1}", Rectangle, xy=xy, width=sw, height=sh, facecolor=head_colour(i),
                edgecolor="white", linewidth=0.4 if h <= 16 else 0)
    c.patch(f"box-{name}", Rectangle, xy=(x0, y0), width=w, height=ht, fill=False, edgecolor="#333333",
            zorder=1.5)


def output_projection_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """concat(A_1 X W_V,1, ..., A_h X W_V,h) W_O  against  sum_i A_i X W'_V,i <- config: head i's d_head
    columns of W_V and rows of W_O beside the h full H x H maps, with both forms' counts."""
    check_type("config", config, EncoderConfig)
    c = Canvas(ax, "output_projection")
    H, h, d = config.hidden_size, config.num_attention_heads, config.d_head
    concat, summed = attention_param_items(H, h, "concat"), attention_param_items(H, h, "sum")
    title(c, f"Values and output projection: H = {H}, h = {plural(h, 'head')} of d_head = {d}")
    side, y0 = 1.4, 1.35
    line1, line2 = y0 - 0.17, y0 - 0.17 - line_height(LABEL)  # the lines under the squares
    _strips(c, "W_V", 0.35, y0, side, side, h)
    _strips(c, "W_O", 2.55, y0, side, side, h, rows=True)
    text(c, "W_V", (0.35 + side / 2, line1), f"$W_V$: {H} x {H}", LABEL, ha="center", va="center")
    text(c, "W_V_heads", (0.35 + side / 2, line2), f"head $i$: {d} columns", SMALL, ha="center",
         va="center")
    text(c, "W_O", (2.55 + side / 2, line1), f"$W_O$: {H} x {H}", LABEL, ha="center", va="center")
    text(c, "W_O_heads", (2.55 + side / 2, line2), f"head $i$: {d} rows", SMALL, ha="center",
         va="center")
    arrow(c, (0.35 + side + 0.08, y0 + side / 2), (2.55 - 0.08, y0 + side / 2), "concat")
    text(c, "concat_label", (0.35 + side + 0.35, y0 + side / 2 + 0.15), "concat", SMALL, ha="center",
         va="center")
    heading, count1, count2 = c.height - 0.5, 0.45, 0.45 - line_height(SMALL)
    text(c, "concat_title", (0.35, heading), "concat, then $W_O$", LABEL, ha="left", va="center",
         fontweight="bold")
    vo = concat["value"] + concat["output"]
    count_text(c, "concat_values", (0.35, count1), f"$W_V$, $b_V$ + $W_O$, $b_O$: {vo:,}", SMALL,
               ha="left", va="center")
    count_text(c, "concat", (0.35, count2), f"with $W_Q$, $W_K$: {sum(concat.values()):,}", SMALL,
               ha="left", va="center")
    c.line("flow-separator", [4.45, 4.45], [0.1, heading + 0.1], color="#CCCCCC", linewidth=1.0)
    # the sum form: h cards of H x H, drawn as a deck (each as large as W_V)
    x0 = 5.0
    offset = 0.0 if h == 1 else min(0.12, 0.9 / (h - 1))  # head 1 in front, the others behind, up-right
    for i in range(h):  # zorder, not drawing order, keeps head 1 in front (artists may be reused)
        c.patch(f"box-W_V{i + 1}", Rectangle, xy=(x0 + i * offset, y0 + i * offset * 0.4), width=side,
                height=side, facecolor=head_colour(i), edgecolor="white" if h <= 16 else head_colour(i),
                linewidth=0.6, zorder=1 + (h - i) / (h + 1))
    deck_right = x0 + side + (h - 1) * offset
    text(c, "sum_maps", (x0, line1), f"{plural(h, 'map')} $W'_{{V,i}}$, each {H} x {H}", LABEL, ha="left",
         va="center")
    text(c, "sum_rule", (x0, line2), "$W'_{V,i}$ = ($W_V$ columns of $i$) ($W_O$ rows of $i$)", SMALL,
         ha="left", va="center")
    text(c, "sum_symbol", (deck_right + 0.35, y0 + side / 2), r"$\sum_i\ A_i\, X\, W'_{V,i} + b_O$", LABEL,
         ha="left", va="center")
    text(c, "sum_title", (x0, heading), "sum, no $W_O$", LABEL, ha="left", va="center", fontweight="bold")
    sv = summed["value"] + summed["output"]
    count_text(c, "sum_values", (x0, count1), f"{plural(h, 'map')} + $b_O$: {sv:,}", SMALL, ha="left",
               va="center")
    count_text(c, "sum", (x0, count2), f"with $W_Q$, $W_K$: {sum(summed.values()):,}", SMALL, ha="left",
               va="center")
    alt = (f"The attention values and output projection at H = {H} with h = {plural(h, 'head')} "
           f"of d_head = {d}. "
           f"Concat form: W_V ({H} x {H}) split into {h} coloured blocks of {d} columns, one per head, and "
           f"W_O ({H} x {H}) into {h} blocks of {d} rows; values and output hold {vo:,} parameters, "
           f"{sum(concat.values()):,} with W_Q and W_K. Sum form: {h} full {H} x {H} maps W'_V,i, one per "
           f"head, summed, with no W_O: {sv:,} parameters, "
           f"{sum(summed.values()):,} with W_Q and W_K.")
    return c.done(alt)


def _deck(c: Canvas, name: str, x0, y0, w, ht, h: int):
    """h tiles of w x ht, head 1 in front and the others behind it, up and to the right."""
    offset = 0.0 if h == 1 else min(0.08, 0.45 / (h - 1))
    for i in range(h):
        c.patch(f"box-{name}{i + 1}", Rectangle, xy=(x0 + i * offset, y0 + i * offset), width=w, height=ht,
                facecolor=head_colour(i), edgecolor="white" if h <= 16 else head_colour(i), linewidth=0.6,
                zorder=1 + (h - i) / (h + 1))
    return x0 + w + (h - 1) * offset


def head_split_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """(B, T, H) -split-> (B, h, T, d_head) -attend-> (B, h, T, d_head) -merge-> (B, T, H), then x W_O: head
    i's d_head columns of the merged values meet W_O's rows i d_head ... (i + 1) d_head - 1
    (:func:`~geron_lib.model.attention.split_heads`, :func:`~geron_lib.model.attention.merge_heads`)."""
    check_type("config", config, EncoderConfig)
    c = Canvas(ax, "head_split")
    H, h, d = config.hidden_size, config.num_attention_heads, config.d_head
    title(c, f"Splitting and merging heads: H = {H} = h x d_head = {h} x {d}")
    y0, ht = 1.35, 0.8
    label_y, shape_y = y0 + ht + 0.25, y0 - 0.17

    def shape(name, x, symbols, numbers):
        text(c, f"{name}_shape", (x, shape_y), symbols, SMALL, ha="center")
        text(c, f"{name}_sizes", (x, shape_y - line_height(SMALL)), numbers, SMALL, ha="center")

    _strips(c, "values", 0.3, y0, 1.2, ht, h)
    text(c, "values", (0.9, label_y), "values $V = X W_V + b_V$", LABEL, ha="center")
    shape("values", 0.9, "(B, T, H)", f"= (B, T, {H})")
    for name, x_from, x_to in (("split", 1.6, 2.3), ("attend", 3.55, 4.2), ("merge", 5.45, 6.1)):
        arrow(c, (x_from, y0 + ht / 2), (x_to, y0 + ht / 2), name)
        text(c, f"{name}_label", ((x_from + x_to) / 2, y0 + ht / 2 + 0.14), name, SMALL, ha="center")
    for name, x0, caption in (("split", 2.4, "one tile per head"), ("heads", 4.3, "each head's $A_i V_i$")):
        right = _deck(c, name, x0, y0, 0.5, ht - 0.35, h)
        text(c, name, ((x0 + right) / 2, label_y), caption, LABEL, ha="center")
        shape(name, (x0 + right) / 2, "(B, h, T, d_head)", f"= (B, {h}, T, {d})")
    _strips(c, "merged", 6.2, y0, 1.0, ht, h)
    text(c, "merged", (6.7, label_y), "concatenated", LABEL, ha="center")
    shape("merged", 6.7, "(B, T, H)", f"= (B, T, {H})")
    text(c, "times", (7.375, y0 + ht / 2), "x", LABEL, ha="center")
    _strips(c, "W_O", 7.55, y0, ht, ht, h, rows=True)
    text(c, "W_O", (7.55 + ht / 2, label_y), "$W_O$", LABEL, ha="center")
    shape("W_O", 7.55 + ht / 2, "(H, H)", f"= ({H}, {H})")
    rule = 0.65  # the first line of the rules under the picture
    text(c, "split_rule", (0.3, rule), "split: reshape to (B, T, h, d_head), then swap T and h; merge: the "
         "reverse", SMALL, ha="left")
    text(c, "W_O_rule", (0.3, rule - line_height(SMALL) / 2), f"after the merge, the {d} columns of head "
         f"$i$ meet the {d} rows of $W_O$'s block $i$,\nand the {plural(h, 'product')} add up to the output",
         SMALL, ha="left", va="top")
    alt = (f"Splitting and merging {plural(h, 'head')} at H = {H}: the values, shape (B, T, {H}), "
           f"are cut into "
           f"{h} coloured column blocks of d_head = {d}, reshaped and transposed to (B, {h}, T, {d}), "
           f"one tile per head; each head attends on its own; the outputs are transposed and reshaped back "
           f"to (B, T, {H}), the heads' blocks side by side, and multiplied by W_O ({H} x {H}), whose rows "
           f"come in {h} blocks of {d}, block i meeting head i's columns.")
    return c.done(alt)


def _factor(c: Canvas, name: str, x0, y_mid, size, colour, label: str = ""):
    """One factor of a product: a block of ``size`` (w, ht) centred on y_mid, with its symbol inside."""
    w, ht = size
    c.patch(f"box-{name}", Rectangle, xy=(x0, y_mid - ht / 2), width=w, height=ht,
            facecolor=tint(colour, 0.55), edgecolor=colour, linewidth=1.2)
    if label:
        c.text(f"label-{name}", (x0 + w / 2, y_mid), label, fontsize=LABEL, ha="center")


def basis_change_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """(W_V,i G)(G^-1 W_O,i) = W_V,i W_O,i  and  (W_Q,i G)(W_K,i G^-T)^T = W_Q,i W_K,i^T <- config: an
    invertible d_head x d_head G between the factors of head i's two products, and the numbers it frees."""
    check_type("config", config, EncoderConfig)
    c = Canvas(ax, "basis_change")
    H, h, d = config.hidden_size, config.num_attention_heads, config.d_head
    title(c, f"A change of basis inside head $i$: H = {H}, d_head = {d}")
    tall, thin = 1.0, 0.3  # an H side and a d_head side (G drawn d_head wide, not to scale)
    rows = (("values", 2.6, "$W_{V,i}$", "$W_{O,i}$", "$W'_{V,i}$", "what head $i$ writes", ROLE["value"]),
            ("queries", 0.95, "$W_{Q,i}$", r"$W_{K,i}^\top$", r"$W_{Q,i} W_{K,i}^\top$",
             "where head $i$ looks", ROLE["query_key"]))
    above = tall / 2 + 0.15
    for name, y, left, right, product, role, colour in rows:
        _factor(c, f"{name}_left", 0.35, y, (thin, tall), colour)
        text(c, f"{name}_left_symbol", (0.5, y + above), left, LABEL, ha="center")
        text(c, f"{name}_left_shape", (0.5, y - above), f"{H} x {d}", SMALL, ha="center")
        _factor(c, f"{name}_G", 0.92, y, (0.38, 0.38), ROLE["projection"], "$G$")
        _factor(c, f"{name}_G_inv", 1.42, y, (0.38, 0.38), ROLE["projection"], "$G^{-1}$")
        text(c, f"{name}_G_shape", (1.36, y + 0.19 + 0.15), f"{d} x {d} each", SMALL, ha="center")
        _factor(c, f"{name}_right", 2.05, y, (tall, thin), colour, right)
        text(c, f"{name}_right_shape", (2.55, y - thin / 2 - 0.15), f"{d} x {H}", SMALL, ha="center")
        text(c, f"{name}_equals", (3.3, y), "=", LABEL, ha="center")
        _factor(c, f"{name}_product", 3.5, y, (tall, tall), colour, product)
        text(c, f"{name}_product_shape", (4.0, y - above), f"{H} x {H}", SMALL, ha="center")
        text(c, f"{name}_role", (4.8, y + 0.2), role, LABEL, ha="left", fontweight="bold")
        text(c, f"{name}_rule", (4.8, y - 0.1), "$G\\,G^{-1} = I$ leaves the product, and the output, alone",
             SMALL, ha="left")
    per_head = d * d
    count_text(c, "per_head", (4.8, 1.9), f"each $G$ frees d_head$^2$ = {per_head:,} numbers", SMALL,
               ha="left")
    count_text(c, "per_product", (4.8, 1.9 - line_height(SMALL)),
               f"over {plural(h, 'head')}: $H^2/h$ = {h * per_head:,} per product", SMALL, ha="left")
    redundant = redundant_attention_params(H, h, "concat")
    count_text(c, "redundant", (4.8, 0.3), f"with $b_K$ and $b_V$: $2H^2/h + 2H$ = {redundant:,} per layer",
               SMALL, ha="left")
    alt = (f"Two products of head i at H = {H}, d_head = {d}. Top: W_V,i ({H} x {d}) times an invertible "
           f"G ({d} x {d}), its inverse, and W_O,i ({d} x {H}) equals the value map W'_V,i ({H} x {H}), what "
           f"the head writes. Bottom: W_Q,i ({H} x {d}), G, G inverse and W_K,i transposed ({d} x {H}) equal "
           f"W_Q,i W_K,i transposed ({H} x {H}), where the head looks. G G^-1 = I leaves both products, and "
           f"the output, unchanged: each G frees {per_head:,} numbers, {h * per_head:,} per product over "
           f"{plural(h, 'head')}, and with the biases b_K and b_V {redundant:,} per layer.")
    return c.done(alt)
