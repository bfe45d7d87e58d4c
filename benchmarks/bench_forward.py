"""Batched float32 forward at albert-base-v2 size: geron_lib against transformers, side by side in one run.

    .venv/bin/python benchmarks/bench_forward.py [--threads N] [--rounds R]

Prints, from interleaved rounds (geron_lib, transformers, numpy sgemm in every round):
  * the median time of each forward at B = 8, T = 128 and their ratio        (target: geron_lib <= 1.0x);
  * the forward's achieved GFLOP/s over numpy's own large-sgemm GFLOP/s    (target: >= 0.6);
  * the peak memory each forward adds at B = 8, T = 512, each measured in a fresh process.
Both libraries get the same number of threads (BLAS, OpenMP, torch intra-op). Needs the hf extra.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from _thread_count import set_threads

B, T, T_MEMORY = 8, 128, 512
PRESET = "albert-base-v2"


def forward_flops(config, batch: int, length: int) -> int:
    """Multiply-adds x 2 of the encoder forward (matrix products only; the pooler's one row is included)."""
    E, H, F, L = config.E, config.hidden_size, config.intermediate_size, config.num_hidden_layers
    rows = batch * length
    projection = 2 * rows * E * H if config.factorised else 0
    # W_Q, W_K, W_V, W_O and the FFN on every row; then Q K^T and A V in every head
    per_layer = 2 * rows * (4 * H * H + 2 * H * F) + 2 * 2 * batch * length * length * H
    return projection + L * per_layer + 2 * batch * H * H


def build(length: int):
    """The transformers model (random, seeded), the geron_lib encoder with its weights, and one batch."""
    import numpy as np

    from geron_lib.config import PRESETS
    from geron_lib.interop.hf_weights import encoder_from_hf
    from geron_lib.interop.torch_models import hf_model, numpy_state_dict, random_batch

    config = PRESETS[PRESET]
    model = hf_model(config, head="pooler", seed=0)
    encoder = encoder_from_hf(config, numpy_state_dict(model), dtype=np.float32)
    return config, model, encoder, random_batch(config, B, length, seed=0)


def runners(model, encoder, batch):
    import torch

    ids, types, mask = batch
    tensors = {"input_ids": torch.from_numpy(ids), "token_type_ids": torch.from_numpy(types),
               "attention_mask": torch.from_numpy(mask)}

    def ours():
        return encoder.pool(encoder(ids, token_type_ids=types, attention_mask=mask))

    def theirs():
        with torch.inference_mode():
            return model(**tensors).pooler_output

    return ours, theirs


def status(ok: bool) -> str:
    return "meets the target" if ok else "MISSES the target"


def compare_speed(threads: int, rounds: int) -> None:
    import numpy as np
    import torch

    from geron_lib.timing import sample_seconds

    config, model, encoder, batch = build(T)
    ours, theirs = runners(model, encoder, batch)
    diff = float(np.abs(ours() - theirs().numpy()).max())
    n = 4096
    a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)

    def sgemm():
        return a @ b

    # alternate who goes first, so drift on a shared machine hits both alike
    times = sample_seconds({"geron_lib": ours, "transformers": theirs, "sgemm": sgemm}, repeat=rounds,
                           min_seconds=1e-9, clock=time.perf_counter, alternate=True)
    med = {k: float(np.median(v)) for k, v in times.items()}
    ratio = med["geron_lib"] / med["transformers"]
    flops = forward_flops(config, B, T)
    achieved = flops / med["geron_lib"] / 1e9
    peak = 2 * n**3 / med["sgemm"] / 1e9
    print(f"numpy {np.__version__}, torch {torch.__version__}; threads: {threads} "
          f"(torch.get_num_threads() = {torch.get_num_threads()}, OPENBLAS_NUM_THREADS = "
          f"{os.environ['OPENBLAS_NUM_THREADS']}); {rounds} interleaved rounds")
    print(f"{PRESET}, float32, B = {B}, T = {T} (padded rows as in a real batch); "
          f"pooled outputs agree to {diff:.1e}")
    for name in ("geron_lib", "transformers"):
        spread = f"{min(times[name]):.3f} .. {max(times[name]):.3f}"
        print(f"  {name:<13} median {med[name]:.3f} s   (range {spread} s)")
    print(f"  ratio geron_lib / transformers = {ratio:.2f}   (target <= 1.0: {status(ratio <= 1.0)})")
    print(f"  forward: {flops / 1e9:.1f} GFLOP -> geron_lib {achieved:.1f} GFLOP/s, transformers "
          f"{flops / med['transformers'] / 1e9:.1f} GFLOP/s")
    print(f"  numpy sgemm {n} x {n}: median {med['sgemm']:.3f} s = {peak:.1f} GFLOP/s")
    print(f"  geron_lib / sgemm GFLOP/s = {achieved / peak:.2f}   (target >= 0.6: "
          f"{status(achieved / peak >= 0.6)})")


def _kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def measure_memory(which: str) -> None:
    """In a fresh process: the rise of peak resident memory over the resident memory before one forward."""
    import tracemalloc

    _, model, encoder, batch = build(T_MEMORY)
    ours, theirs = runners(model, encoder, batch)
    fn = ours if which == "geron_lib" else theirs
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak (VmHWM) to the current resident size
    before = _kib("VmRSS")
    tracemalloc.start()
    fn()
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rss = (_kib("VmHWM") - before) / 1024
    print(f"{rss:.0f} {traced / 2**20:.0f}")


def compare_memory(threads: int) -> None:
    print(f"peak memory of one forward at B = {B}, T = {T_MEMORY}, each in a fresh process:")
    for which in ("geron_lib", "transformers"):
        out = subprocess.run([sys.executable, __file__, "--threads", str(threads), "--memory", which],
                             capture_output=True, text=True, check=True).stdout.split()
        rss, traced = float(out[-2]), float(out[-1])
        note = f" (numpy allocations traced: {traced:.0f} MiB)" if which == "geron_lib" else ""
        print(f"  {which:<13} +{rss:.0f} MiB peak resident{note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--memory", choices=("geron_lib", "transformers"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    set_threads(args.threads)
    import torch

    torch.set_num_threads(args.threads)
    if args.memory:
        measure_memory(args.memory)
        return
    compare_speed(args.threads, args.rounds)
    compare_memory(args.threads)


if __name__ == "__main__":
    main()
