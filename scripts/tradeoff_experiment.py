"""ALBERT's trade-offs in miniature, stored for the chapter: the grid of geron_lib.studies.tradeoffs,
pretrained and then fine-tuned (geron_lib.studies.finetuning).

Phase 1 pretrains every (E, sharing) cell of the setup with every seed; phase 2 fine-tunes every pretrained
encoder on each task; phase 3 measures every trained token table from its stored weights. The runs go out
to worker processes (two by default, BLAS on one thread each), and each result is written to the output as
soon as it is back, so a stopped run resumes where it stopped: a run already stored is not run again. The
trained encoders' weights wait for phases 2 and 3 under --cache (a run whose weights are missing there,
and that still has a phase to go, is pretrained again). Progress: runs done, tokens per second, time left.

The output (by default geron_lib/studies/data/tradeoffs.json, which the library ships) holds the setup, the
data's description, the tasks', one record per pretraining run and per fine-tuning run, the seconds spent,
the machine's load average at each start and end, and this command.

Run from the repository root:
  .venv/bin/python scripts/tradeoff_experiment.py [--workers W] [--output PATH] [--cache DIR]
The defaults are the stored run; --epochs, --seeds, --embedding-sizes, --mode-embedding-sizes and --n-train
shrink it for a quick look (write it elsewhere with --output).
"""

import argparse
import dataclasses
import json
import multiprocessing
import os
import platform
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from geron_lib.model.checkpoint import encoder_from_arrays
from geron_lib.studies import finetuning as ft
from geron_lib.studies import tradeoffs as tx
from geron_lib.studies.stored import load

ROOT = Path(__file__).resolve().parents[1]
#: Where the library ships the grid (geron_lib.studies.tradeoffs.STORED), in this checkout.
OUTPUT = ROOT / "geron_lib" / "studies" / "data" / "tradeoffs.json"
CACHE = ROOT / ".cache" / "tradeoffs"
#: A field that phase 3 (measure) adds to every run.
MEASURED = "effective_rank_in_text_centred"

_WORKER = {}


def _start_worker(setup: tx.Setup, budget: ft.FineTuning) -> None:
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    d = tx.data(setup)
    _WORKER.update(setup=setup, data=d, budget=budget,
                   tasks=ft.tasks(d.task_paragraphs, d.tokenizer, setup.T, budget))


def _weights(cache: Path, E: int, sharing: str, seed: int) -> Path:
    return cache / f"E{E}-{sharing}-seed{seed}.npz"


def _pretrain(job):
    E, sharing, seed, cache = job
    w = _WORKER
    total = w["setup"].training(seed).total_steps(len(w["data"].train_ids))
    progress = run_progress(f"E {E} {sharing} seed {seed}", total)
    return tx.rounded(tx.train_one(w["setup"], w["data"], E, sharing, seed, progress,
                                   save_to=_weights(cache, E, sharing, seed)))


def run_progress(label: str, total: int):
    """The callback a training step calls: a line at every tenth of the run's ``total`` steps, with the
    steps per second and the time left in this run."""
    start, step = time.perf_counter(), [0]

    def progress(_text: str) -> None:
        step[0] += 1
        if step[0] % max(1, total // 10) == 0 and step[0] < total:
            spent = time.perf_counter() - start
            print(f"  {label}: step {step[0]:,}/{total:,}, {step[0] / spent:.1f} steps/s, about "
                  f"{_clock(spent / step[0] * (total - step[0]))} left in this run", flush=True)

    return progress


def _finetune(job):
    E, sharing, seed, cache = job
    w = _WORKER
    with np.load(_weights(cache, E, sharing, seed)) as arrays:
        encoder = encoder_from_arrays(w["setup"].model_config(E, sharing), arrays)
    records = []
    for name, task in w["tasks"].items():
        start = time.perf_counter()
        result = ft.finetune(encoder, task, w["budget"], seed=seed)
        records.append(tx.rounded({"E": E, "sharing": sharing, "seed": seed, "task": name, **result,
                                   "seconds": time.perf_counter() - start}))
    return records


def _measure(job):
    """What the stored weights show after training, measured from them (phase 3): the rank of the token
    table's rows as the held-out text uses them (geron_lib.studies.tradeoffs.rank_in_text)."""
    E, sharing, seed, cache = job
    d = _WORKER["data"]
    with np.load(_weights(cache, E, sharing, seed)) as arrays:
        rank = tx.rank_in_text(arrays["embeddings.word"], d.held_ids, d.tokenizer.pad_id)
    return {"E": E, "sharing": sharing, "seed": seed, MEASURED: rank["effective_rank"],
            "rank_90_in_text_centred": rank["rank_90"]}


def _describe(setup: tx.Setup, budget: ft.FineTuning) -> dict:
    d = tx.data(setup)
    tasks = ft.tasks(d.task_paragraphs, d.tokenizer, setup.T, budget)
    return {"data": tx.describe(setup, d),
            "tasks": {name: {"classes": list(t.classes), "train_examples": len(t.train[0]),
                             "test_examples": len(t.test[0]),
                             "test_counts": np.bincount(t.test[2], minlength=len(t.classes)).tolist(),
                             "majority_accuracy": t.majority_accuracy()} for name, t in tasks.items()}}


def _write(stored: dict, path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)


def _clock(seconds: float) -> str:
    return f"{int(seconds // 3600)}:{int(seconds % 3600 // 60):02d}:{int(seconds % 60):02d}"


def _phase(name, pool, fn, jobs, stored, key, path, started, tokens_per_job):
    """Run ``jobs`` through the pool, storing each result under ``stored[key]`` as it comes back (a dict
    ``key`` = "measures" adds its fields to the run it measured)."""
    start, done = time.perf_counter(), 0
    for result in pool.imap_unordered(fn, jobs):
        if key == "measures":
            run = next(r for r in stored["runs"] if all(r[k] == result[k] for k in ("E", "sharing", "seed")))
            run.update(tx.rounded(result))
        else:
            stored[key] += result if isinstance(result, list) else [result]
        stored["seconds"] = round(started + time.perf_counter() - start)
        _write(stored, path)
        done += 1
        spent = time.perf_counter() - start
        first = result[0] if isinstance(result, list) else result
        print(f"{name} {done}/{len(jobs)}: E {first['E']} {first['sharing']} seed {first['seed']}"
              + (f" | {done * tokens_per_job / spent:,.0f} tokens/s" if tokens_per_job else "")
              + f" | {_clock(spent)} spent, about {_clock(spent / done * (len(jobs) - done))} left",
              flush=True)
    return stored["seconds"]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=tx.Setup.epochs)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(tx.Setup.seeds))
    parser.add_argument("--embedding-sizes", type=int, nargs="+", default=list(tx.Setup.embedding_sizes))
    parser.add_argument("--mode-embedding-sizes", type=int, nargs="+",
                        default=list(tx.Setup.mode_embedding_sizes))
    parser.add_argument("--n-train", type=int, default=None, help="training paragraphs (default: all)")
    parser.add_argument("--cells", nargs="+", default=None, metavar="E:SHARING",
                        help="train only these cells of the grid, e.g. 64:none (default: every cell)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args(argv)
    setup = dataclasses.replace(tx.Setup(), epochs=args.epochs, seeds=tuple(args.seeds), n_train=args.n_train,
                                embedding_sizes=tuple(args.embedding_sizes),
                                mode_embedding_sizes=tuple(args.mode_embedding_sizes))
    budget = ft.FineTuning()
    grid = setup.grid()
    if args.cells:
        chosen = [(int(E), sharing) for E, sharing in (c.split(":") for c in args.cells)]
        if not set(chosen) <= set(grid):
            parser.error(f"--cells must be cells of the grid {grid}, got {chosen}")
        grid = [c for c in grid if c in chosen]
    header = {"setup": tx.rounded(dataclasses.asdict(setup)),
              "finetuning_setup": tx.rounded(dataclasses.asdict(budget))}
    if args.cells:
        header["cells"] = [list(c) for c in grid]
    header = json.loads(json.dumps(header))
    stored = load(args.output, "scripts/tradeoff_experiment.py") if args.output.is_file() else {}
    if {k: stored.get(k) for k in header} != header:
        if stored:
            print(f"{args.output} holds another setup: starting afresh", flush=True)
        stored = {"command": shlex.join([".venv/bin/python", "scripts/tradeoff_experiment.py", *argv]),
                  "python": platform.python_version(), "seconds": 0, "load_average": [],
                  **header, **tx.rounded(_describe(setup, budget)), "runs": [], "finetuning": []}
    args.cache.mkdir(parents=True, exist_ok=True)
    cells = [(E, s, seed) for seed in setup.seeds for E, s in grid]
    pretrained = {(r["E"], r["sharing"], r["seed"]) for r in stored["runs"]}
    records = [(r["E"], r["sharing"], r["seed"]) for r in stored["finetuning"]]
    tuned = {c for c in records if records.count(c) == len(stored["tasks"])}  # every task's record
    stored["finetuning"] = [r for r in stored["finetuning"] if (r["E"], r["sharing"], r["seed"]) in tuned]
    measured = {(r["E"], r["sharing"], r["seed"]) for r in stored["runs"] if MEASURED in r}
    missing = [c for c in cells
               if not (c in tuned and c in measured) and not _weights(args.cache, *c).is_file()]
    stored["runs"] = [r for r in stored["runs"] if (r["E"], r["sharing"], r["seed"]) not in missing]
    pretrain = [(*c, args.cache) for c in cells if c not in pretrained or c in missing]
    finetune = [(*c, args.cache) for c in cells if c not in tuned]
    measure = [(*c, args.cache) for c in cells if c not in measured or c in missing]
    print(f"{len(cells)} runs: {len(pretrain)} to pretrain, {len(finetune)} to fine-tune, {len(measure)} to "
          f"measure; {args.workers} workers", flush=True)
    stored["load_average"].append([round(os.getloadavg()[0], 1)])
    seconds = stored["seconds"]
    tokens = stored["data"]["steps_per_run"] * setup.batch_size * setup.T
    tune_tokens = sum(t["train_examples"] for t in stored["tasks"].values()) * budget.epochs * setup.T
    context = multiprocessing.get_context("fork")
    with context.Pool(args.workers, _start_worker, (setup, budget)) as pool:
        if pretrain:
            seconds = _phase("pretrain", pool, _pretrain, pretrain, stored, "runs", args.output, seconds,
                             tokens)
        if finetune:
            seconds = _phase("fine-tune", pool, _finetune, finetune, stored, "finetuning", args.output,
                             seconds, tune_tokens)
        if measure:
            seconds = _phase("measure", pool, _measure, measure, stored, "measures", args.output, seconds, 0)
    stored["load_average"][-1].append(round(os.getloadavg()[0], 1))
    order = {c: i for i, c in enumerate(cells)}
    stored["runs"].sort(key=lambda r: order[(r["E"], r["sharing"], r["seed"])])
    stored["finetuning"].sort(key=lambda r: (order[(r["E"], r["sharing"], r["seed"])], r["task"]))
    _write(stored, args.output)
    print(f"{len(cells)} runs stored in {args.output} ({seconds / 60:.1f} min in all)")


if __name__ == "__main__":
    main(sys.argv[1:])
