"""The paired interval equals scipy.stats' paired t-test interval, and says "resolved" only when it
excludes zero."""

import numpy as np
import pytest
from scipy import stats

from geron_lib.studies.paired import Interval, paired_interval


@pytest.mark.parametrize("n", [2, 3, 5, 12])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_equals_scipy_ttest_rel(n, confidence):
    rng = np.random.default_rng(n)
    a, b = rng.normal(5, 1, n), rng.normal(5.3, 1, n)
    got = paired_interval(a, b, confidence)
    want = stats.ttest_rel(a, b).confidence_interval(confidence)
    assert (got.low, got.high) == pytest.approx((want.low, want.high), rel=1e-12)
    assert got.mean == pytest.approx(np.mean(a - b))
    assert got.n == n and got.confidence == confidence


def test_resolved_only_when_zero_is_outside():
    assert paired_interval([1.0, 1.1, 0.9], [0.0, 0.0, 0.0]).resolved
    assert paired_interval([0.0, 0.0, 0.0], [1.0, 1.1, 0.9]).resolved
    noisy = paired_interval([1.0, -1.0, 0.1], [0.0, 0.0, 0.0])
    assert noisy.low < 0 < noisy.high and not noisy.resolved


def test_equal_differences_give_a_zero_width_interval():
    i = paired_interval([2.0, 3.0, 4.0], [1.0, 2.0, 3.0])
    assert i == Interval(1.0, 1.0, 1.0, 3, 0.95) and i.resolved


def test_str_shows_mean_and_bounds():
    assert str(Interval(0.5, 0.25, 0.75, 3, 0.95)) == "+0.500 [+0.250, +0.750]"


@pytest.mark.parametrize(
    ("a", "b", "confidence", "match"),
    [
        ([1.0], [2.0], 0.95, "at least 2 pairs"),
        ([1.0, 2.0], [1.0, 2.0, 3.0], 0.95, "one length"),
        ([[1.0, 2.0]], [[1.0, 2.0]], 0.95, "1-D"),
        ([1.0, np.nan], [1.0, 2.0], 0.95, "finite"),
        ([1.0, 2.0], [1.0, 3.0], 1.0, r"confidence must lie in \(0, 1\)"),
        ([1.0, 2.0], [1.0, 3.0], 0.0, r"confidence must lie in \(0, 1\)"),
    ],
)
def test_bad_input(a, b, confidence, match):
    with pytest.raises(ValueError, match=match):
        paired_interval(a, b, confidence)
