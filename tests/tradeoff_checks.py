"""What a complete stored trade-off grid (scripts/tradeoff_experiment.py's output) must hold: one check,
pointed at the grid the library ships and at a tiny grid the script writes in a test."""

import dataclasses
import json
import math

import pytest

from geron_lib.costs.params import count_parameters
from geron_lib.studies import finetuning as ft
from geron_lib.studies import tradeoffs as tx

#: What the script's last phase (measure, from the stored weights) adds to every run record
MEASURED = {"effective_rank_in_text_centred", "rank_90_in_text_centred"}


def as_stored(settings) -> dict:
    """A settings dataclass (Setup, FineTuning) as JSON stores it: its fields, rounded, read back."""
    return json.loads(json.dumps(tx.rounded(dataclasses.asdict(settings))))


def check_stored_grid(stored: dict, setup: tx.Setup, budget: ft.FineTuning, run_keys) -> None:
    """``stored`` is the whole grid of ``setup`` pretrained, fine-tuned with ``budget`` and measured; every
    run record has exactly ``run_keys`` (what :func:`~geron_lib.studies.tradeoffs.train_one` returns) and
    :data:`MEASURED`."""
    assert stored["setup"] == as_stored(setup)
    assert stored["finetuning_setup"] == as_stored(budget)
    assert stored["command"].startswith(".venv/bin/python scripts/tradeoff_experiment.py")
    assert isinstance(stored["seconds"], int) and stored["seconds"] >= 0  # whole seconds spent
    # one [start] per session, [start, end] once it finished; the last session finished the grid
    assert stored["load_average"] and all(len(la) in (1, 2) for la in stored["load_average"])
    assert len(stored["load_average"][-1]) == 2

    data = stored["data"]
    assert data["corpus"] == setup.corpus
    assert data["steps_per_run"] == setup.training(0).total_steps(data["train_rows"])
    steps = setup.training(0).evaluation_steps(data["train_rows"])
    assert len(steps) == setup.evaluations and steps[-1] == data["steps_per_run"]

    cells = [(E, s, seed) for seed in setup.seeds for E, s in setup.grid()]
    assert [(r["E"], r["sharing"], r["seed"]) for r in stored["runs"]] == cells  # each once, in order
    for r in stored["runs"]:
        assert set(r) == set(run_keys) | MEASURED, (r["E"], r["sharing"], r["seed"])
        assert r["held_out_step"] == steps
        assert len(r["held_out_loss"]) == setup.evaluations
        assert r["held_out_step"][-1] == data["steps_per_run"]
        assert len(r["train_loss"]) == setup.epochs
        assert r["perplexity"] == pytest.approx(math.exp(r["held_out_loss"][-1]), rel=2e-3)  # 4 digits
        assert r["parameters"] == count_parameters(setup.model_config(r["E"], r["sharing"]),
                                                   mlm_head=True).total
        assert 0 <= r["rows_moved"] <= setup.vocab_size
        assert 1 <= r["effective_rank_moved_centred"] <= r["E"]
        assert 1 <= r["effective_rank_in_text_centred"] <= r["E"]
        assert 1 <= r["rank_90_in_text_centred"] <= r["E"]

    assert set(stored["tasks"]) == set(ft.TASKS)
    assert stored["tasks"]["order"]["classes"] == ["in order", "swapped"]
    assert stored["tasks"]["section"]["classes"] == list(ft.SECTIONS)
    for name, task in stored["tasks"].items():
        assert task["train_examples"] > 0 and task["test_examples"] > 0, name
        counts = task["test_counts"]
        assert len(counts) == len(task["classes"]) and sum(counts) == task["test_examples"], name
        # the training majority's share of the test examples: at most the largest class's share
        assert 0 < task["majority_accuracy"] < 1, name
        assert task["majority_accuracy"] <= max(counts) / task["test_examples"] + 1e-4, name

    tuned = [(r["E"], r["sharing"], r["seed"], r["task"]) for r in stored["finetuning"]]
    assert sorted(tuned) == sorted((*c, t) for c in cells for t in stored["tasks"])  # each once
    for r in stored["finetuning"]:
        assert 0 <= r["accuracy"] <= 1 and len(r["train_loss"]) == budget.epochs
