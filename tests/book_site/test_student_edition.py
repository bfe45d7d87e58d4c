"""The student edition (`make student-book`, _build/student/html), made here from the normal build when it is
missing or older (scripts/student_book.py: Sphinx reads again only what changed, and executes nothing): every
page and exercise is there, with the normal build's outputs and numbers, but the teachers' page, which keeps
only its title; and no page keeps a solution, a graded exercise's answer, the sources or a button that opens
them."""

from __future__ import annotations

import html
import json
import re
from collections import Counter

import pytest

from assignments.myst import directives

from .answers import graded_answers, site_findings
from .pages import HTML, html_path, notebook_pages, text_of, toc_pages

#: The tag of a cell whose printed outputs the student edition leaves out (_ext/student_edition.py)
REMOVE_STREAM = "student-remove-stream"
#: The pages for teachers alone, which the edition keeps as their title (_ext/student_edition.py)
TEACHERS_ONLY = ("book/teachers",)

# One worker builds the edition and runs every test of it (make test: --dist loadgroup); the first test waits
# for the build, which on a busy machine takes minutes.
pytestmark = [pytest.mark.xdist_group("student-edition"), pytest.mark.timeout(1800)]


def _page(site, docname: str) -> str:
    return (site / f"{docname}.html").read_text(encoding="utf-8")


def _count(pattern: str, text: str) -> int:
    return len(re.findall(pattern, text))


EVAL = re.compile(r"\{eval\}`(?P<expression>[^`]*)`")
#: The opening tags of an exercise, a solution, and a code cell's outputs, as the builds write them
EXERCISE = r'<div class="exercise\b'
SOLUTION = r'class="[^"]*\bsolution\b'
OUTPUTS = r'<div class="cell_output docutils container">'


def test_every_page_and_exercise_is_there_with_the_outputs_of_the_normal_build(student):
    assert [p for p in toc_pages() if not (student / f"{p}.html").is_file()] == []
    for docname in toc_pages():
        normal, edition = html_path(docname).read_text(encoding="utf-8"), _page(student, docname)
        assert _count(EXERCISE, edition) == _count(EXERCISE, normal), docname
    for docname in TEACHERS_ONLY:  # its title, and no output, number or exam answer of the normal build
        assert "This page is for teachers" in _page(student, docname)
        assert _count(OUTPUTS, _page(student, docname)) == 0 < _count(OUTPUTS, html_path(docname).read_text(
            encoding="utf-8"))
    for docname in (p for p in notebook_pages() if p not in TEACHERS_ONLY):
        # a cell that printed and showed nothing else keeps no outputs
        removed = sum(1 for c in _tagged(docname) if all(o["output_type"] == "stream" for o in c["outputs"]))
        normal, edition = html_path(docname).read_text(encoding="utf-8"), _page(student, docname)
        assert _count(OUTPUTS, edition) == _count(OUTPUTS, normal) - removed, docname


def _tagged(docname: str) -> list[dict]:
    """The page's cells tagged student-remove-stream that printed something, as the normal build executed
    them (the notebook the student edition reads)."""
    executed = json.loads((HTML.parent / "jupyter_execute" / f"{docname}.ipynb").read_text(encoding="utf-8"))
    return [c for c in executed["cells"] if REMOVE_STREAM in c.get("metadata", {}).get("tags", [])
            and any(o["output_type"] == "stream" for o in c.get("outputs", []))]


def test_a_cell_tagged_student_remove_stream_shows_what_it_printed_in_the_normal_build_only(student):
    tagged = {docname: _tagged(docname) for docname in notebook_pages()}
    assert any(tagged.values()), "no cell is tagged student-remove-stream"
    for docname, cells in tagged.items():
        normal, edition = html_path(docname).read_text(encoding="utf-8"), _page(student, docname)
        for cell in cells:
            # one print may reach the notebook as several stream outputs, split mid-line
            stream = "".join("".join(o["text"]) for o in cell["outputs"] if o["output_type"] == "stream")
            printed = [line for line in stream.splitlines() if line.strip()]
            shown = html.escape(printed[0], quote=False)
            assert shown in normal and shown not in edition, f"{docname}: {printed[0]!r}"


def test_every_eval_outside_a_solution_shows_the_number_the_normal_build_showed(student):
    def recorded(build):
        return json.loads((build.parent / "eval_values.json").read_text(encoding="utf-8"))

    normal, edition = recorded(HTML), recorded(student)
    assert not any(edition.get(docname) for docname in TEACHERS_ONLY)  # a title only
    for docname, expressions in ((d, e) for d, e in normal.items() if d not in TEACHERS_ONLY):
        in_solutions = Counter(m["expression"] for name, _, _, body in directives(text_of(docname))
                               if name == "solution" for m in EVAL.finditer(body))
        for expression, texts in expressions.items():
            shown = edition.get(docname, {}).get(expression, [])
            assert len(shown) == len(texts) - in_solutions[expression], (docname, expression)
            assert not Counter(shown) - Counter(texts), (docname, expression, shown, texts)


def test_no_page_has_a_solution(student):
    assert any(re.search(SOLUTION, _page(HTML, p)) for p in toc_pages()), "the normal build has solutions"
    left = [p.relative_to(student).as_posix() for p in student.rglob("*.html") if re.search(
        SOLUTION, p.read_text(encoding="utf-8"))]
    assert left == [], f"pages of the student edition with a solution: {left}"


def test_no_source_and_no_button_that_opens_one(student):
    """The sources, and the notebooks Binder and Colab open, hold the solutions."""
    assert not (student / "_sources").exists()
    buttons = re.compile(r"download-source-button|download-notebook-button|mybinder\.org|colab\.research")
    shown = [p.relative_to(student).as_posix() for p in student.rglob("*.html")
             if buttons.search(p.read_text(encoding="utf-8"))]
    assert shown == [], f"pages of the student edition with a download or launch button: {shown}"
    assert buttons.search(_page(HTML, notebook_pages()[0])), "the normal build's pages have them"


def test_no_page_shows_a_graded_answer(student):
    answers = graded_answers()
    assert site_findings(HTML, answers), "the normal build gives no graded answer: its solutions should"
    found = site_findings(student, answers)
    assert not found, "the student edition gives graded answers away:\n" + "\n".join(map(str, found))
