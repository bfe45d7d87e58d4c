"""The Explorer drives its plot from its controls; its scrubber holds one frame per grid point."""

import io
import itertools
import re

import ipywidgets as w
import numpy as np
import pytest
from figure_checks import scrubber_frames
from PIL import Image

from geron_lib.notebook.exercises import Feedback, grade_number
from geron_lib.notebook.explorer import PNG_DPI, SHEET_ROWS, Explorer, frames_per_sheet
from geron_lib.notebook.progress import ProgressBar


def _line_explorer():
    def plot(fig, a, b):
        if not fig.axes:
            fig.subplots().plot([0, 1], [0, 0])
        fig.axes[0].lines[0].set_ydata([0, a * b])
        return {"y": a * b}

    return Explorer({"a": w.IntSlider(2, 1, 5), "b": w.IntSlider(1, 1, 3)}, plot, alt="a line")


def test_moving_a_slider_replots():
    e = _line_explorer()
    assert e.data == {"y": 2}
    assert e.set(a=4, b=3) == {"y": 12}
    assert e.fig.axes[0].lines[0].get_ydata()[1] == 12
    e.controls["a"].value = 1  # as the reader's slider would
    assert e.data == {"y": 3}
    with pytest.raises(ValueError, match="no control named 'c'"):
        e.set(c=1)


def _descendants(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _descendants(child)


def test_widget_holds_controls_and_the_figure_as_an_image():
    e = _line_explorer()
    e.set(a=3)  # not live yet: a move redraws the figure and renders no image
    assert e.image.value == b"" and e.data == {"y": 3}
    box = e.widget()
    assert e.controls["a"] in box.children[0].children and e.image in box.children
    assert e.image.format == "png" and bytes(e.image.value).startswith(b"\x89PNG")
    assert e.image.value == e.png()
    # no Output widget anywhere: nbclient answers each output one captures with a message on the shell
    # channel while it awaits the cell's reply there, and that can stall the cell for nbclient's whole timeout
    assert not [x for x in _descendants(box) if isinstance(x, w.Output)]


def test_each_move_of_a_live_slider_redraws_the_image():
    e = _line_explorer()
    e.widget()
    first = e.image.value
    e.controls["a"].value = 5  # as the reader's slider would
    assert e.image.value != first and e.image.value == e.png()
    e.set(b=3)
    assert e.data == {"y": 15} and e.image.value == e.png()


def test_scrubber_has_a_frame_per_combination_and_restores_state():
    e = _line_explorer()
    e.set(a=3, b=2)
    page = e.scrubber("demo", a=[1, 2, 3], b=[1, 2]).data
    assert len(scrubber_frames(page)) == 6
    assert len(re.findall(r'type="range"', page)) == 2
    # the sheet shown first holds the current setting (a=3, b=2: index 2*2+1 = 5), and says so
    sheets = re.findall(r'<img class="geron-scrub-sheet" [^>]*alt="([^"]*)" style="display:(\w+)', page)
    assert [alt for alt, shown in sheets if shown == "block"] == ["a line, a = 3, b = 2"]
    assert e.values == {"a": 3, "b": 2} and e.data == {"y": 6}
    with pytest.raises(ValueError, match="not controls"):
        e.scrubber("x", z=[1])


def test_scrubber_frames_are_the_live_figure_at_each_slider_position():
    """Frame k, cut from the WebP sheets, is pixel for pixel the PNG the live widget shows at the k-th
    setting (row-major), and every step of a slider changes it."""
    e = _line_explorer()
    grid = {"a": [1, 3, 5], "b": [1, 2, 3]}  # a * b: one slider step always changes it
    frames = scrubber_frames(e.scrubber("demo", **grid).data)
    settings = [dict(zip(grid, combo, strict=True)) for combo in itertools.product(*grid.values())]
    for frame, setting in zip(frames, settings, strict=True):
        e.set(**setting)
        assert np.array_equal(frame, np.asarray(Image.open(io.BytesIO(e.png())).convert("RGBA"))), setting
    row = len(grid["b"])
    steps = [(k, k + 1) for k in range(len(frames)) if k % row < row - 1]  # b one step on, a held
    steps += [(k, k + row) for k in range(len(frames) - row)]  # a one step on, b held
    for k, moved in steps:
        assert not np.array_equal(frames[k], frames[moved]), (settings[k], settings[moved])


def test_frames_go_into_as_few_sheets_as_webp_and_the_browser_allow():
    # a sheet is at most SHEET_ROWS tall (WebP: 16383), filled evenly
    assert SHEET_ROWS <= 16383
    assert frames_per_sheet(36, 576) == 12 and frames_per_sheet(18, 576) == 9
    assert frames_per_sheet(4, 576) == 4 and frames_per_sheet(3, SHEET_ROWS + 1) == 1
    e = Explorer({"a": w.IntSlider(1, 1, 40)}, lambda fig, a: {"a": a}, width=1,
                 height=SHEET_ROWS / PNG_DPI / 3)
    page = e.scrubber("tall", a=list(range(1, 8))).data  # 7 frames of a third of a sheet: 3 + 3 + 1
    assert page.count('class="geron-scrub-sheet"') == 3 and len(scrubber_frames(page)) == 7


def test_feedback_and_grade_number():
    assert grade_number(10, 10, what="the count", hint="h")
    wrong = grade_number(12, 10, what="the count", hint="Count the biases.")
    assert not wrong and "too large" in repr(wrong) and "Count the biases." in wrong.message
    assert not grade_number("ten", 10, what="the count", hint="h")
    slipped = grade_number(8, 10, what="the count", hint="general", slips={8: "You left out the biases."})
    assert not slipped and "You left out the biases." in slipped.message and "general" not in slipped.message
    assert "general" in grade_number(9, 10, what="the count", hint="general", slips={8: "s"}).message
    assert grade_number(10, 10, what="the count", hint="h", slips={10: "never shown"})
    assert repr(Feedback(True, "ok")).startswith("Correct.")


def test_progress_bar_counts_steps():
    bar = ProgressBar(4, "runs")
    bar("epoch 1/2")
    bar("epoch 2/2")
    assert (bar.bar.value, bar.bar.max, bar.label.value) == (2, 4, "epoch 2/2")
    with pytest.raises(ValueError, match="total must be at least 1"):
        ProgressBar(0)


def test_the_scrubber_stands_aside_in_a_live_notebook(monkeypatch):
    # where the live widget works (a Jupyter server's kernel, or Colab), the static frames would show the
    # explorer twice: the scrubber says where to look instead
    e = _line_explorer()
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert 'class="geron-scrub-sheet"' in e.scrubber("static", a=[1, 2]).data
    monkeypatch.setenv("JPY_SESSION_NAME", "/book/01_factorised_embeddings.ipynb")
    live = e.scrubber("live", a=[1, 2]).data
    assert "geron-scrub-sheet" not in live and "sliders of the explorer above" in live
