"""End to end, as a teacher does it: make one chapter's assignment with otter, fill in the student notebook
three ways and grade each against the hidden tests, without docker (a whole class's batch, with the
submissions that go wrong: test_grading_batch.py)."""

import importlib.util

import nbformat
import pytest
from book_site.pages import skip_or_fail

from assignments import BOOK
from assignments.grading import grade
from assignments.master import hidden_tests, make
from assignments.myst import Markdown, exercises
from geron_lib.notebook.exercises import graded_feedback
from geron_lib.notebook.exercises.embeddings import check_token_embedding_count

CHAPTER = "01_factorised_embeddings"
# By hand: E < H (V - 1) / (V + H) = 768 * 50264 / 51033 = 756.4..., so 756; V E + E H + H at V = 30000,
# E = 128, H = 4096 is 3,840,000 + 524,288 + 4,096.
# otter 7.0.0 calls DataFrame.drop(inplace=True), which pandas 3.1 deprecates: not this project's code
pytestmark = [pytest.mark.book, pytest.mark.slow,  # the exercises' {eval} numbers; otter and its kernels
              pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.drop is deprecated")]
RIGHT = {"largest_width": "756", "factorised_count": "4_368_384"}
SLIP = {"largest_width": "756", "factorised_count": "3_840_000 + 524_288"}  # the projection's bias forgotten


@pytest.fixture(scope="module")
def made(spec, built_book, bubblewrap, tmp_path_factory):
    if importlib.util.find_spec("otter") is None:
        skip_or_fail("otter-grader is not installed (requirements.txt pins it)")
    out = tmp_path_factory.mktemp("assignments")
    autograder = make(CHAPTER, spec[CHAPTER], out, run_tests=False)
    return out / CHAPTER, autograder


def test_the_student_notebook_has_the_questions_and_no_solution(spec, made):
    folder, _ = made
    student = nbformat.read(folder / "student" / f"{CHAPTER}.ipynb", as_version=4)
    teacher = nbformat.read(folder / "autograder" / f"{CHAPTER}.ipynb", as_version=4)
    text = "\n".join(c.source for c in student.cells)
    answers = [c.source for c in student.cells if "otter_answer_cell" in c.metadata.get("tags", [])]
    assert answers[:2] == ["largest_width = ...", "factorised_count = ..."]
    assert 'grader.check("ex-embeddings-xxlarge")' in text
    book = nbformat.read(BOOK / f"{CHAPTER}.ipynb", as_version=4)
    md, graded = Markdown(book, CHAPTER), spec[CHAPTER]
    written = [md(e.solution) for e in exercises(book).values()
               if e.solution and e.label not in {q.label for q in graded}]
    solutions = written + [q.solution for q in graded]  # what the teachers' notebook shows
    booked = [md(e.solution) for e in exercises(book).values() if e.solution]
    assert len(solutions) == len(booked) == 5
    for solution in solutions + booked:
        assert max(solution.splitlines(), key=len) not in text  # not even the longest line
    teachers = "\n".join(c.source for c in teacher.cells)
    assert all(solution in teachers for solution in solutions)
    # {eval} numbers appear as the book shows them, never as their expression
    assert "{eval}" not in teachers and 'f"{' not in teachers


def test_three_submissions_get_full_zero_and_partial_marks_with_the_checkers_hint(made, submission,
                                                                                  tmp_path):
    folder, _ = made
    student = folder / "student" / f"{CHAPTER}.ipynb"
    submissions = [submission(student, tmp_path / f"{name}.ipynb", answers)
                   for name, answers in (("right", RIGHT), ("empty", {}), ("slip", SLIP))]
    rows = {r["submission"]: r for r in grade(hidden_tests(CHAPTER, folder.parent), submissions,
                                              tmp_path / "grades")}
    assert (rows["right.ipynb"]["total"], rows["right.ipynb"]["possible"]) == (2, 2)
    assert (rows["empty.ipynb"]["total"], rows["empty.ipynb"]["possible"]) == (0, 2)
    slip = rows["slip.ipynb"]
    assert (slip["ex-embeddings-breakeven"], slip["ex-embeddings-xxlarge"], slip["total"]) == (1, 0, 1)
    feedback = (tmp_path / "grades" / "slip.txt").read_text(encoding="utf-8")
    with graded_feedback():  # what the book's checker says, in graded mode
        hint = check_token_embedding_count(4_364_288, 30000, 4096, 128).message
    assert "also has a bias of H entries" in hint and hint in feedback
    assert "not answered: `largest_width` is still `...`" in (tmp_path / "grades" / "empty.txt").read_text()
    assert (tmp_path / "grades" / "grades.csv").read_text().splitlines()[0] == (
        "submission,ex-embeddings-breakeven,ex-embeddings-xxlarge,total,possible,reason")
