"""Every exercise checker answers any answer with feedback, never an exception: enough cases in
cases_checkers.py (the rule is stated there; test_cases.py runs them), and whatever a broad hypothesis
strategy draws."""

from __future__ import annotations

import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bad_inputs.cases_checkers import (
    CASES,
    NUMERIC,
    check_costlier_saving,
    check_roberta_positions,
    check_sum_weights,
)
from geron_lib.model.attention import random_attention_weights
from geron_lib.notebook.exercises import Feedback


def test_the_cases_cover_every_checker_and_are_many():
    entries = {case.entry for case in CASES}
    assert entries >= set(NUMERIC) | {"check_sum_weights", "check_costlier_saving", "check_roberta_positions"}
    assert len(CASES) >= 100 and all(case.raises is None for case in CASES)
    assert len({(case.entry, case.label) for case in CASES}) == len(CASES)


def _numbers():
    return st.one_of(
        st.integers(), st.integers(min_value=10**300), st.builds(lambda e: -(10**e), st.integers(300, 6000)),
        st.floats(), st.floats(width=32).map(np.float32), st.fractions(), st.decimals(),
        st.complex_numbers(), st.booleans(), st.none(), st.just(...),
        st.integers(-(2**63), 2**63 - 1).map(np.int64))


ARRAYS = hnp.arrays(st.one_of(hnp.scalar_dtypes(), hnp.unicode_string_dtypes()),
                    hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))

#: a broad mix: numbers of every type and size, text, bytes, arrays of any dtype, nested lists and dicts
ANY = st.recursive(st.one_of(_numbers(), st.text(), st.binary(), ARRAYS),
                   lambda inner: st.one_of(st.lists(inner, max_size=8), st.tuples(inner, inner),
                                           st.dictionaries(st.text(max_size=4), inner, max_size=4),
                                           st.lists(inner, max_size=8).map(iter)),
                   max_leaves=12)

WEIGHTS = random_attention_weights(16, 4, "concat", seed=1)
CHECKERS = {**{name: check for name, (check, _) in NUMERIC.items()},
            "check_costlier_saving": check_costlier_saving,
            "check_roberta_positions": check_roberta_positions,
            "check_sum_weights": lambda answer: check_sum_weights(answer, WEIGHTS, 4)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=ANY, name=st.sampled_from(sorted(CHECKERS)))
def test_no_answer_makes_a_checker_raise(answer, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        verdict = CHECKERS[name](answer)
    assert isinstance(verdict, Feedback) and verdict.message
