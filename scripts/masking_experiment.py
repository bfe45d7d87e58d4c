"""The longer runs of the dynamic-masking experiment, stored for the chapter to plot.

The chapter runs a small experiment live; this script runs two longer ones and writes their losses to
geron_lib/studies/data/masking_experiment.json, which the library ships:
  "roberta_ratio": the chapter's data and model with RoBERTa's 40 epochs and 10 stored copies, 5 seeds;
  "more_data":     the same with 1,024 training sentences instead of 256, 3 seeds.

Run from the repository root (a few minutes on 2 cores):  .venv/bin/python scripts/masking_experiment.py
"""

import json
import time
from pathlib import Path

from geron_lib.studies import dynamic_masking as mx

#: Where the library ships the runs (geron_lib.studies.dynamic_masking.STORED), in this checkout.
OUTPUT = Path(__file__).resolve().parents[1] / "geron_lib" / "studies" / "data" / "masking_experiment.json"
RUNS = {
    "roberta_ratio": mx.Setup(epochs=40, copies=10, seeds=(0, 1, 2, 3, 4)),
    "more_data": mx.Setup(n_train=1024, epochs=40, copies=10, seeds=(0, 1, 2)),
}


def main() -> None:
    stored = {}
    for name, setup in RUNS.items():
        start = time.perf_counter()
        result = mx.run(setup)
        print(f"{name}: {time.perf_counter() - start:.0f} s")
        stored[name] = mx.rounded(result)
    OUTPUT.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
