"""The quickstart's picture: one encoder layer (:func:`encoder_block_diagram`), its attention and
feed-forward sublayers with every part's parameter count, in either attention form."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ...config import EncoderConfig
from ...costs.params import (
    attention_param_items,
    count_parameters,
    ffn_params,
    layer_norm_params,
    linear_params,
)
from ...validate import check_type
from .canvas import LABEL, ROLE, Canvas, arrow, box, count_text, path, plural, tint, title


def encoder_block_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """One encoder layer <- config: X (B, T, H) -> W_Q, W_K, W_V -> h heads -> (concat, W_O | sum) -> add & LN
    -> W_1 (H x F) -> act -> W_2 (F x H) -> add & LN, every part with its parameter count."""
    check_type("config", config, EncoderConfig)
    c = Canvas(ax, "encoder_block")
    H, h, F, d = config.hidden_size, config.num_attention_heads, config.intermediate_size, config.d_head
    form = config.attention
    items = attention_param_items(H, h, form)
    per = count_parameters(config)
    qk, ln, w1, w2 = linear_params(H, H), layer_norm_params(H), linear_params(H, F), linear_params(F, H)
    width = c.width
    title(c, f"One encoder layer: H = {H}, h = {plural(h, 'head')} of d_head = {d}, F = {F}, "
             f"{form} attention")
    xa, xf = 2.85, 7.3                      # centres of the attention and FFN columns
    y_in, y_qkv, y_heads, y_out, y_add = 4.3, 3.5, 2.6, 1.75, 0.9
    big, wide = (1.62, 0.72), (5.06, 0.56)
    box(c, "X", (xa, y_in), (2.6, 0.36), ROLE["input"], f"input $X$: (B, T, {H})", fill="#F2F2F2")
    qkv_x = (xa - 1.72, xa, xa + 1.72)
    box(c, "W_Q", (qkv_x[0], y_qkv), big, ROLE["query_key"], "$W_Q$, $b_Q$", f"{H} x {H}, {H}", qk)
    box(c, "W_K", (qkv_x[1], y_qkv), big, ROLE["query_key"], "$W_K$, $b_K$", f"{H} x {H}, {H}", qk)
    if form == "concat":
        box(c, "W_V", (qkv_x[2], y_qkv), big, ROLE["value"], "$W_V$, $b_V$", f"{H} x {H}, {H}",
            items["value"])
        heads_out = f"head outputs (B, T, {h}, {d}), concatenated: (B, T, {H})"
        box(c, "W_O", (xa, y_out), wide, ROLE["output"], f"then $W_O$, $b_O$: {H} x {H}, {H}",
            count=items["output"])
    else:
        box(c, "W_V", (qkv_x[2], y_qkv), big, ROLE["value"], f"$W'_{{V,i}}$, $i$ = 1 .. {h}",
            f"{h} x {H} x {H}", items["value"])
        heads_out = fr"head outputs $A_i\, X\, W'_{{V,i}}$: (B, T, {h}, {H})"
        box(c, "b_O", (xa, y_out), wide, ROLE["output"], f"sum over the heads, then add $b_O$: (B, T, {H})",
            count=items["output"])
    box(c, "heads", (xa, y_heads), wide, ROLE["heads"],
        fr"{plural(h, 'head')}: $A_i = \mathrm{{softmax}}(Q_i K_i^\top / \sqrt{{{d}}})$", heads_out)
    box(c, "LN_1", (xa, y_add), (2.6, 0.5), ROLE["norm"], "add $X$, layer norm", count=ln)
    arrow(c, (xa, y_in - 0.18), (xa, y_qkv + 0.36))
    for x in qkv_x[::2]:
        arrow(c, (xa + (x - xa) * 0.3, y_in - 0.18), (x, y_qkv + 0.36))
    for x in qkv_x:
        arrow(c, (x, y_qkv - 0.36), (x, y_heads + 0.28))
    arrow(c, (xa, y_heads - 0.28), (xa, y_out + 0.28))
    arrow(c, (xa, y_out - 0.28), (xa, y_add + 0.25))
    path(c, [(xa - 1.3, y_in), (0.12, y_in), (0.12, y_add), (xa - 1.3, y_add)])  # residual
    # the feed-forward sublayer runs upwards, beside
    y_w1, y_act, y_w2, y_add2, y_next = y_add, y_out, y_heads, y_qkv, y_in
    ffn = (2.8, 0.72)
    box(c, "W_1", (xf, y_w1), ffn, ROLE["ffn"], "$W_1$, $b_1$", f"{H} x {F}, {F}", w1)
    box(c, "act", (xf, y_act), (2.8, 0.5), ROLE["ffn"], config.hidden_act, f"(B, T, {F})",
        fill=tint(ROLE["ffn"], 0.93))
    box(c, "W_2", (xf, y_w2), ffn, ROLE["ffn"], "$W_2$, $b_2$", f"{F} x {H}, {H}", w2)
    box(c, "LN_2", (xf, y_add2), (2.8, 0.5), ROLE["norm"], "add, layer norm", count=ln)
    box(c, "output", (xf, y_next), (2.8, 0.36), ROLE["input"], f"output: (B, T, {H})", fill="#F2F2F2")
    arrow(c, (xa + 1.3, y_add), (xf - 1.4, y_w1))
    arrow(c, (xf, y_w1 + 0.36), (xf, y_act - 0.25))
    arrow(c, (xf, y_act + 0.25), (xf, y_w2 - 0.36))
    arrow(c, (xf, y_w2 + 0.36), (xf, y_add2 - 0.25))
    arrow(c, (xf, y_add2 + 0.25), (xf, y_next - 0.18))
    path(c, [(5.64, y_add), (5.64, y_add2), (xf - 1.4, y_add2)])  # residual
    attention, ffn_total, norms = per.attention_per_layer, ffn_params(H, F), per.layer_norms_per_layer
    total = attention + ffn_total + norms
    count_text(c, "layer", (width / 2, 0.25),
               f"per layer: attention {attention:,} + FFN {ffn_total:,} + layer norms {norms:,} = {total:,}",
               LABEL, ha="center", va="center")
    values = (f"a value map of {H} x {H} ({items['value']:,} parameters with its bias)" if form == "concat"
              else f"{h} full-width value maps W'_V,i of {H} x {H} each ({items['value']:,} parameters)")
    out = (f"concatenated and projected by W_O ({H} x {H}, {items['output']:,} parameters)"
           if form == "concat" else f"summed, plus the output bias b_O ({items['output']:,} parameters)")
    alt = (f"One encoder layer at H = {H}, h = {plural(h, 'head')} of d_head = {d}, F = {F}, "
           f"{form} attention. "
           f"The input X of shape (B, T, {H}) goes through W_Q and W_K ({H} x {H} plus bias, {qk:,} "
           f"parameters each) and {values}; the head outputs are {out}; then added to X and "
           f"layer-normalised ({ln:,}). The feed-forward sublayer W_1 ({H} x {F}, {w1:,}), "
           f"{config.hidden_act}, W_2 ({F} x {H}, {w2:,}) is added and layer-normalised again ({ln:,}). "
           f"One layer holds {total:,} parameters.")
    return c.done(alt)
