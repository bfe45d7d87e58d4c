"""`make screenshots` (scripts/screenshots.py): every page of the built book, whole, in the light theme and
the dark one, for a person to look at; here on one short page."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from PIL import Image

from .pages import HTML, ROOT, require_built_book

PAGE = "book/bibliography"


@pytest.fixture
def screenshots(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))  # as `python scripts/screenshots.py` runs it
    return importlib.import_module("screenshots")


def test_a_page_is_taken_whole_in_the_light_theme_and_the_dark_one(browser, screenshots, tmp_path):
    require_built_book()
    light, dark = screenshots.take(HTML, tmp_path, [PAGE], browser)
    assert (light.name, dark.name) == ("book_bibliography.png", "book_bibliography-dark.png")
    pictures = [np.asarray(Image.open(path).convert("L"), dtype=float) for path in (light, dark)]
    for picture in pictures:
        assert picture.shape[1] == 1280 and picture.shape[0] >= 900  # the page's width, and its whole height
    assert pictures[1].mean() < pictures[0].mean() / 2  # the dark theme's background


def test_an_unknown_page_is_refused_by_name(screenshots, capsys):
    with pytest.raises(SystemExit):
        screenshots.main(["--pages", "book/nowhere"])
    assert "--pages: book/nowhere not in _toc.yml" in capsys.readouterr().err
