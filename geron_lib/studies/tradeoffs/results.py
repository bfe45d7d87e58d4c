"""The trade-off grid's results read back: by cell over seeds (:func:`by_cell`, :func:`summary`,
:func:`spread`), what sharing costs per parameter saved, the trained cell nearest a model; and, in a stored
grid (:func:`load_stored`: pretraining and fine-tuning), the comparisons the chapter draws, every one a paired
difference over seeds with its 95 % interval (:func:`~geron_lib.studies.paired.paired_interval`).

A *measure* is a number per run: a pretraining record's key (``"held_out_loss"``, its last evaluation;
``"effective_rank_moved_centred"``, ...), ``"smoothness"`` (:func:`smoothness` of the run's layer movement),
or ``"accuracy:<task>"`` (the fine-tuned test accuracy on a task of :mod:`geron_lib.studies.finetuning`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...config import SHARING
from ...validate import check_choice, check_int, check_number, check_positive_number, check_type
from .. import stored
from ..paired import Interval, paired_interval

#: The stored grid, shipped with the library (``scripts/tradeoff_experiment.py`` writes it).
STORED = stored.DATA / "tradeoffs.json"
#: One longer run beside it: the unfactorised, not-shared cell, seed 0, 16 epochs
#: (``scripts/tradeoff_experiment.py --epochs 16 --seeds 0 --cells 64:none --workers 1 --output ...``).
LONG_RUN = stored.DATA / "tradeoff_long_run.json"


def load_stored(path=STORED) -> dict:
    """The grid ``scripts/tradeoff_experiment.py`` stored: by default the one shipped with the library
    (:data:`STORED`, ``geron_lib/studies/data/tradeoffs.json``)."""
    return stored.load(path, "scripts/tradeoff_experiment.py")


def _check(result, *, finetuning: bool = False) -> dict:
    """``result`` itself: a grid of runs, and with ``finetuning`` a stored grid that holds its fine-tuning."""
    if finetuning and not (isinstance(result, dict) and result.get("runs") and "finetuning" in result):
        raise TypeError("result must be a stored grid as load_stored() reads it: a dict with runs and "
                        "finetuning")
    if not isinstance(result, dict) or not isinstance(result.get("runs"), list) or not result["runs"]:
        raise TypeError("result must be a grid as run() returns or load_stored() reads: a dict with runs")
    return result


def _value(run: dict, key: str):
    """One per-run number: ``run[key]``, or its last item for a list (such as the loss by evaluation)."""
    v = run[key]
    return v[-1] if isinstance(v, list) else v


def _spread(values: dict) -> dict:
    """{cell: (mean, lowest, highest)} of {cell: values over seeds}."""
    return {cell: (float(np.mean(v)), float(np.min(v)), float(np.max(v))) for cell, v in values.items()}


def by_cell(result: dict, key: str) -> dict[tuple[int, str], list[float]]:
    """Per (E, sharing): one per-run number, ``key``, of every seed's run (a list, such as the loss by
    epoch, gives its last item)."""
    values = {}
    for r in _check(result)["runs"]:
        values.setdefault((r["E"], r["sharing"]), []).append(_value(r, key))
    return values


def summary(result: dict, key: str = "perplexity") -> dict[tuple[int, str], tuple[float, float]]:
    """Per (E, sharing): the (mean, standard deviation over seeds) of one per-run number, ``key``
    (e.g. "perplexity", "parameters", "seconds_per_step", "effective_rank"; see :func:`by_cell`)."""
    return {cell: (float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0)
            for cell, v in by_cell(result, key).items()}


def spread(result: dict, key: str = "held_out_loss") -> dict[tuple[int, str], tuple[float, float, float]]:
    """Per (E, sharing): the (mean, lowest, highest) over seeds of one per-run number, ``key`` (see
    :func:`by_cell`; by default the held-out loss after the last epoch)."""
    return _spread(by_cell(result, key))


def loss_per_parameter_saved(result: dict, E: int) -> dict[str, float]:
    """cost = (loss_mode - loss_none) / (N_none - N_mode) x 10^6, per mode at E.

    The held-out loss a sharing mode gives up against not sharing (mean over
    seeds, after the last epoch), per million parameters it saves: nats per
    million (negative when sharing lowered the loss).
    """
    loss, params = spread(result), spread(result, "parameters")
    E = check_int("E", E, minimum=1)
    modes = [s for s in SHARING if s != "none" and (E, s) in loss]
    if (E, "none") not in loss or not modes:
        both = sorted({e for e, s in loss
                       if s != "none" and (e, "none") in loss})
        raise ValueError(f"E = {E} has no not-shared and shared runs to "
                         f"compare; the grid has both at {both}")
    none = (E, "none")
    return {s: (loss[(E, s)][0] - loss[none][0])
            / (params[none][0] - params[(E, s)][0]) * 1e6 for s in modes}


def nearest_cell(result: dict, embedding_ratio: float, sharing: str) -> tuple[int, str]:
    """The trained (E, sharing) cell nearest a model with E / H = ``embedding_ratio`` under ``sharing``: of
    the grid's cells with that sharing mode, the one whose E / H is closest on a log scale (a tie goes to
    the larger E). The grid's H is one width, so only E / H and the sharing mode can be matched."""
    result = _check(result)
    ratio = check_positive_number("embedding_ratio", embedding_ratio)
    check_choice("sharing", sharing, SHARING)
    H = result["setup"]["hidden_size"]
    cells = sorted({(r["E"], r["sharing"]) for r in result["runs"] if r["sharing"] == sharing})
    if not cells:
        raise ValueError(f"the grid has no run with sharing={sharing!r}")
    return min(cells, key=lambda c: (abs(math.log(c[0] / H / ratio)), -c[0]))


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


def _cell(name: str, cell) -> tuple[int, str]:
    if not isinstance(cell, tuple | list) or len(cell) != 2:
        raise ValueError(f"{name} must be an (E, sharing) pair, got {cell!r}")
    return tuple(cell)


def per_seed(result: dict, measure: str, cell: tuple[int, str]) -> dict[int, float]:
    """{seed: value} of ``measure`` for every run of ``cell`` = (E, sharing) in a stored grid."""
    result = _check(result, finetuning=True)
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
                values[r["seed"]] = _value(r, measure)
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
    result = _check(result, finetuning=True)
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
    result = _check(result, finetuning=True)
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
    result = _check(result, finetuning=True)
    check_choice("task", task, tuple(result["tasks"]))
    values = {}
    for r in result["finetuning"]:
        if r["task"] == task:
            values.setdefault((r["E"], r["sharing"]), []).append(r["accuracy"])
    return _spread(values)


def seeds_of(result: dict) -> int:
    """How many seeds every cell of a stored grid was trained with (checked equal over the grid)."""
    counts = {cell: len(seeds) for cell, seeds in by_cell(_check(result, finetuning=True), "seed").items()}
    if len(set(counts.values())) != 1:
        raise ValueError(f"the grid's cells have unequal numbers of seeds: {counts}")
    return check_int("seeds", next(iter(counts.values())), minimum=1)
