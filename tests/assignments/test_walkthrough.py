"""The teachers' page's walk-through (assignments/walkthrough.py): the commands the page shows are the make
targets' and the tool's, and the page's stored outputs show them; the stored sample grades are what the
library's checkers say of the sample answers, and the roster's of a class of five at each student's own
numbers, a copied answer scoring 0 where numbers vary (test_walkthrough_run.py runs the commands)."""

import csv
import re
import tomllib

import nbformat
from book_site.pages import ROOT

from assignments.spec import check_answer, checker_names
from assignments.students import student_questions
from assignments.walkthrough import (
    CHAPTER,
    COMMANDS,
    COPIED,
    ROSTER,
    ROSTER_SAMPLE,
    SAMPLE,
    SAMPLE_ANSWERS,
    own_answers,
)

TEACHERS = nbformat.read(ROOT / "book" / "teachers.ipynb", as_version=4)


def _recipe(target: str) -> list[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    block = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    return [line.strip() for line in block[1].splitlines()]


def test_the_make_targets_run_the_book_build_and_the_tool():
    assert (COMMANDS["book"], COMMANDS["assignments"]) == ("make book", "make assignments")
    assert "$(BIN)/jupyter-book build . -nW --keep-going" in _recipe("book")
    assert _recipe("assignments") == ["$(BIN)/geron-assignments make"]  # for every page
    assert COMMANDS["chapter"] == f".venv/bin/geron-assignments make {CHAPTER}"


def test_the_page_shows_the_commands():
    shown = "".join(o["data"]["text/markdown"] for c in TEACHERS.cells for o in c.get("outputs", [])
                    if "text/markdown" in o.get("data", {}))
    stale = [step for step, command in COMMANDS.items() if f"\n{command}\n" not in shown]
    assert not stale, f"the page's stored outputs lack {stale}: make outputs NB=book/teachers.ipynb"


def test_the_stored_sample_is_what_the_checkers_say(spec):
    with open(SAMPLE / "grades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    questions = spec[CHAPTER]
    possible = sum(q.points for q in questions)
    assert list(rows[0]) == ["submission", *(q.label for q in questions), "total", "possible", "reason"]
    assert [r["submission"] for r in rows] == [f"{name}.ipynb" for name in SAMPLE_ANSWERS]
    for row, answers in zip(rows, SAMPLE_ANSWERS.values(), strict=True):
        scores = []
        for q in questions:
            right = bool(check_answer(q, eval(answers[q.answer]), checker_names(q)))  # noqa: S307
            scores.append(q.points if right else 0)
            assert float(row[q.label]) == scores[-1], (row["submission"], q.label)
        assert (float(row["total"]), float(row["possible"])) == (sum(scores), possible)
        assert row["reason"] == ""
        feedback = (SAMPLE / row["submission"].replace(".ipynb", ".txt")).read_text(encoding="utf-8")
        assert feedback.splitlines()[0] == f"{row['submission']}: {sum(scores):g} / {row['possible']}"
    assert 0 < float(rows[1]["total"]) < float(rows[1]["possible"]) == float(rows[0]["total"])  # one slip


def test_the_roster_commands_are_the_tools_with_the_same_chapter():
    assert COMMANDS["roster-make"] == f"{COMMANDS['chapter']} --roster roster.csv"
    assert COMMANDS["roster-grade"].replace(" \\\n   ", "") == f"{COMMANDS['grade']} --roster roster.csv"


def test_the_stored_roster_sample_is_what_the_checkers_say_at_each_students_numbers(spec):
    # five students, each right at their own numbers, and one with a neighbour's answers, right at the
    # neighbour's numbers and wrong at their own: 0 on every exercise that varies
    assert len(ROSTER) >= 5 and all(a in ROSTER and b in ROSTER and a != b for a, b in COPIED.items())
    with open(SAMPLE / ROSTER_SAMPLE["grades.csv"], newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    questions = spec[CHAPTER]
    assert list(rows[0]) == ["submission", "student", *(q.label for q in questions), "total", "possible",
                             "reason"]
    assert [(r["submission"], r["student"]) for r in rows] == [(f"{s}.ipynb", s) for s in ROSTER]
    for row in rows:
        student = row["student"]
        handed = own_answers(COPIED.get(student, student))
        scores = []
        for q in student_questions(questions, student):
            right = bool(check_answer(q, eval(handed[q.answer]), checker_names(q)))  # noqa: S307
            scores.append(q.points if right else 0)
            assert float(row[q.label]) == scores[-1], (student, q.label)
            assert right is (student not in COPIED or not q.vary), (student, q.label)
        assert (float(row["total"]), row["reason"]) == (sum(scores), "")
    copier = next(iter(COPIED))
    feedback = (SAMPLE / ROSTER_SAMPLE[f"{copier}.txt"]).read_text(encoding="utf-8")
    first = [f"{copier}.ipynb: 0 / {rows[0]['possible']}", f"Student: {copier}", ""]
    assert feedback.splitlines()[:3] == first


def test_the_sample_is_package_data():
    # the page reads it, also from a wheel, which holds only the package data pyproject.toml lists
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["assignments"]
    files = sorted(SAMPLE.iterdir())
    assert files and all(any(f.relative_to(ROOT / "assignments").match(p) for p in listed)
                         for f in files)
