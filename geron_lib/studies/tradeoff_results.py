"""Reading the stored trade-off grid (:func:`~.tradeoffs.load_stored`) for the comparisons the chapter
draws: every one a paired difference over seeds with its 95 % interval (:func:`~.paired.paired_interval`).

A *measure* is a number per run: a pretraining record's key (``"held_out_loss"``, its last evaluation;
``"effective_rank_moved_centred"``, ...), ``"smoothness"`` (:func:`smoothness` of the run's layer movement),
or ``"accuracy:<task>"`` (the fine-tuned test accuracy on a task of :mod:`.finetuning`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import SHARING
from ..validate import check_choice, check_int, check_number, check_type
from .paired import Interval, paired_interval


def smoothness(distances) -> float:
    """jump = mean_l |dist_{l+1} - dist_l|.

    How much the L2 distance a layer moves its input changes from one
    layer to the next (Figure 1's left panel): zero for equal steps; the
    paper's "smoother" transitions are a smaller jump.
    """
    d = np.asarray(distances, dtype=np.float64)
    if d.ndim != 1 or len(d) < 2:
        raise ValueError(f"distances must be 1-D with one value per layer, at least 2, got shape {d.shape}")
    return float(np.abs(np.diff(d)).mean())


def _check(result) -> dict:
    if not isinstance(result, dict) or not result.get("runs") or "finetuning" not in result:
        raise TypeError("result must be a stored grid as load_stored() reads it: a dict with runs and "
                        "finetuning")
    return result


def _cell(name: str, cell) -> tuple[int, str]:
    if not isinstance(cell, tuple | list) or len(cell) != 2:
        raise ValueError(f"{name} must be an (E, sharing) pair, got {cell!r}")
    return tuple(cell)


def per_seed(result: dict, measure: str, cell: tuple[int, str]) -> dict[int, float]:
    """{seed: value} of ``measure`` for every run of ``cell`` = (E, sharing)."""
    result = _check(result)
    check_type("measure", measure, str)
    E, sharing = _cell("cell", cell)
    if measure.startswith("accuracy:"):
        task = check_choice("the task of accuracy:<task>", measure.split(":", 1)[1], tuple(result["tasks"]))
        rows = [r for r in result["finetuning"] if r["task"] == task]
        values = {r["seed"]: r["accuracy"] for r in rows if (r["E"], r["sharing"]) == (E, sharing)}
    else:
        values = {}
        for r in result["runs"]:
            if (r["E"], r["sharing"]) != (E, sharing):
                continue
            if measure == "smoothness":
                values[r["seed"]] = smoothness(r["movement_distance"])
            elif measure in r:
                v = r[measure]
                values[r["seed"]] = v[-1] if isinstance(v, list) else v
            else:
                raise ValueError(f"measure {measure!r} is not a key of the stored runs, 'smoothness' or "
                                 f"'accuracy:<task>'")
    if not values:
        raise ValueError(f"the grid has no {measure!r} for cell {cell}")
    return values


def compare(result: dict, measure: str, cell: tuple[int, str], baseline: tuple[int, str]) -> Interval:
    """``measure`` of ``cell`` less that of ``baseline``, seed by seed, and its 95 % interval (both cells
    must have the same seeds)."""
    a, b = per_seed(result, measure, cell), per_seed(result, measure, _cell("baseline", baseline))
    if a.keys() != b.keys():
        raise ValueError(f"cell {cell} has seeds {sorted(a)} but baseline {baseline} has {sorted(b)}: a "
                         "paired comparison needs the same seeds")
    seeds = sorted(a)
    return paired_interval([a[s] for s in seeds], [b[s] for s in seeds])


@dataclass(frozen=True)
class Comparison:
    """One difference the chapter draws: which table of the paper it mirrors, the measure, the cell
    against its baseline, and the interval."""

    table: str
    measure: str
    cell: tuple[int, str]
    baseline: tuple[int, str]
    interval: Interval


def comparisons(result: dict, measures=("held_out_loss", "accuracy:order", "accuracy:section")
                ) -> list[Comparison]:
    """Table 3's (each E against E = H, not shared and all shared) and Table 4's (each sharing mode
    against none, at each E the grid trained the modes at), for every measure."""
    result = _check(result)
    s = result["setup"]
    H, out = s["hidden_size"], []
    for measure in measures:
        for sharing in ("none", "all"):
            out += [Comparison("3", measure, (E, sharing), (H, sharing),
                               compare(result, measure, (E, sharing), (H, sharing)))
                    for E in s["embedding_sizes"] if E != H]
        for E in s["mode_embedding_sizes"]:
            out += [Comparison("4", measure, (E, mode), (E, "none"),
                               compare(result, measure, (E, mode), (E, "none")))
                    for mode in SHARING if mode != "none"]
    return out


def late_improvement(result: dict, cell: tuple[int, str], share: float = 0.2) -> dict[int, float]:
    """{seed: how much the held-out loss fell over the last ``share`` of training}: the loss at the
    evaluation nearest (1 - share) of the steps less the last."""
    result = _check(result)
    cell = _cell("cell", cell)
    if not 0 < check_number("share", share) < 1:
        raise ValueError(f"share must lie in (0, 1), got {share}")
    out = {}
    for r in result["runs"]:
        if (r["E"], r["sharing"]) == cell:
            steps = np.array(r["held_out_step"])
            start = int(np.argmin(np.abs(steps - (1 - share) * steps[-1])))
            out[r["seed"]] = r["held_out_loss"][start] - r["held_out_loss"][-1]
    if not out:
        raise ValueError(f"the grid has no run of cell {cell}")
    return out


def task_summary(result: dict, task: str) -> dict[tuple[int, str], tuple[float, float, float]]:
    """Per (E, sharing): the (mean, lowest, highest) fine-tuned test accuracy over seeds on ``task``."""
    result = _check(result)
    check_choice("task", task, tuple(result["tasks"]))
    values = {}
    for r in result["finetuning"]:
        if r["task"] == task:
            values.setdefault((r["E"], r["sharing"]), []).append(r["accuracy"])
    return {c: (float(np.mean(v)), float(np.min(v)), float(np.max(v))) for c, v in values.items()}


def seeds_of(result: dict) -> int:
    """How many seeds every cell was trained with (checked equal over the grid)."""
    counts = {}
    for r in _check(result)["runs"]:
        counts[(r["E"], r["sharing"])] = counts.get((r["E"], r["sharing"]), 0) + 1
    if len(set(counts.values())) != 1:
        raise ValueError(f"the grid's cells have unequal numbers of seeds: {counts}")
    return check_int("seeds", next(iter(counts.values())), minimum=1)
