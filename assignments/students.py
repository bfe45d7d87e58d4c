"""Each student's own numbers: ``geron-assignments make --roster roster.csv``.

An exercise whose spec entry has ``vary`` gets, for each student, numbers drawn from their id: the draw is
seeded by a hash of SEED, the exercise's label and the id, so the same roster gives the same numbers on any
machine, and a student keeps theirs when the roster grows. The numbers lie in the spec's ranges and meet its
``where``; they are never all the book's (whose solutions the book prints). An exercise with ``fixed`` keeps
the book's numbers for everyone (``assignments.spec.fixed_exercises`` lists them).

``make_students`` writes, under ``<out>/<chapter>/``, beside what ``assignments.master.make`` writes:

    students/<id>/<chapter>.ipynb          the student's notebook: the class notebook with their numbers in
                                           the exercises' text, setup and checks, and their id in its
                                           metadata (the file keeps the chapter's name: its checks read it)
    autograder/students/<id>-hidden.pkl    their hidden tests (assignments.hidden), with their sha256 beside
    autograder/<chapter>-numbers.csv       every student's numbers and expected value, per varying exercise
"""

from __future__ import annotations

import ast
import copy
import csv
import dataclasses
import hashlib
import random
from pathlib import Path

import nbformat

from geron_lib.notebook.exercises import shown

from .hidden import make_hidden, matches, read_hidden
from .master import chapter_exercises, heading, prompt_source, setup_source, test_source
from .roster import ID_COLUMN, METADATA_KEY
from .spec import Graded, satisfied

#: The fixed seed of every draw: a student's numbers depend on it, the exercise's label and their id only
SEED = "geron-assignments roster 1"
#: Draws tried before an exercise whose ranges cannot meet its condition is refused
DRAWS = 1000


def draw(question: Graded, student: str) -> dict:
    """The numbers of ``question`` for ``student`` ({} when it cannot vary): each from its range or choices,
    together meeting the spec's ``where``, never all the book's."""
    if not question.vary:
        return {}
    digest = hashlib.sha256(f"{SEED}\0{question.label}\0{student}".encode()).digest()
    rng = random.Random(int.from_bytes(digest, "big"))
    where = f"assignments/spec.yml, {question.label}"
    for _ in range(DRAWS):
        numbers = {name: rng.choice(param["choices"] if "choices" in param
                                    else range(param["from"], param["to"] + 1, param.get("step", 1)))
                   for name, param in question.vary.items()}
        if numbers != question.book and (not question.where or satisfied(question.where, numbers, where)):
            return numbers
    raise ValueError(f"{where}: {DRAWS} draws from its ranges met neither its condition where: "
                     f"{question.where} nor differed from the book's numbers; widen the ranges")


def student_questions(graded: list[Graded], student: str) -> list[Graded]:
    """The chapter's graded questions with ``student``'s numbers (a fixed one as it is)."""
    return [dataclasses.replace(q, numbers=draw(q, student)) if q.vary else q for q in graded]


def student_notebook(out: Path, chapter: str, student: str) -> Path:
    return out / chapter / "students" / student / f"{chapter}.ipynb"


def student_hidden(hidden_tests: Path, student: str) -> Path:
    """The hidden tests of ``student``, beside the class's ``hidden_tests`` (master.hidden_tests)."""
    return hidden_tests.parent / "students" / f"{student}-hidden.pkl"


def _swap(notebook, label: str, old: str, new: str) -> None:
    """Replace ``old`` (what make wrote for the book's numbers) by ``new`` in the one cell that holds it."""
    cells = [c for c in notebook.cells if old in c.source]
    if len(cells) != 1:
        raise RuntimeError(f"{label}: otter's student notebook holds the question's text {len(cells)} times, "
                           "not once")
    cells[0].source = cells[0].source.replace(old, new)


def _own_test(stored: str, ours: Graded, theirs: Graded) -> str:
    """otter's test file ``stored`` (as otter rewrote make's test, in its own layout) with the test function
    of ``theirs`` in place of the one of ``ours``, once it is checked to be that one."""
    [mine] = ast.parse(test_source(ours)).body
    lines = stored.splitlines(keepends=True)
    for node in ast.parse(stored).body:
        if isinstance(node, ast.FunctionDef) and node.name == mine.name:
            if ([ast.dump(n) for n in node.body] != [ast.dump(n) for n in mine.body]
                    or ast.dump(node.args) != ast.dump(mine.args)):
                break
            return "".join([*lines[:node.lineno - 1], test_source(theirs), *lines[node.end_lineno:]])
    raise RuntimeError(f"{ours.label}: otter's student notebook holds another test than make wrote")


def _own_notebook(template, chapter: str, book: list[Graded], own: list[Graded], student: str, headings):
    """The class notebook ``template`` (otter's) with ``own`` numbers in place of the ``book``'s."""
    notebook = copy.deepcopy(template)
    tests = notebook.metadata["otter"]["tests"]
    for ours, theirs in zip(book, own, strict=True):
        if not ours.vary:
            continue
        number, exercise, md = headings[ours.label]
        _swap(notebook, ours.label, prompt_source(ours, heading(number, exercise, md)),
              prompt_source(theirs, heading(number, exercise, md, theirs)))
        if ours.setup:
            _swap(notebook, ours.label, setup_source(ours), setup_source(theirs))
        tests[ours.label] = _own_test(tests[ours.label], ours, theirs)
    notebook.metadata[METADATA_KEY] = {"chapter": chapter, "student": student}
    return notebook


def shared_answers(expected: dict[str, dict[str, object]], graded: list[Graded]) -> list[str]:
    """Which students' answers to a varying exercise are one another's (``expected``: {student: {label:
    expected value}}): a draw from the id can fall on the same answer for two students, and the teacher
    should know. A sentence per exercise and group of such students."""
    notes = []
    for question in (q for q in graded if q.vary):
        answers, left = {s: e[question.label] for s, e in expected.items()}, list(expected)
        while left:
            first, *rest = left
            group = [first, *(s for s in rest if matches(answers[s], answers[first], question.tolerance))]
            left = [s for s in left if s not in group]
            if len(group) > 1:
                notes.append(f"{question.label}: students {group} have the same answer, so one's copied "
                             "answer scores for another")
    return notes


def make_students(chapter: str, graded: list[Graded], out: Path, hidden_tests: Path,
                  roster: list[str]) -> tuple[list[Path], list[str]]:
    """Write every student's notebook and hidden tests, and the numbers file (the module docstring), from
    the class notebook ``make`` wrote; (the notebooks' paths, :func:`shared_answers`' notes)."""
    template = nbformat.read(out / chapter / "student" / f"{chapter}.ipynb", as_version=4)
    _, found, md = chapter_exercises(chapter, graded)
    numbered = {label: number for number, label in enumerate(found, start=1)}
    headings = {q.label: (numbered[q.label], found[q.label], md) for q in graded}
    written, table, done, expected = [], [], {}, {}
    for student in roster:
        own = student_questions(graded, student)
        path = student_notebook(out, chapter, student)
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(_own_notebook(template, chapter, graded, own, student, headings), path)
        written.append(path)
        hidden = read_hidden(make_hidden(own, student_hidden(hidden_tests, student), done))
        expected[student] = {question.label: value for question, value in hidden}
        for question, value in hidden:
            if question.vary:
                numbers = ", ".join(f"{name} = {number}" for name, number in question.numbers.items())
                table.append({ID_COLUMN: student, "exercise": question.label, "numbers": numbers,
                              "expected": shown(value)})
    with open(hidden_tests.parent / f"{chapter}-numbers.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=[ID_COLUMN, "exercise", "numbers", "expected"])
        writer.writeheader()
        writer.writerows(table)
    return written, shared_answers(expected, graded)
