"""The statistics policy: Holm's adjustment against its definition, the two-level bootstrap against
scipy's bootstrap where the examples carry no noise, and against the known spread of simulated runs."""

import itertools

import numpy as np
import pytest
from scipy import stats

from geron_lib.studies import intervals as iv


def test_holm_matches_its_definition_and_a_worked_example():
    # the textbook example: 4 tests, p = 0.01, 0.04, 0.03, 0.005 -> 0.03, 0.06, 0.06, 0.02
    adjusted = iv.holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005})
    assert adjusted == pytest.approx({"a": 0.03, "b": 0.06, "c": 0.06, "d": 0.02})
    rng = np.random.default_rng(0)
    for _ in range(50):  # the definition, written out: reject in order while p_(j) <= alpha / (m - j + 1)
        p = dict(enumerate(rng.random(5) ** 3))
        adjusted = iv.holm(p)
        for alpha in (0.01, 0.05, 0.2):
            order, rejected = sorted(p, key=p.get), set()
            for j, k in enumerate(order):
                if p[k] > alpha / (len(p) - j):
                    break
                rejected.add(k)
            assert {k for k in p if adjusted[k] <= alpha} == rejected


def test_without_example_noise_the_paired_bootstrap_is_scipys_over_seeds():
    rng = np.random.default_rng(1)
    a = rng.normal(5.0, 0.05, 8)
    b = a + 0.03 + rng.normal(0, 0.01, 8)             # paired: positively correlated
    A, B = np.repeat(a[:, None], 40, 1), np.repeat(b[:, None], 40, 1)  # every example alike
    ours = iv.difference(A, B, draws=20_000, seed=2)
    assert ours.paired and ours.r > 0.9
    theirs = stats.bootstrap((a, b), lambda x, y: np.mean(x) - np.mean(y), paired=True, vectorized=False,
                             n_resamples=20_000, method="percentile", random_state=3).confidence_interval
    assert ours.mean == pytest.approx(np.mean(a - b))
    assert (ours.low, ours.high) == pytest.approx((theirs.low, theirs.high), abs=0.003)


def test_the_interval_covers_the_seeds_and_the_examples():
    # runs = cell + seed effect + example effect (shared, cancels) + noise: the difference of the grand means
    # has a known spread. The bootstrap counts each run's noise twice (in its mean and in the example
    # resample), so over many simulated grids its intervals are as wide as the known spread or somewhat
    # wider, never narrower
    rng = np.random.default_rng(4)
    k, n, widths = 5, 400, []
    example = rng.normal(0, 1.0, n)
    for s in range(20):
        a = 0.2 + rng.normal(0, 0.05, (k, 1)) + example + rng.normal(0, 1.0, (k, n))
        b = rng.normal(0, 0.05, (k, 1)) + example + rng.normal(0, 1.0, (k, n))
        d = iv.difference(a, b, seed=s, draws=2000)
        widths.append(d.high - d.low)
    sd = np.sqrt(2 * (0.05**2 + 1.0**2 / n) / k)            # the difference's standard deviation
    assert 1.0 <= np.mean(widths) / (2 * 1.96 * sd) <= 1.5
    assert d.mean == pytest.approx(a.mean() - b.mean())


def test_seeds_are_paired_only_when_they_correlate():
    a = np.array([[1.0, 1.1], [2.0, 2.1], [3.0, 3.1]])
    assert iv.difference(a, a[::-1] + 0.5).paired is False          # r = -1
    assert iv.difference(a, a + 0.5).paired is True                  # r = 1
    assert iv.difference(a, np.vstack([a, a])).paired is False       # different numbers of seeds
    assert iv.seed_correlation(a, a[::-1]) == pytest.approx(-1)


@pytest.mark.parametrize("a, b, message", [
    (np.ones((1, 4)), np.ones((2, 4)), "at least 2 seeds"),
    (np.ones((2, 4)), np.ones((2, 5)), "same examples"),
    (np.ones(4), np.ones(4), "same examples"),
    (np.full((2, 2), np.nan), np.ones((2, 2)), "finite"),
])
def test_runs_that_cannot_be_compared_are_refused(a, b, message):
    with pytest.raises(ValueError, match=message):
        iv.difference(a, b)


def test_holm_refuses_what_is_not_a_family_of_p_values():
    for bad in ({}, [0.1]):
        with pytest.raises(TypeError, match="p_values"):
            iv.holm(bad)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        iv.holm({"a": 1.5})


def test_holm_never_lowers_a_p_value_and_keeps_the_order():
    p = {i: v for i, v in enumerate([0.2, 0.01, 0.5, 0.03])}
    adjusted = iv.holm(p)
    assert all(adjusted[k] >= p[k] for k in p)
    for i, j in itertools.combinations(p, 2):
        if p[i] < p[j]:
            assert adjusted[i] <= adjusted[j]


def test_holm_levels_step_down_and_stop_at_the_first_unresolved_comparison():
    # m = 4: 0.001 <= 0.05/4 and 0.012 <= 0.05/3 are resolved; 0.03 > 0.05/2 stops, and 0.5 keeps its level
    p = {"a": 0.03, "b": 0.001, "c": 0.012, "d": 0.5}
    assert iv.holm_levels(p) == pytest.approx({"b": 1 - 0.05 / 4, "c": 1 - 0.05 / 3,
                                               "a": 1 - 0.05 / 2, "d": 1 - 0.05 / 2})
    adjusted = iv.holm(p)
    assert {k for k, q in adjusted.items() if q <= iv.ALPHA} == {"b", "c"}
    # every comparison resolved: each at its own step, the last at 95 %
    assert iv.holm_levels({"a": 0.001, "b": 0.002}) == pytest.approx({"a": 1 - 0.05 / 2, "b": 0.95})


def test_a_draw_that_is_zero_in_exact_arithmetic_is_a_tie_whatever_the_rounding():
    """Accuracies are 0/1 per example, so many draws of two cells' difference are exactly 0; a rounding error
    of 1e-16 on one side (another machine's BLAS) must not move p."""
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2, (3, 40)).astype(float)
    b = a[::-1].copy()
    b[:, 0] = 1 - b[:, 0]  # the cells differ on one example only: most draws tie at exactly 0
    exact = iv.difference(a, b, draws=2_000)
    nudged = iv.difference(a + 1e-15, b, draws=2_000)
    assert nudged.p == exact.p
