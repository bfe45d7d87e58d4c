"""numpy work shared out between the BLAS threads: matrix products and chains of elementwise steps.

numpy runs every elementwise step on one thread, and hands every matrix product to BLAS, which splits each
call between its threads and spins while it waits for them: for attention's stacks of small T x d_head
products, and for the H x H products of small models, that costs more than it saves, and on a machine shared
with other jobs far more (every call waits for a thread that may not be running). Here such work is cut into
as many parts as BLAS has threads, each part on its own Python thread (numpy releases the GIL inside its
loops) with BLAS on one thread meanwhile. With one BLAS thread (``threadpool_limits(1)``, as ``train_mlm``
sets by default) everything runs as plain numpy.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np
from threadpoolctl import ThreadpoolController

_BLAS = ThreadpoolController().select(user_api="blas")
_POOLS: dict[int, ThreadPoolExecutor] = {}


def blas_threads() -> int:
    """The number of threads BLAS uses now (1 if numpy's BLAS is not one threadpoolctl knows)."""
    return min((c.num_threads for c in _BLAS.lib_controllers), default=1)


def _in_parallel(n: int, fn, parts) -> None:
    """fn(part) for every part, on n threads, BLAS on one thread meanwhile."""
    pool = _POOLS.get(n) or _POOLS.setdefault(n, ThreadPoolExecutor(n, thread_name_prefix="geron_lib"))
    with _BLAS.limit(limits=1):
        for _ in pool.map(fn, parts):  # re-raises an exception of any part
            pass


#: Below this many multiply-adds in a model's largest product (B T H F, the feed-forward's), a whole step
#: runs on one thread: sharing its many small products out costs more than it saves. Measured here with two
#: threads against one, MaskedLM.loss_and_grads at L 4, F 4H: 1.55x slower at B T H F = 2^23, 1.06x at
#: 2^25, 0.94x at 2^26, 0.67x at 2^29.
SMALL_STEP = 1 << 26


def threads_for(config, n_rows: int):
    """A context with one BLAS thread when n_rows x H x F < :data:`SMALL_STEP`, else the threads as they are.

    ``n_rows`` is the number of positions (B T) a step computes on.
    """
    small = n_rows * config.hidden_size * config.intermediate_size < SMALL_STEP
    return _BLAS.limit(limits=1) if small and blas_threads() > 1 else nullcontext()


#: Below this many multiply-adds a product runs as it is: OpenBLAS itself uses one thread there.
_MIN_MULTIPLY_ADDS = 1 << 18


def _parts(n_items: int, n: int) -> list[slice]:
    """n consecutive slices covering range(n_items) as evenly as possible."""
    bounds = np.linspace(0, n_items, n + 1).astype(int)
    return [slice(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def matmul(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None,
           out: np.ndarray | None = None) -> np.ndarray:
    """out = a @ b (+ bias), shared out between the threads: a stack (a and b of the same leading shape) by
    its first axis with a matrix for every thread, two matrices by the rows of a or the columns of b,
    whichever are more.

    Each part adds its share of ``bias`` (broadcast over the rows) while its product is still in cache.
    ``out`` (optional) may be any view of the right shape, such as heads split out of a (B, T, H) array.
    """
    m, k, p = a.shape[-2], a.shape[-1], b.shape[-1]
    if out is None:
        out = np.empty(a.shape[:-2] + (m, p), np.result_type(a, b))
    n = blas_threads()
    axis = next((i for i, size in enumerate(out.shape[:-2]) if size >= n), None) if out.ndim > 2 else -1
    if n == 1 or axis is None or math.prod(out.shape[:-2]) * m * k * p < _MIN_MULTIPLY_ADDS:
        np.matmul(a, b, out=out)
        if bias is not None:
            out += bias
        return out
    if out.ndim > 2:
        def part(s):
            at = (slice(None),) * axis + (s,)
            np.matmul(a[at], b[at], out=out[at])
            if bias is not None:
                out[at] += bias
        parts = _parts(out.shape[axis], n)
    elif m >= p:
        def part(s):
            np.matmul(a[s], b, out=out[s])
            if bias is not None:
                out[s] += bias
        parts = _parts(m, n)
    else:
        def part(s):
            np.matmul(a, b[:, s], out=out[:, s])
            if bias is not None:
                out[:, s] += bias[s]
        parts = _parts(p, n)
    _in_parallel(len(parts), part, parts)
    return out


def by_blocks(fn, x: np.ndarray, block: int = 1 << 18) -> np.ndarray:
    """fn(x) for a fn that works row by row (elementwise, or along the last axis only, like softmax), on
    blocks of whole rows of about ``block`` values, shared between the threads.

    The temporaries of a chain of numpy steps then stay in the CPU cache, instead of each step writing a
    fresh array of x's size to memory: on one thread the exact GELU and the derivatives take less than half
    the time at (B T) x F = 2048 x 1024. Smaller blocks would cost the threads more: every numpy call of a
    block needs the GIL for a moment.
    """
    out = np.empty(x.shape, x.dtype)  # C order, so that its rows are a view
    x_rows, out_rows = x.reshape(-1, x.shape[-1]), out.reshape(-1, x.shape[-1])
    step = max(1, block // x.shape[-1])

    def one(start):
        out_rows[start:start + step] = fn(x_rows[start:start + step])

    starts = range(0, len(x_rows), step)
    n = min(blas_threads(), len(starts))
    if n == 1:
        for start in starts:
            one(start)
    else:
        _in_parallel(n, one, starts)
    return out
