"""The hidden tests (assignments/hidden.py) without kernels: they agree with the library's checkers on every
spec question, and answers are read back from a kernel's pickle as plain values only."""

import dataclasses
import hashlib
import pickle
import stat
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from assignments import GradingRefused
from assignments.hidden import UnreadableAnswer, checksum, make_hidden, matches, read_hidden, read_pickled
from assignments.spec import check_answer, check_solution, checker_names, load_spec

QUESTIONS = [q for questions in load_spec().values() for q in questions]


def _solved(question):
    env: dict = {}
    assert check_solution(question, env)
    return env[question.answer]


@pytest.mark.parametrize("question", [
    pytest.param(q, id=q.label, marks=[pytest.mark.jax] if "jax" in q.setup else []) for q in QUESTIONS])
def test_the_hidden_test_and_the_checker_agree_on_right_near_and_wrong_answers(question):
    expected, names = _solved(question), checker_names(question)
    assert matches(expected, expected, question.tolerance)
    assert not matches(..., expected, question.tolerance) and not check_answer(question, ..., names)
    if isinstance(expected, int | float):
        tol = question.tolerance  # a count (an int) has none: it is matched exactly
        for factor, right in ((1 + tol / 10, isinstance(expected, float)), (1 + 10 * tol, False),
                              (1 - 10 * tol, False)):
            near = expected * factor if tol > 1e-6 else Fraction(expected) * Fraction(factor)
            assert matches(near, expected, tol) is right, (question.label, factor)
            assert bool(check_answer(question, near, names)) is right, (question.label, factor)
        assert matches(Decimal(expected), expected, tol) and matches(np.float64(expected), expected, tol)
        assert not matches(str(expected), expected, tol) and not matches([expected], expected, tol)


def test_the_hidden_tests_are_written_with_the_solutions_values_and_read_back(tmp_path):
    graded = load_spec()["03_output_projection"][:2]  # a count and the sum-form weights (a dict of arrays)
    path = make_hidden(graded, tmp_path / "03-hidden.pkl")
    (count, n), (convert, w_sum) = read_hidden(path)
    assert (count, n) == (graded[0], 2 * (512**2 + 512) + 8 * 512**2 + 512)
    assert convert == graded[1] and sorted(w_sum) == ["W_K", "W_Q", "W_V", "b_K", "b_O", "b_Q"]
    assert matches(w_sum, w_sum, convert.tolerance) and check_answer(convert, w_sum, checker_names(convert))
    assert not matches({**w_sum, "W_V": w_sum["W_V"].swapaxes(1, 2)}, w_sum, convert.tolerance)
    assert not matches({**w_sum, "b_V": w_sum["b_O"]}, w_sum, convert.tolerance)
    assert matches({**w_sum, "b_V": None}, w_sum, convert.tolerance)  # a key holding None is no key
    failing = dataclasses.replace(graded[0], solution="sum_form_count = 1")
    with pytest.raises(ValueError, match="ex-attention-count: the spec's solution fails its checker"):
        make_hidden([failing], tmp_path / "x.pkl")


def test_the_hidden_tests_are_written_read_only_with_their_sha256_beside_them(tmp_path):
    path = make_hidden(load_spec()["01_factorised_embeddings"], tmp_path / "01-hidden.pkl")
    made_again = make_hidden(load_spec()["01_factorised_embeddings"], path)  # over the read-only files
    assert checksum(path) == tmp_path / "01-hidden.sha256"
    assert [stat.S_IMODE(p.stat().st_mode) for p in (made_again, checksum(path))] == [0o444, 0o444]
    assert checksum(path).read_text() == f"{hashlib.sha256(path.read_bytes()).hexdigest()}  01-hidden.pkl\n"


@pytest.mark.parametrize(("change", "refusal"), [
    ("a byte appended", "have changed since they were made"),
    ("another file's checksum", "have changed since they were made"),
    ("the checksum removed", "cannot be read")])
def test_hidden_tests_whose_checksum_differs_are_refused(tmp_path, change, refusal):
    path = make_hidden(load_spec()["01_factorised_embeddings"], tmp_path / "01-hidden.pkl")
    for made in (path, checksum(path)):
        made.chmod(0o644)
    if change == "a byte appended":
        path.write_bytes(path.read_bytes() + b"\0")
    elif change == "the checksum removed":
        checksum(path).unlink()
    else:
        checksum(path).write_text(checksum(path).read_text().replace("01-hidden.pkl", "02-hidden.pkl"))
    with pytest.raises(GradingRefused, match=refusal):
        read_hidden(path)


@pytest.mark.parametrize("value", [
    756, 10**400, -0.25, "sharing", [2, 3, 4], (1, 2), {"a": [1.5]}, ..., None, Fraction(1, 3),
    Decimal("1.5"), 1 + 2j, np.int64(5), np.float32(0.5), np.arange(6.0).reshape(2, 3),
    np.array(["a", "b"]), np.array([1, None], dtype=object), {1, 2}])
def test_plain_values_come_back_from_a_kernels_pickle(value):
    back = read_pickled(pickle.dumps(value, protocol=4))
    assert type(back) is type(value)
    assert repr(back) == repr(value)


class Sneaky:
    def __reduce__(self):
        return (print, ("this would run in the grader",))


class Answer:
    """A student's own class, whose __eq__ could say yes to anything."""

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


@pytest.mark.parametrize(("value", "named"), [
    (Sneaky(), "builtins.print"), (np.array([Sneaky()], dtype=object), "builtins.print"),
    ([1, {"x": Sneaky()}], "builtins.print"), (Answer(), "Answer")])
def test_an_answer_of_any_other_class_is_refused_without_running_its_code(value, named, capsys):
    with pytest.raises(UnreadableAnswer, match=f"a [\\w.]*{named}, which the grader does not read"):
        read_pickled(pickle.dumps(value, protocol=4))
    assert capsys.readouterr().out == ""


def test_a_huge_or_broken_pickle_is_refused_with_the_reason():
    with pytest.raises(UnreadableAnswer, match="more than the 67,108,864 the grader reads"):
        read_pickled(b"\x80" * (64 * 2**20 + 1))
    with pytest.raises(UnreadableAnswer, match="could not be read back"):
        read_pickled(pickle.dumps([1, 2, 3])[:-3])
