"""The stored runs of the dynamic-masking experiment, for the chapter to plot and compare.

Trains every run of geron_lib.studies.dynamic_masking.RUNS, each (run, schedule, seed) once, and writes their
losses by epoch and the final model's loss at every held-out target to
geron_lib/studies/data/masking_experiment.json, which the library ships:
  "chapter":       the chapter's setup (256 sentences, 20 epochs, 5 copies) with five seeds, the headline;
  "at_least_one":  the same under the control that gives every sentence a target in every masking;
  "roberta_ratio": RoBERTa's 40 epochs and 10 stored copies, five seeds.

Each finished run is added to a partial file (PARTIAL) at once, so a stopped job resumes where it stopped;
each stored run is written to the output as soon as all its runs are in (a run not yet trained again keeps
what the output held). Progress: one line per finished run, with the time left. Two worker processes by
default, BLAS on one thread each.

Run from the repository root (about 5 CPU-minutes; a busy machine takes longer):
  nohup .venv/bin/python scripts/masking_experiment.py > masking_experiment.log 2>&1 &
"""

import argparse
import dataclasses
import json
import multiprocessing
import os
import time
from pathlib import Path

from tradeoff_experiment import _clock, _write

from geron_lib.pretraining.masking import SCHEDULES
from geron_lib.studies import dynamic_masking as mx

ROOT = Path(__file__).resolve().parents[1]
#: Where the library ships the runs (geron_lib.studies.dynamic_masking.STORED), in this checkout.
OUTPUT = ROOT / "geron_lib" / "studies" / "data" / "masking_experiment.json"
#: The runs finished so far, one record each, until the output is written.
PARTIAL = ROOT / ".cache" / "masking_experiment.partial.json"


def _start_worker() -> None:
    os.environ["OPENBLAS_NUM_THREADS"] = "1"


def _train(unit: tuple[str, str, int]) -> dict:
    key, schedule, seed = unit
    start = time.perf_counter()
    record = mx.train_one(mx.RUNS[key], schedule, seed)
    return {"run": key, "schedule": schedule, "seed": seed, "seconds": round(time.perf_counter() - start, 1),
            **record}


def assemble(key: str, records: list[dict]) -> dict | None:
    """Stored run ``key``: its setup and, per part and schedule, one list per seed in the setup's order,
    rounded (:func:`~geron_lib.studies.dynamic_masking.rounded`); None while some of its runs are missing."""
    setup = mx.RUNS[key]
    by = {(r["schedule"], r["seed"]): r for r in records if r["run"] == key}
    if len(by) < len(SCHEDULES) * len(setup.seeds):
        return None
    return mx.rounded({"setup": dataclasses.asdict(setup)} | {
        part: {name: [by[name, seed][part] for seed in setup.seeds] for name in SCHEDULES}
        for part in mx.PARTS})


def _store(records: list[dict]) -> list[str]:
    """Write every stored run whose runs are all in to the output (the others as the output held them);
    returns the runs still incomplete."""
    old = json.loads(OUTPUT.read_text(encoding="utf-8")) if OUTPUT.is_file() else {}
    out, missing = {}, []
    for key in mx.RUNS:
        run = assemble(key, records)
        if run is None:
            missing.append(key)
            run = old.get(key)
        if run is not None:
            out[key] = run
    _write(out, OUTPUT)
    return missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    setups = json.loads(json.dumps({key: dataclasses.asdict(setup) for key, setup in mx.RUNS.items()}))
    partial = json.loads(PARTIAL.read_text(encoding="utf-8")) if PARTIAL.is_file() else {"records": []}
    # a record is kept while its run's setup is the one RUNS declares
    partial["records"] = [r for r in partial["records"] if setups.get(r["run"]) == r["setup"]]
    done = {(r["run"], r["schedule"], r["seed"]) for r in partial["records"]}
    units = [(key, name, seed) for key, setup in mx.RUNS.items() for name in SCHEDULES for seed in setup.seeds
             if (key, name, seed) not in done]
    steps = {key: setup.steps_per_run for key, setup in mx.RUNS.items()}
    total = sum(steps[key] for key, _, _ in units)
    print(f"{len(done)} runs stored, {len(units)} to train ({total:,} steps); {args.workers} workers",
          flush=True)
    PARTIAL.parent.mkdir(parents=True, exist_ok=True)
    start, finished, missing = time.perf_counter(), 0, list(mx.RUNS)
    with multiprocessing.get_context("spawn").Pool(args.workers, initializer=_start_worker) as pool:
        for record in pool.imap_unordered(_train, units):
            partial["records"].append({**record, "setup": setups[record["run"]]})
            _write(partial, PARTIAL)
            finished += steps[record["run"]]
            spent = time.perf_counter() - start
            print(f"{record['run']} {record['schedule']} seed {record['seed']}: {record['seconds']:.0f} s, "
                  f"held-out {record['held_out'][-1]:.3f} | {finished:,}/{total:,} steps, {_clock(spent)} "
                  f"spent, about {_clock(spent / finished * (total - finished))} left", flush=True)
            now_missing = _store(partial["records"])
            if now_missing != missing:
                print(f"wrote {OUTPUT}: {', '.join(k for k in mx.RUNS if k not in now_missing)} stored anew",
                      flush=True)
                missing = now_missing
    if not _store(partial["records"]):
        PARTIAL.unlink()
    print(f"wrote {OUTPUT}", flush=True)


if __name__ == "__main__":
    main()
