"""timing: side-by-side sampling calls every function as often as asked, in the asked order."""

import pytest

from geron_lib.timing import median_seconds, sample_seconds


def test_rounds_and_alternating_order():
    calls = []
    ticks = iter(range(1000))
    samples = sample_seconds({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, repeat=4,
                             min_seconds=1e-9, clock=lambda: next(ticks), alternate=True)
    assert calls == ["a", "b"] + ["a", "b", "b", "a", "a", "b", "b", "a"]  # warm-up, then 4 rounds
    assert {k: len(v) for k, v in samples.items()} == {"a": 4, "b": 4}
    assert all(s == 1 for v in samples.values() for s in v)  # one tick per timed call


def test_short_calls_are_repeated_to_fill_min_seconds():
    clock = iter(x * 0.5 for x in range(1000))  # every clock reading is 0.5 s after the last
    calls = []
    medians = median_seconds({"f": lambda: calls.append(1)}, repeat=3, min_seconds=1.0,
                             clock=lambda: next(clock))
    assert len(calls) == 1 + 3 * 2  # the warm-up took 0.5 s, so each sample spans 2 calls
    assert medians == {"f": pytest.approx(0.25)}


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(repeat=0), ValueError, "repeat"), (dict(min_seconds=0), ValueError, "min_seconds"),
    (dict(clock=1.0), TypeError, "clock")])
def test_bad_options(kwargs, error, match):
    with pytest.raises(error, match=match):
        sample_seconds({"f": lambda: None}, **kwargs)
