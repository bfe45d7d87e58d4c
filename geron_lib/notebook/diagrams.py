"""Pictures drawn from an ``EncoderConfig``: every size and parameter count they show comes from the config
and the library's counts, so a picture changes when a slider changes the config.

Every diagram function returns ``(fig, alt)``: the matplotlib Figure and a description of the picture in
words (for the cell's alt text). Given ``ax``, it draws into those axes instead (a panel of an explorer)
and returns their figure; the axes must sit in a figure without a layout engine
(:func:`geron_lib.notebook.plots.fixed_layout`) and be at least the diagram's size in inches
(:data:`SIZES`), since the diagrams are laid out in inches at fixed font sizes.

Artists carry ids (``gid``) that say what they are: ``box-NAME`` and its texts ``label-NAME``,
``detail-NAME``, ``count-NAME`` (the count ends the text), ``arrow-NAME``, ``text-NAME``. Tests read the
pictures through them, and :func:`svg` writes them as element ids. A notebook cell shows a diagram with
:func:`show` (SVG), not by ending with the figure (the inline backend's PNG).
"""

from __future__ import annotations

import io
import math

import matplotlib as mpl
from IPython.display import SVG
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, FancyBboxPatch, Polygon, Rectangle
from matplotlib.text import Text

from ..config import EncoderConfig
from ..costs.params import (
    attention_param_items,
    count_parameters,
    ffn_params,
    layer_norm_params,
    linear_params,
    stored_copies,
)
from ..pretraining.masking import SCHEDULES, draws_per_sequence, mask_index
from ..validate import check_int, check_type
from .plots import PALETTE, fixed_layout, new_figure

#: Width and height (inches) every diagram needs: its own figure's size, the least size of a given ``ax``.
SIZES = {"encoder_block": (9.0, 5.0), "embedding": (9.0, 3.2), "output_projection": (9.0, 3.8),
         "sharing": (9.0, 3.2), "masking_timeline": (9.0, 2.0), "recurrence": (9.0, 3.3),
         "head_split": (9.0, 3.1)}
#: The most epochs a masking timeline shows (one column each, wide enough for a two-digit label).
MAX_EPOCHS = 30
#: Font sizes (points). The book's column shows a figure 672 CSS px wide (measured in chromium at the
#: browser tests' 1280 x 900 window), so a 9-inch SVG (864 px) is drawn at 672 / 864 of its size and a text of
#: s points at s * 96 / 72 * 672 / 864 = 1.037 s px: the smallest, SMALL, needs 10.61 points for 11 px.
LABEL, SMALL, TITLE = 11.5, 10.75, 12.5
GREY = "#999999"
ROLE = {"input": "#555555", "query_key": PALETTE[5], "value": PALETTE[1], "heads": PALETTE[2],
        "output": PALETTE[3], "norm": GREY, "ffn": PALETTE[7], "embedding": PALETTE[2],
        "projection": PALETTE[6]}
#: Colours of heads, maskings and layers, in turn (the palette without black).
CYCLE = PALETTE[1:]


def _tint(colour, share: float = 0.8) -> tuple[float, float, float]:
    """``colour`` mixed with white (``share`` of white): a fill under black text."""
    return tuple(share + (1 - share) * c for c in to_rgb(colour))


#: Properties every text and patch gets unless told otherwise (all are set on every drawing, so that an
#: artist reused from an earlier drawing keeps nothing of it).
_TEXT = dict(fontsize=SMALL, ha="left", va="center", color="black", fontweight="normal", style="normal",
             zorder=3)
_PATCH = dict(facecolor="white", edgecolor="none", linewidth=1.0, fill=True, zorder=1)
_LINE = dict(zorder=2)
_MAKE = {Rectangle: lambda: Rectangle((0, 0), 0, 0), FancyBboxPatch: lambda: FancyBboxPatch((0, 0), 0, 0),
         Polygon: lambda: Polygon([(0, 0)] * 3), Circle: lambda: Circle((0, 0), 0)}


class _Canvas:
    """Axes in inches, the diagram's area (0, 0)-(width, height) centred in them (a new figure when ``ax`` is
    None). Every artist is named by its id; drawing into axes that hold an earlier diagram updates the
    artists of the same id and type, and :meth:`done` removes the rest: a slider's redraw then makes
    little garbage for the collector. Each artist's zorder grows (by a millionth) in drawing order, so that
    reused artists are drawn in the order a fresh drawing would draw them."""

    def __init__(self, ax, name: str):
        width, height = SIZES[name]
        if ax is None:
            fig, ax = new_figure(width=width, height=height)
            fixed_layout(fig)
            ax.set_position((0, 0, 1, 1))
        else:
            check_type("ax", ax, Axes)
            fig = ax.figure
            if not isinstance(fig.get_layout_engine(), type(None) | PlaceHolderLayoutEngine):
                raise ValueError("ax must sit in a figure without a layout engine (see "
                                 "geron_lib.notebook.plots.fixed_layout): the diagram is laid out in inches")
            box = ax.get_position()
            w, h = box.width * fig.get_figwidth(), box.height * fig.get_figheight()
            if w < width - 1e-6 or h < height - 1e-6:
                raise ValueError(f"ax is {w:.2f} x {h:.2f} inches, but this diagram needs at least "
                                 f"{width} x {height} inches (SIZES[{name!r}])")
        box = ax.get_position()
        w, h = box.width * fig.get_figwidth(), box.height * fig.get_figheight()
        ax.set_xlim(-(w - width) / 2, width + (w - width) / 2)
        ax.set_ylim(-(h - height) / 2, height + (h - height) / 2)
        ax.set_axis_off()
        self.fig, self.ax, self.width, self.height = fig, ax, width, height
        self._old = {a.get_gid(): a for a in (*ax.texts, *ax.patches, *ax.lines)}
        self._flows = self._drawn = 0

    def _reuse(self, gid: str, cls):
        artist = self._old.pop(gid, None)
        if artist is not None and type(artist) is not cls:
            artist.remove()
            artist = None
        return artist

    def _set(self, artist, props: dict):
        self._drawn += 1
        artist.update(props | dict(zorder=props["zorder"] + self._drawn * 1e-6))

    def text(self, gid: str, xy, text: str, **props):
        artist = self._reuse(gid, Text) or self.ax.text(0, 0, "")
        self._set(artist, _TEXT | props | dict(x=xy[0], y=xy[1], text=text, gid=gid))

    def patch(self, gid: str, cls, **props):
        artist = self._reuse(gid, cls) or self.ax.add_artist(_MAKE[cls]())
        self._set(artist, _PATCH | props | dict(gid=gid))

    def line(self, gid: str, xs, ys, **props):
        artist = self._reuse(gid, Line2D) or self.ax.add_artist(Line2D([], []))
        self._set(artist, _LINE | props | dict(data=(xs, ys), gid=gid))

    def flow(self) -> str:
        """An id for an arrow or line that nothing refers to: numbered in drawing order."""
        self._flows += 1
        return f"flow-{self._flows}"

    def done(self, alt: str) -> tuple[Figure, str]:
        for artist in self._old.values():  # what the earlier diagram had and this one has not
            artist.remove()
        return self.fig, alt


def _n(n: int, word: str) -> str:
    """'1 head', '12 heads'."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def _line_height(size: float) -> float:
    return size * 1.45 / 72  # inches per line, mathtext's subscripts included


def _box(c: _Canvas, name: str, centre, size, colour, label: str, detail: str | None = None,
         count: int | None = None, *, fill=None):
    """A rounded box with up to three centred lines: label, detail (shapes), count (parameters)."""
    (x, y), (w, h) = centre, size
    c.patch(f"box-{name}", FancyBboxPatch, x=x - w / 2, y=y - h / 2, width=w, height=h,
            boxstyle="round,pad=0,rounding_size=0.05", facecolor=_tint(colour) if fill is None else fill,
            edgecolor=colour, linewidth=1.2)
    lines = [(role, text, size) for role, text, size in
             (("label", label, LABEL), ("detail", detail, SMALL),
              ("count", None if count is None else f"{count:,}", SMALL)) if text is not None]
    top = y + sum(_line_height(s) for *_, s in lines) / 2
    for role, text, font in lines:
        c.text(f"{role}-{name}", (x, top - _line_height(font) / 2), text, fontsize=font, ha="center")
        top -= _line_height(font)


def _text(c: _Canvas, name: str, xy, text: str, size: float = SMALL, **props):
    c.text(f"text-{name}", xy, text, fontsize=size, **props)


def _count_text(c: _Canvas, name: str, xy, text: str, size: float = SMALL, **props):
    """A text ending with a parameter count (tests read the count from the last number)."""
    c.text(f"count-{name}", xy, text, fontsize=size, **props)


def _arrow(c: _Canvas, start, end, name: str | None = None, *, lw: float = 1.0, colour="#444444",
           thickness: float | None = None):
    """A straight arrow from ``start`` to its tip at ``end``: a shaft ``lw`` points wide, or, with
    ``thickness`` (0 to 1), one that widens with it (a vector's width). One polygon: a fraction of the cost
    of a FancyArrowPatch, which counts when a slider redraws dozens of them."""
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length  # along the arrow; (-uy, ux) across it
    if thickness is None:
        shaft, head_width, head_length = lw / 72, 0.065, 0.08
    else:
        shaft = 0.02 + 0.08 * thickness
        head_width, head_length = shaft + 0.1, 0.13
    head_length = min(head_length, 0.6 * length)
    bx, by = x1 - ux * head_length, y1 - uy * head_length  # where the head starts
    corners = [(x0, y0, shaft), (bx, by, shaft), (bx, by, head_width)]
    left = [(x + -uy * w / 2, y + ux * w / 2) for x, y, w in corners]
    right = [(x - -uy * w / 2, y - ux * w / 2) for x, y, w in corners[::-1]]
    c.patch(c.flow() if name is None else f"arrow-{name}", Polygon, xy=[*left, (x1, y1), *right],
            closed=True, facecolor=colour)


def _path(c: _Canvas, points, colour="#444444"):
    """A line through ``points`` with an arrow on its last segment."""
    xs, ys = zip(*points[:-1], strict=True)
    c.line(c.flow(), xs, ys, color=colour, linewidth=1.0)
    _arrow(c, points[-2], points[-1], colour=colour)


def _title(c: _Canvas, text: str):
    _text(c, "title", (0.1, c.height - 0.2), text, TITLE, fontweight="bold")


# 1. One encoder block ---------------------------------------------------------------------------------------

def encoder_block_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """One encoder layer <- config: X (B, T, H) -> W_Q, W_K, W_V -> h heads -> (concat, W_O | sum) -> add & LN
    -> W_1 (H x F) -> act -> W_2 (F x H) -> add & LN, every part with its parameter count."""
    check_type("config", config, EncoderConfig)
    c = _Canvas(ax, "encoder_block")
    H, h, F, d = config.hidden_size, config.num_attention_heads, config.intermediate_size, config.d_head
    form = config.attention
    items = attention_param_items(H, h, form)
    per = count_parameters(config)
    qk, ln, w1, w2 = linear_params(H, H), layer_norm_params(H), linear_params(H, F), linear_params(F, H)
    width = c.width
    _title(c, f"One encoder layer: H = {H}, h = {_n(h, 'head')} of d_head = {d}, F = {F}, {form} attention")
    xa, xf = 2.85, 7.3                      # centres of the attention and FFN columns
    y_in, y_qkv, y_heads, y_out, y_add = 4.3, 3.5, 2.6, 1.75, 0.9
    big, wide = (1.62, 0.72), (5.06, 0.56)
    _box(c, "X", (xa, y_in), (2.6, 0.36), ROLE["input"], f"input $X$: (B, T, {H})", fill="#F2F2F2")
    qkv_x = (xa - 1.72, xa, xa + 1.72)
    _box(c, "W_Q", (qkv_x[0], y_qkv), big, ROLE["query_key"], "$W_Q$, $b_Q$", f"{H} x {H}, {H}", qk)
    _box(c, "W_K", (qkv_x[1], y_qkv), big, ROLE["query_key"], "$W_K$, $b_K$", f"{H} x {H}, {H}", qk)
    if form == "concat":
        _box(c, "W_V", (qkv_x[2], y_qkv), big, ROLE["value"], "$W_V$, $b_V$", f"{H} x {H}, {H}",
             items["value"])
        heads_out = f"head outputs (B, T, {h}, {d}), concatenated: (B, T, {H})"
        _box(c, "W_O", (xa, y_out), wide, ROLE["output"], f"then $W_O$, $b_O$: {H} x {H}, {H}",
             count=items["output"])
    else:
        _box(c, "W_V", (qkv_x[2], y_qkv), big, ROLE["value"], f"$W'_{{V,i}}$, $i$ = 1 .. {h}",
             f"{h} x {H} x {H}", items["value"])
        heads_out = fr"head outputs $A_i\, X\, W'_{{V,i}}$: (B, T, {h}, {H})"
        _box(c, "b_O", (xa, y_out), wide, ROLE["output"], f"sum over the heads, then add $b_O$: (B, T, {H})",
             count=items["output"])
    _box(c, "heads", (xa, y_heads), wide, ROLE["heads"],
         fr"{_n(h, 'head')}: $A_i = \mathrm{{softmax}}(Q_i K_i^\top / \sqrt{{{d}}})$", heads_out)
    _box(c, "LN_1", (xa, y_add), (2.6, 0.5), ROLE["norm"], "add $X$, layer norm", count=ln)
    _arrow(c, (xa, y_in - 0.18), (xa, y_qkv + 0.36))
    for x in qkv_x[::2]:
        _arrow(c, (xa + (x - xa) * 0.3, y_in - 0.18), (x, y_qkv + 0.36))
    for x in qkv_x:
        _arrow(c, (x, y_qkv - 0.36), (x, y_heads + 0.28))
    _arrow(c, (xa, y_heads - 0.28), (xa, y_out + 0.28))
    _arrow(c, (xa, y_out - 0.28), (xa, y_add + 0.25))
    _path(c, [(xa - 1.3, y_in), (0.12, y_in), (0.12, y_add), (xa - 1.3, y_add)])  # residual
    # the feed-forward sublayer runs upwards, beside
    y_w1, y_act, y_w2, y_add2, y_next = y_add, y_out, y_heads, y_qkv, y_in
    ffn = (2.8, 0.72)
    _box(c, "W_1", (xf, y_w1), ffn, ROLE["ffn"], "$W_1$, $b_1$", f"{H} x {F}, {F}", w1)
    _box(c, "act", (xf, y_act), (2.8, 0.5), ROLE["ffn"], config.hidden_act, f"(B, T, {F})",
         fill=_tint(ROLE["ffn"], 0.93))
    _box(c, "W_2", (xf, y_w2), ffn, ROLE["ffn"], "$W_2$, $b_2$", f"{F} x {H}, {H}", w2)
    _box(c, "LN_2", (xf, y_add2), (2.8, 0.5), ROLE["norm"], "add, layer norm", count=ln)
    _box(c, "output", (xf, y_next), (2.8, 0.36), ROLE["input"], f"output: (B, T, {H})", fill="#F2F2F2")
    _arrow(c, (xa + 1.3, y_add), (xf - 1.4, y_w1))
    _arrow(c, (xf, y_w1 + 0.36), (xf, y_act - 0.25))
    _arrow(c, (xf, y_act + 0.25), (xf, y_w2 - 0.36))
    _arrow(c, (xf, y_w2 + 0.36), (xf, y_add2 - 0.25))
    _arrow(c, (xf, y_add2 + 0.25), (xf, y_next - 0.18))
    _path(c, [(5.64, y_add), (5.64, y_add2), (xf - 1.4, y_add2)])  # residual
    attention, ffn_total, norms = per.attention_per_layer, ffn_params(H, F), per.layer_norms_per_layer
    total = attention + ffn_total + norms
    _count_text(c, "layer", (width / 2, 0.25),
                f"per layer: attention {attention:,} + FFN {ffn_total:,} + layer norms {norms:,} = {total:,}",
                LABEL, ha="center", va="center")
    values = (f"a value map of {H} x {H} ({items['value']:,} parameters with its bias)" if form == "concat"
              else f"{h} full-width value maps W'_V,i of {H} x {H} each ({items['value']:,} parameters)")
    out = (f"concatenated and projected by W_O ({H} x {H}, {items['output']:,} parameters)"
           if form == "concat" else f"summed, plus the output bias b_O ({items['output']:,} parameters)")
    alt = (f"One encoder layer at H = {H}, h = {_n(h, 'head')} of d_head = {d}, F = {F}, {form} attention. "
           f"The input X of shape (B, T, {H}) goes through W_Q and W_K ({H} x {H} plus bias, {qk:,} "
           f"parameters each) and {values}; the head outputs are {out}; then added to X and "
           f"layer-normalised ({ln:,}). The feed-forward sublayer W_1 ({H} x {F}, {w1:,}), "
           f"{config.hidden_act}, W_2 ({F} x {H}, {w2:,}) is added and layer-normalised again ({ln:,}). "
           f"One layer holds {total:,} parameters.")
    return c.done(alt)


# 2. ALBERT's embedding path ---------------------------------------------------------------------------------

def embedding_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """Embeddings <- config: token ids -> V x E table, + positions (P x E) + token types, LN at width E,
    then W_P (E x H + bias) when ``config.has_embedding_projection``, each with its parameter count."""
    check_type("config", config, EncoderConfig)
    c = _Canvas(ax, "embedding")
    V, E, H, P, types = (config.vocab_size, config.E, config.hidden_size, config.max_position_embeddings,
                         config.type_vocab_size)
    counts = count_parameters(config)
    width = c.width
    _title(c, f"Embeddings at E = {E}, H = {H}")
    rows = (2.25, 1.4, 0.55) if types else (1.85, 0.95)
    tables = [("token_table", "token table", f"V x E = {V} x {E}", counts.token_embeddings,
               "token ids (B, T)"),
              ("position_table", "position table", f"P x E = {P} x {E}", counts.position_embeddings,
               "positions (T,)")]
    if types:
        tables.append(("type_table", "token-type table", f"{types} x {E}", counts.token_type_embeddings,
                       "token types (B, T)"))
    x_tab, x_plus, x_ln, x_proj, x_out = 2.7, 4.05, 5.05, 6.7, 8.25
    y = 1.4
    narrow = E / H  # arrow widths: the path is as wide as the vectors it carries
    for (name, label, detail, count, source), y_row in zip(tables, rows, strict=True):
        _text(c, f"{name}_input", (1.6, y_row), source, SMALL, ha="right", va="center")
        _arrow(c, (1.65, y_row), (x_tab - 0.9, y_row))
        _box(c, name, (x_tab, y_row), (1.8, 0.75), ROLE["embedding"], label, detail, count)
        _arrow(c, (x_tab + 0.9, y_row), (x_plus - 0.17 * (1 if y_row == y else 0.7),
                                            y + 0.12 * (y_row > y) - 0.12 * (y_row < y)), name,
               thickness=narrow)
    c.patch("box-plus", Circle, center=(x_plus, y), radius=0.17, edgecolor="#444444", linewidth=1.2)
    c.text("label-plus", (x_plus, y), "+", fontsize=LABEL + 2, ha="center")
    _box(c, "LN", (x_ln, y), (1.3, 0.75), ROLE["norm"], "layer norm", f"width E = {E}",
         counts.embedding_layer_norm)
    _arrow(c, (x_plus + 0.17, y), (x_ln - 0.65, y), "to_LN", thickness=narrow)
    if config.has_embedding_projection:
        _box(c, "W_P", (x_proj, y), (1.6, 0.75), ROLE["projection"], "$W_P$, bias",
             f"E x H = {E} x {H}", counts.embedding_projection)
        _arrow(c, (x_ln + 0.65, y), (x_proj - 0.8, y), "to_W_P", thickness=narrow)
        _arrow(c, (x_proj + 0.8, y), (x_out - 0.65, y), "to_hidden", thickness=1.0)
        step = f"then the projection W_P, b ({E} x {H} plus bias, {counts.embedding_projection:,} parameters)"
    else:
        _arrow(c, (x_ln + 0.65, y), (x_out - 0.65, y), "to_hidden", thickness=narrow)
        _text(c, "no_projection", ((x_ln + x_out) / 2 + 0.0, y - 0.2), f"E = H = {H}:\nno projection", SMALL,
              ha="center", va="top", color="#555555", style="italic")
        step = "and no projection, since E = H"
    _box(c, "hidden", (x_out, y), (1.3, 0.75), ROLE["input"], "hidden states", f"(B, T, {H})",
         fill="#F2F2F2")
    _count_text(c, "embeddings", (width - 0.1, 0.2), f"embeddings in all: {counts.embeddings:,}", LABEL,
                ha="right", va="center")
    types_alt = (f", plus a {types} x {E} token-type table ({counts.token_type_embeddings:,})" if types
                 else "")
    alt = (f"The embedding path at V = {V}, E = {E}, H = {H}: token ids look up a V x E = {V} x {E} table "
           f"({counts.token_embeddings:,} parameters), plus a P x E = {P} x {E} position table "
           f"({counts.position_embeddings:,}){types_alt}; the sum is layer-normalised at width E = {E} "
           f"({counts.embedding_layer_norm:,}), {step}, giving hidden states (B, T, {H}). "
           f"The embeddings hold {counts.embeddings:,} parameters.")
    return c.done(alt)


# 3. The attention output projection: concat then W_O, or summed full-width maps ----------------------------

def _head_colour(i: int) -> str:
    return CYCLE[i % len(CYCLE)]


def _strips(c: _Canvas, name: str, x0, y0, w, ht, h: int, *, rows: bool = False):
    """A w x ht rectangle cut into h coloured strips, one per head: columns, or with ``rows`` rows (head 1
    on top)."""
    for i in range(h):
        step = (ht if rows else w) / h
        xy, sw, sh = ((x0, y0 + ht - (i + 1) * step), w, step) if rows else ((x0 + i * step, y0), step, ht)
        c.patch(f"box-{name}_head{i + 1}", Rectangle, xy=xy, width=sw, height=sh, facecolor=_head_colour(i),
                edgecolor="white", linewidth=0.4 if h <= 16 else 0)
    c.patch(f"box-{name}", Rectangle, xy=(x0, y0), width=w, height=ht, fill=False, edgecolor="#333333",
            zorder=1.5)


def output_projection_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """concat(A_1 X W_V,1, ..., A_h X W_V,h) W_O  against  sum_i A_i X W'_V,i <- config: head i's d_head
    columns of W_V and rows of W_O beside the h full H x H maps, with both forms' counts."""
    check_type("config", config, EncoderConfig)
    c = _Canvas(ax, "output_projection")
    H, h, d = config.hidden_size, config.num_attention_heads, config.d_head
    concat, summed = attention_param_items(H, h, "concat"), attention_param_items(H, h, "sum")
    _title(c, f"Values and output projection: H = {H}, h = {_n(h, 'head')} of d_head = {d}")
    side, y0 = 1.4, 1.35
    line1, line2 = y0 - 0.17, y0 - 0.17 - _line_height(LABEL)  # the lines under the squares
    _strips(c, "W_V", 0.35, y0, side, side, h)
    _strips(c, "W_O", 2.55, y0, side, side, h, rows=True)
    _text(c, "W_V", (0.35 + side / 2, line1), f"$W_V$: {H} x {H}", LABEL, ha="center", va="center")
    _text(c, "W_V_heads", (0.35 + side / 2, line2), f"head $i$: {d} columns", SMALL, ha="center",
          va="center")
    _text(c, "W_O", (2.55 + side / 2, line1), f"$W_O$: {H} x {H}", LABEL, ha="center", va="center")
    _text(c, "W_O_heads", (2.55 + side / 2, line2), f"head $i$: {d} rows", SMALL, ha="center",
          va="center")
    _arrow(c, (0.35 + side + 0.08, y0 + side / 2), (2.55 - 0.08, y0 + side / 2), "concat")
    _text(c, "concat_label", (0.35 + side + 0.35, y0 + side / 2 + 0.15), "concat", SMALL, ha="center",
          va="center")
    heading, count1, count2 = c.height - 0.5, 0.45, 0.45 - _line_height(SMALL)
    _text(c, "concat_title", (0.35, heading), "concat, then $W_O$", LABEL, ha="left", va="center",
          fontweight="bold")
    vo = concat["value"] + concat["output"]
    _count_text(c, "concat_values", (0.35, count1), f"$W_V$, $b_V$ + $W_O$, $b_O$: {vo:,}", SMALL,
                ha="left", va="center")
    _count_text(c, "concat", (0.35, count2), f"with $W_Q$, $W_K$: {sum(concat.values()):,}", SMALL,
                ha="left", va="center")
    c.line("flow-separator", [4.45, 4.45], [0.1, heading + 0.1], color="#CCCCCC", linewidth=1.0)
    # the sum form: h cards of H x H, drawn as a deck (each as large as W_V)
    x0 = 5.0
    offset = 0.0 if h == 1 else min(0.12, 0.9 / (h - 1))  # head 1 in front, the others behind, up-right
    for i in range(h):  # zorder, not drawing order, keeps head 1 in front (artists may be reused)
        c.patch(f"box-W_V{i + 1}", Rectangle, xy=(x0 + i * offset, y0 + i * offset * 0.4), width=side,
                height=side, facecolor=_head_colour(i), edgecolor="white" if h <= 16 else _head_colour(i),
                linewidth=0.6, zorder=1 + (h - i) / (h + 1))
    deck_right = x0 + side + (h - 1) * offset
    _text(c, "sum_maps", (x0, line1), f"{_n(h, 'map')} $W'_{{V,i}}$, each {H} x {H}", LABEL, ha="left",
          va="center")
    _text(c, "sum_rule", (x0, line2), "$W'_{V,i}$ = ($W_V$ columns of $i$) ($W_O$ rows of $i$)", SMALL,
          ha="left", va="center")
    _text(c, "sum_symbol", (deck_right + 0.35, y0 + side / 2), r"$\sum_i\ A_i\, X\, W'_{V,i} + b_O$", LABEL,
          ha="left", va="center")
    _text(c, "sum_title", (x0, heading), "sum, no $W_O$", LABEL, ha="left", va="center", fontweight="bold")
    sv = summed["value"] + summed["output"]
    _count_text(c, "sum_values", (x0, count1), f"{_n(h, 'map')} + $b_O$: {sv:,}", SMALL, ha="left",
                va="center")
    _count_text(c, "sum", (x0, count2), f"with $W_Q$, $W_K$: {sum(summed.values()):,}", SMALL, ha="left",
                va="center")
    alt = (f"The attention values and output projection at H = {H} with h = {_n(h, 'head')} of d_head = {d}. "
           f"Concat form: W_V ({H} x {H}) split into {h} coloured blocks of {d} columns, one per head, and "
           f"W_O ({H} x {H}) into {h} blocks of {d} rows; values and output hold {vo:,} parameters, "
           f"{sum(concat.values()):,} with W_Q and W_K. Sum form: {h} full {H} x {H} maps W'_V,i, one per "
           f"head, summed, with no W_O: {sv:,} parameters, "
           f"{sum(summed.values()):,} with W_Q and W_K.")
    return c.done(alt)


def _deck(c: _Canvas, name: str, x0, y0, w, ht, h: int):
    """h tiles of w x ht, head 1 in front and the others behind it, up and to the right."""
    offset = 0.0 if h == 1 else min(0.08, 0.45 / (h - 1))
    for i in range(h):
        c.patch(f"box-{name}{i + 1}", Rectangle, xy=(x0 + i * offset, y0 + i * offset), width=w, height=ht,
                facecolor=_head_colour(i), edgecolor="white" if h <= 16 else _head_colour(i), linewidth=0.6,
                zorder=1 + (h - i) / (h + 1))
    return x0 + w + (h - 1) * offset


def head_split_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """(B, T, H) -split-> (B, h, T, d_head) -attend-> (B, h, T, d_head) -merge-> (B, T, H), then x W_O: head
    i's d_head columns of the merged values meet W_O's rows i d_head ... (i + 1) d_head - 1
    (:func:`~geron_lib.model.attention.split_heads`, :func:`~geron_lib.model.attention.merge_heads`)."""
    check_type("config", config, EncoderConfig)
    c = _Canvas(ax, "head_split")
    H, h, d = config.hidden_size, config.num_attention_heads, config.d_head
    _title(c, f"Splitting and merging heads: H = {H} = h x d_head = {h} x {d}")
    y0, ht = 1.35, 0.8
    label_y, shape_y = y0 + ht + 0.25, y0 - 0.17

    def shape(name, x, symbols, numbers):
        _text(c, f"{name}_shape", (x, shape_y), symbols, SMALL, ha="center")
        _text(c, f"{name}_sizes", (x, shape_y - _line_height(SMALL)), numbers, SMALL, ha="center")

    _strips(c, "values", 0.3, y0, 1.2, ht, h)
    _text(c, "values", (0.9, label_y), "values $V = X W_V + b_V$", LABEL, ha="center")
    shape("values", 0.9, "(B, T, H)", f"= (B, T, {H})")
    for name, x_from, x_to in (("split", 1.6, 2.3), ("attend", 3.55, 4.2), ("merge", 5.45, 6.1)):
        _arrow(c, (x_from, y0 + ht / 2), (x_to, y0 + ht / 2), name)
        _text(c, f"{name}_label", ((x_from + x_to) / 2, y0 + ht / 2 + 0.14), name, SMALL, ha="center")
    for name, x0, title in (("split", 2.4, "one tile per head"), ("heads", 4.3, "each head's $A_i V_i$")):
        right = _deck(c, name, x0, y0, 0.5, ht - 0.35, h)
        _text(c, name, ((x0 + right) / 2, label_y), title, LABEL, ha="center")
        shape(name, (x0 + right) / 2, "(B, h, T, d_head)", f"= (B, {h}, T, {d})")
    _strips(c, "merged", 6.2, y0, 1.0, ht, h)
    _text(c, "merged", (6.7, label_y), "concatenated", LABEL, ha="center")
    shape("merged", 6.7, "(B, T, H)", f"= (B, T, {H})")
    _text(c, "times", (7.375, y0 + ht / 2), "x", LABEL, ha="center")
    _strips(c, "W_O", 7.55, y0, ht, ht, h, rows=True)
    _text(c, "W_O", (7.55 + ht / 2, label_y), "$W_O$", LABEL, ha="center")
    shape("W_O", 7.55 + ht / 2, "(H, H)", f"= ({H}, {H})")
    rule = 0.65  # the first line of the rules under the picture
    _text(c, "split_rule", (0.3, rule), "split: reshape to (B, T, h, d_head), then swap T and h; merge: the "
          "reverse", SMALL, ha="left")
    _text(c, "W_O_rule", (0.3, rule - _line_height(SMALL) / 2), f"after the merge, the {d} columns of head "
          f"$i$ meet the {d} rows of $W_O$'s block $i$,\nand the {_n(h, 'product')} add up to the output",
          SMALL, ha="left", va="top")
    alt = (f"Splitting and merging {_n(h, 'head')} at H = {H}: the values, shape (B, T, {H}), are cut into "
           f"{h} coloured column blocks of d_head = {d}, reshaped and transposed to (B, {h}, T, {d}), "
           f"one tile per head; each head attends on its own; the outputs are transposed and reshaped back "
           f"to (B, T, {H}), the heads' blocks side by side, and multiplied by W_O ({H} x {H}), whose rows "
           f"come in {h} blocks of {d}, block i meeting head i's columns.")
    return c.done(alt)

# 4. Cross-layer sharing ------------------------------------------------------------------------------------

def sharing_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """c_A, c_F = stored_copies(config): the L layers of the forward pass, each pointing at the attention
    and FFN sublayers it runs, of which the encoder stores c_A and c_F."""
    check_type("config", config, EncoderConfig)
    c = _Canvas(ax, "sharing")
    L, H, mode = config.num_hidden_layers, config.hidden_size, config.sharing
    counts = count_parameters(config)
    copies = stored_copies(config)
    width, height = c.width, c.height
    _title(c, f"Cross-layer sharing '{mode}': L = {_n(L, 'layer')} at H = {H}")
    _count_text(c, "encoder", (0.1, height - 0.2 - _line_height(TITLE)),
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
    _text(c, "layers", (0.1, y_layer), "layers, in order", LABEL, ha="left", va="center")
    for kind, n, per, y, sign, colour in (
            ("attention", copies[0], counts.attention_per_layer, y_att, 1, ROLE["query_key"]),
            ("ffn", copies[1], counts.ffn_per_layer, y_ffn, -1, ROLE["ffn"])):
        name = "attention" if kind == "attention" else "FFN"
        _text(c, f"{kind}_row", (0.1, y + 0.11), f"stored {name}", LABEL, ha="left", va="center")
        _count_text(c, kind, (0.1, y - 0.12), f"{n} x {per:,}", SMALL, ha="left", va="center")
        box_edge, tile_edge = y - sign * 0.18, y_layer + sign * 0.18
        if n == 1:
            span = max(xs[-1] - xs[0] + tile, 3.4)
            _box(c, f"{kind}1", ((left + right) / 2, y), (span, 0.36), colour,
                 f"one {name} sublayer, run by {'all ' if L > 1 else ''}{_n(L, 'layer')}")
            squeeze = min(1.0, 0.9 * (span - 0.2) / max(xs[-1] - xs[0], 1e-9))
            ends = [(left + right) / 2 + (x - (left + right) / 2) * squeeze for x in xs]
        else:
            for i, x in enumerate(xs):
                c.patch(f"box-{kind}{i + 1}", FancyBboxPatch, x=x - tile / 2, y=y - 0.18, width=tile,
                        height=0.36, boxstyle="round,pad=0,rounding_size=0.03", facecolor=_tint(colour),
                        edgecolor=colour)
            ends = xs
        for i, (x, end) in enumerate(zip(xs, ends, strict=True)):
            _arrow(c, (x, tile_edge), (end, box_edge), f"{kind}{i + 1}", lw=0.8, colour="#555555")
    norms = counts.layer_norms
    alt = (f"Cross-layer sharing '{mode}' with L = {_n(L, 'layer')} at H = {H}: the forward pass runs "
           f"{_n(L, 'layer')}, each pointing at the attention and the feed-forward sublayer it runs. "
           f"The encoder stores "
           f"{_n(copies[0], 'attention sublayer')} of {counts.attention_per_layer:,} parameters and "
           f"{_n(copies[1], 'feed-forward sublayer')} of "
           f"{counts.ffn_per_layer:,}, with {norms:,} parameters of layer norms: {counts.encoder:,} in all.")
    return c.done(alt)


# 5. Masking timelines --------------------------------------------------------------------------------------

SCHEDULE_LABELS = {"static": "static", "duplicated": "static x {k}", "dynamic": "dynamic"}


def masking_timeline_diagram(epochs: int = 8, copies: int = 3, *, ax: Axes | None = None
                             ) -> tuple[Figure, str]:
    """m(e) = 0 (static),  e mod k (static x k),  e (dynamic): the masking each epoch e uses, as rows of
    epochs, with the maskings each sequence gets (:func:`geron_lib.pretraining.masking.mask_index`)."""
    epochs = check_int("epochs", epochs, minimum=1)
    if epochs > MAX_EPOCHS:
        raise ValueError(f"epochs must be at most {MAX_EPOCHS} (one readable column each), got {epochs}")
    copies = check_int("copies", copies, minimum=1)
    c = _Canvas(ax, "masking_timeline")
    width = c.width
    _title(c, f"The masking m(e) each epoch e uses: {_n(epochs, 'epoch')}, k = {copies}")
    left, right = 1.2, 7.75
    pitch = (right - left) / epochs
    cell = min(pitch - 0.015, 0.6)
    _text(c, "epoch", (0.1, 1.42), "epoch e", SMALL, ha="left", va="center")
    for e in range(epochs):
        _text(c, f"epoch{e}", (left + (e + 0.5) * pitch, 1.42), str(e), SMALL, ha="center", va="center")
    alt_rows = []
    for schedule, y in zip(SCHEDULES, (1.1, 0.7, 0.3), strict=True):
        label = SCHEDULE_LABELS[schedule].format(k=copies)
        _text(c, schedule, (0.1, y), label, LABEL, ha="left", va="center")
        used = [mask_index(e, schedule, copies) for e in range(epochs)]
        for e, m in enumerate(used):
            x = left + (e + 0.5) * pitch
            c.patch(f"box-{schedule}_e{e}", Rectangle, xy=(x - cell / 2, y - 0.16), width=cell, height=0.32,
                    facecolor=_tint(_head_colour(m), 0.5), edgecolor="white", linewidth=0.5)
            c.text(f"label-{schedule}_e{e}", (x, y), str(m), ha="center")
        drawn = draws_per_sequence(epochs, schedule, copies)
        _count_text(c, f"{schedule}_draws", (width - 0.1, y), _n(drawn, "masking"),
                    SMALL, ha="right", va="center")
        alt_rows.append(f"{label} uses masking{'s' if len(set(used)) > 1 else ''} "
                        f"{', '.join(map(str, used))} ({drawn} in all)")
    alt = (f"Over {_n(epochs, 'epoch')} (e = 0 to {epochs - 1}), the masking each epoch uses: "
           + "; ".join(alt_rows) + ".")
    return c.done(alt)


# 6. Sharing among its relatives ---------------------------------------------------------------------------

#: The four ways of stacking blocks that chapter 2 sets side by side: name, what is stored, how deep it runs
#: (the name and the depth drawn on two lines where they hold a line break).
RECURRENCE_KINDS = (
    ("bert", "BERT", "L different blocks", "runs each once:\nL = {L}"),
    ("albert", "ALBERT", "one block", "runs it exactly\nL = {L} times"),
    ("universal", "Universal\nTransformer", "one block", "runs it until each\nposition halts"),
    ("equilibrium", "Deep equilibrium\nmodel", "one block", "iterates it to\na fixed point"),
)


def recurrence_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """X_l = Block_l(X_{l-1}) (BERT),  X_l = Block(X_{l-1}), l = 1 ... L (ALBERT),  Block repeated until each
    position halts (Universal Transformer),  X* = Block(X*; X_0) (deep equilibrium model): what each stores,
    and how deep it runs. The stored counts are the library's, for ``config``'s block unshared and all
    shared."""
    check_type("config", config, EncoderConfig)
    c = _Canvas(ax, "recurrence")
    L, H = config.num_hidden_layers, config.hidden_size
    stored = {"bert": count_parameters(config.replace(sharing="none")).encoder,
              "albert": count_parameters(config.replace(sharing="all")).encoder}
    stored["universal"] = stored["equilibrium"] = stored["albert"]
    width = c.width
    _title(c, f"Depth from stored blocks: BERT, ALBERT and two relatives, at H = {H}")
    pitch = width / len(RECURRENCE_KINDS)
    up = 0.3  # the blocks and names above the two lines of depth and the count
    colours = (ROLE["ffn"], ROLE["query_key"], ROLE["value"], ROLE["heads"])
    alt_parts = []
    for k, ((kind, drawn_name, what, drawn_depth), colour) in enumerate(zip(RECURRENCE_KINDS, colours,
                                                                            strict=True)):
        x = (k + 0.5) * pitch
        name, depth = drawn_name.replace("\n", " "), drawn_depth.replace("\n", " ")
        _text(c, f"{kind}_name", (x, 2.4 + up), drawn_name, LABEL, ha="center", fontweight="bold")
        if kind == "bert":
            for i, (y, label) in enumerate(((1.95, "block 1"), (1.5, "block 2"), (0.95, f"block {L}"))):
                _box(c, f"{kind}{i}", (x, y + up), (1.3, 0.32), colour, label)
            _arrow(c, (x, 1.79 + up), (x, 1.66 + up), lw=0.8)
            _text(c, f"{kind}_more", (x, 1.22 + up), "...", LABEL, ha="center")
        else:
            _box(c, kind, (x, 1.45 + up), (1.3, 0.5), colour, what)
            right, mid, top = x + 0.65, 1.45 + up, 1.7 + up
            _path(c, [(right, mid), (right + 0.25, mid), (right + 0.25, top + 0.3), (x, top + 0.3), (x, top)])
        _text(c, f"{kind}_depth", (x, 0.65), drawn_depth.format(L=L), SMALL, ha="center")
        _count_text(c, f"{kind}_stored", (x, 0.22), f"stores {stored[kind]:,}", SMALL, ha="center")
        alt_parts.append(f"{name} stores {what} ({stored[kind]:,} parameters here) and {depth.format(L=L)}")
    alt = (f"Four ways of stacking encoder blocks at H = {H} with L = {_n(L, 'layer')}: "
           + "; ".join(alt_parts) + ".")
    return c.done(alt)


def svg(fig: Figure) -> str:
    """The figure as SVG text, byte-identical from one render (and one process) to the next: fixed hash
    salt for the element ids, no date."""
    check_type("fig", fig, Figure)
    buffer = io.StringIO()
    with mpl.rc_context({"svg.hashsalt": "geron_lib", "svg.fonttype": "path"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def show(fig: Figure) -> SVG:
    """The figure for a notebook cell to end with: an SVG display of :func:`svg` (image/svg+xml, the same
    bytes every run), so that the page shows the diagram as a vector picture at the column's width rather
    than the inline backend's PNG."""
    check_type("fig", fig, Figure)
    return SVG(svg(fig))
