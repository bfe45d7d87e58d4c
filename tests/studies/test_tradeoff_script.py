"""scripts/tradeoff_experiment.py on a tiny grid: it stores every run, fine-tuning and measure whole, a second
run does nothing, and it resumes exactly what is missing (a run's measures; a run whose weights and
fine-tuning are both gone)."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
from tradeoff_checks import MEASURED, check_stored_grid

from geron_lib.studies import finetuning as ft
from geron_lib.studies import tradeoffs as tx

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "tradeoff_experiment.py"
#: The stored setup's layout at a size that trains in a blink. The script's options cannot shrink the model,
#: the vocabulary or the held-out text, so the child process runs the script with these as Setup's defaults.
#: (The script builds Setup() before its options replace fields: the defaults must be a valid setup.)
SMALL = dict(vocab_size=300, n_held_out=40, n_mlm_held_out=20, T=16, hidden_size=16, num_attention_heads=2,
             intermediate_size=32, batch_size=32, lr=1e-2, evaluations=2, embedding_sizes=(8,),
             mode_embedding_sizes=(8,))
OPTIONS = ["--workers", "1", "--epochs", "1", "--seeds", "0", "1", "--embedding-sizes", "8",
           "--mode-embedding-sizes", "8", "--n-train", "120"]
RUN_SCRIPT = """
import dataclasses, json, runpy, sys
from geron_lib.studies import tradeoffs as tx
small = json.loads(sys.argv[1])
small = {k: tuple(v) if isinstance(v, list) else v for k, v in small.items()}
tx.Setup = dataclasses.make_dataclass("Setup", [(k, type(v), dataclasses.field(default=v))
                                                for k, v in small.items()], bases=(tx.Setup,), frozen=True)
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
#: What the script's options and SMALL make
SETUP = tx.Setup(**SMALL, epochs=1, seeds=(0, 1), n_train=120)
TIMING = {"seconds", "seconds_per_step"}  # what a run records that is not its result


def run_script(tmp_path) -> list[str]:
    out = subprocess.run([sys.executable, "-c", RUN_SCRIPT, json.dumps(SMALL), str(SCRIPT), *OPTIONS,
                          "--output", str(tmp_path / "grid.json"), "--cache", str(tmp_path / "cache")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def results(records) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in TIMING} for r in records]


def test_stores_the_grid_whole_and_resumes_only_what_is_missing(tmp_path):
    lines = run_script(tmp_path)
    assert lines[0] == "8 runs: 8 to pretrain, 8 to fine-tune, 8 to measure; 1 workers"
    path, cache = tmp_path / "grid.json", tmp_path / "cache"
    first = json.loads(path.read_text(encoding="utf-8"))
    assert SETUP.grid() == [(8, "none"), (8, "all"), (8, "attention"), (8, "ffn")]
    assert len(first["runs"]) == 8 and len(first["finetuning"]) == 16
    d = tx.data(SETUP)
    keys = tx.train_one(SETUP, d, 8, "none", 0).keys()
    check_stored_grid(first, SETUP, ft.FineTuning(), keys)
    for r in first["runs"]:  # measured from the weights the run stored
        with np.load(cache / f"E8-{r['sharing']}-seed{r['seed']}.npz") as arrays:
            rank = tx.rank_in_text(arrays["embeddings.word"], d.held_ids, d.tokenizer.pad_id)
        assert math.isclose(r["effective_rank_in_text_centred"], rank["effective_rank"], rel_tol=1e-3)
        assert r["rank_90_in_text_centred"] == rank["rank_90"]
    assert first["command"] == ".venv/bin/python scripts/tradeoff_experiment.py " + " ".join(
        OPTIONS + ["--output", str(path), "--cache", str(cache)])
    assert sorted(p.name for p in cache.iterdir()) == sorted(f"E8-{s}-seed{seed}.npz" for seed in (0, 1)
                                                             for s in ("none", "all", "attention", "ffn"))

    # again: everything is stored, nothing runs
    assert run_script(tmp_path)[0] == "8 runs: 0 to pretrain, 0 to fine-tune, 0 to measure; 1 workers"
    again = json.loads(path.read_text(encoding="utf-8"))
    assert again["runs"] == first["runs"] and again["finetuning"] == first["finetuning"]
    assert len(again["load_average"]) == 2 and again["seconds"] == first["seconds"]

    # a run's weights gone, but its fine-tuning stored: they are not needed again
    (cache / "E8-ffn-seed0.npz").unlink()
    assert run_script(tmp_path)[0] == "8 runs: 0 to pretrain, 0 to fine-tune, 0 to measure; 1 workers"
    assert json.loads(path.read_text(encoding="utf-8"))["runs"] == first["runs"]
    assert not (cache / "E8-ffn-seed0.npz").exists()

    # a run's measures gone, its weights there: only they are measured again
    stored = json.loads(path.read_text(encoding="utf-8"))
    for key in MEASURED:
        del stored["runs"][2][key]
    path.write_text(json.dumps(stored), encoding="utf-8")
    lines = run_script(tmp_path)
    assert lines[0] == "8 runs: 0 to pretrain, 0 to fine-tune, 1 to measure; 1 workers"
    assert [line.split(" |")[0] for line in lines if line.startswith("measure")] == [
        "measure 1/1: E 8 attention seed 0"]
    assert json.loads(path.read_text(encoding="utf-8"))["runs"] == first["runs"]

    # a run's fine-tuning and its weights gone: that run, and only it, is pretrained and fine-tuned again
    stored = json.loads(path.read_text(encoding="utf-8"))
    stored["finetuning"] = [r for r in stored["finetuning"] if (r["sharing"], r["seed"]) != ("all", 1)]
    path.write_text(json.dumps(stored), encoding="utf-8")
    (cache / "E8-all-seed1.npz").unlink()
    lines = run_script(tmp_path)
    assert lines[0] == "8 runs: 1 to pretrain, 1 to fine-tune, 1 to measure; 1 workers"
    done = [line.split(" |")[0] for line in lines if line.startswith(("pretrain", "fine-tune", "measure"))]
    assert done == [f"{phase} 1/1: E 8 all seed 1" for phase in ("pretrain", "fine-tune", "measure")]
    last = json.loads(path.read_text(encoding="utf-8"))
    check_stored_grid(last, SETUP, ft.FineTuning(), keys)
    assert (cache / "E8-all-seed1.npz").is_file()
    # the same seeds give the same run: only its timings differ
    assert results(last["runs"]) == results(first["runs"])
    assert results(last["finetuning"]) == results(first["finetuning"])
    kept = [[r for r in grid["runs"] if (r["sharing"], r["seed"]) != ("all", 1)] for grid in (last, first)]
    assert kept[0] == kept[1]  # timings too: not run again
