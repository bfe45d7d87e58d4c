"""What ALBERT's savings cost once the miniatures read context: the trade-off grid trained past the unigram
stage, fewer cells with more seeds, and ALBERT's width bet at equal parameters.

The cells: a factorised (E = 16) and a plain (E = H) token table, each not shared and all shared, at the
narrow width of :class:`~geron_lib.studies.tradeoffs.Setup`; and one wide cell, all shared at twice the
width, whose parameters come within 5 % of the narrow not-shared E = H cell's (ALBERT's Table 2 bet:
xxlarge, shared and wide, against BERT-large). Every run trains on the same tokens for the same steps
(``tradeoffs.data``); only the cell and the seed differ.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..config import SHARING, EncoderConfig
from ..validate import check_choice, check_int, check_type
from . import intervals
from . import stored as _stored
from . import tradeoffs as tx

#: The stored grid (``scripts/context_grid.py`` writes it).
STORED = Path(__file__).parent / "data" / "context_grid.json"
#: The pilots of the schedule, one run each of the not-shared E = H cell, seed 0, at a higher peak rate
#: (``scripts/context_grid.py --cells 64:none:64 --seeds 0 --wide-seeds --epochs E --lr LR``).
PILOTS = STORED.with_name("context_grid_pilots.json")


def load_stored(path=STORED) -> dict:
    """The grid ``scripts/context_grid.py`` stored: by default the one shipped with the library
    (:data:`STORED`)."""
    return _stored.load(path, "scripts/context_grid.py")


class Cell(NamedTuple):
    """One trained configuration: token-table width E, sharing mode, hidden width H."""

    E: int
    sharing: str
    H: int


@dataclass(frozen=True)
class Grid:
    """The grid: ``base`` holds the data, the narrow model and the schedule; the narrow cells are every E of
    ``embedding_sizes`` under every mode of ``sharing``, each with every seed; the wide cell (E =
    ``wide_embedding_size``, ``wide_sharing``, H = ``wide_hidden_size``) has ``wide_seeds``."""

    #: 12 epochs at the first grid's peak rate: the pilots at higher rates (PILOTS) stayed near unigram
    base: tx.Setup = tx.Setup(epochs=12, lr=2e-3, evaluations=20)
    embedding_sizes: tuple[int, ...] = (16, 64)
    sharing: tuple[str, ...] = ("none", "all")
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    wide_hidden_size: int = 128
    wide_attention_heads: int = 4
    wide_intermediate_size: int = 512
    wide_embedding_size: int = 64
    wide_sharing: str = "all"
    #: three seeds, the issue's minimum: five would take the grid past its six-hour budget
    wide_seeds: tuple[int, ...] = (0, 1, 2)

    def __post_init__(self):
        check_type("base", self.base, tx.Setup)
        for name in ("embedding_sizes", "sharing", "seeds", "wide_seeds"):
            values = getattr(self, name)
            if not isinstance(values, tuple) or len(set(values)) != len(values):
                raise ValueError(f"{name} must be a tuple without repeats, got {values!r}")
        for s in (*self.sharing, self.wide_sharing):
            check_choice("sharing", s, SHARING)
        for seed in (*self.seeds, *self.wide_seeds):
            check_int("seed", seed, minimum=0)
        for cell in self.cells():
            self.model_config(cell)  # every cell's sizes agree (E <= H, H divisible by h, ...)

    @property
    def narrow(self) -> int:
        return self.base.hidden_size

    @property
    def wide_cell(self) -> Cell:
        return Cell(self.wide_embedding_size, self.wide_sharing, self.wide_hidden_size)

    def cells(self) -> list[Cell]:
        """The narrow cells, then the wide one."""
        narrow = [Cell(E, s, self.narrow) for s in self.sharing for E in self.embedding_sizes]
        return narrow + ([self.wide_cell] if self.wide_seeds else [])

    def setup(self, cell: Cell) -> tx.Setup:
        """The base setup at ``cell``'s width (the wide cell's heads and feed-forward width)."""
        if cell.H == self.narrow:
            return self.base
        return dataclasses.replace(self.base, hidden_size=self.wide_hidden_size,
                                   num_attention_heads=self.wide_attention_heads,
                                   intermediate_size=self.wide_intermediate_size,
                                   embedding_sizes=(cell.E,), mode_embedding_sizes=(cell.E,))

    def model_config(self, cell: Cell) -> EncoderConfig:
        return self.setup(cell).model_config(cell.E, cell.sharing)

    def runs(self) -> list[tuple[Cell, int]]:
        """Every (cell, seed) in the order they run: seed by seed, the wide cell's first seeds among them
        (so that a grid stopped early has every cell), its later seeds last."""
        narrow, wide = self.cells()[: len(self.cells()) - bool(self.wide_seeds)], self.wide_cell
        first = self.wide_seeds[:3]
        order = []
        for seed in self.seeds:
            order += [(c, seed) for c in narrow]
            if seed in first:
                order.append((wide, seed))
        order += [(wide, seed) for seed in self.wide_seeds if seed not in first and (wide, seed) not in order]
        return order


#: The primary comparisons, declared before the grid ran: (name, cell, against). Each is tested on the
#: held-out loss and on the section task's accuracy, and Holm's correction runs over those six; every other
#: comparison of the grid is exploratory.
PRIMARY = (("factorisation at E = 16", Cell(16, "none", 64), Cell(64, "none", 64)),
           ("sharing at E = H", Cell(64, "all", 64), Cell(64, "none", 64)),
           ("the width bet", Cell(64, "all", 128), Cell(64, "none", 64)))
#: What each primary comparison is tested on: a run's held-out token losses, a fine-tuning's right answers.
MEASURES = ("held_out_loss", "section")


def per_example(stored: dict, cell: Cell, measure: str, *, pretrained: bool = True) -> np.ndarray:
    """(seeds, examples): every stored run of ``cell``, its held-out token losses (``"held_out_loss"``) or
    its right answers on a task (a task's name), seed by seed."""
    check_choice("measure", measure, ("held_out_loss", *stored["tasks"]))
    if measure == "held_out_loss":
        rows = [r["held_out_token_losses"] for r in stored["runs"] if _cell(r) == cell]
    else:
        rows = [r["correct"] for r in stored["finetuning"]
                if _cell(r) == cell and r["task"] == measure and r["pretrained"] == pretrained]
    if not rows:
        raise ValueError(f"the stored grid has no run of {tuple(cell)} for {measure!r}")
    return np.array(rows, dtype=np.float64)


def _cell(record: dict) -> Cell:
    return Cell(record["E"], record["sharing"], record["H"])


def _runs(stored: dict, cell: Cell) -> list[dict]:
    """``cell``'s stored pretraining runs, seed by seed."""
    runs = sorted((r for r in stored["runs"] if _cell(r) == cell), key=lambda r: r["seed"])
    if not runs:
        raise ValueError(f"the stored grid has no run of {tuple(cell)}")
    return runs


#: The primary family's error rate, the book's (:data:`~geron_lib.studies.intervals.ALPHA`): a primary
#: comparison is *resolved* when its Holm-adjusted p is at most ALPHA; its corrected interval is at the level
#: of its Holm step (:func:`~geron_lib.studies.intervals.holm_levels`).
ALPHA = intervals.ALPHA


class Primary(NamedTuple):
    """One primary comparison: its difference with the 95 % interval, the same difference with the
    family's corrected interval, and its Holm-adjusted p."""

    difference: intervals.Difference
    corrected: intervals.Difference
    holm_p: float

    @property
    def resolved(self) -> bool:
        return self.holm_p <= ALPHA

    def said(self, scale: float = 1.0, digits: int = 3, unit: str = "") -> str:
        """The difference (times ``scale``, in ``unit``) in words, for a page: "raised by 1.58 nats
        (corrected interval +1.50 to +1.66)" when resolved, else "changed by +0.02 nats, not resolved
        (corrected interval ...)"."""
        d, c, unit = self.difference, self.corrected, f" {unit}" if unit else ""
        corrected = f"corrected interval {scale * c.low:+.{digits}f} to {scale * c.high:+.{digits}f}"
        if not self.resolved:
            return f"changed by {scale * d.mean:+.{digits}f}{unit}, not resolved ({corrected})"
        way = "raised" if d.mean > 0 else "lowered"
        return f"{way} by {scale * abs(d.mean):.{digits}f}{unit} ({corrected})"


def primary(stored: dict, *, draws: int = intervals.DRAWS, seed: int = 0) -> dict[tuple[str, str], Primary]:
    """Per (comparison, measure) of :data:`PRIMARY` x :data:`MEASURES`: the difference (cell minus against,
    :func:`~geron_lib.studies.intervals.difference` over seeds and examples) at 95 % and at its Holm step's
    level (:func:`~geron_lib.studies.intervals.holm_levels`), and its Holm-adjusted p."""
    runs, found = {}, {}
    for name, cell, base in PRIMARY:
        for measure in MEASURES:
            runs[name, measure] = per_example(stored, cell, measure), per_example(stored, base, measure)
            found[name, measure] = intervals.difference(*runs[name, measure], draws=draws, seed=seed)
    p_values = {k: d.p for k, d in found.items()}
    adjusted, levels = intervals.holm(p_values), intervals.holm_levels(p_values)
    return {k: Primary(d, intervals.difference(*runs[k], confidence=levels[k], draws=draws, seed=seed),
                       adjusted[k]) for k, d in found.items()}


def curves(stored: dict, cell: Cell) -> tuple[np.ndarray, np.ndarray]:
    """(training tokens read at each evaluation, (seeds, evaluations) held-out losses): ``cell``'s learning
    curves; a step reads train_tokens x epochs / steps_per_run tokens."""
    runs = _runs(stored, cell)
    d = stored["data"]
    per_step = d["train_tokens"] * stored["grid"]["base"]["epochs"] / d["steps_per_run"]
    return (np.array(runs[0]["held_out_step"], dtype=np.float64) * per_step,
            np.array([r["held_out_loss"] for r in runs], dtype=np.float64))


def reads_context(stored: dict, cell: Cell) -> dict[str, float]:
    """How far ``cell``'s runs got: the mean final held-out loss, its distance below the unigram loss, and
    what real context gains over shuffled rows (the mean of shuffled minus real)."""
    runs = _runs(stored, cell)
    final = float(np.mean([r["held_out_loss"][-1] for r in runs]))
    shuffled = float(np.mean([r["held_out_loss_shuffled"] for r in runs]))
    return {"final_loss": final, "below_unigram": stored["data"]["unigram_loss"] - final,
            "context_gain": shuffled - final, "seeds": len(runs)}


def per_seed(stored: dict, cell: Cell, key: str) -> np.ndarray:
    """(seeds,): ``key`` of every stored pretraining run of ``cell`` (a list's last entry: the final held-out
    loss for ``"held_out_loss"``), seed by seed."""
    runs = _runs(stored, cell)
    if key not in runs[0]:
        raise ValueError(f"key must be a stored measure of a run, one of {sorted(runs[0])}, got {key!r}")
    return np.array([r[key][-1] if isinstance(r[key], list) else r[key] for r in runs], dtype=np.float64)


def accuracies(stored: dict, cell: Cell, task: str, *, pretrained: bool = True) -> np.ndarray:
    """(seeds,): ``cell``'s test accuracy on ``task`` after fine-tuning, seed by seed (``pretrained=False``:
    the same model fine-tuned from its random initialisation)."""
    return per_example(stored, cell, task, pretrained=pretrained).mean(axis=1)


def layer_jumps(stored: dict, cell: Cell) -> np.ndarray:
    """(seeds, 1): how unevenly ``cell``'s layers move their input, seed by seed (Figure 1 of the ALBERT
    paper reads it as smoothness: a smaller jump is smoother)

        jump = mean over l of | d_(l+1) - d_l |,   d_l = || X_l - X_(l-1) ||   (the stored movement_distance)
    """
    d = np.array([r["movement_distance"] for r in _runs(stored, cell)], dtype=np.float64)  # (seeds, L)
    return np.abs(np.diff(d, axis=1)).mean(axis=1, keepdims=True)
