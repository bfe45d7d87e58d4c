"""The drawing engine every diagram uses, and its export: :class:`Canvas` (axes laid out in inches, whose
artists are named by id and reused on a redraw), the shapes drawn on it (:func:`box`, :func:`text`,
:func:`count_text`, :func:`arrow`, :func:`path`, :func:`title`), the diagrams' sizes (:data:`SIZES`),
fonts and colours, and :func:`svg` and :func:`show`, a figure as byte-identical SVG text and as a notebook
cell's SVG display.

The ids say what an artist is: ``box-NAME`` and its texts ``label-NAME``, ``detail-NAME``, ``count-NAME``
(:func:`box`), ``count-NAME`` (:func:`count_text`, the count ends the text), ``arrow-NAME``
(:func:`arrow`), ``text-NAME`` (:func:`text`); arrows and lines that nothing refers to are
``flow-1``, ``flow-2``, ... in drawing order. :func:`svg` writes them as element ids.
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

from ...validate import check_type
from ..plots import PALETTE, fixed_layout, new_figure

#: Width and height (inches) every diagram needs: its own figure's size, the least size of a given ``ax``.
SIZES = {"encoder_block": (9.0, 5.0), "embedding": (9.0, 3.2), "output_projection": (9.0, 3.8),
         "sharing": (9.0, 3.2), "masking_timeline": (9.0, 2.0), "recurrence": (9.0, 3.3),
         "head_split": (9.0, 3.1), "basis_change": (9.0, 3.9), "block_graph": (9.0, 5.0),
         "weight_layout": (9.0, 3.6)}
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


def tint(colour, share: float = 0.8) -> tuple[float, float, float]:
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


class Canvas:
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
            frame = ax.get_position()
            w, h = frame.width * fig.get_figwidth(), frame.height * fig.get_figheight()
            if w < width - 1e-6 or h < height - 1e-6:
                raise ValueError(f"ax is {w:.2f} x {h:.2f} inches, but this diagram needs at least "
                                 f"{width} x {height} inches (SIZES[{name!r}])")
        frame = ax.get_position()
        w, h = frame.width * fig.get_figwidth(), frame.height * fig.get_figheight()
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


def plural(n: int, word: str) -> str:
    """'1 head', '12 heads'."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def line_height(size: float) -> float:
    return size * 1.45 / 72  # inches per line, mathtext's subscripts included


def box(c: Canvas, name: str, centre, size, colour, label: str, detail: str | None = None,
        count: int | None = None, *, fill=None):
    """A rounded box with up to three centred lines: label, detail (shapes), count (parameters)."""
    (x, y), (w, h) = centre, size
    c.patch(f"box-{name}", FancyBboxPatch, x=x - w / 2, y=y - h / 2, width=w, height=h,
            boxstyle="round,pad=0,rounding_size=0.05", facecolor=tint(colour) if fill is None else fill,
            edgecolor=colour, linewidth=1.2)
    lines = [(role, words, size) for role, words, size in
             (("label", label, LABEL), ("detail", detail, SMALL),
              ("count", None if count is None else f"{count:,}", SMALL)) if words is not None]
    top = y + sum(line_height(s) for *_, s in lines) / 2
    for role, words, font in lines:
        c.text(f"{role}-{name}", (x, top - line_height(font) / 2), words, fontsize=font, ha="center")
        top -= line_height(font)


def text(c: Canvas, name: str, xy, words: str, size: float = SMALL, **props):
    """A text that belongs to no box."""
    c.text(f"text-{name}", xy, words, fontsize=size, **props)


def count_text(c: Canvas, name: str, xy, words: str, size: float = SMALL, **props):
    """A text ending with a parameter count (tests read the count from the last number)."""
    c.text(f"count-{name}", xy, words, fontsize=size, **props)


def arrow(c: Canvas, start, end, name: str | None = None, *, lw: float = 1.0, colour="#444444",
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


def path(c: Canvas, points, colour="#444444"):
    """A line through ``points`` with an arrow on its last segment."""
    xs, ys = zip(*points[:-1], strict=True)
    c.line(c.flow(), xs, ys, color=colour, linewidth=1.0)
    arrow(c, points[-2], points[-1], colour=colour)


def title(c: Canvas, words: str):
    """The diagram's title, top left, in bold."""
    text(c, "title", (0.1, c.height - 0.2), words, TITLE, fontweight="bold")


def head_colour(i: int) -> str:
    """The colour of head, masking or layer ``i`` (from 0), in turn from :data:`CYCLE`."""
    return CYCLE[i % len(CYCLE)]


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
