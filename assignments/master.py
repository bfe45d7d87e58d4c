"""A chapter's otter master notebook (config, questions, solutions, tests), and ``otter assign`` on it.

``make`` writes, under ``<out>/<chapter>/``:

    master/<chapter>.ipynb                 the otter master notebook
    student/<chapter>.ipynb                what students get: the exercises, answer and check cells
    autograder/<chapter>.ipynb             the same with the solutions, for teachers
    autograder/<chapter>-autograder.zip    otter's autograder (``otter run`` grades one notebook with it)
    autograder/<chapter>-hidden.pkl        the hidden tests: each question's expected value, which
                                           ``python -m assignments grade`` scores against

every one with the book's numbers (``assignments.students`` then writes each student's, with a roster). The
student notebook's checks and the grader run the checkers in graded mode (GRADED_MODE).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

from . import BOOK, OUT, ROOT, kernel_environment
from .hidden import make_hidden
from .myst import Exercise, Markdown, chapter_title, exercises
from .spec import Graded

#: The student notebook's first cell of its own: the checkers in graded mode (geron_lib.notebook.exercises)
GRADED_MODE = ("from geron_lib.notebook.exercises import graded_mode\n\n"
               "graded_mode()  # checkers say right or wrong, and which mistake, not which way to move")


def _raw(text: str):
    return nbformat.v4.new_raw_cell(text)


def test_source(question: Graded) -> str:
    """The otter test of a graded question: its numbers and setup again (so a student who overwrites their
    names cannot change what is graded), then the checker, in graded mode."""
    module, name, call = question.checker
    ident = re.sub(r"\W", "_", question.label)
    setup = "".join(f"    {line}\n" for line in (question.bindings + question.setup).splitlines())
    return (f"def test_{ident}({question.answer}):\n{setup}"
            f"    from {module} import {name}\n"
            "    from geron_lib.notebook.exercises import graded_feedback\n"
            "    with graded_feedback():\n"
            f"        feedback = {call}\n"
            "    assert feedback, feedback.message\n")


def prompt_source(question: Graded, heading: str) -> str:
    """The Markdown of a graded question: the exercise's ``heading`` and what to do."""
    points = f"{question.points:g} point{'' if question.points == 1 else 's'}"
    return (f"{heading}\n\n*Graded, {points}: assign your answer to `{question.answer}` in the cell below, "
            "then run the check under it.*")


def setup_source(question: Graded) -> str:
    """The code the student's notebook runs before the answer cell: the numbers and the setup ("" when the
    question has no setup: its numbers are then in the prose only)."""
    return question.bindings + question.setup if question.setup else ""


def _graded_cells(question: Graded, heading: str) -> list:
    cells = [_raw(f"# BEGIN QUESTION\nname: {question.label}\npoints: {question.points}"),
             nbformat.v4.new_markdown_cell(prompt_source(question, heading))]
    if question.setup:
        cells.append(nbformat.v4.new_code_cell(setup_source(question)))
    solution = question.solution if question.setup else question.bindings + question.solution
    return cells + [
        _raw("# BEGIN SOLUTION"),
        nbformat.v4.new_code_cell(f'""" # BEGIN PROMPT\n{question.answer} = ...\n""" # END PROMPT\n'
                                  f"# BEGIN SOLUTION NO PROMPT\n{solution}\n# END SOLUTION"),
        _raw("# END SOLUTION"),
        _raw("# BEGIN TESTS"), nbformat.v4.new_code_cell(test_source(question)), _raw("# END TESTS"),
        _raw("# END QUESTION")]


def _written_cells(exercise: Exercise, heading: str, md: Markdown) -> list:
    solution = md(exercise.solution) if exercise.solution else "(The book gives no solution.)"
    return [_raw(f"# BEGIN QUESTION\nname: {exercise.label}\nmanual: true"),
            nbformat.v4.new_markdown_cell(f"{heading}\n\n*Written: answer in the Markdown cell below; your "
                                          "teacher reads it (the autograder does not score it).*"),
            _raw("# BEGIN SOLUTION"), nbformat.v4.new_markdown_cell(solution), _raw("# END SOLUTION"),
            _raw("# END QUESTION")]


def chapter_exercises(chapter: str, graded: list[Graded]) -> tuple:
    """(the chapter's notebook, its exercises by label, its Markdown converter), checked against the spec:
    every graded label is an exercise, and states its numbers where the spec's prose says."""
    notebook = nbformat.read(BOOK / f"{chapter}.ipynb", as_version=4)
    found = exercises(notebook)
    if missing := [q.label for q in graded if q.label not in found]:
        raise ValueError(f"assignments/spec.yml grades {missing}, but book/{chapter}.ipynb has no exercise "
                         f"labelled so (its labels: {list(found)})")
    for question in graded:
        exercise = found[question.label]
        for book_words, _ in question.prose:
            words = book_words.format(**question.book)
            if words not in exercise.title and words not in exercise.text:
                raise ValueError(f"assignments/spec.yml, {question.label}: prose {book_words!r} with the "
                                 f"book's numbers, {words!r}, is not in the exercise's title or text in "
                                 f"book/{chapter}.ipynb (edit the spec's prose to the chapter's words)")
    return notebook, found, Markdown(notebook, chapter)


def heading(number: int, exercise: Exercise, md: Markdown, question: Graded | None = None) -> str:
    """The exercise's heading and text as Markdown, with the numbers of ``question`` (a graded question's
    own, a student's) where the book states its own."""
    title, text = exercise.title, exercise.text
    if question is not None:
        title, text = question.stated(title), question.stated(text)
    return f"## Exercise {number}: {md(title)}\n\n{md(text)}"


def master_notebook(chapter: str, graded: list[Graded], *, run_tests: bool = True):
    """The otter master notebook of ``chapter``: every exercise as a question, the spec's graded, others
    written."""
    notebook, found, md = chapter_exercises(chapter, graded)
    by_label = {q.label: q for q in graded}
    config = {"name": chapter, "init_cell": True, "check_all_cell": True, "export_cell": False,
              "run_tests": run_tests, "tests": {"files": False, "ok_format": False},
              "generate": {"pdf": False}}
    title = chapter_title(notebook)
    book = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["title"]
    n_graded, n_written = len(graded), len(found) - len(graded)
    total = f"{sum(q.points for q in graded):g}"
    cells = [_raw("# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False)),
             nbformat.v4.new_markdown_cell(
                 f"# Assignment: {md(title)}\n\n"
                 f"The exercises of the chapter *{md(title)}* of *{book}*, as the book prints them, without "
                 "the solutions. Read the chapter first; run the first code cell before the others.\n\n"
                 f"- **Graded questions** ({n_graded}, {total} points): replace the `...` in the answer cell "
                 "by your answer, then run the `grader.check(...)` cell below it. It grades your answer with "
                 "the checker the book uses, in graded mode: it says whether the answer is right and, where "
                 "it can tell, which kind of mistake it is (a known slip, a whole factor, a percentage for a "
                 "share), but not which way to move. Check as often as you like.\n"
                 f"- **Written questions** ({n_written}): type your answer into the Markdown cell below the "
                 "question; your teacher reads them.\n\n"
                 "When you are done, restart the kernel and run every cell, save, and hand in this "
                 "notebook."),
             nbformat.v4.new_code_cell(GRADED_MODE)]
    for number, exercise in enumerate(found.values(), start=1):
        if exercise.label in by_label:
            cells += _graded_cells(by_label[exercise.label], heading(number, exercise, md))
        else:
            cells += _written_cells(exercise, heading(number, exercise, md), md)
    return nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}})


def make(chapter: str, graded: list[Graded], out: Path = OUT, *, run_tests: bool = True) -> Path:
    """Write ``chapter``'s master notebook and run ``otter assign`` (which, with ``run_tests``, runs the tests
    against the solutions); the autograder zip's path."""
    target = out / chapter
    for old in ("master", "student", "students", "autograder"):  # not grades/
        shutil.rmtree(target / old, ignore_errors=True)
    master = target / "master" / f"{chapter}.ipynb"
    master.parent.mkdir(parents=True)
    nbformat.write(master_notebook(chapter, graded, run_tests=run_tests), master)
    command = [sys.executable, "-m", "otter", "assign", "--no-pdfs", str(master), str(target)]
    done = subprocess.run(command + ([] if run_tests else ["--no-run-tests"]), env=kernel_environment(),
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"otter assign failed for {chapter}:\n{done.stdout}\n{done.stderr}")
    [zipped] = (target / "autograder").glob(f"{chapter}-autograder_*.zip")
    make_hidden(graded, hidden_tests(chapter, out))
    return zipped.rename(zipped.with_name(f"{chapter}-autograder.zip"))


def hidden_tests(chapter: str, out: Path = OUT) -> Path:
    """Where ``make`` stores the chapter's hidden tests (assignments.hidden), beside its autograder."""
    return out / chapter / "autograder" / f"{chapter}-hidden.pkl"
