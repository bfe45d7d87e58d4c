"""Reading the diagrams back: texts and boxes by their ids, the counts they show, how large a text shows in
the book's column, layout problems (small fonts, overlapping texts, text outside its box or over another box,
text off the figure), scrubber frames."""

from __future__ import annotations

import base64
import io
import itertools
import re

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from PIL import Image

TOLERANCE = 0.5  # pixels
# The width of the book's content column for a figure, in CSS px: what chromium gives a figure's <img> in
# _build/html at the browser tests' 1280 x 900 window (the <figure> is 688 px, less 8 px of padding each
# side), measured with Playwright as tests/book_site drives it, alike on every page with a figure.
COLUMN_PX = 672
MIN_PX = 11  # the smallest a diagram's text may show in the column, in CSS px
DIAGRAM_INCHES = 9.0  # the diagrams' width


def shown_px(points: float, width_inches: float) -> float:
    """How tall, in CSS px, a text of ``points`` shows when a figure ``width_inches`` wide is drawn as SVG
    (96 px an inch at its natural size) and scaled down to the column, never up."""
    return points * 96 / 72 * min(1.0, COLUMN_PX / (width_inches * 96))


MIN_FONT = MIN_PX / shown_px(1.0, DIAGRAM_INCHES)  # 10.61 pt: the smallest font a 9-inch diagram may use


def texts(fig) -> dict:
    """Every text of the figure that carries an id, by id."""
    return {t.get_gid(): t for ax in fig.axes for t in ax.texts if t.get_gid()}


def count(fig, name: str) -> int:
    """The parameter count a ``count-NAME`` text shows (its last number)."""
    return numbers(fig, f"count-{name}")[-1]


def numbers(fig, gid: str) -> list[int]:
    """The whole numbers (with thousands separators) in the text with id ``gid``."""
    return [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", texts(fig)[gid].get_text())]


def boxes(fig, prefix: str) -> list:
    """The patches whose id starts with ``box-`` + ``prefix``, in drawing order."""
    return [p for ax in fig.axes for p in ax.patches if (p.get_gid() or "").startswith("box-" + prefix)]


def arrows(fig, prefix: str) -> list:
    return [p for ax in fig.axes for p in ax.patches if (p.get_gid() or "").startswith("arrow-" + prefix)]


def arrow_tip(arrow) -> np.ndarray:
    """Where an arrow (a polygon: shaft, head, tip, head, shaft) points."""
    return arrow.get_xy()[3]


def shaft_width(arrow) -> float:
    xy = arrow.get_xy()
    return float(np.hypot(*(xy[0] - xy[6])))


def scrubber_frames(page: str) -> list[np.ndarray]:
    """A scrubber's frames (its HTML), as RGBA pixel arrays, in the order of their index: cut from its
    sheets (data-per-sheet frames to a sheet, the last holding the rest of data-frames)."""
    frames, per = (int(re.search(rf'data-{key}="(\d+)"', page)[1]) for key in ("frames", "per-sheet"))
    sheets = re.findall(r'class="geron-scrub-sheet" src="data:image/webp;base64,([^"]+)"', page)
    cut = []
    for s, src in enumerate(sheets):
        sheet = np.asarray(Image.open(io.BytesIO(base64.b64decode(src))).convert("RGBA"))
        held = min(per, frames - s * per)
        height, remainder = divmod(sheet.shape[0], held)
        assert remainder == 0, f"sheet {s} is {sheet.shape[0]} rows, not {held} frames of one height"
        cut += [sheet[k * height:(k + 1) * height] for k in range(held)]
    assert len(cut) == frames, f"the sheets hold {len(cut)} frames, not data-frames={frames}"
    return cut


def layout_problems(fig) -> list[str]:
    """What would make a diagram hard to read: fonts under MIN_FONT points, texts that overlap, a box's text
    spilling out of it, a free text lying on a box, any text leaving the figure, a diagram's text on a chart,
    a chart beside it leaving the figure."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    diagram_axes = [ax for ax in fig.axes if any(t.get_gid() for t in ax.texts)]
    charts = [ax.get_tightbbox(renderer) for ax in fig.axes if ax not in diagram_axes and ax.get_visible()]
    problems = [f"chart {i} (ticks, labels, title) leaves the figure" for i, chart in enumerate(charts)
                if not _inside(chart, fig.bbox)]
    for ax in diagram_axes:
        shown = [t for t in ax.texts if t.get_visible() and t.get_text().strip()]
        extent = {t.get_gid(): t.get_window_extent(renderer) for t in shown}
        box = {p.get_gid()[4:]: p.get_window_extent(renderer) for p in ax.patches
               if (p.get_gid() or "").startswith("box-")}
        for t in shown:
            gid, e = t.get_gid(), extent[t.get_gid()]
            if t.get_fontsize() < MIN_FONT:
                problems.append(f"{gid}: {t.get_fontsize()} pt")
            if not _inside(e, fig.bbox):
                problems.append(f"{gid} leaves the figure")
            if any(e.overlaps(chart) for chart in charts):
                problems.append(f"{gid} lies on a chart")
            role, _, name = gid.partition("-")
            own = name if role in ("label", "detail", "count") and name in box else None
            if own and not _inside(e, box[own]):
                problems.append(f"{gid} ({t.get_text()!r}) spills out of box-{own}")
            problems += [f"{gid} ({t.get_text()!r}) lies on box-{other}" for other, b in box.items()
                         if other != own and e.overlaps(b)]
        for a, b in itertools.combinations(shown, 2):
            if extent[a.get_gid()].overlaps(extent[b.get_gid()]):
                problems.append(f"{a.get_gid()} ({a.get_text()!r}) overlaps {b.get_gid()} ({b.get_text()!r})")
    return problems


def _inside(inner, outer) -> bool:
    return (inner.x0 >= outer.x0 - TOLERANCE and inner.x1 <= outer.x1 + TOLERANCE
            and inner.y0 >= outer.y0 - TOLERANCE and inner.y1 <= outer.y1 + TOLERANCE)
