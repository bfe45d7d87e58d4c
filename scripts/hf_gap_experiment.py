"""The numpy-against-PyTorch gap of the appendix "From numpy to PyTorch", over many seeds.

For every seed, the runs of geron_lib.studies.hf_gap.RUNS at the appendix's setup (chapter 4's in-notebook
experiment): the Trainer, its batches replayed through train_mlm, the same with the collator's special
replacements redrawn from the words, the numpy run's masks in the Trainer's batch order, and the numpy run.
Writes the held-out losses after the last epoch to geron_lib/studies/data/hf_gap.json, which the appendix
reads (geron_lib.studies.hf_gap.STORED).

Run from the repository root (about 4 minutes for 30 seeds on one core of a quiet machine):
  OPENBLAS_NUM_THREADS=1 .venv/bin/python scripts/hf_gap_experiment.py [n_seeds]
"""

import dataclasses
import json
import sys
import time

from geron_lib.studies import dynamic_masking as mx
from geron_lib.studies import hf_gap


def main(n_seeds: int = 30) -> None:
    setup = mx.Setup()
    shared = mx.torch_comparison_data(setup)
    seeds = list(range(n_seeds))
    held_out = {run: [] for run in hf_gap.RUNS}
    start = time.perf_counter()
    for seed in seeds:
        losses = hf_gap.gap_runs(*shared, setup.training(seed), mask_prob=setup.mask_prob, seed=seed)
        for run, loss in losses.items():
            held_out[run].append(round(loss, 6))
        print(
            f"seed {seed}: "
            + ", ".join(f"{k} {v:.4f}" for k, v in losses.items())
            + f"  ({time.perf_counter() - start:.0f} s)",
            flush=True,
        )
    stored = {"setup": dataclasses.asdict(setup) | {"seeds": seeds}, "held_out": held_out}
    hf_gap.STORED.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {hf_gap.STORED}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
