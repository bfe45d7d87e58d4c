"""ALBERT's trade-offs in miniature, stored for the chapter: the whole grid of geron_lib.studies.tradeoffs.

Trains every (E, sharing) cell of the setup with every seed on the English corpus and writes the rounded
results, the setup, the corpus and tokenizer, the time taken, the machine's load average at the start and the
end, and this command to geron_lib/studies/data/tradeoffs.json, which the library ships. The defaults are the
stored run (36 runs of 8 epochs); the options shrink it for a quick look.

Run from the repository root:
  .venv/bin/python scripts/tradeoff_experiment.py [--epochs N] [--seeds S ...] [--output PATH]
"""

import argparse
import dataclasses
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path

from geron_lib.studies import tradeoffs as tx

#: Where the library ships the grid (geron_lib.studies.tradeoffs.STORED), in this checkout.
OUTPUT = Path(__file__).resolve().parents[1] / "geron_lib" / "studies" / "data" / "tradeoffs.json"


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=tx.Setup.epochs)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(tx.Setup.seeds))
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    setup = dataclasses.replace(tx.Setup(), epochs=args.epochs, seeds=tuple(args.seeds))
    n_runs = len(setup.grid()) * len(setup.seeds)
    load_start = os.getloadavg()[0]
    start = time.perf_counter()

    def done(r: dict) -> None:
        loss = r["held_out_loss"][-1]
        print(f"E {r['E']:>3} {r['sharing']:<9} seed {r['seed']}: held-out loss {loss:.3f}, "
              f"{r['seconds']:.0f} s, {1000 * r['seconds_per_step']:.0f} ms/step "
              f"[{time.perf_counter() - start:.0f} s of {n_runs} runs]", flush=True)

    result = tx.run(setup, done=done)
    seconds = time.perf_counter() - start
    stored = {"command": shlex.join([".venv/bin/python", "scripts/tradeoff_experiment.py", *argv]),
              "python": platform.python_version(), "seconds": round(seconds),
              "load_average": [round(load_start, 1), round(os.getloadavg()[0], 1)]} | tx.rounded(result)
    args.output.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    print(f"{n_runs} runs in {seconds / 60:.1f} min; wrote {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])
