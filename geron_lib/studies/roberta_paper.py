"""RoBERTa's Tables 1 and 4 (Liu et al. 2019) as data: what dynamic masking gained over static (Table 1);
what Table 4's first row, a BERT-large-sized model trained on BERT's data for a tenth of BERT's steps, gains
over BERT-large, and what more data and longer training add on top of it."""

from __future__ import annotations

from dataclasses import dataclass

#: Table 4's score columns: SQuAD v1.1 and v2.0 (F1), MNLI-m and SST-2 (accuracy), development sets.
TASKS = ("SQuAD 1.1", "SQuAD 2.0", "MNLI-m", "SST-2")


@dataclass(frozen=True)
class Row:
    """One row of Table 4: the model, its data (GB of text), batch (sequences), steps, and scores."""

    model: str
    data_gb: int
    batch: int
    steps: int
    scores: tuple[float, float, float, float]

    def __post_init__(self):
        if len(self.scores) != len(TASKS):
            raise ValueError(f"scores must hold one figure per task {TASKS}, got {self.scores!r}")


#: The rows, as printed. Each RoBERTa row adds its change to the rows above it (the caption: "Each row
#: accumulates improvements from the rows above"); BERT-large's row is Devlin et al.'s published result.
TABLE_4 = (
    Row("RoBERTa with BOOKS + WIKI", 16, 8_000, 100_000, (93.6, 87.3, 89.0, 95.3)),
    Row("+ additional data", 160, 8_000, 100_000, (94.0, 87.7, 89.3, 95.6)),
    Row("+ pretrain longer", 160, 8_000, 300_000, (94.4, 88.7, 90.0, 96.1)),
    Row("+ pretrain even longer", 160, 8_000, 500_000, (94.6, 89.4, 90.2, 96.4)),
    Row("BERT-large with BOOKS + WIKI", 13, 256, 1_000_000, (90.9, 81.8, 86.6, 93.7)),
)


def row(model: str) -> Row:
    """The row of Table 4 named ``model``."""
    for r in TABLE_4:
        if r.model == model:
            return r
    raise ValueError(f"model must be one of {[r.model for r in TABLE_4]}, got {model!r}")


def gains() -> dict[str, dict[str, float]]:
    """Per task, in points: ``"design"``, RoBERTa's first row (BERT's data, 100K steps) minus BERT-large
    (1M steps); ``"data and steps"``, the last row (ten times the data, 500K steps) minus the first."""
    first, last = TABLE_4[0], TABLE_4[3]
    bert = row("BERT-large with BOOKS + WIKI")
    return {task: {"design": round(f - b, 1), "data and steps": round(e - f, 1)}
            for task, f, e, b in zip(TASKS, first.scores, last.scores, bert.scores, strict=True)}


#: Table 1's score columns: SQuAD 2.0 (F1), MNLI-m and SST-2 (accuracy), development sets.
TABLE_1_TASKS = ("SQuAD 2.0", "MNLI-m", "SST-2")
#: Table 1 (BERT base), as printed: each row the median over five random initializations of fine-tuning.
#: The reference row is Yang et al.'s (2019) run of BERT base; the other two are RoBERTa's reimplementation,
#: static (10 copies over 40 epochs) and dynamic masking.
TABLE_1 = {"reference": (76.3, 84.3, 92.8), "static": (78.3, 84.3, 92.5), "dynamic": (78.7, 84.0, 92.9)}


def dynamic_gains() -> dict[str, float]:
    """Per task of Table 1, in points: dynamic masking minus static."""
    return {task: round(d - s, 1) for task, d, s in zip(TABLE_1_TASKS, TABLE_1["dynamic"], TABLE_1["static"],
                                                          strict=True)}


def sequences_ratio() -> float:
    """Sequences Table 4's first row reads (batch x steps) over BERT-large's."""
    first, bert = TABLE_4[0], row("BERT-large with BOOKS + WIKI")
    return first.batch * first.steps / (bert.batch * bert.steps)
