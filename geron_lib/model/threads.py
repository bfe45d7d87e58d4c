"""A batch's rows shared out between threads behind the public entries: every kernel stays plain numpy.

numpy runs every elementwise step on one thread, and BLAS splits each matrix product between its threads
and spins while it waits for them: for attention's stacks of small T x d_head products, and for the
products of small models, that costs more than it saves, and on a machine shared with other jobs far more
(every call waits for a thread that may not be running). So with n > 1 BLAS threads the public entries
(``Encoder``'s calls, ``MaskedLM.loss`` and ``loss_and_grads``) hold BLAS on one thread and cut the batch into
n parts of whole rows, each computed by the plain kernels on its own Python thread (numpy releases the GIL
inside its loops and BLAS calls). Rows never mix in an encoder, so the parts compute what the whole batch
does. With one BLAS thread (``threadpool_limits(1)``, as ``train_mlm`` sets by default) everything runs on
the calling thread, as it is.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from threadpoolctl import ThreadpoolController

_BLAS = ThreadpoolController().select(user_api="blas")
_POOLS: dict[int, ThreadPoolExecutor] = {}

#: Below this many multiply-adds in a step's largest product (B T H F, the feed-forward's), the batch runs
#: in one part (BLAS on one thread still): for its many small products the threads would mostly wait for
#: the GIL.
SMALL_STEP = 1 << 26


def blas_threads() -> int:
    """The number of threads BLAS uses now (1 if numpy's BLAS is not one threadpoolctl knows)."""
    return min((c.num_threads for c in _BLAS.lib_controllers), default=1)


def _parts(n_items: int, n: int) -> list[slice]:
    """n consecutive slices covering range(n_items) as evenly as possible."""
    bounds = np.linspace(0, n_items, n + 1).astype(int)
    return [slice(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def over_rows(fn, config, batch: int, seq_len: int) -> list:
    """[fn(rows) for every part]: the rows ``range(batch)`` of a step of ``config`` on (batch, seq_len).

    With one BLAS thread, one part (``slice(None)``) on the calling thread, BLAS as it is; likewise when
    there are fewer rows than threads. Otherwise BLAS on one thread meanwhile and, unless the step is small
    (:data:`SMALL_STEP`), as many parts as BLAS had threads, each on its own thread, in order.
    """
    n = blas_threads()
    small = batch * seq_len * config.hidden_size * config.intermediate_size < SMALL_STEP
    if n == 1 or (batch < n and not small):
        return [fn(slice(None))]
    with _BLAS.limit(limits=1):
        if small:
            return [fn(slice(None))]
        pool = _POOLS.get(n) or _POOLS.setdefault(n, ThreadPoolExecutor(n, thread_name_prefix="geron_lib"))
        return list(pool.map(fn, _parts(batch, n)))  # re-raises an exception of any part
