"""Chapter 2's pictures (the first is chapter 5's too): cross-layer sharing (:func:`sharing_diagram`), the
layers of the forward pass pointing at the sublayers the encoder stores, and sharing among its relatives
(:func:`recurrence_diagram`), BERT, ALBERT, the Universal Transformer and the deep equilibrium model."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Rectangle

from ...config import EncoderConfig
from ...costs.params import count_parameters, stored_copies
from ...validate import check_type
from .canvas import (
    LABEL,
    ROLE,
    SMALL,
    TITLE,
    Canvas,
    arrow,
    box,
    count_text,
    line_height,
    path,
    plural,
    text,
    tint,
    title,
)


def sharing_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """c_A, c_F = stored_copies(config): the L layers of the forward pass, each pointing at the attention
    and FFN sublayers it runs, of which the encoder stores c_A and c_F."""
    check_type("config", config, EncoderConfig)
    c = Canvas(ax, "sharing")
    L, H, mode = config.num_hidden_layers, config.hidden_size, config.sharing
    counts = count_parameters(config)
    copies = stored_copies(config)
    width, height = c.width, c.height
    title(c, f"Cross-layer sharing '{mode}': L = {plural(L, 'layer')} at H = {H}")
    count_text(c, "encoder", (0.1, height - 0.2 - line_height(TITLE)),
               f"the encoder stores {counts.encoder:,} parameters", LABEL, ha="left", va="center")
    left, right = 1.75, width - 0.1
    pitch = min(0.9, (right - left) / L)
    tile = 0.8 * pitch
    xs = [(left + right) / 2 + (i - (L - 1) / 2) * pitch for i in range(L)]
    y_att, y_layer, y_ffn = 2.0, 1.3, 0.55
    for i, x in enumerate(xs):
        c.patch(f"box-layer{i + 1}", Rectangle, xy=(x - tile / 2, y_layer - 0.18), width=tile, height=0.36,
                facecolor="#F2F2F2", edgecolor=ROLE["input"])
        c.text(f"label-layer{i + 1}", (x, y_layer), str(i + 1), ha="center")
    text(c, "layers", (0.1, y_layer), "layers, in order", LABEL, ha="left", va="center")
    for kind, n, per, y, sign, colour in (
            ("attention", copies[0], counts.attention_per_layer, y_att, 1, ROLE["query_key"]),
            ("ffn", copies[1], counts.ffn_per_layer, y_ffn, -1, ROLE["ffn"])):
        name = "attention" if kind == "attention" else "FFN"
        text(c, f"{kind}_row", (0.1, y + 0.11), f"stored {name}", LABEL, ha="left", va="center")
        count_text(c, kind, (0.1, y - 0.12), f"{n} x {per:,}", SMALL, ha="left", va="center")
        box_edge, tile_edge = y - sign * 0.18, y_layer + sign * 0.18
        if n == 1:
            span = max(xs[-1] - xs[0] + tile, 3.4)
            box(c, f"{kind}1", ((left + right) / 2, y), (span, 0.36), colour,
                f"one {name} sublayer, run by {'all ' if L > 1 else ''}{plural(L, 'layer')}")
            squeeze = min(1.0, 0.9 * (span - 0.2) / max(xs[-1] - xs[0], 1e-9))
            ends = [(left + right) / 2 + (x - (left + right) / 2) * squeeze for x in xs]
        else:
            for i, x in enumerate(xs):
                c.patch(f"box-{kind}{i + 1}", FancyBboxPatch, x=x - tile / 2, y=y - 0.18, width=tile,
                        height=0.36, boxstyle="round,pad=0,rounding_size=0.03", facecolor=tint(colour),
                        edgecolor=colour)
            ends = xs
        for i, (x, end) in enumerate(zip(xs, ends, strict=True)):
            arrow(c, (x, tile_edge), (end, box_edge), f"{kind}{i + 1}", lw=0.8, colour="#555555")
    norms = counts.layer_norms
    alt = (f"Cross-layer sharing '{mode}' with L = {plural(L, 'layer')} at H = {H}: the forward pass runs "
           f"{plural(L, 'layer')}, each pointing at the attention and the feed-forward sublayer it runs. "
           f"The encoder stores "
           f"{plural(copies[0], 'attention sublayer')} of {counts.attention_per_layer:,} parameters and "
           f"{plural(copies[1], 'feed-forward sublayer')} of "
           f"{counts.ffn_per_layer:,}, with {norms:,} parameters of layer norms: {counts.encoder:,} in all.")
    return c.done(alt)


#: The four ways of stacking blocks that chapter 2 sets side by side: name, what is stored, how deep it runs
#: (the name and the depth drawn on two lines where they hold a line break).
RECURRENCE_KINDS = (
    ("bert", "BERT", "L different blocks", "runs each once:\nL = {L}"),
    ("albert", "ALBERT", "one block", "runs it exactly\nL = {L} times"),
    ("universal", "Universal\nTransformer", "one block", "runs it a fixed\nnumber of steps"),
    ("equilibrium", "Deep equilibrium\nmodel", "one block", "iterates it to\na fixed point"),
)


def recurrence_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """X_l = Block_l(X_{l-1}) (BERT),  X_l = Block(X_{l-1}), l = 1 ... L (ALBERT),  X_t = Block(X_{t-1} + P^t)
    for a fixed number of steps (the base Universal Transformer; its adaptive variant halts per position),
    X* = Block(X*; X_0) (deep equilibrium model): what each stores, and how deep it runs. The stored counts
    are the library's, for ``config``'s block unshared and all shared."""
    check_type("config", config, EncoderConfig)
    c = Canvas(ax, "recurrence")
    L, H = config.num_hidden_layers, config.hidden_size
    stored = {"bert": count_parameters(config.replace(sharing="none")).encoder,
              "albert": count_parameters(config.replace(sharing="all")).encoder}
    stored["universal"] = stored["equilibrium"] = stored["albert"]
    width = c.width
    title(c, f"Depth from stored blocks: BERT, ALBERT and two relatives, at H = {H}")
    pitch = width / len(RECURRENCE_KINDS)
    up = 0.3  # the blocks and names above the two lines of depth and the count
    colours = (ROLE["ffn"], ROLE["query_key"], ROLE["value"], ROLE["heads"])
    alt_parts = []
    for k, ((kind, drawn_name, what, drawn_depth), colour) in enumerate(zip(RECURRENCE_KINDS, colours,
                                                                            strict=True)):
        x = (k + 0.5) * pitch
        name, depth = drawn_name.replace("\n", " "), drawn_depth.replace("\n", " ")
        text(c, f"{kind}_name", (x, 2.4 + up), drawn_name, LABEL, ha="center", fontweight="bold")
        if kind == "bert":
            for i, (y, label) in enumerate(((1.95, "block 1"), (1.5, "block 2"), (0.95, f"block {L}"))):
                box(c, f"{kind}{i}", (x, y + up), (1.3, 0.32), colour, label)
            arrow(c, (x, 1.79 + up), (x, 1.66 + up), lw=0.8)
            text(c, f"{kind}_more", (x, 1.22 + up), "...", LABEL, ha="center")
        else:
            box(c, kind, (x, 1.45 + up), (1.3, 0.5), colour, what)
            right, mid, top = x + 0.65, 1.45 + up, 1.7 + up
            path(c, [(right, mid), (right + 0.25, mid), (right + 0.25, top + 0.3), (x, top + 0.3), (x, top)])
        text(c, f"{kind}_depth", (x, 0.65), drawn_depth.format(L=L), SMALL, ha="center")
        count_text(c, f"{kind}_stored", (x, 0.22), f"stores {stored[kind]:,}", SMALL, ha="center")
        alt_parts.append(f"{name} stores {what} ({stored[kind]:,} parameters here) and {depth.format(L=L)}")
    alt = (f"Four ways of stacking encoder blocks at H = {H} with L = {plural(L, 'layer')}: "
           + "; ".join(alt_parts) + ".")
    return c.done(alt)
