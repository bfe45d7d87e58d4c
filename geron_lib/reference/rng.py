"""The reference implementation's generator: a 32-bit linear congruential generator, vectorised.

Each draw advances the state,

    s <- (A s + C) mod 2^32,

then returns ``(2 ((s + 0.5) / 2^32) - 1) * scale``, a value in ``(-scale, scale)``.
"""

from __future__ import annotations

import math

import numpy as np

from ..validate import check_int, check_memory, check_positive_number, check_sequence

A = 1664525
C = 1013904223
M = 2**32
#: :func:`draws_loop` steps one draw at a time in Python (about a second for this many); :func:`draws`
#: computes any number at once.
MAX_LOOP_DRAWS = 10**6


def draws_loop(seed: int, n: int, scale: float = 0.1) -> np.ndarray:
    """The first ``n`` draws, one step at a time: the recurrence exactly as written (slow, for reading;
    n at most :data:`MAX_LOOP_DRAWS`)."""
    seed, n = check_int("seed", seed), check_int("n", n, minimum=0)
    scale = check_positive_number("scale", scale)
    if n > MAX_LOOP_DRAWS:
        raise ValueError(f"n must be at most {MAX_LOOP_DRAWS:,} for the step-by-step loop, got {n:,}; "
                         "draws() computes the same values at once")
    s = seed % M
    out = np.empty(n)
    for i in range(n):
        s = (A * s + C) % M
        out[i] = (2 * ((s + 0.5) / M) - 1) * scale
    return out


# Composing the affine step n times gives another affine map, s_n = a_n s_0 + c_n (mod 2^32).
# Knowing (a_k, c_k) for k = 1..m, the next m follow at once:  a_{m+k} = a_k a_m,
# c_{m+k} = a_k c_m + c_k.  Doubling m reaches any n in log2(n) vectorised steps.
def _affine_powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(a_k, c_k) for k = 1..n as uint32 arrays; uint32 products wrap, which is exactly mod 2^32."""
    a, c = np.empty(n, dtype=np.uint32), np.empty(n, dtype=np.uint32)
    a[0], c[0] = A, C
    m = 1
    while m < n:
        k = min(m, n - m)
        np.multiply(a[:k], a[m - 1], out=a[m:m + k])
        np.multiply(a[:k], c[m - 1], out=c[m:m + k])
        c[m:m + k] += c[:k]
        m += k
    return a, c


def _check_draws_memory(n_seeds: int, n: int) -> None:
    # a_k and c_k (uint32), then per seed its states (uint32) and their floats (float64)
    check_memory(8 * n + 12 * n_seeds * n, f"{n_seeds:,} seeds x n = {n:,} draws")


def _states(seeds: np.ndarray, n: int) -> np.ndarray:
    """States s_1 .. s_n for each of ``seeds`` (int64 array): shape (len(seeds), n), uint32."""
    _check_draws_memory(seeds.size, n)
    if n == 0:
        return np.empty((seeds.size, 0), dtype=np.uint32)
    a, c = _affine_powers(n)
    states = a * (seeds % M).astype(np.uint32)[:, None]
    states += c
    return states


# 2 ((s + 0.5) / 2^32) - 1 = s 2^-31 + (2^-32 - 1): both sides exact in float64 (33-bit numerator),
# so the two-step form below rounds only at "* scale", exactly like the recurrence.
def _to_unit(s: np.ndarray, scale: float) -> np.ndarray:
    out = np.multiply(s, 2.0 / M, dtype=np.float64)
    out += 1.0 / M - 1.0
    out *= scale
    return out


def draws(seed: int, n: int, scale: float = 0.1) -> np.ndarray:
    """The first ``n`` draws from ``seed``, all at once; equal bit for bit to :func:`draws_loop`."""
    seed, n = check_int("seed", seed), check_int("n", n, minimum=0)
    scale = check_positive_number("scale", scale)
    return _to_unit(_states(np.array([seed % M], dtype=np.int64), n)[0], scale)


def draws_rows(seeds, n: int, scale: float = 0.1) -> np.ndarray:
    """Row i holds the first ``n`` draws from ``seeds[i]``: (len(seeds), n), one vectorised pass."""
    n, scale = check_int("n", n, minimum=0), check_positive_number("scale", scale)
    if isinstance(seeds, list | tuple | range):  # their number is known before they are read
        _check_draws_memory(len(seeds), n)
    seeds = check_sequence("seeds", seeds, "integer seeds")
    _check_draws_memory(len(seeds), n)
    seeds = np.array([check_int("seeds", s) % M for s in seeds], dtype=np.int64)
    return _to_unit(_states(seeds, n), scale)


def tensor(seed: int, shape: tuple[int, ...], scale: float = 0.1) -> np.ndarray:
    """A weight tensor "drawn with seed k": the first prod(shape) draws, filled in row-major order."""
    if not isinstance(shape, tuple | list):
        raise TypeError(f"shape must be a tuple of sizes, got {type(shape).__name__}")
    shape = tuple(check_int("shape", d, minimum=0) for d in shape)
    return draws(seed, math.prod(shape), scale).reshape(shape)
