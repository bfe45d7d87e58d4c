"""Timing side by side: every function timed in turn within each round, so that drift on a shared
machine hits them all alike. Used by the chapters and by ``benchmarks/``. No test's verdict
depends on the machine's speed: tests check what is timed, with a clock that counts calls or work done."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from .validate import check_int, check_positive_number

#: Rounds at most: more would run for minutes at the chapters' sizes.
MAX_REPEAT = 1000


def check_timing(repeat, clock, *, name: str = "repeat") -> int:
    """``repeat`` (the argument ``name``) as an int in [1, :data:`MAX_REPEAT`], after checking that
    ``clock`` can be called."""
    repeat = check_int(name, repeat, minimum=1, maximum=MAX_REPEAT)
    if not callable(clock):
        raise TypeError(f"clock must be a function returning seconds (such as time.perf_counter), got "
                        f"{clock!r}")
    return repeat


def sample_seconds(fns: dict[str, Callable[[], object]], *, repeat: int = 7, min_seconds: float = 2e-3,
                   clock: Callable[[], float] = time.process_time,
                   alternate: bool = False) -> dict[str, list[float]]:
    """Seconds per call of every function, one sample per round; each round times them all in turn,
    every timing spans at least ``min_seconds`` (short calls are repeated within it), and with
    ``alternate`` odd rounds run them in reverse order.

    The default clock is this process's CPU time: on a shared machine the time other jobs hold the
    core does not count. It equals wall time for single-threaded work only (one BLAS thread); pass
    ``clock=time.perf_counter`` to measure wall time."""
    repeat = check_timing(repeat, clock)
    min_seconds = check_positive_number("min_seconds", min_seconds)
    number = {}
    for name, fn in fns.items():  # warm up, and choose how many calls fill min_seconds
        start = clock()
        fn()
        number[name] = max(1, math.ceil(min_seconds / max(clock() - start, 1e-9)))
    samples = {name: [] for name in fns}
    order = list(fns.items())
    for r in range(repeat):
        for name, fn in order[::-1] if alternate and r % 2 else order:
            start = clock()
            for _ in range(number[name]):
                fn()
            samples[name].append((clock() - start) / number[name])
    return samples


def median_seconds(fns: dict[str, Callable[[], object]], **options) -> dict[str, float]:
    """Median seconds per call of every function (options as in :func:`sample_seconds`)."""
    return {name: float(np.median(s)) for name, s in sample_seconds(fns, **options).items()}
