"""scripts/context_grid.py on a tiny grid: every run stores its held-out losses (real, shuffled, per token),
every pretrained encoder and the random-init baseline are fine-tuned on each task, and a second run does
nothing; a new point of the grid (a sharing mode or width it does not hold) trains the same way."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from geron_lib.studies import context_grid as cg

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "context_grid.py"
#: The grid's layout at a size that trains in a blink (the script's options cannot shrink the model, so the
#: child runs the script with this Grid as its default)
RUN_SCRIPT = """
import dataclasses, runpy, sys
from geron_lib.studies import context_grid as cg, tradeoffs as tx
base = tx.Setup(vocab_size=300, n_held_out=40, n_mlm_held_out=20, T=16, hidden_size=16, num_attention_heads=2,
                intermediate_size=32, batch_size=32, lr=1e-2, evaluations=2, embedding_sizes=(8,),
                mode_embedding_sizes=(8,), n_train=120, epochs=1)
small = dict(base=base, embedding_sizes=(8, 16), wide_hidden_size=32, wide_attention_heads=2,
             wide_intermediate_size=64, wide_embedding_size=16)
cg.Grid = dataclasses.make_dataclass("Grid", [(k, type(v), dataclasses.field(default=v))
                                              for k, v in small.items()], bases=(cg.Grid,), frozen=True)
sys.argv = sys.argv[1:]
sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])  # the script's folder, as running it directly puts first
runpy.run_path(sys.argv[0], run_name="__main__")
"""
OPTIONS = ["--workers", "1", "--epochs", "1", "--lr", "1e-2", "--seeds", "0", "1", "--wide-seeds", "0"]


def run_script(tmp_path, options=OPTIONS, *, status: int = 0) -> list[str]:
    """The script's output lines (its stderr's, when ``status`` is not 0) on the tiny grid."""
    out = subprocess.run([sys.executable, "-c", RUN_SCRIPT, str(SCRIPT), *options, "--output",
                          str(tmp_path / "grid.json"), "--cache", str(tmp_path / "cache")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == status, out.stderr
    return (out.stderr if status else out.stdout).splitlines()


@pytest.mark.slow
def test_stores_every_run_with_its_context_check_and_every_fine_tuning_and_resumes(tmp_path):
    lines = run_script(tmp_path)
    assert lines[0] == "9 runs: 9 to pretrain, 11 to fine-tune; 1 workers"  # 4 cells x 2 seeds + 1 wide
    stored = json.loads((tmp_path / "grid.json").read_text(encoding="utf-8"))
    cells = {cg.Cell(r["E"], r["sharing"], r["H"]) for r in stored["runs"]}
    assert cells == {cg.Cell(8, "none", 16), cg.Cell(16, "none", 16), cg.Cell(8, "all", 16),
                     cg.Cell(16, "all", 16), cg.Cell(16, "all", 32)}
    for r in stored["runs"]:
        n = stored["data"]["held_out_predictions"]
        assert len(r["held_out_token_losses"]) == n
        assert abs(np.mean(r["held_out_token_losses"]) - r["held_out_loss"][-1]) < 2e-3  # both rounded
        assert r["held_out_loss_shuffled"] > 0
    tuned = [(r["E"], r["sharing"], r["H"], r["seed"], r["pretrained"], r["task"])
             for r in stored["finetuning"]]
    assert len(tuned) == len(set(tuned)) == 2 * (9 + 2)  # every run, and the random init of E = H, per task
    assert {t[:5] for t in tuned if not t[4]} == {(16, "none", 16, 0, False), (16, "none", 16, 1, False)}
    for r in stored["finetuning"]:
        test = stored["tasks"][r["task"]]["test_examples"]
        assert len(r["correct"]) == test and abs(np.mean(r["correct"]) - r["accuracy"]) < 1e-3
    assert run_script(tmp_path)[0] == "9 runs: 0 to pretrain, 0 to fine-tune; 1 workers"
    assert json.loads((tmp_path / "grid.json").read_text(encoding="utf-8"))["runs"] == stored["runs"]


@pytest.mark.slow
def test_trains_a_new_point_of_the_grid(tmp_path):
    # a sharing mode the grid does not hold, chosen with --sharing, one of its cells picked with --cells
    options = ["--workers", "1", "--epochs", "1", "--lr", "1e-2", "--seeds", "0", "--wide-seeds",
               "--sharing", "attention", "ffn", "--cells", "16:ffn:16"]
    assert run_script(tmp_path, options)[0] == "1 runs: 1 to pretrain, 1 to fine-tune; 1 workers"
    stored = json.loads((tmp_path / "grid.json").read_text(encoding="utf-8"))
    assert [(r["E"], r["sharing"], r["H"], r["seed"]) for r in stored["runs"]] == [(16, "ffn", 16, 0)]
    assert stored["grid"]["sharing"] == ["attention", "ffn"] and stored["cells"] == [[16, "ffn", 16]]
    assert {(r["sharing"], r["pretrained"]) for r in stored["finetuning"]} == {("ffn", True)}


def test_refuses_a_width_above_the_hidden_size(tmp_path):
    error = run_script(tmp_path, [*OPTIONS, "--embedding-sizes", "8", "32"], status=2)[-1]
    assert "embedding_size" in error and "32" in error
