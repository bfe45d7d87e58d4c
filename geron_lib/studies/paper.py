"""The ALBERT paper's published parameter counts (Lan et al. 2020, Tables 1, 3 and 4) as data: every row
with the EncoderConfig that describes it, our exact count, and which ways of counting reach the figure; and
the paper's downstream scores (Tables 2, 3 and 4: each task, the Avg column, Table 2's speed-ups); and how
BERT, ALBERT and RoBERTa base were pretrained, as their three papers print it (PRETRAINING)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..config import PRESETS, EncoderConfig
from ..costs.params import count_parameters
from ..validate import check_bool, check_choice, check_int, check_sequence, check_type

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
    vocab_sizes = [check_int("vocab_sizes[i]", V, minimum=1)
                   for V in check_sequence("vocab_sizes", vocab_sizes, "vocabulary sizes")]
    return [Accounting(pooler, heads, V, projection) for pooler, heads, V, projection
            in itertools.product((False, True), (False, True), vocab_sizes, PROJECTIONS)]


def _check_rows(rows) -> list[PaperRow]:
    rows = [] if isinstance(rows, str | bytes) or not hasattr(rows, "__iter__") else list(rows)
    if not rows or not all(isinstance(r, PaperRow) for r in rows):
        raise TypeError("rows must be a non-empty sequence of PaperRow")
    return rows


def _check_candidates(candidates) -> list[Accounting]:
    """``candidates`` as a non-empty list of Accounting; None: every one of :func:`accountings`."""
    if candidates is None:
        return accountings()
    candidates = check_sequence("candidates", candidates, "Accounting")
    if not candidates or not all(isinstance(a, Accounting) for a in candidates):
        raise TypeError("candidates must be a non-empty sequence of Accounting (as accountings() returns)")
    return candidates


def reproduces(accounting: Accounting, rows, rounding: str = "nearest") -> bool:
    """True when counting every row ``accounting``'s way and rounding gives the paper's figure."""
    check_type("accounting", accounting, Accounting)
    check_choice("rounding", rounding, ROUNDINGS)
    rows = _check_rows(rows)
    return all(to_millions(accounting.count(row.config), rounding) == row.millions for row in rows)


def reproducing(rows, rounding: str = "nearest", candidates=None) -> list[Accounting]:
    """The accountings (of ``candidates``, default :func:`accountings`) that reproduce every row; of
    several that give these rows the same counts, only the first (the simplest) is listed."""
    rows = _check_rows(rows)
    check_choice("rounding", rounding, ROUNDINGS)
    found, seen = [], set()
    for a in _check_candidates(candidates):
        counts = tuple(a.count(row.config) for row in rows)
        if counts not in seen and reproduces(a, rows, rounding):
            found.append(a)
        seen.add(counts)
    return found


def extra_needed(row: PaperRow, rounding: str = "nearest", accounting: Accounting = PLAIN) -> tuple[int, int]:
    """The range [low, high) of parameters that, added to ``accounting``'s count, round to the figure."""
    check_type("row", row, PaperRow)
    check_choice("rounding", rounding, ROUNDINGS)
    check_type("accounting", accounting, Accounting)
    low = {"nearest": row.millions * MILLION - MILLION // 2, "down": row.millions * MILLION,
           "up": (row.millions - 1) * MILLION + 1}[rounding]
    n = accounting.count(row.config)
    return low - n, low + MILLION - n


def largest_count(row: PaperRow, candidates=None) -> int:
    """The largest count of ``row`` any accounting (default: all of :func:`accountings`) reaches."""
    _check_rows([row])
    return max(a.count(row.config) for a in _check_candidates(candidates))


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


def _check_chance(rows, spread, trials, seed) -> list[PaperRow]:
    """:func:`chance_of_a_fit`'s arguments, checked; the rows as a list."""
    for name, value, least in (("spread", spread, 0), ("trials", trials, 1), ("seed", seed, 0)):
        check_int(name, value, minimum=least)
    return _check_rows(rows)


def chance_of_a_fit(rows, spread=1, trials=10_000, seed=0, candidates=None):
    """P(fit) = (1/N) sum_n [some a, r: round_r(count_a(row_i)) = m_ni, all i].

    ``trials`` (N) random tables of ``rows``' shape: each figure m_ni is the
    plain count rounded to the nearest million plus an integer drawn
    uniformly from [-spread, spread]. Returns the share of them that some
    accounting a of ``candidates`` (default: all), under some rounding r,
    reproduces exactly. Seeded: the same arguments give the same share.
    """
    rows = _check_chance(rows, spread, trials, seed)
    fits = distinct_fits(rows, candidates)  # (K, n)
    plain = [to_millions(PLAIN.count(row.config)) for row in rows]
    rng = np.random.default_rng(seed)
    shifts = rng.integers(-spread, spread + 1, size=(trials, len(rows)))
    tables = np.array(plain) + shifts  # (N, n)
    same = tables[:, None, :] == fits[None, :, :]  # (N, K, n)
    return float(same.all(axis=2).any(axis=1).mean())


def distinct_fits(rows, candidates=None) -> np.ndarray:
    """The distinct tables the search can reproduce: round_r(count_a(row_i)) for every accounting a and
    rounding r, one row of the (K, n) array per distinct table (K <= accountings x roundings)."""
    rows = _check_rows(rows)
    candidates = _check_candidates(candidates)
    tables = {tuple(to_millions(a.count(row.config), rounding) for row in rows)
              for a in candidates for rounding in ROUNDINGS}
    return np.array(sorted(tables))


@dataclass(frozen=True)
class PaperScores:
    """One row of the paper's downstream results (dev sets, after 125k pretraining steps): SQuAD 1.1 and 2.0
    as (F1, EM), MNLI, SST-2 and RACE accuracy, the Avg column, and Table 2's training speed-up against
    BERT large (None elsewhere)."""

    table: int
    model: str
    config: EncoderConfig
    squad11: tuple[float, float]
    squad20: tuple[float, float]
    mnli: float
    sst2: float
    race: float
    average: float
    speedup: float | None = None

    def task_average(self) -> float:
        """Avg = (SQuAD1.1 + SQuAD2.0 + MNLI + SST-2 + RACE) / 5, each SQuAD the mean of its F1 and EM.

        The paper's rule for its Avg column (Table 2's caption), from the columns as printed."""
        squad = sum(self.squad11) / 2 + sum(self.squad20) / 2
        return (squad + self.mnli + self.sst2 + self.race) / 5


def _scores(table: int, model: str, config: EncoderConfig, *figures, speedup: float | None = None):
    f1_11, em_11, f1_20, em_20, mnli, sst2, race, average = figures
    return PaperScores(table, model, config, (f1_11, em_11), (f1_20, em_20), mnli, sst2, race, average,
                       speedup)


#: Table 2 (its Avg and Speedup columns among the rest), as printed in the ICLR 2020 version (arXiv v6).
TABLE_2 = tuple(_scores(2, model, PRESETS[preset], *figures, speedup=speedup)
                for model, preset, figures, speedup in (
    ("BERT base", "bert-base", (90.4, 83.2, 80.4, 77.6, 84.5, 92.8, 68.2, 82.3), 4.7),
    ("BERT large", "bert-large", (92.2, 85.5, 85.0, 82.2, 86.6, 93.0, 73.9, 85.2), 1.0),
    ("ALBERT base", "albert-base-v2", (89.3, 82.3, 80.0, 77.1, 81.6, 90.3, 64.0, 80.1), 5.6),
    ("ALBERT large", "albert-large-v2", (90.6, 83.9, 82.3, 79.4, 83.5, 91.7, 68.5, 82.4), 1.7),
    ("ALBERT xlarge", "albert-xlarge-v2", (92.5, 86.1, 86.1, 83.1, 86.4, 92.4, 74.8, 85.5), 0.6),
    ("ALBERT xxlarge", "albert-xxlarge-v2", (94.1, 88.3, 88.1, 85.1, 88.0, 95.2, 82.3, 88.7), 0.3)))

#: Table 3's scores: E = 64, 128, 256, 768 in ALBERT base, not-shared and all-shared.
TABLE_3_SCORES = tuple(
    _scores(3, f"{_SHARING_NAMES[sharing]}, E = {E}", _albert_base(E, sharing), *figures)
    for sharing, E, figures in (
        ("none", 64, (89.9, 82.9, 80.1, 77.8, 82.9, 91.5, 66.7, 81.3)),
        ("none", 128, (89.9, 82.8, 80.3, 77.3, 83.7, 91.5, 67.9, 81.7)),
        ("none", 256, (90.2, 83.2, 80.3, 77.4, 84.1, 91.9, 67.3, 81.8)),
        ("none", 768, (90.4, 83.2, 80.4, 77.6, 84.5, 92.8, 68.2, 82.3)),
        ("all", 64, (88.7, 81.4, 77.5, 74.8, 80.8, 89.4, 63.5, 79.0)),
        ("all", 128, (89.3, 82.3, 80.0, 77.1, 81.6, 90.3, 64.0, 80.1)),
        ("all", 256, (88.8, 81.5, 79.1, 76.3, 81.5, 90.3, 63.4, 79.6)),
        ("all", 768, (88.6, 81.5, 79.2, 76.6, 82.0, 90.6, 63.3, 79.8))))

#: Table 4's scores: the four sharing modes in ALBERT base at E = 768 and E = 128. Two cells repeat a
#: model of Table 3 with another MNLI figure (all-shared and not-shared at E = 128); each table's Avg
#: follows its own columns.
TABLE_4_SCORES = tuple(
    _scores(4, f"{_SHARING_NAMES[sharing]}, E = {E}", _albert_base(E, sharing), *figures)
    for E, sharing, figures in (
        (768, "all", (88.6, 81.5, 79.2, 76.6, 82.0, 90.6, 63.3, 79.8)),
        (768, "attention", (89.9, 82.7, 80.0, 77.2, 84.0, 91.4, 67.7, 81.6)),
        (768, "ffn", (89.2, 82.1, 78.2, 75.4, 81.5, 90.8, 62.6, 79.5)),
        (768, "none", (90.4, 83.2, 80.4, 77.6, 84.5, 92.8, 68.2, 82.3)),
        (128, "all", (89.3, 82.3, 80.0, 77.1, 82.0, 90.3, 64.0, 80.1)),
        (128, "attention", (89.9, 82.8, 80.7, 77.9, 83.4, 91.9, 67.6, 81.7)),
        (128, "ffn", (88.9, 81.6, 78.6, 75.6, 82.3, 91.7, 64.4, 80.2)),
        (128, "none", (89.9, 82.8, 80.3, 77.3, 83.2, 91.5, 67.9, 81.6))))


#: ALBERT's pretraining recipe (section 4.1 unless named), item by item: what the paper did, and where it
#: says so. The chapter sets the miniature's recipe beside it.
RECIPE = (
    ("optimizer", "LAMB, learning rate 0.00176", "4.1"),
    ("batch", "4,096 sequences, up to 512 tokens each", "4.1"),
    ("steps", "125,000", "4.1"),
    ("masking", "n-gram masking, p(n) = (1/n) / sum_k 1/k up to n = 3", "4.1"),
    ("vocabulary", "SentencePiece, 30,000 tokens", "4.1"),
    ("dropout", "removed for the best models (xxlarge, Table 8)", "4.8"),
    ("data", "BookCorpus and English Wikipedia, about 16 GB of text", "4.1"),
    ("sentence task", "sentence-order prediction beside the masked LM", "3.1"),
)


@dataclass(frozen=True)
class MaskingAblation:
    """One row of BERT's Table 8 (Devlin et al. 2019, appendix C.2; BERT base, development sets): the shares
    of the selected tokens that become [MASK], stay the same or become a random token in pretraining, then
    MNLI accuracy after fine-tuning and CoNLL-2003 NER F1 fine-tuned and feature-based (the last four layers
    concatenated)."""

    mask: float
    same: float
    random: float
    mnli: float
    ner_finetune: float
    ner_feature: float


#: BERT's Table 8, as printed; its first row is BERT's own rule (80 / 10 / 10).
BERT_TABLE_8 = tuple(MaskingAblation(*row) for row in (
    (0.8, 0.1, 0.1, 84.2, 95.4, 94.9),
    (1.0, 0.0, 0.0, 84.3, 94.9, 94.0),
    (0.8, 0.0, 0.2, 84.1, 95.2, 94.6),
    (0.8, 0.2, 0.0, 84.4, 95.2, 94.7),
    (0.0, 0.2, 0.8, 83.7, 94.8, 94.6),
    (0.0, 0.0, 1.0, 83.6, 94.9, 94.6)))


@dataclass(frozen=True)
class Pretraining:
    """How one base model was pretrained, as its paper prints it. Its geometry (E, H, L, sharing) is the
    library's preset ``preset``; the rest is the paper's: the sentence task beside the masked LM, how the
    masks were chosen, the data (what it is and its size in GB of text), sequences per step, steps, the
    parameter figure in millions (None: the paper prints no total; then ``over_bert_millions``, what it says
    the model adds to BERT base, if it says), and where each figure is printed."""

    model: str
    preset: str
    sentence_task: str
    masking: str
    data: str
    data_gb: int
    batch: int
    steps: int
    millions: int | None
    where: str
    over_bert_millions: int | None = None

    @property
    def config(self) -> EncoderConfig:
        return PRESETS[self.preset]

    @property
    def sequences(self) -> int:
        """Sequences seen in pretraining: batch x steps."""
        return self.batch * self.steps


#: BERT base (Devlin et al. 2019), ALBERT base (Lan et al. 2020) and RoBERTa base (Liu et al. 2019). BERT's
#: 16 GB is RoBERTa's figure (section 2.5; BERT's own paper counts 3.3 billion words) and its static masks
#: are RoBERTa's account of BERT's code (section 4.1). ALBERT's paper does not say whether its masks are
#: drawn once or per epoch, so its row says neither. RoBERTa base's batch and steps are its Table 9, its data
#: Table 8's "all data"; it prints no total for RoBERTa base, but says that its 50K byte-level BPE vocabulary
#: "adds approximately 15M" parameters to BERT base (section 4.4).
PRETRAINING = (
    Pretraining("BERT base", "bert-base", "NSP", "static, single tokens",
                "BookCorpus + Wikipedia", 16, 256, 1_000_000, 110,
                "Devlin et al. sections 3 and A.2; Liu et al. sections 2.5 and 4.1"),
    Pretraining("ALBERT base", "albert-base-v2", "SOP", "n-grams of up to 3 words",
                "BookCorpus + Wikipedia", 16, 4096, 125_000, 12,
                "Lan et al. section 4.1 and Table 1"),
    Pretraining("RoBERTa base", "roberta-base", "none", "dynamic, single tokens",
                "five English corpora", 160, 8_000, 500_000, None,
                "Liu et al. sections 3.2, 4.1, 4.2 and 4.4, Tables 8 and 9", over_bert_millions=15),
)


def pretraining_table(rows=PRETRAINING) -> str:
    """The rows as one Markdown table: E and sharing from each preset, the papers' figures, and the library's
    count of each preset with its pooler beside the paper's."""
    rows = check_sequence("rows", rows, "Pretraining")
    if not rows or not all(isinstance(r, Pretraining) for r in rows):
        raise TypeError("rows must be a non-empty sequence of Pretraining (as PRETRAINING holds)")
    head = ["Model", "E", "Sharing", "Sentence task", "Masking", "Data", "Batch", "Steps",
            "Parameters (paper)", "`count_parameters`"]
    lines = ["| " + " | ".join(head) + " |", "|---|--:|---|---|---|---|--:|--:|--:|--:|"]
    for r in rows:
        c = r.config
        if r.millions is not None:
            paper = f"{r.millions}M"
        elif r.over_bert_millions is not None:
            paper = f"BERT base + about {r.over_bert_millions}M"
        else:
            paper = "not printed"
        cells = [r.model, f"{c.E:,}", c.sharing, r.sentence_task, r.masking, f"{r.data}, {r.data_gb} GB",
                 f"{r.batch:,}", f"{r.steps:,}", paper, f"{count_parameters(c, pooler=True).total:,}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
