"""A progress bar for long runs in a notebook: the training loop calls it once per step."""

from __future__ import annotations

import ipywidgets as widgets
from IPython.display import display

from ..validate import check_int


class ProgressBar:
    """A notebook progress bar (ipywidgets), shown when made; ``bar(text)`` advances it by one step.

    Pass the class itself where a run asks for ``progress``: the run makes one with its number of steps.
    """

    def __init__(self, total: int, description: str = "training"):
        self.bar = widgets.IntProgress(value=0, min=0, max=check_int("total", total, minimum=1),
                                       description=description)
        self.label = widgets.Label()
        display(widgets.HBox([self.bar, self.label]))

    def __call__(self, text: str = "") -> None:
        self.bar.value += 1
        self.label.value = text
