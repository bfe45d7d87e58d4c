"""Every case of every cases_*.py module gets its outcome, run as the sweep runs it: in a forked child,
within its time limit and memory limit, a clear error naming the argument or a right answer (for the
checkers, feedback that says what was expected)."""

import pytest

from bad_inputs import cases_data, cases_model, load_sweep

sweep = load_sweep()
CASES = sweep.load_cases()


@pytest.mark.parametrize("module", [cases_model, cases_data], ids=["model", "data"])
def test_enough_cases_of_both_kinds(module):
    cases = module.CASES
    errors = [c for c in cases if c.raises is not None]
    assert len(cases) >= 150 and len(errors) >= 100 and len(cases) - len(errors) >= 30
    assert len({(c.entry, c.label) for c in cases}) == len(cases)  # no case counted twice


@pytest.mark.parametrize("case", CASES, ids=[f"{c.entry} / {c.label}" for c in CASES])
def test_case(case):
    run = sweep.run_case(case, time_limit=sweep.TIME_LIMIT)
    kind = sweep.classify(case, run, sweep.MEMORY_LIMIT_MIB * 2**20)
    detail = f"{run.raised[0].__name__}: {run.raised[1]}" if run.raised else "returned"
    assert kind in (sweep.CLEAR, sweep.RIGHT), f"{kind}: {detail}"
