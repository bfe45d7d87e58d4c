"""Graded mode (geron_lib.notebook.exercises: graded_mode, graded_feedback), as the assignments use it: for
every graded question of the spec, an answer a little above the expected value and one a little below get
the same message, and no graded message says which way to move; a known slip, a whole factor and a
percentage for a share are still named. The book's own pages (self-study, the default) keep saying which
way. No kernel runs here."""

import re
from fractions import Fraction

import numpy as np
import pytest

from assignments.master import GRADED_MODE
from assignments.spec import check_answer, check_solution, checker_names, load_spec
from geron_lib.notebook.exercises import FACTORS, PERCENT, graded_feedback, graded_mode
from geron_lib.notebook.exercises.attention import check_attention_params
from geron_lib.notebook.exercises.embeddings import check_token_embedding_count
from geron_lib.notebook.exercises.masking import check_empty_mask_probability

QUESTIONS = [q for questions in load_spec().values() for q in questions]
#: Words that tell an answer which way to move
DIRECTIONAL = re.compile(r"too (large|small|big|high|low|many|few)|\b(larger|smaller|bigger|higher|lower)\b"
                         r"|\b(increase|decrease|raise|reduce)|(more|less|fewer) than|overshoot|undershoot",
                         re.IGNORECASE)


def _scaled(value, factor):
    """``value`` with every number in it times ``factor`` (exactly for ints and floats of a count)."""
    if isinstance(value, dict):
        return {k: _scaled(v, factor) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value * float(factor)
    if isinstance(value, list | tuple):
        return type(value)(_scaled(v, factor) for v in value)
    if isinstance(value, int):
        return Fraction(value) * factor
    return value * float(factor)


def _question_param(q):
    return pytest.param(q, id=q.label, marks=[pytest.mark.jax] if "jax" in q.setup else [])


@pytest.fixture(scope="module", params=[_question_param(q) for q in QUESTIONS])
def solved(request):
    """(question, the spec solution's value, its checker's names)."""
    question, env = request.param, {}
    assert check_solution(question, env)
    return question, env[question.answer], checker_names(question)


def test_an_answer_a_little_above_or_below_gets_one_graded_message_and_no_direction(solved):
    question, expected, names = solved
    if isinstance(expected, str):
        pytest.skip("a choice between words has no above or below (its wrong choice is checked below)")
    for small in (10 * question.tolerance, Fraction(1, 100)):
        above, below = (check_answer(question, _scaled(expected, 1 + sign * Fraction(small)), names)
                        for sign in (1, -1))
        assert not above and not below, (question.label, small)
        assert above.message == below.message, (question.label, small)
        assert not DIRECTIONAL.search(above.message), above.message
    if isinstance(expected, int):  # a count: whole numbers about 1 % off (a known slip may sit at +-1, such
        step = max(2, expected // 100)  # as the compiler exercise's forgotten W_O product, and is named)
        above, below = (check_answer(question, expected + sign * step, names) for sign in (1, -1))
        assert not above and not below and above.message == below.message, question.label


def test_no_graded_message_of_a_wrong_answer_says_which_way(solved):
    question, expected, names = solved
    if isinstance(expected, str):
        wrong = [c for c in ("factorising", "sharing") if c != expected]
    elif isinstance(expected, int | float):
        wrong = [expected * 2, expected / 2, expected * 100, -expected, 10**400, -(10**400), "12", None]
    else:
        wrong = [_scaled(expected, 2), [], "x"]
    for answer in wrong:
        feedback = check_answer(question, answer, names)
        assert not feedback and not DIRECTIONAL.search(feedback.message), (question.label, feedback.message)


def test_a_whole_factor_a_percentage_and_a_known_slip_are_named_in_graded_mode():
    with graded_feedback():
        doubled = check_token_embedding_count(2 * 4_368_384, 30000, 4096, 128)
        per_head = check_attention_params(8 * (2 * (512**2 + 512) + 8 * 512**2 + 512), 512, 8, "sum")
        percent = check_empty_mask_probability(100 * 0.85**8)
        slip = check_token_embedding_count(30000 * 128 + 128 * 4096, 30000, 4096, 128)
    book = check_token_embedding_count(30000 * 128 + 128 * 4096, 30000, 4096, 128)  # self-study
    assert not doubled and f"factor of {FACTORS[2]}" in doubled.message
    assert not per_head and "h = 8" in per_head.message
    assert not percent and PERCENT[100] in percent.message
    assert not slip and "4,364,288" not in slip.message  # the slip is named, the wrong number not quoted
    assert "4,364,288" in book.message  # self-study quotes it
    assert slip.message.split(". ", 1)[1] == book.message.split(". ", 1)[1]  # the same slip's hint


def test_self_study_keeps_the_direction_and_the_notebooks_switch_graded_mode_on():
    assert "too large" in check_token_embedding_count(4_368_385, 30000, 4096, 128).message
    with graded_feedback():
        assert not DIRECTIONAL.search(check_token_embedding_count(4_368_385, 30000, 4096, 128).message)
    assert "too large" in check_token_embedding_count(4_368_385, 30000, 4096, 128).message  # restored
    try:
        exec(GRADED_MODE, {})  # noqa: S102 - the student notebook's own cell
        assert not DIRECTIONAL.search(check_token_embedding_count(4_368_385, 30000, 4096, 128).message)
    finally:
        graded_mode(False)


@pytest.mark.book
def test_the_student_notebook_switches_graded_mode_on_and_its_checks_are_graded(masters):
    master = masters["01_factorised_embeddings"]
    assert GRADED_MODE in [c.source for c in master.cells if c.cell_type == "code"]
    [test] = [c.source for c in master.cells if c.cell_type == "code" and c.source.startswith(
        "def test_ex_embeddings_xxlarge")]
    defined: dict = {}
    exec(test, defined)  # noqa: S102 - the master's own test, as otter runs it in the student's kernel
    with pytest.raises(AssertionError) as told:
        defined["test_ex_embeddings_xxlarge"](4_368_385)  # one too many: graded, so no direction
    assert not DIRECTIONAL.search(str(told.value)) and "too large" in check_token_embedding_count(
        4_368_385, 30000, 4096, 128).message  # the same call, self-study, outside the check
