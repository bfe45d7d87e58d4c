"""Unusual answers to every exercise checker (geron_lib/notebook/exercises): for a checker the right
outcome is feedback, never an exception.

The rule (geron_lib/notebook/exercises/__init__.py states it): a numeric answer is right when it is a finite
real number within the checker's tolerance of the expected value, whatever its type (int of any size,
float, Fraction, Decimal, a numpy integer or float scalar, a 0-d array of one); it is then graded correct.
Anything else gets feedback that it is wrong and names what was expected: a finite number for the numeric
checkers, one of the two names for the costlier saving, one whole number per token for the positions,
sum-form arrays of real numbers for the conversion. No case here raises: every Case has ``expect``.
"""

from __future__ import annotations

import importlib.util
import itertools
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np

from bad_inputs.case import Case
from geron_lib.config import EncoderConfig
from geron_lib.costs.params import attention_params, count_parameters
from geron_lib.model.attention import random_attention_weights
from geron_lib.notebook.exercises import Feedback
from geron_lib.notebook.exercises.attention import (
    check_attention_params,
    check_loop_products,
    check_sum_weights,
)
from geron_lib.notebook.exercises.embeddings import check_largest_saving_width, check_token_embedding_count
from geron_lib.notebook.exercises.hugging_face import (
    check_roberta_positions,
    check_unfactorised_albert,
    unfactorised_albert_count,
)
from geron_lib.notebook.exercises.masking import (
    check_distinct_masks,
    check_empty_mask_probability,
    check_nsp_head_parameters,
)
from geron_lib.notebook.exercises.sharing import check_added_per_layer, check_shared_count
from geron_lib.notebook.exercises.torch_road import check_special_replacement_share
from geron_lib.notebook.exercises.tradeoffs import (
    check_costlier_saving,
    check_rule_of_thumb_ratio,
    check_sharing_memory_saving,
    rule_of_thumb_ratio,
    saving_costs,
    sharing_memory_saving,
)
from geron_lib.pretraining.masking import expected_distinct_masks
from geron_lib.studies.conversions import concat_to_sum
from geron_lib.studies.tradeoffs import load_stored


def _program_texts():
    """tests/notebook/program_texts.py (hand-made compiled programs), loaded by path: tests/notebook is no
    package, and the name ``notebook`` is Jupyter's."""
    path = Path(__file__).resolve().parents[1] / "notebook" / "program_texts.py"
    spec = importlib.util.spec_from_file_location("program_texts", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: The compiler exercise on hand-made programs at h = 8: the loop keeps 41 products, the batched form 6
PROGRAMS = _program_texts().programs({("concat", "loop", 8, 16): 41, ("concat", "vmap", 8, 16): 6,
                                      ("concat", "batched", 8, 16): 6})

#: numeric checker: (its call on an answer, the right answer computed here by the library)
NUMERIC = {
    "check_largest_saving_width": (lambda a: check_largest_saving_width(a, 50265, 768), 756),
    "check_token_embedding_count": (lambda a: check_token_embedding_count(a, 30000, 4096, 128),
                                    30000 * 128 + 128 * 4096 + 4096),
    "check_shared_count": (lambda a: check_shared_count(a, "albert-large-v2", "attention"),
                           count_parameters(EncoderConfig.preset("albert-large-v2").replace(
                               sharing="attention")).total),
    "check_added_per_layer": (lambda a: check_added_per_layer(a, "albert-base-v2", "ffn"),
                              4 * (768 * 768 + 768) + 2 * 768),
    "check_attention_params": (lambda a: check_attention_params(a, 512, 8, "sum"),
                               attention_params(512, 8, "sum")),
    "check_loop_products": (lambda a: check_loop_products(a, PROGRAMS, 8), 41),
    "check_empty_mask_probability": (check_empty_mask_probability, 0.85**8),
    "check_distinct_masks": (lambda a: check_distinct_masks(a, 10, 0.15, 40, "duplicated"),
                             expected_distinct_masks(10, 0.15, 40, "duplicated", 10)),
    "check_nsp_head_parameters": (lambda a: check_nsp_head_parameters(a, "bert-large"), 1024 * 2 + 2),
    "check_sharing_memory_saving": (lambda a: check_sharing_memory_saving(a, 256),
                                    sharing_memory_saving("albert-base-v2", 256, 128)),
    "check_rule_of_thumb_ratio": (lambda a: check_rule_of_thumb_ratio(a, "albert-xlarge-v2", 512),
                                  rule_of_thumb_ratio("albert-xlarge-v2", 512)),
    "check_unfactorised_albert": (check_unfactorised_albert, unfactorised_albert_count()),
    "check_special_replacement_share": (check_special_replacement_share, 0.1 * 4 / 172),
}


def _wrong(*phrases: str):
    """A verdict of wrong whose message holds every phrase."""
    return lambda f: isinstance(f, Feedback) and not f and all(p in f.message for p in phrases)


def _right(f) -> bool:
    return isinstance(f, Feedback) and bool(f) and bool(f.message)


NOT_A_NUMBER = "should be a finite number"


def _gen():
    yield 756


#: answers that are no finite real number: the feedback says a finite number was expected
NOT_NUMBERS = {
    "nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"), "None": None, "Ellipsis": ...,
    "text of a number": "756", "bool True": True, "numpy bool": np.True_,
    "complex with no imaginary part": 756 + 0j,
    "a one-item list": [756], "a generator": _gen(), "a 1-item array": np.array([756]),
    "Decimal NaN": Decimal("NaN"), "Decimal infinity": Decimal("-Infinity"), "numpy nan": np.float32("nan"),
    "an object": object(), "a dict": {"answer": 756}, "bytes": b"756", "an empty string": "",
    "a 0-d text array": np.array("756"), "a 0-d complex array": np.array(1 + 1j),
    "a 10**6-item list": [1] * 10**6, "a string of 10**6 characters": "9" * 10**6,
}

def _unusual_right(value) -> dict:
    """The right answer in unusual types: graded correct."""
    return {"Fraction": Fraction(value), "Decimal": Decimal(repr(value)),
            "numpy scalar": np.int64(value) if isinstance(value, int) else np.float64(value),
            "0-d array": np.array(value)}


def _numeric_cases() -> list[Case]:
    cases = []
    for name, (check, right) in NUMERIC.items():
        cases.append(Case(name, "the right answer", lambda c=check, r=right: c(r), expect=_right))
        for label, value in _unusual_right(right).items():
            cases.append(Case(name, f"the right answer as a {label}", lambda c=check, v=value: c(v),
                              expect=_right))
        for label, value in NOT_NUMBERS.items():
            cases.append(Case(name, label, lambda c=check, v=value: c(v), expect=_wrong(NOT_A_NUMBER)))
        cases += [Case(name, "10**400", lambda c=check: c(10**400), expect=_wrong("too large")),
                  Case(name, "-10**5000 (past Python's int printing limit)", lambda c=check: c(-10**5000),
                       expect=_wrong("too small", "5,001 digits")),
                  Case(name, "a Fraction just off the answer", lambda c=check, r=right: c(Fraction(r) * 2),
                       expect=_wrong("too large"))]
    return cases


def _sum_weights_cases() -> list[Case]:
    w = random_attention_weights(16, 4, "concat", seed=1)
    right = concat_to_sum(w, 4)

    def check(answer):
        return lambda: check_sum_weights(answer, w, 4)

    not_yet = "not sum-form weights yet"
    return [
        Case("check_sum_weights", "the right weights", check(right), expect=_right),
        Case("check_sum_weights", "the right weights in a dict subclass",
             check(type("Weights", (dict,), {})(right)), expect=_right),
        *(Case("check_sum_weights", label, check(value), expect=_wrong(not_yet)) for label, value in {
            "None": None, "Ellipsis": ..., "an empty dict": {}, "10**400": 10**400, "text": "W_V",
            "a list of the arrays": list(right.values()), "the concat weights": w,
            "a generator": iter([right]),
            "W_V as nested lists": right | {"W_V": right["W_V"].tolist()},
            "W_V of the wrong shape": right | {"W_V": right["W_V"][:2]},
            "W_V a 0-d array": right | {"W_V": np.array(1.0)},
            "a b_V the sum form lacks": right | {"b_V": np.zeros(16)},
        }.items()),
        *(Case("check_sum_weights", label, check(value), expect=_wrong(not_yet, "W_V", rule))
          for label, value, rule in (
              ("W_V of text", right | {"W_V": right["W_V"].astype(str)}, "real numbers"),
              ("W_V of objects", right | {"W_V": right["W_V"].astype(object)}, "real numbers"),
              ("W_V complex", right | {"W_V": right["W_V"].astype(complex)}, "real numbers"),
              ("W_V of booleans", right | {"W_V": right["W_V"] > 0}, "real numbers"),
              ("W_V holding NaN", right | {"W_V": np.full_like(right["W_V"], np.nan)}, "finite"),
              ("W_V holding inf", right | {"W_V": np.full_like(right["W_V"], np.inf)}, "finite"))),
        Case("check_sum_weights", "W_V of huge numbers",
             check(right | {"W_V": np.full_like(right["W_V"], 1e308)}),
             expect=_wrong("value maps differ")),
    ]


def _costlier_cases() -> list[Case]:
    costs = saving_costs(load_stored())
    right = max(("factorising", "sharing"), key=costs.get)
    wrong = {"factorising": "sharing", "sharing": "factorising"}[right]
    one_of = "should be one of ['factorising', 'sharing']"
    return [
        Case("check_costlier_saving", "the right name", lambda: check_costlier_saving(right), expect=_right),
        Case("check_costlier_saving", "the right name as a numpy str",
             lambda: check_costlier_saving(np.str_(right)), expect=_right),
        Case("check_costlier_saving", "the other name", lambda: check_costlier_saving(wrong),
             expect=_wrong("cost less here")),
        *(Case("check_costlier_saving", label, lambda v=value: check_costlier_saving(v),
               expect=_wrong(one_of))
          for label, value in {
              "capitalised": right.capitalize(), "padded": f" {right} ", "bytes": right.encode(),
              "a list of it": [right], "None": None, "Ellipsis": ..., "10**400": 10**400,
              "nan": float("nan"), "a Fraction": Fraction(1, 3), "a 0-d array": np.array(right),
              "text of 10**6 characters": "s" * 10**6, "a generator": iter([right])}.items()),
    ]


def _raising():
    yield 2
    raise RuntimeError("a student's generator that fails")


def _positions_cases() -> list[Case]:
    right = [2, 3, 4, 5, 6, 1, 1]

    def case(label, answer, expect):
        return Case("check_roberta_positions", label, lambda: check_roberta_positions(answer), expect=expect)

    whole = "whole numbers"
    return [
        *(case(label, value, _right) for label, value in {
            "the right list": right, "a tuple": tuple(right), "a numpy int8 array": np.array(right, np.int8),
            "a float array": np.array(right, float), "a generator": (p for p in right),
            "Fractions": [Fraction(p) for p in right], "Decimals": [Decimal(p) for p in right],
            "numpy scalars": [np.uint16(p) for p in right],
            "a range and a pad": itertools.chain(range(2, 7), [1, 1]),
        }.items()),
        *(case(label, value, _wrong("Give a list of whole numbers")) for label, value in {
            "None": None, "Ellipsis": ..., "10**400": 10**400, "text": "2345611", "bytes": b"\x02\x03",
            "a number": 2, "a 0-d array": np.array(2), "a generator that raises": _raising(),
        }.items()),
        *(case(label, value, _wrong(whole)) for label, value in {
            "NaN": [float("nan")] * 7, "inf": [2, 3, 4, 5, 6, 1, np.inf],
            "halves": [2.5] * 7, "nested": [right], "a 2-d array": np.array([right]), "booleans": [True] * 7,
            "complex": [2j] * 7, "text items": list("2345611"), "None items": [None] * 7,
        }.items()),
        case("a dict (its keys, six distinct)", dict.fromkeys(right), _wrong("you gave 6")),
        case("an endless generator", itertools.count(2), _wrong("more than 7")),
        case("a 10**7-item range", range(10**7), _wrong("more than 7")),
        case("too few", right[:3], _wrong("you gave 3")),
        case("10**400 in each place", [10**400] * 7, _wrong("every padding token takes pad_token_id")),
        case("BERT's numbering", np.arange(7), _wrong("BERT's numbering")),
        case("pads counted", [2, 3, 4, 5, 6, 7, 8], _wrong("every padding token takes pad_token_id")),
    ]


CASES = _numeric_cases() + _sum_weights_cases() + _costlier_cases() + _positions_cases()
