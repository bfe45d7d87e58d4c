"""What sharing a batch's rows between threads earns (geron_lib.model.threads.over_rows), side by side in one
run: the library as it is against the same kernels on the whole batch with BLAS's threads as they are
(plain numpy: over_rows replaced, where Encoder and MaskedLM call it, by one part on the calling thread).

    .venv/bin/python benchmarks/bench_rows.py [--threads N] [--rounds R]

Times, in interleaved rounds, the float32 forward of bench_forward.py (albert-base-v2, B 8, T 128, random
weights) and one ``MaskedLM.loss_and_grads`` at bench_train_step.py's sizes; prints the medians and the
ratio plain / as it is (above 1: the threads earn that much). Wall clock; with ``--threads 1`` the two are
the same code, so the ratio shows the noise of the run. Other jobs on a shared machine change the figures
(BLAS's threads spin while they wait for each other): the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import time
from contextlib import contextmanager

from _thread_count import set_threads


@contextmanager
def plain():
    """The entries run their kernels on the whole batch, on the calling thread, BLAS as it is."""
    from geron_lib.model import encoder, mlm

    def one_part(fn, config, batch, seq_len):
        return [fn(slice(None))]

    saved = encoder.over_rows, mlm.over_rows
    encoder.over_rows = mlm.over_rows = one_part
    try:
        yield
    finally:
        encoder.over_rows, mlm.over_rows = saved


def steps() -> dict:
    """name -> the call to time."""
    import numpy as np
    from bench_forward import PRESET, B, T
    from bench_train_step import SIZES, masked_batch, size

    from geron_lib.config import PRESETS
    from geron_lib.interop.torch_models import random_batch
    from geron_lib.model.encoder import Encoder
    from geron_lib.model.mlm import MaskedLM

    encoder = Encoder(PRESETS[PRESET], dtype=np.float32)
    ids, types, keep = random_batch(encoder.config, B, T, seed=0)
    def forward():
        return encoder(ids, token_type_ids=types, attention_mask=keep)

    out = {f"forward, {PRESET}, B {B}, T {T}": forward}
    for name in SIZES:
        config, b, t = size(name)
        model, batch = MaskedLM(config, dtype=np.float32), masked_batch(config, b, t)
        out[f"training step ({name}), H {config.hidden_size}, B {b}, T {t}"] = (
            lambda model=model, batch=batch: model.loss_and_grads(batch))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    set_threads(args.threads)
    import numpy as np

    from geron_lib.timing import sample_seconds

    print(f"numpy {np.__version__}; threads: {args.threads}; float32; {args.rounds} interleaved rounds, wall "
          f"clock; load average {os.getloadavg()[0]:.1f} at the start")
    for name, fn in steps().items():
        def without(fn=fn):
            with plain():
                return fn()

        times = sample_seconds({"as it is": fn, "plain": without}, repeat=args.rounds, min_seconds=0.2,
                               clock=time.perf_counter, alternate=True)
        med = {k: float(np.median(v)) for k, v in times.items()}
        print(f"{name}: as it is {med['as it is'] * 1e3:.1f} ms, plain {med['plain'] * 1e3:.1f} ms, "
              f"plain / as it is = {med['plain'] / med['as it is']:.2f}   (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
