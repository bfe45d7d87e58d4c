"""Attention timed side by side in one run: the loop over heads against the batched forms (the chapter and
``benchmarks/bench_attention.py`` both measure with this), and where a batched form's time goes (its matrix
products, its softmax, the rest). No test's verdict depends on the machine's speed: tests check the rows'
shape and that what is timed computes the forward."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import partial

import numpy as np

from ..costs.memory import forward_activation_bytes
from ..model.attention import (
    ATTENTION_FORMS,
    additive_mask,
    attention_probs,
    check_attention,
    random_attention_weights,
    split_heads,
)
from ..model.layers import softmax
from ..timing import MAX_REPEAT, check_timing, median_seconds, sample_seconds
from ..validate import check_choice, check_head_grid, check_heads, check_int, check_memory


def page_faults_per_call(fn: Callable[[], object], *, calls: int = 3) -> float | None:
    """Minor page faults per call of ``fn`` (first touches of memory fresh from the operating system),
    after one warm-up call; None where the operating system does not report them (no ``resource``)."""
    if not callable(fn):
        raise TypeError(f"fn must be a function to call, got {type(fn).__name__}")
    calls = check_int("calls", calls, minimum=1, maximum=MAX_REPEAT)
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
    T_values, h_values, H, B = check_head_grid(T_values, h_values, hidden_size, batch)
    repeat, seed = check_timing(repeat, clock), check_int("seed", seed, minimum=0)
    check_memory(max(forward_activation_bytes(B, T, H, h, H, form, 8) for T in T_values for h in h_values),
                 f"loop_vs_batched's attention at batch={B}, hidden_size={H}, T_values up to "
                 f"{max(T_values)}")
    rng = np.random.default_rng(seed)
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


def matrix_products(form: str, x: np.ndarray, w: dict, num_attention_heads: int,
                    A: np.ndarray) -> Callable[[], np.ndarray]:
    """C = 2TH^2 (2 + h_V + o) + 2T^2H (1 + h_V): a function running only the matrix products of the batched
    ``form`` on ``x`` (B, T, H), with the attention probabilities ``A`` (B, h, T, T) given, each into an
    array allocated once.

    The products are those :func:`geron_lib.costs.flops.count_flops` counts: X W_Q, X W_K, the value maps,
    Q_i K_i^T, A_i times the values and, concat, W_O. The function returns the last product: concat, the
    layer's output before b_O; sum, every head's weighted values (B, h, T, H) before the sum over heads.
    Scaling, mask, softmax, biases, head reshapes and fresh memory are left out. A kernel: trusts its input.
    """
    B, T, H = x.shape
    h = num_attention_heads
    d_head = H // h
    q, k = np.empty((B, T, H)), np.empty((B, T, H))  # (B, T, H)
    scores = np.empty((B, h, T, T))                   # (B, h, T, T)
    if form == "concat":
        v, heads, out = np.empty((B, T, H)), np.empty((B, T, h, d_head)), np.empty((B, T, H))

        def products():
            np.matmul(x, w["W_Q"], out=q)
            np.matmul(x, w["W_K"], out=k)
            np.matmul(x, w["W_V"], out=v)
            np.matmul(split_heads(q, h), split_heads(k, h).swapaxes(-1, -2), out=scores)
            np.matmul(A, split_heads(v, h), out=heads.transpose(0, 2, 1, 3))  # concatenated as it is written
            return np.matmul(heads.reshape(B, T, H), w["W_O"], out=out)       # (B, T, H)
    else:
        v, weighted = np.empty((B, h, T, H)), np.empty((B, h, T, H))

        def products():
            np.matmul(x, w["W_Q"], out=q)
            np.matmul(x, w["W_K"], out=k)
            np.matmul(x[:, None], w["W_V"], out=v)  # (B, h, T, H)
            np.matmul(split_heads(q, h), split_heads(k, h).swapaxes(-1, -2), out=scores)
            return np.matmul(A, v, out=weighted)    # (B, h, T, H)
    return products


def time_split(seq_len: int, num_attention_heads: int, *, hidden_size: int = 128, batch: int = 1,
               repeat: int = 15, seed: int = 0, clock: Callable[[], float] = time.process_time) -> list[dict]:
    """t_form = t_products + t_softmax + t_rest, for both batched forms: one row per form with the median
    seconds (by ``clock``) of the whole call (``total``, with a mask), of its matrix products alone
    (:func:`matrix_products`), of its softmax call on the (B, h, T, T) scores, and the median over rounds
    of what is left (``rest``: scaling, mask, biases, head reshapes, the sum over heads, the first touch of
    every fresh array), with the minor page faults per call of the whole form.

    All six functions are timed in turn within every round, odd rounds in reverse order, so that drift on a
    shared machine hits them alike."""
    T = check_int("seq_len", seq_len, minimum=1)
    h = check_int("num_attention_heads", num_attention_heads, minimum=1)
    H = check_int("hidden_size", hidden_size, minimum=1)
    B = check_int("batch", batch, minimum=1)
    repeat, seed = check_timing(repeat, clock), check_int("seed", seed, minimum=0)
    check_heads(H, h)
    # both forms at once: each call's arrays, the products' own (fewer), and A and the scaled scores
    check_memory(sum(2 * forward_activation_bytes(B, T, H, h, H, form, 8) for form in ATTENTION_FORMS)
                 + 2 * 2 * 8 * B * h * T * T, f"time_split at seq_len={T}, batch={B}, hidden_size={H}")
    weights = {form: random_attention_weights(H, h, form, seed=seed) for form in ATTENTION_FORMS}
    for form, w in weights.items():  # memory, before any work: a broadcast view allocates nothing
        check_attention(np.broadcast_to(0.0, (B, T, H)), w, h, form)
    x = np.random.default_rng(seed).normal(size=(B, T, H))  # (B, T, H)
    mask = additive_mask(np.ones((B, T)), x.dtype)           # (B, 1, 1, T): attend everywhere
    fns = {}
    for form, w in weights.items():
        cache = {}
        attention_probs(x, w, h, mask, cache)
        scaled = (cache["q"] @ cache["k"].swapaxes(-1, -2)) / math.sqrt(H // h) + mask  # (B, h, T, T)
        fns[f"{form} total"] = partial(ATTENTION_FORMS[form][0], x, w, h, mask)
        fns[f"{form} products"] = matrix_products(form, x, w, h, cache["A"])
        fns[f"{form} softmax"] = partial(softmax, scaled)
    samples = sample_seconds(fns, repeat=repeat, clock=clock, alternate=True)
    rows = []
    for form in weights:
        total, products, soft = (np.array(samples[f"{form} {part}"]) for part in ("total", "products",
                                                                                  "softmax"))
        rows.append({"form": form, "T": T, "h": h, "total": float(np.median(total)),
                     "products": float(np.median(products)), "softmax": float(np.median(soft)),
                     "rest": float(np.median(total - products - soft)),
                     "faults": page_faults_per_call(fns[f"{form} total"])})
    return rows
