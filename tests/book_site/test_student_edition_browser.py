"""The student edition as a student sees it in Chromium: every page opened, every dropdown and hidden cell
opened, and what it then shows (its text, its images' alt and title, the text of its SVG pictures, inline or
as files) read for the value of every graded exercise (tests/book_site/answers.py says what counts as
showing one). The same reading of the normal build finds the answers its solutions give, so it can fail."""

from __future__ import annotations

import pytest

from .answers import findings, graded_answers, site_findings
from .pages import HTML, toc_pages

# Built by the worker that builds the student edition for tests/book_site/test_student_edition.py
pytestmark = [pytest.mark.xdist_group("student-edition"), pytest.mark.timeout(1800)]

#: Opens every <details> and every toggle (solutions, hidden cells), then returns all that the page shows
#: in one string: its rendered text, every alt, title and aria-label, and the text of every SVG picture
SHOWN = """async () => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('button.toggle-button').forEach(b => b.click());
  await new Promise(done => setTimeout(done, 300));
  const parts = [document.body.innerText];
  for (const e of document.querySelectorAll('[alt], [title], [aria-label]'))
    for (const name of ['alt', 'title', 'aria-label']) parts.push(e.getAttribute(name) || '');
  for (const svg of document.querySelectorAll('svg')) parts.push(svg.textContent);
  for (const img of document.querySelectorAll('img')) {
    const url = new URL(img.src, location.href);
    if (url.origin === location.origin && url.pathname.endsWith('.svg')) {
      const svg = new DOMParser().parseFromString(await (await fetch(url)).text(), 'image/svg+xml');
      parts.push(svg.documentElement.textContent);
    }
  }
  return parts.join('\\n');
}"""


@pytest.fixture(scope="module")
def answers():
    return graded_answers()


def shown_answers(open_page, docname: str, answers) -> set[str]:
    """The labels of the graded exercises whose value the page shows once everything on it is opened."""
    v = open_page(f"{docname}.html")
    text = v.page.evaluate(SHOWN)
    v.page.close()
    return {f.label for a in answers for f in findings(docname, text, a, own_page=a.page == docname)}


def test_no_page_of_the_student_edition_shows_a_graded_answer(student_visit, answers):
    shown = {docname: labels for docname in toc_pages() if (labels := shown_answers(student_visit, docname,
                                                                                       answers))}
    assert not shown, f"the student edition, read in Chromium, gives graded answers away: {shown}"


def test_the_same_reading_finds_every_answer_the_normal_builds_pages_give(visit, answers):
    """Where the normal build's HTML gives an answer (in a solution, once opened), the browser's reading of
    that page finds it too: the student edition's test reads as much as a student can open."""
    given: dict[str, set[str]] = {}
    for finding in site_findings(HTML, answers):
        docname = finding.page.removesuffix(".html")
        if docname in toc_pages():
            given.setdefault(docname, set()).add(finding.label)
    assert given, "the normal build gives no graded answer: its solutions were expected to"
    missed = {docname: labels - shown_answers(visit, docname, answers) for docname, labels in given.items()}
    assert not any(missed.values()), f"answers the HTML gives that the browser reading did not find: {missed}"
