"""Sliders driving a figure: live with ipywidgets in Jupyter, and a scrubber of pre-drawn frames that
works in the static HTML book without a kernel (inline HTML and JavaScript, nothing fetched).

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
import os
import sys
from collections.abc import Callable

import ipywidgets as widgets
import matplotlib as mpl
from IPython.display import HTML
from matplotlib.backends.backend_agg import FigureCanvasAgg

from .diagrams.canvas import SMALL
from .plots import new_figure

#: The PNGs' resolution: a 9-inch frame is 720 px, drawn at 672 / 720 of that in the book's column.
PNG_DPI = 80
#: Every text's default size (tick labels, axis labels, legends): as small as a diagram's smallest text.
FONT = {"font.size": SMALL}


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
            frames.append(base64.b64encode(self.png()).decode("ascii"))
        self.data = self._draw(**saved)
        start = [values.index(saved[k]) if saved[k] in values else 0 for k, values in grid.items()]
        return HTML(scrubber_html(name, grid, frames, start, self.alt))


def live_front_end() -> bool:
    """True in a kernel a person drives (a Jupyter server sets JPY_SESSION_NAME for its kernels; Colab
    imports google.colab); False when nbclient runs the notebook (the book build, nbval, jupyter execute)."""
    return "JPY_SESSION_NAME" in os.environ or "google.colab" in sys.modules


def scrubber_html(name: str, grid: dict[str, list], frames: list[str], start: list[int], alt: str) -> str:
    """Sliders over the index of every grid axis; frame k is the row-major index of the slider tuple."""
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
    images = "".join(
        f'<img class="geron-scrub-frame" src="data:image/png;base64,{frame}" '
        f'alt="{html.escape(alt)}, {html.escape(_label(grid, k))}" '
        f'style="max-width:100%;display:{"block" if k == first else "none"}">'
        for k, frame in enumerate(frames)
    )
    return (
        f'<div class="geron-scrubber" id="{ident}">{sliders}<div>{images}</div></div>'
        "<script>(function(){"
        f"var root=document.getElementById('{ident}');"
        "var inputs=root.querySelectorAll('input[type=range]');"
        "var frames=root.querySelectorAll('.geron-scrub-frame');"
        "function show(){var k=0;inputs.forEach(function(s){"
        "k=k*(+s.max+1)+(+s.value);"
        "s.previousElementSibling.textContent=JSON.parse(s.dataset.values)[+s.value];});"
        "frames.forEach(function(f,i){f.style.display=i===k?'block':'none';});"
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
