"""Scoring an answer (assignments/scoring.py) in a forked child of the grader, under a time limit: a right and
a wrong answer score as they deserve, and an answer whose scoring would not end (an exact value of a
billion digits), in the answer or in the file that holds the answers, is refused in time."""

import pickle
import time
from decimal import Decimal
from fractions import Fraction

import nbformat
import pytest

from assignments.hidden import make_hidden, read_hidden
from assignments.scoring import prepare, score
from assignments.spec import load_spec
from geron_lib.notebook.exercises import graded_feedback
from geron_lib.notebook.exercises.embeddings import check_token_embedding_count

CHAPTER = "01_factorised_embeddings"
LIMIT = 2.0  # seconds
BOMB_LIMIT = 0.5  # seconds, for the answers that would never finish: refused as surely, sooner


class _Slow:
    """Pickles as Fraction("1e999999999"): reading it back computes 10**999999999."""

    def __reduce__(self):
        return Fraction, ("1e999999999",)


@pytest.fixture(scope="module")
def question(tmp_path_factory):
    """(the chapter's count question, its expected value, its checker's names, a notebook answering it)."""
    hidden = read_hidden(make_hidden(load_spec()[CHAPTER], tmp_path_factory.mktemp("hidden") / "h.pkl"))
    (count, expected), = [(q, e) for q, e in hidden if q.answer == "factorised_count"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("factorised_count = ...")])
    return count, expected, prepare(hidden)[count.label], notebook


def _scored(question, tmp_path, exported: dict, limit: float = LIMIT):
    count, expected, names, notebook = question
    answers = tmp_path / "answers.pkl"
    answers.write_bytes(pickle.dumps(exported, protocol=4))
    start = time.monotonic()
    result = score(count, expected, notebook, {}, answers, names, limit)
    return result, time.monotonic() - start


@pytest.mark.parametrize(("answer", "points"), [(4_368_384, 1), (Decimal(4_368_384), 1), (4_364_288, 0)])
def test_an_answer_scores_in_the_child_what_it_deserves(question, tmp_path, answer, points):
    (scored, line, reason), _ = _scored(question, tmp_path,
                                        {"factorised_count": ("value", pickle.dumps(answer, protocol=4))})
    assert (scored, line.split(":")[0], reason) == (points, "right" if points else "wrong", "")


def test_a_decimal_of_a_billion_digits_is_scored_at_once_by_its_magnitude(question, tmp_path):
    exported = {"factorised_count": ("value", pickle.dumps(Decimal("1e999999999"), protocol=4))}
    (scored, line, reason), took = _scored(question, tmp_path, exported)
    with graded_feedback():
        told = check_token_embedding_count(Decimal("1e999999999"), 30000, 4096, 128).message
    assert (scored, reason, line) == (0, "", f"wrong: {told}")
    assert took < LIMIT


@pytest.mark.parametrize("exported", [
    {"factorised_count": ("value", pickle.dumps(_Slow(), protocol=4))},
    {"factorised_count": ("value", b""), "written by the submission in place of the export": _Slow()},
], ids=["a fraction bomb", "a bomb in the answers file"])
def test_an_answer_that_would_not_finish_scoring_is_refused_in_time(question, tmp_path, exported):
    (scored, line, reason), took = _scored(question, tmp_path, exported, BOMB_LIMIT)
    assert (scored, line) == (0, f"refused: scoring the answer ran past {BOMB_LIMIT:g} s")
    assert reason == f"scoring its answer to ex-embeddings-xxlarge ran past {BOMB_LIMIT:g} s and was refused"
    assert BOMB_LIMIT <= took < BOMB_LIMIT + 5
