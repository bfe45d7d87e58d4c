"""Loop against batched attention, timed side by side in one run (the chapter and
``benchmarks/bench_attention.py`` both measure with this; no test times anything)."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

import numpy as np

from ..model.attention import ATTENTION_FORMS, check_attention, random_attention_weights
from ..timing import median_seconds
from ..validate import check_choice, check_int


def page_faults_per_call(fn: Callable[[], object], *, calls: int = 3) -> float | None:
    """Minor page faults per call of ``fn`` (first touches of memory fresh from the operating system),
    after one warm-up call; None where the operating system does not report them (no ``resource``)."""
    calls = check_int("calls", calls, minimum=1)
    try:
        import resource
    except ImportError:  # Windows
        return None
    fn()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls


def loop_vs_batched(form: str, T_values, h_values, *, hidden_size: int = 128, batch: int = 1,
                    repeat: int = 7, seed: int = 0,
                    clock: Callable[[], float] = time.process_time) -> list[dict]:
    """One row per (T, h): median seconds (by ``clock``, see :func:`median_seconds`) of the loop and the
    batched ``form``, loop / batched, and the page faults per call of each."""
    check_choice("form", form, tuple(ATTENTION_FORMS))
    H = check_int("hidden_size", hidden_size, minimum=1)
    B = check_int("batch", batch, minimum=1)
    T_values = [check_int("every T", T, minimum=1) for T in T_values]
    h_values = [check_int("every h", h, minimum=1) for h in h_values]
    if not T_values or not h_values:
        raise ValueError("T_values and h_values must each hold at least one value")
    bad = [h for h in h_values if H % h]
    if bad:
        raise ValueError(f"hidden_size ({H}) must be divisible by every h; it is not by {bad}")
    rng = np.random.default_rng(check_int("seed", seed))
    weights = {h: random_attention_weights(H, h, form, seed=seed) for h in h_values}
    for h in h_values:  # every size's memory, before any work: broadcast views allocate nothing
        for T in T_values:
            check_attention(np.broadcast_to(0.0, (B, T, H)), weights[h], h, form)
    rows = []
    for h, w in weights.items():
        for T in T_values:
            x = rng.normal(size=(B, T, H))
            batched, _, loop = ATTENTION_FORMS[form]
            fns = {"loop": partial(loop, x, w, h), "batched": partial(batched, x, w, h)}
            seconds = median_seconds(fns, repeat=repeat, clock=clock)
            faults = {f"{impl}_faults": page_faults_per_call(fn) for impl, fn in fns.items()}
            rows.append({"form": form, "T": T, "h": h, **seconds,
                         "speedup": seconds["loop"] / seconds["batched"], **faults})
    return rows
