"""Paired comparisons over seeds: two cells of the trade-off grid trained with the same seeds differ, seed by
seed, by d_i; the mean difference and its confidence interval say whether the grid resolves the difference
(the interval excludes zero) or not at this size."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..validate import check_number, plain_array


def _as_values(name: str, values) -> np.ndarray:
    """``values`` (a list, tuple or array of real numbers, one per seed) as a float64 array."""
    if not isinstance(values, np.ndarray | list | tuple):
        raise TypeError(f"{name} must be a list or array of numbers, one per seed; got "
                        f"{type(values).__name__}")
    try:
        arr = plain_array(name, values)
    except ValueError:  # ragged nesting
        raise ValueError(f"{name} must be 1-D: one number per seed") from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers (not booleans, strings or complex numbers); got "
                        f"values of {arr.dtype}")
    return arr.astype(np.float64)


def _check_pairs(a: np.ndarray, b: np.ndarray, confidence) -> float:
    """``confidence`` as a float, after checking the pairs and it."""
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"a and b must be 1-D and of one length (one value per seed), got shapes "
                         f"{a.shape} and {b.shape}")
    if len(a) < 2:
        raise ValueError(f"a and b must hold at least 2 pairs for an interval, got {len(a)}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("a and b must be finite")
    if not 0 < check_number("confidence", confidence) < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    return float(confidence)


@dataclass(frozen=True)
class Interval:
    """A mean difference over n pairs and its confidence interval [low, high]."""

    mean: float
    low: float
    high: float
    n: int
    confidence: float

    @property
    def resolved(self) -> bool:
        """Whether the interval excludes zero: the sign of the difference is a finding."""
        return self.low > 0 or self.high < 0

    def __str__(self) -> str:
        return f"{self.mean:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"


def paired_interval(a, b, confidence: float = 0.95) -> Interval:
    """d_i = a_i - b_i,  d_mean +- t_{n-1, (1 + c) / 2} s_d / sqrt(n).

    Student's t interval for the mean of paired differences (a_i and b_i
    measured with the same seed i), s_d their sample standard deviation.
    Needs two or more pairs; all-equal differences give a zero-width
    interval.
    """
    a, b = _as_values("a", a), _as_values("b", b)
    confidence = _check_pairs(a, b, confidence)
    d = a - b
    n = len(d)
    t = stats.t.ppf((1 + confidence) / 2, n - 1)
    half = float(t * d.std(ddof=1) / math.sqrt(n))
    mean = float(d.mean())
    return Interval(mean, mean - half, mean + half, n, confidence)
