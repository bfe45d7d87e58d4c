"""Does XLA batch the heads? The matrix products of the jitted JAX attention forms, and their times.

    .venv/bin/python benchmarks/bench_jax_heads.py [--d-model 128] [--T 4 16 64 256] [--h 1 4 8 16]
                                                   [--dtype float64] [--repeat 9] [--wall] [--all-cores]

For both forms written three ways (a Python loop over heads, the per-head function under jax.vmap, batched
over a heads axis), at every (h, T): the matrix products (dot_general / dot) of the program as lowered
(StableHLO) and after XLA's optimisation (HLO), counted by geron_lib.studies.compiled_heads, their sizes
batch x (m x k) @ (k x n), and those optimisation removed or brought in. Then the numpy loop and batched
kernels and the three jitted JAX functions, timed in turn within every round: medians and ratios.

XLA's CPU runtime runs work on a thread pool of its own, which XLA_FLAGS does not bring down to one thread;
numpy runs on one OpenBLAS thread. So that both use one core, the process is pinned to one CPU (Linux;
--all-cores leaves it free), and the clock is this process's CPU time, which other jobs on a shared
machine do not inflate (--wall: wall-clock time).
"""

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported

from geron_lib.interop.jax_programs import compiled_programs, versions  # noqa: E402
from geron_lib.studies.compiled_heads import product_table  # noqa: E402
from geron_lib.studies.jax_timing import time_styles  # noqa: E402

#: The functions time_styles times, in its rows' keys
TIMED = ("numpy loop", "numpy batched", "jax loop", "jax vmap", "jax batched")


def _sizes(counts) -> str:
    """{(batch, m, k, n): number} as "24 * 1x(64x128)@(128x16), ..."."""
    return ", ".join(f"{number} * {b}x({m}x{k})@({k}x{n})" for (b, m, k, n), number in sorted(counts.items()))


def _header(args, clock_name: str) -> str:
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "all"
    return (f"{versions()}\nOPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}, CPUs {cores} of "
            f"{os.cpu_count()}, load average {os.getloadavg()[0]:.2f}; d_model = {args.d_model}, "
            f"batch = {args.batch}, {args.dtype}, {clock_name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--T", type=int, nargs="+", default=[4, 16, 64, 256])
    parser.add_argument("--h", type=int, nargs="+", default=[1, 4, 8, 16])
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float64")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--wall", action="store_true", help="wall-clock time instead of CPU time")
    parser.add_argument("--all-cores", action="store_true", help="do not pin the process to one CPU")
    parser.add_argument("--counts-only", action="store_true", help="the products only, no timings")
    args = parser.parse_args()
    if not args.all_cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    clock = time.perf_counter if args.wall else time.process_time

    print("Matrix products, as lowered -> after XLA's optimisation")
    print(_header(args, "compiled once each"))
    print(f"{'form':<7}{'style':<8}{'h':>4}{'T':>6}{'before':>8}{'after':>7}{'same FLOPs':>12}  "
          f"changed by optimisation | sizes after: number * batch x (m x k) @ (k x n)")
    programs = compiled_programs(args.T, args.h, hidden_size=args.d_model, batch=args.batch, dtype=args.dtype)
    for row in product_table(programs):
        changed = (f"gone {_sizes(row['gone'])}; new {_sizes(row['new'])}" if row["gone"] or row["new"]
                   else "nothing")
        print(f"{row['form']:<7}{row['style']:<8}{row['h']:>4}{row['T']:>6}{row['before']:>8}{row['after']:>7}"
              f"{str(row['flops_before'] == row['flops_after']):>12}  {changed} | {_sizes(row['sizes'])}")
    if args.counts_only:
        return

    print(f"\nJitted, median of {args.repeat} interleaved rounds (ms), beside the numpy kernels")
    print(_header(args, "wall-clock time" if args.wall else "CPU time"))
    print(f"{'form':<7}{'T':>5}{'h':>4}{'numpy loop':>12}{'numpy batched':>15}{'jax loop':>10}"
          f"{'jax vmap':>10}{'jax batched':>13}{'loop/batched':>14}{'vmap/batched':>14}"
          f"{'jax/numpy batched':>19}")
    for form in ("concat", "sum"):
        for row in time_styles(form, args.T, args.h, hidden_size=args.d_model, batch=args.batch,
                               dtype=args.dtype, repeat=args.repeat, clock=clock):
            ms = {k: row[k] * 1e3 for k in TIMED}
            print(f"{form:<7}{row['T']:>5}{row['h']:>4}{ms['numpy loop']:>12.3f}{ms['numpy batched']:>15.3f}"
                  f"{ms['jax loop']:>10.3f}{ms['jax vmap']:>10.3f}{ms['jax batched']:>13.3f}"
                  f"{row['loop / batched']:>14.2f}{row['vmap / batched']:>14.2f}"
                  f"{row['jax batched'] / row['numpy batched']:>19.2f}")


if __name__ == "__main__":
    main()
