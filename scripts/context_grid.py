"""The trade-off grid trained until the miniatures read context, stored for chapter 6: every run of
geron_lib.studies.context_grid.Grid pretrained (its held-out loss per token, and on shuffled rows beside the
real ones), then fine-tuned on each task; for the narrow not-shared E = H cell, a randomly initialised
encoder fine-tuned beside it, seed by seed.

Runs go to worker processes (two by default, BLAS on one thread each); each (cell, seed) is pretrained and
fine-tuned in one job and written to the output whole as soon as it is back, so a stopped grid resumes
where it stopped (the weights under --cache are needed only within a job). Progress: runs done, time left.

Run from the repository root:
  .venv/bin/python scripts/context_grid.py [--workers W] [--output PATH] [--cache DIR]
A pilot of the schedule on one cell and seed:
  .venv/bin/python scripts/context_grid.py --cells 64:none:64 --seeds 0 --wide-seeds --epochs 10 --lr 4e-3 \
      --output PILOT.json
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
from geron_lib.model.encoder import Encoder
from geron_lib.studies import context_grid as cg
from geron_lib.studies import finetuning as ft
from geron_lib.studies import tradeoffs as tx
from geron_lib.studies.stored import load

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "geron_lib" / "studies" / "data" / "context_grid.json"
CACHE = ROOT / ".cache" / "context_grid"

_WORKER = {}


def _start_worker(grid: cg.Grid, budget: ft.FineTuning) -> None:
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    d = tx.data(grid.base)
    _WORKER.update(grid=grid, data=d, budget=budget,
                   tasks=ft.tasks(d.task_paragraphs, d.tokenizer, grid.base.T, budget))


def _weights(cache: Path, cell: cg.Cell, seed: int) -> Path:
    return cache / f"E{cell.E}-{cell.sharing}-H{cell.H}-seed{seed}.npz"


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


def _write(stored: dict, path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)


def _clock(seconds: float) -> str:
    return f"{int(seconds // 3600)}:{int(seconds % 3600 // 60):02d}:{int(seconds % 60):02d}"


def _pretrain(cell: cg.Cell, seed: int, cache: Path) -> dict:
    w = _WORKER
    setup = w["grid"].setup(cell)
    total = setup.training(seed).total_steps(len(w["data"].train_ids))
    progress = run_progress(f"{tuple(cell)} seed {seed}", total)
    record = tx.train_one(setup, w["data"], cell.E, cell.sharing, seed, progress,
                          save_to=_weights(cache, cell, seed), context_check=True)
    return tx.rounded({**record, "H": cell.H})


def _finetune(cell: cg.Cell, seed: int, cache: Path, pretrained: bool) -> list[dict]:
    w = _WORKER
    config = w["grid"].model_config(cell)
    if pretrained:
        with np.load(_weights(cache, cell, seed)) as arrays:
            encoder = encoder_from_arrays(config, arrays)
    else:
        encoder = Encoder(config, seed=seed)
    records = []
    for name, task in w["tasks"].items():
        start = time.perf_counter()
        result = ft.finetune(encoder, task, w["budget"], seed=seed)
        records.append(tx.rounded({"E": cell.E, "sharing": cell.sharing, "H": cell.H, "seed": seed,
                                   "pretrained": pretrained, "task": name, **result,
                                   "seconds": time.perf_counter() - start}))
    return records


def _job(job) -> tuple[dict | None, list[dict]]:
    """One (cell, seed): pretrained if it must be, then fine-tuned as it must be (from its weights, and from a
    random start for the baseline), so that each result is stored whole as soon as it is back."""
    cell, seed, cache, pretrain, tunes = job
    run = _pretrain(cell, seed, cache) if pretrain else None
    return run, [r for pretrained in tunes for r in _finetune(cell, seed, cache, pretrained)]


def _cell(text: str) -> cg.Cell:
    E, sharing, H = text.split(":")
    return cg.Cell(int(E), sharing, int(H))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = cg.Grid()
    parser.add_argument("--epochs", type=int, default=default.base.epochs)
    parser.add_argument("--lr", type=float, default=default.base.lr)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(default.seeds))
    parser.add_argument("--wide-seeds", type=int, nargs="*", default=list(default.wide_seeds))
    parser.add_argument("--cells", nargs="+", type=_cell, default=None, metavar="E:SHARING:H",
                        help="train only these cells, e.g. 64:none:64 (default: every cell)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args(argv)
    base = dataclasses.replace(default.base, epochs=args.epochs, lr=args.lr)
    grid = dataclasses.replace(default, base=base, seeds=tuple(args.seeds), wide_seeds=tuple(args.wide_seeds))
    runs = [(c, s) for c, s in grid.runs() if args.cells is None or c in args.cells]
    if not runs:
        parser.error(f"--cells must be cells of the grid {grid.cells()}, got {args.cells}")
    budget = ft.FineTuning()
    header = json.loads(json.dumps({"grid": tx.rounded(dataclasses.asdict(grid)),
                                    "finetuning_setup": tx.rounded(dataclasses.asdict(budget)),
                                    "cells": [list(c) for c in args.cells] if args.cells else None}))
    stored = load(args.output, "scripts/context_grid.py") if args.output.is_file() else {}
    if {k: stored.get(k) for k in header} != header:
        if stored:
            print(f"{args.output} holds another grid: starting afresh", flush=True)
        d = tx.data(grid.base)
        tasks = ft.tasks(d.task_paragraphs, d.tokenizer, grid.base.T, budget)
        stored = {"command": shlex.join([".venv/bin/python", "scripts/context_grid.py", *argv]),
                  "python": platform.python_version(), "seconds": 0, "load_average": [], **header,
                  "data": tx.rounded(tx.describe(grid.base, d)),
                  "tasks": {n: {"classes": list(t.classes), "train_examples": len(t.train[0]),
                                "test_examples": len(t.test[0]), "majority_accuracy": t.majority_accuracy()}
                            for n, t in tasks.items()},
                  "runs": [], "finetuning": []}
    args.cache.mkdir(parents=True, exist_ok=True)

    def key(r):
        return cg.Cell(r["E"], r["sharing"], r["H"]), r["seed"]

    pretrained = {key(r) for r in stored["runs"]}
    tuned = {(*key(r), r["pretrained"]) for r in stored["finetuning"]}
    baseline = cg.Cell(grid.narrow, "none", grid.narrow)
    jobs = []
    for c, s in runs:
        tunes = [p for p in (True, False) if (p or c == baseline) and (c, s, p) not in tuned]
        # a run whose weights were lost before its fine-tuning is pretrained again
        again = (c, s) in pretrained and True in tunes and not _weights(args.cache, c, s).is_file()
        if again:
            stored["runs"] = [r for r in stored["runs"] if key(r) != (c, s)]
        if (c, s) not in pretrained or again or tunes:
            jobs.append((c, s, args.cache, (c, s) not in pretrained or again, tunes))
    print(f"{len(runs)} runs: {sum(j[3] for j in jobs)} to pretrain, {sum(len(j[4]) for j in jobs)} to "
          f"fine-tune; {args.workers} workers", flush=True)
    stored["load_average"].append([round(os.getloadavg()[0], 1)])
    start, seconds = time.perf_counter(), stored["seconds"]
    with multiprocessing.get_context("fork").Pool(args.workers, _start_worker, (grid, budget)) as pool:
        for done, (run, tunings) in enumerate(pool.imap_unordered(_job, jobs), 1):
            stored["runs"] += [run] if run else []
            stored["finetuning"] += tunings
            stored["seconds"] = round(seconds + time.perf_counter() - start)
            _write(stored, args.output)
            spent = time.perf_counter() - start
            first = run or tunings[0]
            print(f"run {done}/{len(jobs)}: E {first['E']} {first['sharing']} H {first['H']} seed "
                  f"{first['seed']} | {_clock(spent)} spent, about "
                  f"{_clock(spent / done * (len(jobs) - done))} left", flush=True)
    stored["load_average"][-1].append(round(os.getloadavg()[0], 1))
    order = {r: i for i, r in enumerate(runs)}
    stored["runs"].sort(key=lambda r: order[key(r)])
    stored["finetuning"].sort(key=lambda r: (order.get(key(r), -1), not r["pretrained"], r["task"]))
    _write(stored, args.output)
    print(f"{len(runs)} runs stored in {args.output} ({stored['seconds'] / 60:.1f} min in all)")


if __name__ == "__main__":
    main(sys.argv[1:])
