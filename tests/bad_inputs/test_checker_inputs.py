"""Every exercise checker answers any answer with feedback, never an exception: every checker has rows in
test_rules_checkers.py (the rule is stated there), and whatever a broad hypothesis strategy draws gets
feedback."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import geron_lib.notebook.exercises as exercises
from bad_inputs.inputs import NUMERIC_CHECKERS as NUMERIC
from geron_lib.notebook.exercises import Feedback
from geron_lib.notebook.exercises.attention import check_sum_weights
from geron_lib.notebook.exercises.hugging_face import check_roberta_positions
from geron_lib.notebook.exercises.tradeoffs import check_costlier_saving


def test_every_checker_of_the_exercises_has_rows(numeric_checkers):
    modules = [importlib.import_module(f"{exercises.__name__}.{m.name}")
               for m in pkgutil.iter_modules(exercises.__path__)]
    found = {name for module in modules for name, f in inspect.getmembers(module, inspect.isfunction)
             if name.startswith("check_") and f.__module__ == module.__name__}  # defined there, not imported
    assert tuple(numeric_checkers) == NUMERIC
    assert found == {*NUMERIC, "check_sum_weights", "check_costlier_saving", "check_roberta_positions"}


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

OTHERS = ("check_costlier_saving", "check_roberta_positions", "check_sum_weights")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=ANY, name=st.sampled_from(sorted(NUMERIC + OTHERS)))
def test_no_answer_makes_a_checker_raise(numeric_checkers, concat_weights, answer, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if name in numeric_checkers:
            checker, args, _ = numeric_checkers[name]
            verdict = checker(answer, *args)
        elif name == "check_sum_weights":
            verdict = check_sum_weights(answer, concat_weights, 4)
        else:
            verdict = {"check_costlier_saving": check_costlier_saving,
                       "check_roberta_positions": check_roberta_positions}[name](answer)
    assert isinstance(verdict, Feedback) and verdict.message
