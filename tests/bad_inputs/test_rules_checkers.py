"""Unusual answers to every exercise checker (geron_lib/notebook/exercises): for a checker the right
outcome is feedback, never an exception.

The rule (geron_lib/notebook/exercises/__init__.py states it): a numeric answer is right when it is a finite
real number within the checker's tolerance of the expected value, whatever its type (int of any size, float,
Fraction, Decimal, a numpy integer or float scalar, a 0-d array of one); it is then graded correct. Anything
else gets feedback that it is wrong and names what was expected: a finite number for the numeric checkers,
one of the two names for the costlier saving, one whole number per token for the positions, sum-form arrays
of real numbers for the conversion. The answers are built by the fixtures below, afresh for every row (a
generator is read once)."""

import itertools
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from bad_inputs.inputs import NUMERIC_CHECKERS as NUMERIC
from bad_inputs.outcome import case
from geron_lib.notebook.exercises import Feedback
from geron_lib.notebook.exercises.attention import check_sum_weights
from geron_lib.notebook.exercises.hugging_face import check_roberta_positions
from geron_lib.notebook.exercises.tradeoffs import check_costlier_saving, saving_costs
from geron_lib.studies.context_grid import load_stored
from geron_lib.studies.conversions import concat_to_sum

NOT_A_NUMBER = "should be a finite number"
#: Large answers, shared by the rows that give them
MILLION_ONES, MILLION_NINES = [1] * 10**6, "9" * 10**6


def right(feedback) -> bool:
    return isinstance(feedback, Feedback) and bool(feedback) and bool(feedback.message)


def wrong(feedback, *phrases: str) -> bool:
    """Feedback that the answer is wrong, its message holding every phrase."""
    return isinstance(feedback, Feedback) and not feedback and all(p in feedback.message for p in phrases)


# Numeric answers --------------------------------------------------------------------------------------------
def _numbers_in_other_types(value) -> dict:
    return {"Fraction": Fraction(value), "Decimal": Decimal(repr(value)),
            "numpy scalar": np.int64(value) if isinstance(value, int) else np.float64(value),
            "0-d array": np.array(value)}


@pytest.mark.parametrize(("name", "form"), [
    *(case(name, "the right answer", name, None) for name in NUMERIC),
    *(case(name, f"the right answer as a {form}", name, form)
      for name in NUMERIC for form in ("Fraction", "Decimal", "numpy scalar", "0-d array")),
])
def test_the_right_number_in_any_numeric_type_is_graded_right(numeric_checkers, name, form):
    checker, args, answer = numeric_checkers[name]
    feedback = checker(answer if form is None else _numbers_in_other_types(answer)[form], *args)
    assert right(feedback), feedback


def not_numbers() -> dict:
    """Answers that are no finite real number (a generator afresh)."""
    return {
        "nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"), "None": None, "Ellipsis": ...,
        "text of a number": "756", "bool True": True, "numpy bool": np.True_,
        "complex with no imaginary part": 756 + 0j, "a one-item list": [756],
        "a generator": (n for n in [756]), "a 1-item array": np.array([756]), "Decimal NaN": Decimal("NaN"),
        "Decimal infinity": Decimal("-Infinity"), "numpy nan": np.float32("nan"), "an object": object(),
        "a dict": {"answer": 756}, "bytes": b"756", "an empty string": "",
        "a 0-d text array": np.array("756"), "a 0-d complex array": np.array(1 + 1j),
        "a 10**6-item list": MILLION_ONES,
        "a string of 10**6 characters": MILLION_NINES,
    }


@pytest.mark.parametrize(("name", "label"), [case(name, label, name, label)
                                             for name in NUMERIC for label in not_numbers()])
def test_an_answer_that_is_no_finite_number_is_told_a_number_is_due(numeric_checkers, name, label):
    checker, args, _ = numeric_checkers[name]
    feedback = checker(not_numbers()[label], *args)
    assert wrong(feedback, NOT_A_NUMBER), feedback


@pytest.mark.parametrize(("name", "answer_of", "phrases"), [
    *(case(name, label, name, answer_of, phrases) for name in NUMERIC for label, answer_of, phrases in (
        ("10**400", "10**400", ("too large",)),
        ("-10**5000 (past Python's int printing limit)", "-10**5000", ("too small", "5,001 digits")),
        ("a Fraction just off the answer", "twice", ("too large",))))])
def test_a_number_far_off_or_just_off_is_told_which_way(numeric_checkers, name, answer_of, phrases):
    checker, args, expected = numeric_checkers[name]
    answer = {"10**400": 10**400, "-10**5000": -10**5000, "twice": Fraction(expected) * 2}[answer_of]
    feedback = checker(answer, *args)
    assert wrong(feedback, *phrases), feedback


# The conversion to sum-form weights -------------------------------------------------------------------------
@pytest.fixture
def sum_answers(concat_weights) -> dict:
    """Answers to the conversion exercise, around the right one (the sum form of concat_weights)."""
    w = concat_weights
    sums = concat_to_sum(w, 4)
    v = sums["W_V"]
    return {
        "the right weights": sums, "the right weights in a dict subclass": type("Weights", (dict,), {})(sums),
        "None": None, "Ellipsis": ..., "an empty dict": {}, "10**400": 10**400, "text": "W_V",
        "a list of the arrays": list(sums.values()), "the concat weights": w, "a generator": iter([sums]),
        "W_V as nested lists": sums | {"W_V": v.tolist()},
        "W_V of the wrong shape": sums | {"W_V": v[:2]},
        "W_V a 0-d array": sums | {"W_V": np.array(1.0)},
        "a b_V the sum form lacks": sums | {"b_V": np.zeros(16)},
        "W_V of text": sums | {"W_V": v.astype(str)},
        "W_V of objects": sums | {"W_V": v.astype(object)},
        "W_V complex": sums | {"W_V": v.astype(complex)},
        "W_V of booleans": sums | {"W_V": v > 0},
        "W_V holding NaN": sums | {"W_V": np.full_like(v, np.nan)},
        "W_V holding inf": sums | {"W_V": np.full_like(v, np.inf)},
        "W_V of huge numbers": sums | {"W_V": np.full_like(v, 1e308)},
    }


NOT_YET = "not sum-form weights yet"


@pytest.mark.parametrize(("label", "phrases"), [
    case("check_sum_weights", "the right weights", "the right weights", None),
    case("check_sum_weights", "the right weights in a dict subclass", "the right weights in a dict subclass",
         None),
    *(case("check_sum_weights", label, label, (NOT_YET,))
      for label in ("None", "Ellipsis", "an empty dict", "10**400", "text", "a list of the arrays",
                    "the concat weights", "a generator", "W_V as nested lists", "W_V of the wrong shape",
                    "W_V a 0-d array", "a b_V the sum form lacks")),
    *(case("check_sum_weights", label, label, (NOT_YET, "W_V", rule))
      for label, rule in (("W_V of text", "real numbers"), ("W_V of objects", "real numbers"),
                          ("W_V complex", "real numbers"), ("W_V of booleans", "real numbers"),
                          ("W_V holding NaN", "finite"), ("W_V holding inf", "finite"))),
    case("check_sum_weights", "W_V of huge numbers", "W_V of huge numbers", ("value maps differ",)),
])
def test_the_sum_form_weights_are_graded_and_anything_else_is_told_what_is_due(concat_weights, sum_answers,
                                                                               label,
                                                                              phrases):
    feedback = check_sum_weights(sum_answers[label], concat_weights, 4)
    assert right(feedback) if phrases is None else wrong(feedback, *phrases), feedback


# The costlier saving: one of two names ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def costlier() -> tuple[str, str]:
    """(the right name, the other one), from the stored context grid."""
    costs = saving_costs(load_stored())
    best = max(("factorising", "sharing"), key=costs.get)
    return best, {"factorising": "sharing", "sharing": "factorising"}[best]


@pytest.fixture
def name_answers(costlier) -> dict:
    best, other = costlier
    return {"the right name": best, "the right name as a numpy str": np.str_(best), "the other name": other,
            "capitalised": best.capitalize(), "padded": f" {best} ", "bytes": best.encode(),
            "a list of it": [best], "None": None, "Ellipsis": ..., "10**400": 10**400, "nan": float("nan"),
            "a Fraction": Fraction(1, 3), "a 0-d array": np.array(best),
            "text of 10**6 characters": "s" * 10**6, "a generator": iter([best])}


@pytest.mark.parametrize(("label", "phrases"), [
    case("check_costlier_saving", "the right name", "the right name", None),
    case("check_costlier_saving", "the right name as a numpy str", "the right name as a numpy str", None),
    case("check_costlier_saving", "the other name", "the other name", ("cost less here",)),
    *(case("check_costlier_saving", label, label, ("should be one of ['factorising', 'sharing']",))
      for label in ("capitalised", "padded", "bytes", "a list of it", "None", "Ellipsis", "10**400", "nan",
                    "a Fraction", "a 0-d array", "text of 10**6 characters", "a generator")),
])
def test_the_costlier_saving_is_graded_and_anything_but_its_two_names_is_told_them(name_answers, label,
                                                                                   phrases):
    feedback = check_costlier_saving(name_answers[label])
    assert right(feedback) if phrases is None else wrong(feedback, *phrases), feedback


# RoBERTa's positions: one whole number per token ------------------------------------------------------------
POSITIONS = [2, 3, 4, 5, 6, 1, 1]


def _raising():
    yield 2
    raise RuntimeError("a student's generator that fails")


@pytest.fixture
def position_answers() -> dict:
    p = POSITIONS
    return {
        "the right list": p, "a tuple": tuple(p), "a numpy int8 array": np.array(p, np.int8),
        "a float array": np.array(p, float), "a generator": (x for x in p),
        "Fractions": [Fraction(x) for x in p], "Decimals": [Decimal(x) for x in p],
        "numpy scalars": [np.uint16(x) for x in p], "a range and a pad": itertools.chain(range(2, 7), [1, 1]),
        "None": None, "Ellipsis": ..., "10**400": 10**400, "text": "2345611", "bytes": b"\x02\x03",
        "a number": 2, "a 0-d array": np.array(2), "a generator that raises": _raising(),
        "NaN": [float("nan")] * 7, "inf": [2, 3, 4, 5, 6, 1, np.inf], "halves": [2.5] * 7, "nested": [p],
        "a 2-d array": np.array([p]), "booleans": [True] * 7, "complex": [2j] * 7,
        "text items": list("2345611"), "None items": [None] * 7,
        "a dict (its keys, six distinct)": dict.fromkeys(p), "an endless generator": itertools.count(2),
        "a 10**7-item range": range(10**7), "too few": p[:3], "10**400 in each place": [10**400] * 7,
        "BERT's numbering": np.arange(7), "pads counted": [2, 3, 4, 5, 6, 7, 8],
    }


@pytest.mark.parametrize(("label", "phrases"), [
    *(case("check_roberta_positions", label, label, None)
      for label in ("the right list", "a tuple", "a numpy int8 array", "a float array", "a generator",
                    "Fractions",
                    "Decimals", "numpy scalars", "a range and a pad")),
    *(case("check_roberta_positions", label, label, ("Give a list of whole numbers",))
      for label in ("None", "Ellipsis", "10**400", "text", "bytes", "a number", "a 0-d array",
                    "a generator that raises")),
    *(case("check_roberta_positions", label, label, ("whole numbers",))
      for label in ("NaN", "inf", "halves", "nested", "a 2-d array", "booleans", "complex", "text items",
                    "None items")),
    case("check_roberta_positions", "a dict (its keys, six distinct)", "a dict (its keys, six distinct)",
         ("you gave 6",)),
    case("check_roberta_positions", "an endless generator", "an endless generator", ("more than 7",)),
    case("check_roberta_positions", "a 10**7-item range", "a 10**7-item range", ("more than 7",)),
    case("check_roberta_positions", "too few", "too few", ("you gave 3",)),
    case("check_roberta_positions", "10**400 in each place", "10**400 in each place",
         ("every padding token takes pad_token_id",)),
    case("check_roberta_positions", "BERT's numbering", "BERT's numbering", ("BERT's numbering",)),
    case("check_roberta_positions", "pads counted", "pads counted",
         ("every padding token takes pad_token_id",)),
])
def test_the_positions_are_graded_and_anything_else_is_told_what_is_due(position_answers, label, phrases):
    feedback = check_roberta_positions(position_answers[label])
    assert right(feedback) if phrases is None else wrong(feedback, *phrases), feedback
