"""_ext/eval_values.py against the built book: for every page, the texts it recorded for the {eval} roles are
the texts the built page shows for them, one per use (the assignments print the recorded ones)."""

import html
import json
import re
from collections import Counter

import pytest
from book_site.pages import html_path, notebook_pages, require_built_book, text_of

from assignments.myst import chapters_with_exercises

pytestmark = pytest.mark.book

EVAL = re.compile(r"\{eval\}`(?P<expression>[^`]*)`")
#: how myst-nb renders an inline {eval} whose value is text (the book uses no other role that renders so)
SHOWN = re.compile(r'<span class="output text_plain">(?P<text>[^<]*)</span>')


def test_every_eval_of_every_page_is_recorded_with_the_text_its_page_shows(built_book):
    require_built_book()
    recorded = json.loads(built_book.read_text(encoding="utf-8"))
    pages = [page for page in notebook_pages() if EVAL.search(text_of(page))]
    assert {f"book/{chapter}" for chapter in chapters_with_exercises()} <= set(pages) <= set(recorded)
    for page in pages:
        uses = Counter(m["expression"] for m in EVAL.finditer(text_of(page)))
        assert {e: len(texts) for e, texts in recorded[page].items()} == dict(uses), page
        shown = Counter(html.unescape(m["text"]) for m in SHOWN.finditer(html_path(page).read_text("utf-8")))
        assert Counter(t for texts in recorded[page].values() for t in texts) == shown, page
