"""One batch, as a class hands it in: a right and a wrong notebook, and a corrupt, an empty, a crashing, a
sleeping, a stubborn (it ignores the interrupt), a tampering, a half-deleted and a failing one. Each is
graded alone: every one gets its row and the reason, and the others are graded all the same."""

import csv
import importlib.util

import pytest
from book_site.pages import skip_or_fail

from assignments.__main__ import main
from assignments.master import hidden_tests, make
from geron_lib.notebook.exercises import graded_feedback
from geron_lib.notebook.exercises.embeddings import check_largest_saving_width, check_token_embedding_count

CHAPTER = "01_factorised_embeddings"
# otter 7.0.0 calls DataFrame.drop(inplace=True), which pandas 3.1 deprecates: not this project's code
# book: the exercises' {eval} numbers; slow: otter and its kernels; one worker grades the batch, once
pytestmark = [pytest.mark.book, pytest.mark.slow, pytest.mark.xdist_group("grading-batch"),
              pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.drop is deprecated")]
# By hand (tests/assignments/test_grading.py): 756, and V E + E H + H = 3,840,000 + 524,288 + 4,096
RIGHT = {"largest_width": "756", "factorised_count": "4_368_384"}
WRONG = {"largest_width": "757", "factorised_count": "3_840_000 + 524_288"}  # the projection's bias forgotten
TAMPER = """import geron_lib.notebook.exercises.embeddings as checkers
from geron_lib.notebook.exercises import Feedback
checkers.check_largest_saving_width = checkers.check_token_embedding_count = lambda *a: Feedback(True, "")
from geron_lib import PRESETS
PRESETS.clear()"""
STUBBORN = """import time
while True:
    try:
        time.sleep(600)
    except KeyboardInterrupt:
        pass"""
CELL_TIMEOUT, TIMEOUT = 10, 40  # seconds; the defaults are 120 and 600


@pytest.fixture(scope="module")
def batch(spec, built_book, bubblewrap, submission, tmp_path_factory):
    if importlib.util.find_spec("otter") is None:
        skip_or_fail("otter-grader is not installed (requirements.txt pins it)")
    out = tmp_path_factory.mktemp("assignments")
    make(CHAPTER, spec[CHAPTER], out, run_tests=False)
    student = out / CHAPTER / "student" / f"{CHAPTER}.ipynb"
    folder = tmp_path_factory.mktemp("submissions")
    submissions = [
        submission(student, folder / "right.ipynb", RIGHT),
        submission(student, folder / "wrong.ipynb", WRONG),
        submission(student, folder / "crashing.ipynb", RIGHT, before="import os\nos._exit(1)"),
        submission(student, folder / "sleeping.ipynb", RIGHT, before="import time\ntime.sleep(600)"),
        submission(student, folder / "stubborn.ipynb", RIGHT, before=STUBBORN),
        submission(student, folder / "tampering.ipynb", {"largest_width": "1", "factorised_count": "2"},
                    before=TAMPER),
        submission(student, folder / "deleted.ipynb", {"largest_width": "756"}, without="factorised_count"),
        submission(student, folder / "failing.ipynb", {"largest_width": "756",
                                                        "factorised_count": "4_368_384 + undefined"}),
    ]
    (folder / "corrupt.ipynb").write_text('{"cells": [{"cell_type": "code", ', encoding="utf-8")
    (folder / "empty.ipynb").write_bytes(b"")
    submissions[2:2] = [folder / "corrupt.ipynb", folder / "empty.ipynb"]  # in the middle of the batch
    status = main(["grade", CHAPTER, *map(str, submissions), "--out", str(out),
                   "--cell-timeout", str(CELL_TIMEOUT), "--timeout", str(TIMEOUT)])
    grades = out / CHAPTER / "grades"
    with open(grades / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {row["submission"].removesuffix(".ipynb"): row for row in csv.DictReader(f)}
    feedback = {name: (grades / f"{name}.txt").read_text(encoding="utf-8") for name in rows}
    return status, rows, feedback, out


def _scores(row) -> tuple:
    return (float(row["ex-embeddings-breakeven"]), float(row["ex-embeddings-xxlarge"]), float(row["total"]),
            float(row["possible"]))


def test_every_submission_gets_a_row_and_the_batch_exits_1_for_the_ones_not_fully_graded(batch):
    status, rows, feedback, out = batch
    assert status == 1
    assert list(rows) == ["right", "wrong", "corrupt", "empty", "crashing", "sleeping", "stubborn",
                          "tampering", "deleted", "failing"]
    assert set(feedback) == set(rows)
    assert hidden_tests(CHAPTER, out).is_file()


def test_right_and_wrong_score_what_they_deserve_with_the_checkers_hint(batch):
    _, rows, feedback, _ = batch
    assert _scores(rows["right"]) == (1, 1, 2, 2) and rows["right"]["reason"] == ""
    assert _scores(rows["wrong"]) == (0, 0, 0, 2) and rows["wrong"]["reason"] == ""
    with graded_feedback():  # the grader's feedback is the checker's in graded mode: no direction
        assert check_largest_saving_width(757, 50265, 768).message in feedback["wrong"]
    assert "too large" not in feedback["wrong"]
    assert "also has a bias of H entries" in feedback["wrong"]  # the checker's hint for this slip


@pytest.mark.parametrize(("name", "reason"), [
    ("corrupt", "the file is not valid JSON"),
    ("empty", "the file is empty"),
    ("crashing", "its kernel died in cell"),
    ("stubborn", f"it ran past the submission timeout of {TIMEOUT} s and was stopped"),
])
def test_a_submission_that_cannot_run_gets_zeros_and_the_reason_in_both_files(batch, name, reason):
    _, rows, feedback, _ = batch
    assert _scores(rows[name]) == (0, 0, 0, 2)
    assert reason in rows[name]["reason"] and f"Reason: {reason}" in feedback[name]


def test_a_cell_past_the_per_cell_timeout_is_named_and_the_rest_is_graded(batch):
    _, rows, feedback, _ = batch
    assert _scores(rows["sleeping"]) == (1, 1, 2, 2)
    late = f"(`import time`) ran past the per-cell timeout of {CELL_TIMEOUT} s and was interrupted"
    assert late in rows["sleeping"]["reason"] and late in feedback["sleeping"]


def test_tampering_with_the_checkers_and_presets_in_the_kernel_scores_what_the_answers_deserve(batch):
    _, rows, feedback, _ = batch
    assert _scores(rows["tampering"]) == (0, 0, 0, 2) and rows["tampering"]["reason"] == ""
    with graded_feedback():  # the library's own checkers, which the submission replaced in its kernel
        assert check_largest_saving_width(1, 50265, 768).message in feedback["tampering"]
        assert check_token_embedding_count(2, 30000, 4096, 128).message in feedback["tampering"]


def test_a_deleted_or_failing_answer_cell_says_so(batch):
    _, rows, feedback, _ = batch
    assert _scores(rows["deleted"]) == (1, 0, 1, 2) and _scores(rows["failing"]) == (1, 0, 1, 2)
    assert "the answer cell is missing: no cell assigns `factorised_count`" in feedback["deleted"]
    assert "the answer cell failed: cell " in feedback["failing"]
    assert "(`factorised_count = 4_368_384 + undefined`) raised NameError" in feedback["failing"]
    assert "None" not in feedback["deleted"] + feedback["failing"]
