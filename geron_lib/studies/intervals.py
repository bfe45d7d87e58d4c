"""The book's one statistics policy for comparing trained cells: intervals over both sources of noise (the
seeds that trained the models and the examples they are scored on), seeds paired only where their
correlation supports it, and Holm's correction over a family of comparisons declared before the results.

A cell's runs are a (k, n) array: one row per seed, one column per held-out example (a token's loss, or 1
for a right answer and 0 for a wrong one), every row scored on the same n examples. The quantity compared is
the grand mean (the mean over seeds of each run's mean), and a comparison is mean(a) - mean(b).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validate import check_int, check_number, plain_array

#: Bootstrap draws per interval, and how many are drawn at once (a (chunk, n) weight array).
DRAWS, CHUNK = 10_000, 250
TIE = 1e-12  # far above a sum's rounding (about 1e-16 of its terms), far below any difference a run shows
#: A family's error rate: a comparison of a declared family is *resolved* when its Holm-adjusted p is at most
#: ALPHA, and its corrected interval is at the level of its Holm step (:func:`holm_levels`).
ALPHA = 0.05


@dataclass(frozen=True)
class Difference:
    """mean(a) - mean(b) with a percentile interval over seeds and examples, the bootstrap's two-sided p,
    the seeds' correlation r (their per-run means, when paired), and whether the seeds were paired."""

    mean: float
    low: float
    high: float
    p: float
    r: float
    paired: bool
    confidence: float

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def __str__(self) -> str:
        return f"{self.mean:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"


def _check_runs(a, b, confidence) -> tuple[np.ndarray, np.ndarray, float]:
    a, b = (plain_array(name, x).astype(np.float64) for name, x in (("a", a), ("b", b)))
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or 0 in a.shape + b.shape:
        raise ValueError(f"a and b must be (seeds, examples) arrays scored on the same examples, got shapes "
                         f"{a.shape} and {b.shape}")
    if min(len(a), len(b)) < 2:
        raise ValueError("a and b must hold at least 2 seeds each: one seed says nothing of their spread")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("a and b must be finite")
    if not 0 < check_number("confidence", confidence) < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    return a, b, float(confidence)


def seed_correlation(a, b) -> float:
    """r = corr_i(mean_j a_ij, mean_j b_ij): Pearson's r of two cells' per-seed means, seed i with seed i.

    Pairing seeds narrows an interval only when r > 0; 0 where either cell's means do not vary."""
    ma, mb = (plain_array(name, x).astype(np.float64).mean(axis=1) for name, x in (("a", a), ("b", b)))
    if len(ma) != len(mb) or len(ma) < 2:
        raise ValueError("a and b must hold the same seeds, at least 2, to be correlated")
    if ma.std() == 0 or mb.std() == 0:
        return 0.0
    return float(np.corrcoef(ma, mb)[0, 1])


def difference(a, b, *, confidence: float = 0.95, draws: int = DRAWS,
               seed: int = 0) -> Difference:
    """d* = mean_{i in S*} a_i . w - mean_{i in S'*} b_i . w,
    w = an example resample's counts / n.

    A two-level bootstrap: each draw resamples the seeds of each cell (the
    same seeds for both when they are paired) and, shared by both cells, the
    n examples; the interval holds the draws' central ``confidence`` share.
    Seeds are paired when both cells have the same number and their
    correlation (:func:`seed_correlation`) is positive; otherwise each
    cell's seeds are resampled on their own. p is twice the smaller share of
    draws on either side of zero. Each run's noise over its examples is
    counted twice (in the run's mean, which the seed resample draws, and
    again by the example resample), so the interval errs wide, never narrow.
    A draw within TIE of zero is a tie, counted on both sides: exact
    arithmetic would give it 0, and the BLAS's rounding, which differs from
    machine to machine, must not decide p.
    """
    a, b, confidence = _check_runs(a, b, confidence)
    draws = check_int("draws", draws, minimum=100)
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    r = seed_correlation(a, b) if len(a) == len(b) else float("nan")
    paired = r > 0  # False for nan
    n, d = a.shape[1], []
    for start in range(0, draws, CHUNK):
        m = min(CHUNK, draws - start)
        counts = [np.bincount(rng.integers(0, n, n), minlength=n)
                  for _ in range(m)]
        w = np.stack(counts) / n                     # (m, n)
        sa = rng.integers(0, len(a), (m, len(a)))
        sb = sa if paired else rng.integers(0, len(b), (m, len(b)))
        run_a, run_b = w @ a.T, w @ b.T  # (m, k): each run's resampled mean
        d.append(np.take_along_axis(run_a, sa, 1).mean(1)
                 - np.take_along_axis(run_b, sb, 1).mean(1))
    d = np.concatenate(d)
    d[np.abs(d) < TIE] = 0.0
    tails = [(1 - confidence) / 2, (1 + confidence) / 2]
    low, high = np.quantile(d, tails)
    p = min(1.0, 2 * min((d <= 0).mean(), (d >= 0).mean()))
    return Difference(float(a.mean() - b.mean()), float(low), float(high),
                      float(p), r, paired, confidence)


def _check_p_values(p_values) -> dict:
    """The family's p-values by name, each read by its own value and in [0, 1]."""
    if not isinstance(p_values, dict) or not p_values:
        raise TypeError("p_values must be a non-empty dict of p-values by comparison name")
    ps = {k: check_number(f"p_values[{k!r}]", v) for k, v in p_values.items()}
    if not all(0 <= v <= 1 for v in ps.values()):
        raise ValueError("p_values must each lie in [0, 1]")
    return ps


def holm(p_values: dict) -> dict:
    """p_(i)^Holm = max_{j <= i} min(1, (m - j + 1) p_(j)),  p_(1) <= ... <= p_(m).

    Holm's step-down adjustment of a family of m p-values, by name: a comparison is significant at level
    alpha when its adjusted p is at most alpha, with the chance of any false finding in the family at most
    alpha.
    """
    ps = _check_p_values(p_values)
    m, running, adjusted = len(ps), 0.0, {}
    for j, (name, p) in enumerate(sorted(ps.items(), key=lambda kv: kv[1])):
        running = max(running, min(1.0, (m - j) * p))
        adjusted[name] = running
    return {k: adjusted[k] for k in ps}


def holm_levels(p_values: dict) -> dict:
    """level_(j) = 1 - ALPHA / (m - j + 1) for the j-th smallest p, up to the first comparison Holm does not
    resolve; that one's level for it and every later one.

    The confidence of each comparison's corrected interval, by name: the level Holm's step-down tests it
    at, so that a corrected interval excludes zero exactly when Holm resolves the comparison (the bootstrap's
    p and its interval are two readings of the same draws). Unlike Bonferroni's, at 1 - ALPHA / m for all,
    these intervals do not all hold at once with 95 % confidence: the family's guarantee is on its decisions.
    """
    ps = _check_p_values(p_values)
    m, levels, stopped = len(ps), {}, None
    for j, (name, p) in enumerate(sorted(ps.items(), key=lambda kv: kv[1])):
        if stopped is None and p > ALPHA / (m - j):
            stopped = m - j
        levels[name] = 1 - ALPHA / (stopped or m - j)
    return {k: levels[k] for k in ps}
