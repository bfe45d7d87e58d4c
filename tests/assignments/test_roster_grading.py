"""End to end with a roster of five, as a teacher does it: `geron-assignments make --roster` writes one
notebook per student with their own numbers where an exercise can vary and the book's where it cannot; each
student's right answers get full marks, and a submission that carries a neighbour's answers scores 0 on the
exercises that vary. The chapter is dynamic masking: two exercises vary (w and p), one cannot (the NSP
head)."""

import csv
import importlib.util
import re
from math import comb

import nbformat
import pytest
from book_site.pages import skip_or_fail

from assignments import BOOK
from assignments.__main__ import main
from assignments.master import hidden_tests
from assignments.myst import exercises
from assignments.roster import ID_COLUMN, METADATA_KEY
from assignments.students import draw, student_hidden, student_notebook
from geron_lib.notebook.exercises import graded_feedback
from geron_lib.notebook.exercises.masking import check_distinct_masks, check_empty_mask_probability

CHAPTER = "04_dynamic_masking"
IDS = ["ada", "bob", "cyd", "dee", "eve"]
VARYING = ("ex-masking-empty", "ex-masking-copies")  # the chapter's graded exercises, both varying
# otter 7.0.0 calls DataFrame.drop(inplace=True), which pandas 3.1 deprecates: not this project's code
pytestmark = [pytest.mark.book, pytest.mark.slow,  # the exercises' {eval} numbers; otter and its kernels
              pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.drop is deprecated")]


def _numbers(spec, student: str) -> dict:
    """{label: the student's numbers} of the chapter's varying exercises."""
    return {q.label: draw(q, student) for q in spec[CHAPTER] if q.label in VARYING}


def _right(numbers: dict) -> dict:
    """The answers, by hand: (1 - p)^w; the sum over j of C(w, j) (1 - (1 - p^j (1 - p)^(w - j))^10), the
    10 stored maskings of 40 epochs."""
    w, p = numbers["ex-masking-empty"]["w"], numbers["ex-masking-empty"]["p"]
    copies_w, copies_p = numbers["ex-masking-copies"]["w"], numbers["ex-masking-copies"]["p"]
    distinct = sum(comb(copies_w, j) * (1 - (1 - copies_p**j * (1 - copies_p) ** (copies_w - j)) ** 10)
                   for j in range(copies_w + 1))
    return {"p_nothing_selected": repr((1 - p) ** w), "distinct_masks": repr(distinct)}


@pytest.fixture(scope="module")
def made(spec, built_book, tmp_path_factory):
    if importlib.util.find_spec("otter") is None:
        skip_or_fail("otter-grader is not installed (requirements.txt pins it)")
    out = tmp_path_factory.mktemp("assignments")
    roster = out / "roster.csv"
    roster.write_text(f"name,{ID_COLUMN}\n" + "".join(f"{s.title()},{s}\n" for s in IDS), encoding="utf-8")
    assert main(["make", CHAPTER, "--out", str(out), "--no-run-tests", "--roster", str(roster)]) == 0
    return out, roster


def _prompts(notebook) -> dict:
    """{exercise number: its Markdown cell} of a student notebook."""
    return {int(m[1]): c.source for c in notebook.cells
            if c.cell_type == "markdown" and (m := re.search(r"^## Exercise (\d+):", c.source, re.MULTILINE))}


def test_make_writes_a_notebook_per_student_with_their_numbers_where_an_exercise_varies(spec, made):
    out, _ = made
    notebooks = {s: nbformat.read(student_notebook(out, CHAPTER, s), as_version=4) for s in IDS}
    template = nbformat.read(out / CHAPTER / "student" / f"{CHAPTER}.ipynb", as_version=4)
    book = exercises(nbformat.read(BOOK / f"{CHAPTER}.ipynb", as_version=4))
    numbering = {label: n for n, label in enumerate(book, start=1)}
    assert sorted(_prompts(template)) == list(range(1, len(book) + 1))
    for student, notebook in notebooks.items():
        assert notebook.metadata[METADATA_KEY] == {"chapter": CHAPTER, "student": student}
        assert student_hidden(hidden_tests(CHAPTER, out), student).is_file()
        prompts = _prompts(notebook)
        for label, numbers in _numbers(spec, student).items():
            prompt = prompts[numbering[label]]
            assert f"$w = {numbers['w']}$" in prompt or f"{numbers['w']}-word" in prompt
            assert f"$p = {numbers['p']}$" in prompt
    for label in VARYING:  # five students, five texts, none the book's
        texts = {_prompts(nb)[numbering[label]] for nb in notebooks.values()}
        assert len(texts) == 5 and _prompts(template)[numbering[label]] not in texts
    same = [n for n in _prompts(template) if n not in {numbering[label] for label in VARYING}]
    assert same  # the written ones
    for key in same:
        assert {_prompts(nb)[key] for nb in notebooks.values()} == {_prompts(template)[key]}


def test_a_students_own_check_in_their_notebook_uses_their_numbers(spec, made):
    out, _ = made
    ada, bob = (_right(_numbers(spec, s)) for s in ("ada", "bob"))
    tests = nbformat.read(student_notebook(out, CHAPTER, "ada"), as_version=4).metadata["otter"]["tests"]
    defined: dict = {}
    exec(tests["ex-masking-empty"], defined)  # noqa: S102 - otter's test file, as grader.check runs it
    check = defined["test_ex_masking_empty"].test_func
    check(eval(ada["p_nothing_selected"]))  # noqa: S307 - passes
    with pytest.raises(AssertionError, match="That is wrong for the chance"):
        check(eval(bob["p_nothing_selected"]))  # noqa: S307


def test_right_answers_get_full_marks_and_a_neighbours_copied_answers_score_0_where_numbers_vary(
        spec, made, bubblewrap, submission, tmp_path):
    out, roster = made
    answers = {s: _right(_numbers(spec, s)) for s in IDS}
    folder = tmp_path / "class"
    folder.mkdir()
    paths = {s: submission(student_notebook(out, CHAPTER, s), folder / f"{s}.ipynb", answers[s])
             for s in IDS[:4]}
    paths["cyd"] = paths["cyd"].rename(folder / "handed-in-3.ipynb")  # told by its metadata
    bob = nbformat.read(paths["bob"], as_version=4)
    del bob.metadata[METADATA_KEY]  # told by its file name
    nbformat.write(bob, paths["bob"])
    paths["eve"] = submission(student_notebook(out, CHAPTER, "eve"), folder / "eve.ipynb", answers["dee"])
    status = main(["grade", CHAPTER, *map(str, paths.values()), "--out", str(out), "--roster", str(roster)])
    grades = out / CHAPTER / "grades"
    with open(grades / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert status == 0 and list(rows) == IDS
    assert list(rows["ada"]) == ["submission", "student", *VARYING, "total", "possible", "reason"]
    for student in IDS[:4]:
        row = rows[student]
        assert (float(row["total"]), float(row["possible"]), row["reason"]) == (2, 2, ""), row
    eve = rows["eve"]
    assert [float(eve[k]) for k in (*VARYING, "total")] == [0, 0, 0], eve
    feedback = (grades / "eve.txt").read_text(encoding="utf-8")
    numbers = _numbers(spec, "eve")
    empty, copies = numbers["ex-masking-empty"], numbers["ex-masking-copies"]
    with graded_feedback():  # the checker's word on dee's answers at eve's numbers
        told = [check_empty_mask_probability(float(answers["dee"]["p_nothing_selected"]), empty["w"],
                                             empty["p"]),
                check_distinct_masks(float(answers["dee"]["distinct_masks"]), copies["w"], copies["p"], 40,
                                     "duplicated")]
    assert "Student: eve" in feedback and all(not t and t.message in feedback for t in told)
