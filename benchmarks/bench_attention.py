"""Loop over heads against one batched matmul, for both attention forms, measured side by side.

    .venv/bin/python benchmarks/bench_attention.py [--d-model 128] [--T 4 16 64 256] [--h 1 4 16] [--wall]

Prints, for every (form, T, h), the median seconds of the loop and of the batched implementation
(timed in turn within each round), their ratio loop / batched (above 1: batching is faster), and the
minor page faults per call of each (first touches of memory fresh from the operating system).
OpenBLAS runs on one thread unless OPENBLAS_NUM_THREADS is set, and the clock is this process's CPU
time, so that other jobs on a shared machine do not count; with more threads, pass --wall.
"""

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported

import numpy as np  # noqa: E402

from geron_lib.studies.attention_timing import loop_vs_batched  # noqa: E402


def _count(faults) -> str:
    return "n/a" if faults is None else f"{faults:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--T", type=int, nargs="+", default=[4, 16, 64, 256])
    parser.add_argument("--h", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--wall", action="store_true", help="wall-clock time instead of CPU time")
    args = parser.parse_args()
    clock = time.perf_counter if args.wall else time.process_time
    print(f"numpy {np.__version__}, OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}, "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
          f"d_model = {args.d_model}, batch = {args.batch}, median of {args.repeat} rounds of "
          f"{'wall-clock' if args.wall else 'CPU'} time")
    print(f"{'form':<7}{'T':>6}{'h':>5}{'loop ms':>11}{'batched ms':>12}{'loop/batched':>14}"
          f"{'page faults per call: loop':>29}{'batched':>9}")
    for form in ("concat", "sum"):
        for row in loop_vs_batched(form, args.T, args.h, hidden_size=args.d_model, batch=args.batch,
                                   repeat=args.repeat, clock=clock):
            print(f"{form:<7}{row['T']:>6}{row['h']:>5}{row['loop'] * 1e3:>11.3f}"
                  f"{row['batched'] * 1e3:>12.3f}{row['speedup']:>14.2f}"
                  f"{_count(row['loop_faults']):>29}{_count(row['batched_faults']):>9}")


if __name__ == "__main__":
    main()
