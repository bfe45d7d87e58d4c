"""Sliders driving a figure: live with ipywidgets in Jupyter, and a scrubber of pre-drawn frames that
works in the static HTML book without a kernel (inline HTML and JavaScript, nothing fetched).

The scrubber's frames are stacked into a few tall sheets, each one lossless WebP image: WebP's
lossless coder refers back up to a million pixels, further than a frame, so a frame costs little more
than what it changes from the frames above it, several times less than a PNG of its own. The page shows
one frame of a sheet at a time, the others cut off by the box around it.

The live figure is an ``ipywidgets.Image`` whose PNG each slider move replaces, never an ``Output``
widget that the figure is displayed into: nbclient (the book build, nbval, the assignment tests) stands in
for a front end's Output widget by sending a comm message on the shell channel for every output the widget
captures, while it awaits the cell's execute reply on that same socket, and the reply's wake-up can then be
lost: the cell waits out nbclient's whole timeout and goes on with no error (nbclient issue 312).
``scripts/widget_stall.py`` counts such stalls."""

from __future__ import annotations

import base64
import html
import io
import itertools
import json
import math
import os
import sys
from collections.abc import Callable

import ipywidgets as widgets
import matplotlib as mpl
from IPython.display import HTML
from matplotlib.backends.backend_agg import FigureCanvasAgg
from PIL import Image

from .diagrams.canvas import SMALL
from .plots import new_figure

#: The PNGs' resolution: a 9-inch frame is 720 px, drawn at 672 / 720 of that in the book's column.
PNG_DPI = 80
#: Every text's default size (tick labels, axis labels, legends): as small as a diagram's smallest text.
FONT = {"font.size": SMALL}
#: The tallest a sheet of scrubber frames may be, in pixels: WebP's limit is 16383; a sheet of 8192 rows
#: (14 frames of 576) decodes to 24 MB in the browser, and longer sheets compress no better.
SHEET_ROWS = 8192
#: Lossless WebP at the encoder's full effort (quality 100: below it, the coder refers back only a few
#: rows, never to the frame above) and method 4 (6 gives the same bytes, ten times slower)
WEBP = {"format": "WEBP", "lossless": True, "quality": 100, "method": 4}


class Explorer:
    """A figure redrawn from slider values.

    ``controls`` maps names to ipywidgets value widgets (sliders, dropdowns, ...).
    ``plot(fig, **values)`` draws on ``fig`` (it may keep its artists between calls) and returns
    the numbers it plotted, kept as ``.data`` so that tests can check them. It draws with :data:`FONT` as
    the default font size, so that texts it sizes by name ("medium", "large") or not at all show at 11 px or
    more in the book's column when the figure is at most 9 inches wide.
    """

    def __init__(self, controls: dict[str, widgets.ValueWidget], plot: Callable[..., dict], *,
                 width: float = 8.0, height: float = 3.5, alt: str = "figure"):
        self.controls, self.plot, self.alt = controls, plot, alt
        self.fig, _ = new_figure(width=width, height=height)
        self.fig.clf()
        FigureCanvasAgg(self.fig)  # one canvas for every frame, so text metrics are cached between frames
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%"))
        self._live = False  # True once widget() has been shown: then every change is rendered into the image
        self.data = self._draw(**self.values)
        for control in controls.values():
            control.observe(self._changed, names="value")

    @property
    def values(self) -> dict:
        return {name: c.value for name, c in self.controls.items()}

    def _draw(self, **values) -> dict:
        with mpl.rc_context(FONT):
            return self.plot(self.fig, **values)

    def _changed(self, _change=None):
        self.data = self._draw(**self.values)
        if self._live:
            self.image.value = self.png()

    def set(self, **values) -> dict:
        """Move sliders as a reader would (each move redraws); returns the plotted numbers."""
        for name, value in values.items():
            if name not in self.controls:
                raise ValueError(f"no control named {name!r}; this explorer has {list(self.controls)}")
            self.controls[name].value = value
        return self.data

    def png(self) -> bytes:
        """The figure as it stands, rendered to PNG. For a fast slider: glyphs are not hinted (matplotlib 3.11
        spends about a quarter of a text-heavy frame hinting them, and at this size the text looks the same)
        and the PNG is compressed at level 1 (a third faster than the default 6; the book's scrubbers come out
        no larger)."""
        buffer = io.BytesIO()
        with mpl.rc_context({"text.hinting": "no_hinting"}):
            self.fig.savefig(buffer, format="png", dpi=PNG_DPI, metadata={"Software": None},
                             pil_kwargs={"compress_level": 1})
        return buffer.getvalue()

    def widget(self) -> widgets.Widget:
        """The live explorer for Jupyter: controls above the figure (an image that each move redraws)."""
        self._live = True
        self._changed()
        return widgets.VBox([widgets.HBox(list(self.controls.values())), self.image])

    def scrubber(self, name: str, **grid) -> HTML:
        """Pre-draw a frame for every combination of ``grid`` values (other controls stay as they are)
        and return HTML whose sliders flip between the frames, no kernel needed.

        The frames are for the static book. Run live (JupyterLab, Jupyter Notebook, Colab), where the
        widget's own sliders work, it draws nothing and says so instead of showing the explorer twice.
        """
        unknown = set(grid) - set(self.controls)
        if unknown:
            raise ValueError(f"grid names {sorted(unknown)} are not controls of this explorer")
        if live_front_end():
            return HTML('<p class="geron-scrub-live"><em>The static book shows pre-drawn frames here; '
                        "in this live notebook, move the sliders of the explorer above.</em></p>")
        saved = self.values
        frames = []
        for combo in itertools.product(*grid.values()):
            self._draw(**(saved | dict(zip(grid, combo, strict=True))))
            frames.append(Image.open(io.BytesIO(self.png())))
        self.data = self._draw(**saved)
        start = [values.index(saved[k]) if saved[k] in values else 0 for k, values in grid.items()]
        return HTML(scrubber_html(name, grid, frame_sheets(frames), frames[0].size, start, self.alt))


def live_front_end() -> bool:
    """True in a kernel a person drives (a Jupyter server sets JPY_SESSION_NAME for its kernels; Colab
    imports google.colab); False when nbclient runs the notebook (the book build, nbval, jupyter execute)."""
    return "JPY_SESSION_NAME" in os.environ or "google.colab" in sys.modules


def frames_per_sheet(frames: int, height: int) -> int:
    """How many frames of ``height`` rows each sheet holds: as few sheets of at most SHEET_ROWS rows as hold
    ``frames``, filled evenly (the last may hold fewer)."""
    most = max(1, SHEET_ROWS // height)
    return math.ceil(frames / math.ceil(frames / most))


def frame_sheets(frames: list[Image.Image]) -> list[str]:
    """The frames (all of one size) stacked top to bottom, frames_per_sheet to a sheet; each sheet as
    base64 lossless WebP."""
    width, height = frames[0].size
    per = frames_per_sheet(len(frames), height)
    sheets = []
    for first in range(0, len(frames), per):
        part = frames[first:first + per]
        sheet = Image.new("RGBA", (width, height * len(part)))
        for k, frame in enumerate(part):
            sheet.paste(frame, (0, k * height))
        buffer = io.BytesIO()
        sheet.save(buffer, **WEBP)
        sheets.append(base64.b64encode(buffer.getvalue()).decode("ascii"))
    return sheets


def scrubber_html(name: str, grid: dict[str, list], sheets: list[str], size: tuple[int, int],
                  start: list[int], alt: str) -> str:
    """Sliders over the index of every grid axis; frame k is the row-major index of the slider tuple, and
    frame k % per of sheet k // per (frame_sheets, per = frames_per_sheet). The shown sheet is as wide as
    its box, and its negative margins (percentages of that width) leave one frame in the box."""
    ident = "scrub-" + "".join(ch if ch.isalnum() else "-" for ch in name)
    sliders = "".join(
        f'<label class="geron-scrub-control">{html.escape(key)} = <output>{html.escape(str(values[i]))}'
        f'</output><input type="range" min="0" max="{len(values) - 1}" step="1" value="{i}" '
        f'data-values="{html.escape(json.dumps([str(v) for v in values]))}" '
        f'aria-label="{html.escape(key)}"></label> '
        for (key, values), i in zip(grid.items(), start, strict=True)
    )
    first = 0
    for (_key, values), i in zip(grid.items(), start, strict=True):
        first = first * len(values) + i
    frames = math.prod(len(values) for values in grid.values())
    width, height = size
    per = frames_per_sheet(frames, height)
    ratio = 100 * height / width  # a frame's height, in percent of the box's width

    def style(s: int) -> str:
        if s != first // per:
            return "display:none"
        k, n = first % per, min(per, frames - s * per)
        return f"display:block;width:100%;margin:{-k * ratio:.4f}% 0 {-(n - 1 - k) * ratio:.4f}%"

    images = "".join(
        f'<img class="geron-scrub-sheet" src="data:image/webp;base64,{sheet}" '
        f'alt="{html.escape(alt)}, {html.escape(_label(grid, first))}" style="{style(s)}">'
        for s, sheet in enumerate(sheets)
    )
    return (
        f'<div class="geron-scrubber" id="{ident}" data-frames="{frames}" data-per-sheet="{per}" '
        f'data-alt="{html.escape(alt)}">{sliders}'
        f'<div class="geron-scrub-view" style="overflow:hidden;width:{width}px;max-width:100%">{images}</div>'
        "</div>"
        "<script>(function(){"
        f"var root=document.getElementById('{ident}');"
        "var inputs=root.querySelectorAll('input[type=range]');"
        "var sheets=root.querySelectorAll('.geron-scrub-sheet');"
        "var n=+root.dataset.frames,per=+root.dataset.perSheet;"
        f"var ratio={ratio!r};"
        "function show(){var k=0,label=[];inputs.forEach(function(s){"
        "k=k*(+s.max+1)+(+s.value);var v=JSON.parse(s.dataset.values)[+s.value];"
        "s.previousElementSibling.textContent=v;label.push(s.getAttribute('aria-label')+' = '+v);});"
        "var shown=Math.floor(k/per),j=k%per,m=Math.min(per,n-shown*per);"
        "sheets.forEach(function(f,i){if(i!==shown){f.style.display='none';return;}"
        "f.style.display='block';f.style.width='100%';"
        "f.style.margin=(-j*ratio)+'% 0 '+(-(m-1-j)*ratio)+'%';"
        "f.alt=root.dataset.alt+', '+label.join(', ');});"
        "root.dataset.frame=k;}"
        "inputs.forEach(function(s){s.addEventListener('input',show);});show();"
        "})();</script>"
    )


def _label(grid: dict[str, list], k: int) -> str:
    parts = []
    for key, values in reversed(list(grid.items())):
        k, i = divmod(k, len(values))
        parts.append(f"{key} = {values[i]}")
    return ", ".join(reversed(parts))
