"""Appendix A4's picture: one encoder block as a computational graph (:func:`block_graph_diagram`), its
forward operations as nodes and arrows, each node coloured by the backward listing that differentiates
it."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ...config import EncoderConfig
from ...validate import check_type
from .canvas import ROLE, SMALL, Canvas, arrow, box, path, plural, text, title

#: The backward function that differentiates each group of nodes, and the group's colour.
BACKWARD = {"attention_probs_backward": ROLE["query_key"], "concat_attention_backward": ROLE["value"],
            "layer_norm_backward": ROLE["norm"], "feed_forward_backward": ROLE["ffn"],
            "block_backward": ROLE["input"]}


def block_graph_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """One encoder block (concat attention, post-LN) <- config, as its forward graph: X -> X W_Q + b_Q,
    X W_K + b_K, X W_V + b_V -> scores -> softmax -> A_i times the values, concatenated -> W_O -> + X -> LN
    -> W_1 -> act -> W_2 -> + -> LN -> Y; each node coloured by its backward listing (:data:`BACKWARD`)."""
    check_type("config", config, EncoderConfig)
    if config.attention != "concat":
        raise ValueError(f"the graph draws the concat form of attention, the one A4's listings "
                         f"differentiate; got attention={config.attention!r}")
    c = Canvas(ax, "block_graph")
    H, h, F, d = config.hidden_size, config.num_attention_heads, config.intermediate_size, config.d_head
    probs, values, norm, ffn, block = BACKWARD.values()
    title(c, f"One block as a graph: H = {H}, h = {plural(h, 'head')} of d_head = {d}, F = {F}")
    y1, y2, y3 = 3.75, 2.9, 2.05          # queries, keys, values
    ys = (y1 + y2) / 2                     # scores and softmax
    node = (1.35, 0.62)
    box(c, "X", (0.45, y2), (0.7, 0.5), block, "$X$", fill="#F2F2F2")
    box(c, "query", (1.9, y1), node, probs, "$X W_Q + b_Q$", f"(B, T, {H})")
    box(c, "key", (1.9, y2), node, probs, "$X W_K + b_K$", f"(B, T, {H})")
    box(c, "value", (1.9, y3), node, values, "$X W_V + b_V$", f"(B, T, {H})")
    box(c, "scores", (3.75, ys), (1.75, 0.7), probs, "scores $S_i$",
        r"$Q_i K_i^\top / \sqrt{d_\mathrm{head}}$")
    box(c, "softmax", (5.45, ys), (1.25, 0.7), probs, "softmax", f"$A_i$: (B, {h}, T, T)")
    box(c, "heads", (5.2, y3), (1.75, 0.62), values, r"$A_i\,\times$ values", f"concat: (B, T, {H})")
    box(c, "W_O", (6.75, y3), (0.95, 0.62), values, "$W_O$, $b_O$")
    box(c, "add_1", (7.6, y3), (0.42, 0.42), block, "+")
    box(c, "LN_1", (8.4, y3), (0.8, 0.62), norm, "LN", "$X_1$")
    for y in (y1, y2, y3):
        arrow(c, (0.8, y2 + (y - y2) * 0.2), (1.22, y))
    arrow(c, (2.58, y1), (2.87, ys + 0.2))
    arrow(c, (2.58, y2), (2.87, ys - 0.2))
    arrow(c, (4.63, ys), (4.82, ys))
    arrow(c, (5.45, ys - 0.35), (5.45, y3 + 0.31))
    arrow(c, (2.58, y3), (4.32, y3))
    arrow(c, (6.08, y3), (6.27, y3))
    arrow(c, (7.23, y3), (7.39, y3))
    arrow(c, (7.81, y3), (8.0, y3))
    path(c, [(0.45, y2 - 0.25), (0.45, 1.6), (7.6, 1.6), (7.6, y3 - 0.21)])  # residual
    # the feed-forward sublayer, right to left below
    y4 = 0.95
    box(c, "W_1", (8.25, y4), (1.1, 0.62), ffn, "$W_1$, $b_1$", f"(B, T, {F})")
    box(c, "act", (6.85, y4), (1.1, 0.62), ffn, config.hidden_act, f"(B, T, {F})")
    box(c, "W_2", (5.45, y4), (1.1, 0.62), ffn, "$W_2$, $b_2$", f"(B, T, {H})")
    box(c, "add_2", (4.45, y4), (0.42, 0.42), block, "+")
    box(c, "LN_2", (3.55, y4), (0.8, 0.62), norm, "LN")
    box(c, "Y", (2.5, y4), (0.7, 0.5), block, "$Y$", fill="#F2F2F2")
    arrow(c, (8.55, y3 - 0.31), (8.55, y4 + 0.31))
    arrow(c, (7.7, y4), (7.4, y4))
    arrow(c, (6.3, y4), (6.0, y4))
    arrow(c, (4.9, y4), (4.66, y4))
    arrow(c, (4.24, y4), (3.95, y4))
    arrow(c, (3.15, y4), (2.85, y4))
    path(c, [(8.15, y3 - 0.31), (8.15, 1.45), (4.45, 1.45), (4.45, y4 + 0.21)])  # residual
    # which listing differentiates which nodes
    text(c, "legend", (0.1, 0.36), "backward, against the arrows:", SMALL, color="#444444")
    x, y = 2.75, 0.36
    for k, (name, colour) in enumerate(BACKWARD.items()):
        if k == 2:
            x, y = 2.75, 0.1
        text(c, f"legend-{name}", (x, y), name, SMALL, color=colour, family="monospace")
        x += 0.09 * len(name) + 0.25
    alt = (f"One encoder block drawn as a computational graph, at H = {H}, h = {h} heads of d_head = {d}, "
           f"F = {F}. The input X feeds three linear maps, X W_Q + b_Q, X W_K + b_K and X W_V + b_V. The "
           "queries and keys make the scores S_i = Q_i K_i^T / sqrt(d_head), the softmax turns them into "
           "A_i, which multiplies the values; the heads are concatenated, go through W_O and b_O, and are "
           "added to X (a residual line) and layer-normalised into X_1. Below, right to left: W_1 and b_1, "
           f"{config.hidden_act}, W_2 and b_2, added to X_1 (a second residual line) and layer-normalised "
           "into the output Y. The colours say which backward function differentiates each node: "
           "attention_probs_backward for the queries, keys, scores and softmax; "
           "concat_attention_backward for the values, the heads' product and W_O; layer_norm_backward for "
           "both layer norms; feed_forward_backward for W_1, the activation and W_2; block_backward for the "
           "two additions, where each residual adds the gradients of its two paths.")
    return c.done(alt)
