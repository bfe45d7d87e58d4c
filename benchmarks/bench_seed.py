"""Seed-compatible pieces, timed side by side in one run (run by hand: python benchmarks/bench_seed.py).

1. The vectorised generator against the step-by-step recurrence at 10^6 draws (target: >= 30x faster).
2. ``albert()`` at d_model=768, vocab_size=30000, T=128 (the seed's geometry scaled to BERT-base width).
Prints medians over repeats; this machine is shared, so read the ratio, not the absolute times.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import geron_lib as g
from geron_lib import rng
from geron_lib.timing import median_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=10**6)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    n = args.draws
    assert np.array_equal(rng.draws(1, n), rng.draws_loop(1, n)), "vectorised != loop"
    t = median_seconds({"loop": lambda: rng.draws_loop(1, n), "vectorised": lambda: rng.draws(1, n)},
                       repeat=args.repeats, min_seconds=1e-9, clock=time.perf_counter, alternate=True)
    slow, fast = t["loop"], t["vectorised"]
    print(f"generator, {n:,} draws (median): loop {slow * 1e3:9.1f} ms   vectorised {fast * 1e3:7.2f} ms"
          f"   speed-up {slow / fast:6.1f}x (target >= 30x)")

    ids = np.random.default_rng(0).integers(0, 30000, size=128)
    call = dict(d_model=768, n_heads=12, d_embed=128, vocab_size=30000, n_layers=12)
    t = median_seconds({"albert": lambda: g.albert(ids, **call),
                        "embedding": lambda: rng.tensor(101, (30000, 128))},
                       repeat=args.repeats, min_seconds=1e-9, clock=time.perf_counter)
    t_albert, weights = t["albert"], t["embedding"]
    print(f"albert(T=128, d_model=768, d_embed=128, vocab_size=30000, n_layers=12, n_heads=12) "
          f"(median): {t_albert * 1e3:.1f} ms, of which drawing the 30000 x 128 embedding "
          f"{weights * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
