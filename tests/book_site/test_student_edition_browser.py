"""The student edition as a student sees it in Chromium: every page opened, every dropdown and hidden cell
opened, and what it then shows (its text, its images' alt and title, the text of its SVG pictures, inline or
as files) read for the value of every graded exercise (tests/book_site/answers.py says what counts as
showing one). The same reading of the normal build's pages finds the answers their solutions give, so it can
fail (tests/book_site/test_browser.py, on the pages it has loaded)."""

from __future__ import annotations

import pytest

from .answers import graded_answers, shown_labels
from .pages import toc_pages

# Built by the worker that builds the student edition for tests/book_site/test_student_edition.py
pytestmark = [pytest.mark.xdist_group("student-edition"), pytest.mark.timeout(1800)]


def test_no_page_of_the_student_edition_shows_a_graded_answer(student_visit):
    shown, answers = {}, graded_answers()
    for docname in toc_pages():
        v = student_visit(f"{docname}.html")
        if labels := shown_labels(v.page, docname, answers):
            shown[docname] = labels
        v.page.close()
    assert not shown, f"the student edition, read in Chromium, gives graded answers away: {shown}"

