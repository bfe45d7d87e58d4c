"""The ALBERT paper's published parameter counts (Lan et al. 2020, Tables 1, 3 and 4) as data: every row
with the EncoderConfig that describes it, our exact count, and which ways of counting reach the figure."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ..model.config import PRESETS, EncoderConfig
from ..model.params import count_parameters
from ..validate import check_bool, check_choice, check_int, check_type

MILLION = 1_000_000
PROJECTIONS = ("as built", "always", "never")


@dataclass(frozen=True)
class PaperRow:
    """One published figure: the table it is in, the row's name there, the figure in millions, the model."""

    table: int
    model: str
    millions: int
    config: EncoderConfig


def _albert_base(embedding_size: int, sharing: str) -> EncoderConfig:
    """ALBERT base geometry: V = 30000, H = 768, 12 layers, 12 heads, FFN 3072, 512 positions, 2 types."""
    return PRESETS["albert-base-v2"].replace(embedding_size=embedding_size, sharing=sharing)


_SHARING_NAMES = {"all": "all-shared", "attention": "shared-attention", "ffn": "shared-FFN",
                  "none": "not-shared"}

#: Table 1: the models compared (FFN width 4H throughout; the head count changes no count).
TABLE_1 = tuple(PaperRow(1, model, millions, PRESETS[preset]) for model, millions, preset in (
    ("BERT base", 108, "bert-base"), ("BERT large", 334, "bert-large"),
    ("ALBERT base", 12, "albert-base-v2"), ("ALBERT large", 18, "albert-large-v2"),
    ("ALBERT xlarge", 60, "albert-xlarge-v2"), ("ALBERT xxlarge", 235, "albert-xxlarge-v2")))

#: Table 3: embedding size E, not-shared and all-shared, ALBERT base geometry.
TABLE_3 = tuple(
    PaperRow(3, f"{_SHARING_NAMES[sharing]}, E = {E}", millions, _albert_base(E, sharing))
    for sharing, figures in (("none", (87, 89, 93, 108)), ("all", (10, 12, 16, 31)))
    for E, millions in zip((64, 128, 256, 768), figures, strict=True))

#: Table 4: cross-layer sharing strategies at E = 768 and E = 128, ALBERT base geometry.
TABLE_4 = tuple(
    PaperRow(4, f"{_SHARING_NAMES[sharing]}, E = {E}", millions, _albert_base(E, sharing))
    for E, figures in ((768, (31, 83, 57, 108)), (128, (12, 64, 38, 89)))
    for sharing, millions in zip(("all", "attention", "ffn", "none"), figures, strict=True))


@dataclass(frozen=True)
class Accounting:
    """One way to count a model: which optional parts are in, and with which vocabulary.

    ``pooler``: BERT's and ALBERT's H x H pooler on [CLS]. ``pretraining_heads``: the MLM head (tied
    decoder) and the sentence-order / next-sentence head. ``vocab_size``: None keeps the row's own V.
    ``projection`` (ALBERT rows only): the E -> H map ``"as built"`` (only when E < H, as in the original
    TensorFlow ALBERT), ``"always"`` (also when E = H, as in Hugging Face's ``AlbertModel``) or ``"never"``.
    """

    pooler: bool = False
    pretraining_heads: bool = False
    vocab_size: int | None = None
    projection: str = "as built"

    def __post_init__(self):
        for name in ("pooler", "pretraining_heads"):
            check_bool(name, getattr(self, name))
        if self.vocab_size is not None:
            check_int("vocab_size", self.vocab_size, minimum=1)
        check_choice("projection", self.projection, PROJECTIONS)

    def count(self, config: EncoderConfig) -> int:
        """The exact number of parameters of ``config`` counted this way."""
        if self.vocab_size is not None:
            config = config.replace(vocab_size=self.vocab_size)
        if config.model_type == "albert" and self.projection == "always":
            config = config.replace(embedding_projection=True)
        n = count_parameters(config, pooler=self.pooler, mlm_head=self.pretraining_heads,
                             nsp_head=self.pretraining_heads).total
        if config.model_type == "albert" and self.projection == "never":
            n -= count_parameters(config).embedding_projection  # an accounting, not a model one can build
        return n

    def __str__(self) -> str:
        parts = ["encoder"]
        parts += ["pooler"] if self.pooler else []
        parts += ["MLM + SOP heads"] if self.pretraining_heads else []
        parts += {"as built": [], "always": ["E -> H map at E = H"],
                  "never": ["no E -> H map"]}[self.projection]
        vocab = "" if self.vocab_size is None else f", V = {self.vocab_size:,}"
        return " + ".join(parts) + vocab


#: The plain count: the encoder only (embeddings and layers), with each row's own vocabulary.
PLAIN = Accounting()

ROUNDINGS = ("nearest", "down", "up")


def to_millions(count: int, rounding: str = "nearest") -> int:
    """``count`` in whole millions: rounded to the nearest (halves up), down, or up."""
    count = check_int("count", count, minimum=0)
    check_choice("rounding", rounding, ROUNDINGS)
    shift = {"nearest": MILLION // 2, "down": 0, "up": MILLION - 1}[rounding]
    return (count + shift) // MILLION


def accountings(vocab_sizes=(30000, 30522)) -> list[Accounting]:
    """Every combination of the optional parts, at each of ``vocab_sizes`` (simplest first)."""
    vocab_sizes = [check_int("vocab_sizes[i]", V, minimum=1) for V in vocab_sizes]
    return [Accounting(pooler, heads, V, projection) for pooler, heads, V, projection
            in itertools.product((False, True), (False, True), vocab_sizes, PROJECTIONS)]


def _check_rows(rows) -> list[PaperRow]:
    rows = [] if isinstance(rows, str | bytes) or not hasattr(rows, "__iter__") else list(rows)
    if not rows or not all(isinstance(r, PaperRow) for r in rows):
        raise TypeError("rows must be a non-empty sequence of PaperRow")
    return rows


def reproduces(accounting: Accounting, rows, rounding: str = "nearest") -> bool:
    """True when counting every row ``accounting``'s way and rounding gives the paper's figure."""
    check_type("accounting", accounting, Accounting)
    check_choice("rounding", rounding, ROUNDINGS)
    return all(to_millions(accounting.count(row.config), rounding) == row.millions for row in rows)


def reproducing(rows, rounding: str = "nearest", candidates=None) -> list[Accounting]:
    """The accountings (of ``candidates``, default :func:`accountings`) that reproduce every row; of
    several that give these rows the same counts, only the first (the simplest) is listed."""
    rows = _check_rows(rows)
    found, seen = [], set()
    for a in accountings() if candidates is None else candidates:
        counts = tuple(a.count(row.config) for row in rows)
        if counts not in seen and reproduces(a, rows, rounding):
            found.append(a)
        seen.add(counts)
    return found


def extra_needed(row: PaperRow, rounding: str = "nearest", accounting: Accounting = PLAIN) -> tuple[int, int]:
    """The range [low, high) of parameters that, added to ``accounting``'s count, round to the figure."""
    check_type("row", row, PaperRow)
    check_choice("rounding", rounding, ROUNDINGS)
    low = {"nearest": row.millions * MILLION - MILLION // 2, "down": row.millions * MILLION,
           "up": (row.millions - 1) * MILLION + 1}[rounding]
    n = accounting.count(row.config)
    return low - n, low + MILLION - n


def largest_count(row: PaperRow, candidates=None) -> int:
    """The largest count of ``row`` any accounting (default: all of :func:`accountings`) reaches."""
    _check_rows([row])
    return max(a.count(row.config) for a in (accountings() if candidates is None else candidates))


def markdown_table(rows, columns: dict[str, Accounting]) -> str:
    """Paper figure beside exact counts (one column per accounting), with count minus figure in millions."""
    rows = _check_rows(rows)
    if not isinstance(columns, dict) or not columns or not all(
            isinstance(a, Accounting) for a in columns.values()):
        raise TypeError("columns must be a non-empty dict of column name -> Accounting")
    head = ["Table", "Model", "Paper"] + [f"{name} (exact)" for name in columns] + [
        f"{name} minus paper" for name in columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 3 + "--:|" * (2 * len(columns))]
    for row in rows:
        counts = [a.count(row.config) for a in columns.values()]
        cells = [str(row.table), row.model, f"{row.millions}M"] + [f"{n:,}" for n in counts] + [
            f"{(n - row.millions * MILLION) / MILLION:+.2f}M" for n in counts]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
