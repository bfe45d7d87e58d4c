"""What ALBERT's savings cost, in miniature: masked-language models trained on real English with a factorised
embedding (V -> E -> H) and with cross-layer sharing, as in the ALBERT paper's Table 3 (loss against E, not
shared and all shared) and Table 4 (the four sharing modes at two values of E); and, inside each trained
model, how far every layer moves its input (the paper's Figure 1) and the rank of its token table.

Every run trains on the same tokens for the same number of steps, with a fresh masking every epoch
(dynamic masking); only E, the sharing mode and the seed differ. The seed sets the initial weights, the
masks and the batch order. Beside the experiment: the stored grid, read back and summarised, and one
training step of a cell's model timed side by side with others'.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from ..config import SHARING, EncoderConfig
from ..costs.params import count_parameters
from ..model.checkpoint import encoder_arrays
from ..model.mlm import MASKED, NOT_SELECTED, MaskedBatch, MaskedLM
from ..pretraining import corpus
from ..pretraining.masking import MaskingSchedule, bert_mask
from ..pretraining.subword import WordPieceTokenizer
from ..pretraining.tokenizer import SPECIAL_TOKENS
from ..pretraining.train import AdamW, TrainingConfig, clip_grad_norm, evaluate, learning_rate, train_mlm
from ..timing import sample_seconds
from ..validate import check_choice, check_int, check_positive_number, check_type
from . import stored
from .depth import layer_movement
from .dynamic_masking import HELD_OUT_MASK_SEED
from .factorised import rank_errors

#: The energy share that :func:`token_table_rank`'s ``rank_90`` keeps.
ENERGY = 0.9
#: A token's row "moved" in training when it changed by at least this many times its initial length
#: (:func:`moved_rows`): training, not the random start, then sets where it points.
MOVED = 1.0
#: The stored grid, shipped with the library (``scripts/tradeoff_experiment.py`` writes it).
STORED = stored.DATA / "tradeoffs.json"
#: One longer run beside it: the unfactorised, not-shared cell, seed 0, 16 epochs
#: (``scripts/tradeoff_experiment.py --epochs 16 --seeds 0 --cells 64:none --workers 1 --output ...``).
LONG_RUN = stored.DATA / "tradeoff_long_run.json"


@dataclass(frozen=True)
class Setup:
    """Every setting of the experiment (the defaults are the stored run's)."""

    corpus: str = "docs"
    vocab_size: int = 4000                 # WordPiece vocabulary V, the special tokens included
    n_held_out: int = 3000                 # held-out paragraphs (unseen in training and by the tokenizer)
    n_mlm_held_out: int = 1000             # of them, the first ones: the held-out MLM text (the rest:
                                           # the fine-tuning tasks of geron_lib.studies.finetuning)
    held_out_maskings: int = 1             # fixed maskings of the held-out rows the loss is measured on
    n_train: int | None = None             # training paragraphs used (None: every one not held out)
    T: int = 64                            # positions per sequence (paragraphs packed into rows)
    hidden_size: int = 64
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    intermediate_size: int = 256
    embedding_sizes: tuple[int, ...] = (8, 16, 32, 64)         # the E sweep, not shared and all shared
    mode_embedding_sizes: tuple[int, ...] = (64, 16)           # E for the four sharing modes
    epochs: int = 6
    batch_size: int = 16
    lr: float = 2e-3
    warmup: float = 0.1                    # share of the steps spent warming up to lr
    evaluations: int = 10                  # held-out evaluations, evenly spaced over the steps
    mask_prob: float = 0.15
    seeds: tuple[int, ...] = (0, 1, 2)
    dtype: str = "float32"

    def __post_init__(self):
        check_choice("corpus", self.corpus, tuple(corpus.CORPORA))
        for name in ("vocab_size", "n_held_out", "n_mlm_held_out", "held_out_maskings", "hidden_size",
                     "num_hidden_layers", "num_attention_heads", "intermediate_size", "epochs", "batch_size",
                     "evaluations"):
            check_int(name, getattr(self, name), minimum=1)
        if self.n_mlm_held_out >= self.n_held_out:
            raise ValueError(f"n_mlm_held_out ({self.n_mlm_held_out}) must be below n_held_out "
                             f"({self.n_held_out}): the rest are the fine-tuning tasks' paragraphs")
        check_int("T", self.T, minimum=3)
        if self.n_train is not None:
            check_int("n_train", self.n_train, minimum=1)
        for name in ("embedding_sizes", "mode_embedding_sizes", "seeds"):
            values = getattr(self, name)
            if not isinstance(values, tuple) or not values:
                raise ValueError(f"{name} must be a non-empty tuple, got {values!r}")
            if len(set(values)) != len(values):
                raise ValueError(f"{name} must not repeat a value, got {values!r}")
            for v in values:
                check_int(f"{name}[i]", v, minimum=0 if name == "seeds" else 1)
                if name != "seeds" and v > self.hidden_size:
                    raise ValueError(f"{name} must be at most hidden_size ({self.hidden_size}), got {v}")
        check_choice("dtype", self.dtype, ("float32", "float64"))
        self.model_config(self.embedding_sizes[0], "none")   # the model sizes agree (H divisible by h, ...)
        self.training(0)                                     # lr, batch size, ...

    def training(self, seed: int) -> TrainingConfig:
        """How each run trains: these epochs, batch size, peak learning rate, warm-up and evaluations;
        batches shuffled by ``seed``."""
        return TrainingConfig(epochs=self.epochs, batch_size=self.batch_size, lr=self.lr, warmup=self.warmup,
                              seed=seed, evaluations=self.evaluations)

    def model_config(self, E: int, sharing: str) -> EncoderConfig:
        """The model of one run: ALBERT's layout at these sizes, E = H meaning a plain V x H table."""
        return EncoderConfig(vocab_size=self.vocab_size, embedding_size=E, hidden_size=self.hidden_size,
                             num_hidden_layers=self.num_hidden_layers,
                             num_attention_heads=self.num_attention_heads,
                             intermediate_size=self.intermediate_size, hidden_act="gelu_new",
                             max_position_embeddings=self.T, type_vocab_size=2, model_type="albert",
                             sharing=sharing)

    def grid(self) -> list[tuple[int, str]]:
        """Every (E, sharing) trained, once each: the E sweep not shared and all shared (Table 3), then the
        four sharing modes at each of ``mode_embedding_sizes`` (Table 4)."""
        cells = [(E, s) for s in ("none", "all") for E in self.embedding_sizes]
        cells += [(E, s) for E in self.mode_embedding_sizes for s in SHARING]
        return list(dict.fromkeys(cells))


@dataclass(frozen=True)
class Data:
    """The tokenizer (learned from the training paragraphs only), the packed (n, T) training and held-out
    MLM ids, the held-out batch (the held-out rows repeated ``held_out_maskings`` times, each copy with its
    own fixed masking), and the held-out paragraphs left for fine-tuning, as the corpus's indices."""

    tokenizer: WordPieceTokenizer
    train_ids: np.ndarray
    held_ids: np.ndarray
    held_out: MaskedBatch
    task_paragraphs: tuple[int, ...]


def split(setup: Setup, n_paragraphs: int) -> tuple[list[int], list[int], list[int]]:
    """The corpus's paragraph indices, split at random (seeded): the training paragraphs (the first
    ``n_train`` of those left after the held-out draw), the held-out paragraphs of the MLM loss, and the
    held-out paragraphs left for fine-tuning. Neither held-out part is seen by training or the tokenizer."""
    train, held = corpus.split(list(range(n_paragraphs)), setup.n_held_out, seed=0)
    mlm, tasks = corpus.split(held, setup.n_held_out - setup.n_mlm_held_out, seed=1)  # both drawn at random
    return train[: setup.n_train], mlm, tasks


def data(setup: Setup) -> Data:
    """The corpus split into training and held-out paragraphs (seeded), each packed into rows of T; the
    tokenizer learns its vocabulary from the training paragraphs."""
    check_type("setup", setup, Setup)
    paragraphs = corpus.load(setup.corpus)
    train, mlm, tasks = split(setup, len(paragraphs))
    train_text = [paragraphs[i] for i in train]
    held_text = [paragraphs[i] for i in mlm]
    tokenizer = WordPieceTokenizer.from_texts(train_text, setup.vocab_size)
    if tokenizer.vocab_size < setup.vocab_size:
        raise ValueError(f"vocab_size is {setup.vocab_size}, but the {setup.corpus!r} corpus yields only "
                         f"{tokenizer.vocab_size} tokens: lower vocab_size")
    held_ids = tokenizer.pack_batch(held_text, setup.T)
    held_out = bert_mask(np.tile(held_ids, (setup.held_out_maskings, 1)), tokenizer,
                         mask_prob=setup.mask_prob, rng=HELD_OUT_MASK_SEED)
    return Data(tokenizer, tokenizer.pack_batch(train_text, setup.T), held_ids, held_out,
                tuple(tasks))


def unigram_loss(train_ids: np.ndarray, held_out: MaskedBatch, vocab_size: int, n_special: int) -> float:
    """loss = -mean over held-out selected positions of log p(y),  p(w) = (n_w + 1) / sum_w' (n_w' + 1).

    The loss of a model that ignores context and predicts every masked token from its frequency in the
    training ids (add-one smoothed over the non-special tokens): the baseline a trained model must beat.
    """
    counts = np.bincount(train_ids.ravel(), minlength=vocab_size)[n_special:] + 1.0
    log_p = np.log(counts / counts.sum())
    return float(-log_p[held_out.labels[held_out.selected] - n_special].mean())


def token_table_rank(table: np.ndarray, *, centred: bool = False) -> dict:
    """r_eff = exp(-sum_j p_j log p_j),  p_j = s_j / sum_k s_k

    The singular values s of a token table (V x E), its effective rank (Roy
    and Vetterli's: E for a flat spectrum, 1 for rank one) and rank_90, the
    number of directions holding 90 % of its energy
    (from :func:`~.factorised.rank_errors`).
    ``centred``: of the table less its mean row, so that a direction every token
    shares (trained tables have a large one) does not count as structure.
    """
    table = np.asarray(table, dtype=np.float64)
    if centred:
        table = table - table.mean(axis=0)
    s = np.linalg.svd(table, compute_uv=False)
    if not s.sum() > 0:
        where = " once its mean row is removed" if centred else ""
        raise ValueError(f"table is zero{where}: it has no spectrum to measure")
    p = s / s.sum()
    entropy = -(p[p > 0] * np.log(p[p > 0])).sum()
    rank_90 = int(np.argmax(rank_errors(table) ** 2 <= 1 - ENERGY + 1e-12))
    return {"singular_values": s, "effective_rank": float(np.exp(entropy)),
            "rank_90": rank_90}


def moved_rows(initial: np.ndarray, trained: np.ndarray) -> np.ndarray:
    """r_i = ||w_i - w_i^0|| / ||w_i^0||,  moved_i = r_i >= MOVED.

    Which rows of a token table training moved from their random start, by
    at least their initial length (:data:`MOVED` times it).
    """
    initial, trained = (np.asarray(t, dtype=np.float64)
                        for t in (initial, trained))
    change = (np.linalg.norm(trained - initial, axis=1)
              / np.linalg.norm(initial, axis=1))
    return change >= MOVED


def rank_in_text(table: np.ndarray, ids: np.ndarray, pad_id: int) -> dict:
    """r_eff(Z - mean row),  Z = [W[x_t]] for every real token t of ids.

    :func:`token_table_rank` (centred) of the token table's rows as a text
    uses them: one row per token of ``ids`` that is not ``pad_id``, each
    token's row as often as it occurs. The context-independent counterpart
    of :func:`hidden_rank` on the same positions: a row the text never uses
    weighs nothing.
    """
    ids = np.asarray(ids)
    return token_table_rank(np.asarray(table)[ids[ids != pad_id]],
                            centred=True)


def movement(model: MaskedLM, ids: np.ndarray, pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~.depth.layer_movement` of the trained model on ``ids``, over their real tokens (not
    ``pad_id``): per layer, the mean L2 distance and cosine similarity between its input and output."""
    keep = ids != pad_id
    states = model.encoder.hidden_states(ids, attention_mask=keep.astype(np.int64))
    return layer_movement([s[keep][None] for s in states])  # each (1, tokens, H)


def hidden_rank(model: MaskedLM, ids: np.ndarray, pad_id: int) -> dict:
    """:func:`token_table_rank` (centred) of the last layer's hidden states on ``ids``: one row per real
    token (not ``pad_id``), H wide. The context-dependent counterpart of the token table's spectrum."""
    keep = ids != pad_id
    hidden = model.encoder(ids, attention_mask=keep.astype(np.int64))  # (B, T, H)
    return token_table_rank(hidden[keep], centred=True)


def shuffled_within_rows(batch: MaskedBatch, seed: int = 0) -> MaskedBatch:
    """x'_{b,t} = x_{b, pi_b(t)} for every field, pi_b a random order of row b's real positions after [CLS].

    The same batch with each row's tokens in a random order: every input, target and masking decision
    kept, together, but no token beside its neighbours. A model's loss on it is what the tokens alone tell
    it; the loss it gains on the real rows is what it reads from context. Padding and [CLS] stay put.
    """
    check_type("batch", batch, MaskedBatch)
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    fields = [f.copy() for f in (batch.input_ids, batch.labels, batch.decision, batch.attention_mask)]
    for b in range(len(batch)):
        real = np.flatnonzero(batch.attention_mask[b])[1:]  # (n_b,) positions after [CLS]
        order = rng.permutation(real)
        for f in fields:
            f[b, real] = f[b, order]
    return MaskedBatch(*fields)


def train_one(setup: Setup, d: Data, E: int, sharing: str, seed: int,
              progress: Callable[[str], None] | None = None, *, save_to: Path | None = None,
              context_check: bool = False) -> dict:
    """Train one model, (E, sharing, seed), and measure it: held-out loss at every evaluation, perplexity,
    parameters, median seconds per step, layer movement, the rank of its token table before and after
    training (all rows, and the rows that training moved), and the rank of its last hidden states on the
    held-out text. ``save_to``: where to store the trained encoder's weights (``np.savez`` of
    :func:`~geron_lib.model.checkpoint.encoder_arrays`), for fine-tuning later. ``context_check``: also
    the final held-out loss with each row's tokens shuffled (:func:`shuffled_within_rows`), as
    ``held_out_loss_shuffled``."""
    config = setup.model_config(E, sharing)
    model = MaskedLM(config, seed=seed, dtype=np.dtype(setup.dtype))
    start_table = model.encoder.embeddings["word"].copy()
    initial = token_table_rank(start_table)
    schedule = MaskingSchedule(d.train_ids, d.tokenizer, "dynamic", mask_prob=setup.mask_prob, rng=seed)
    stamps = [time.perf_counter()]

    def step(text: str) -> None:
        stamps.append(time.perf_counter())
        if progress is not None:
            progress(text)

    history = train_mlm(model, schedule, setup.training(seed), held_out=d.held_out, progress=step)
    distance, cosine = movement(model, d.held_ids, d.tokenizer.pad_id)
    table = model.encoder.embeddings["word"]
    trained, centred = token_table_rank(table), token_table_rank(table, centred=True)
    moved = moved_rows(start_table, table)
    moved_rank = (token_table_rank(table[moved], centred=True) if moved.sum() >= 2
                  else {"effective_rank": None, "rank_90": None})  # no spectrum of fewer than two rows
    hidden = hidden_rank(model, d.held_ids, d.tokenizer.pad_id)
    if save_to is not None:
        np.savez(save_to, **encoder_arrays(model.encoder))
    context = ({"held_out_loss_shuffled": evaluate(model, shuffled_within_rows(d.held_out, seed=0))}
               if context_check else {})
    return {**context, "E": E, "sharing": sharing, "seed": seed,
            "parameters": count_parameters(config, mlm_head=True).total,
            "held_out_loss": history.held_out_loss, "held_out_step": history.held_out_step,
            "train_loss": history.train_loss,
            "perplexity": math.exp(history.held_out_loss[-1]),
            "seconds_per_step": float(np.median(np.diff(stamps))), "seconds": stamps[-1] - stamps[0],
            "movement_distance": distance.tolist(), "movement_cosine": cosine.tolist(),
            "singular_values": trained["singular_values"].tolist(),
            "singular_values_centred": centred["singular_values"].tolist(),
            "effective_rank": trained["effective_rank"], "rank_90": trained["rank_90"],
            "effective_rank_centred": centred["effective_rank"], "rank_90_centred": centred["rank_90"],
            "effective_rank_initial": initial["effective_rank"], "rank_90_initial": initial["rank_90"],
            "singular_values_initial": initial["singular_values"].tolist(),
            "rows_moved": int(moved.sum()), "effective_rank_moved_centred": moved_rank["effective_rank"],
            "rank_90_moved_centred": moved_rank["rank_90"],
            "hidden_singular_values_centred": hidden["singular_values"].tolist(),
            "effective_rank_hidden_centred": hidden["effective_rank"],
            "rank_90_hidden_centred": hidden["rank_90"]}


def describe(setup: Setup, d: Data) -> dict:
    """The data a grid trains on, as its result records it: corpus, tokenizer, sizes, steps per run, the
    vocabulary's tokens that the training text never uses, and the unigram baseline."""
    n_special = len(d.tokenizer.special_ids)
    counts = np.bincount(d.train_ids.ravel(), minlength=setup.vocab_size)[n_special:]
    return {"corpus": setup.corpus, "tokenizer": repr(d.tokenizer),
            "train_rows": len(d.train_ids), "held_out_rows": len(d.held_ids),
            "train_tokens": int((d.train_ids != 0).sum()),
            "held_out_predictions": int(d.held_out.selected.sum()),
            "task_paragraphs": len(d.task_paragraphs),
            "steps_per_run": setup.training(0).total_steps(len(d.train_ids)),
            "tokens_unseen_in_training": int((counts == 0).sum()),
            "unigram_loss": unigram_loss(d.train_ids, d.held_out, setup.vocab_size, n_special)}


def run(setup: Setup = Setup(), *, progress: Callable[[int], Callable[[str], None]] | None = None,
        done: Callable[[dict], None] | None = None) -> dict:
    """Train every cell of :meth:`Setup.grid` with every seed; returns the setup, the data's description
    (corpus, tokenizer, sizes, unigram baseline) and one record per run (see :func:`train_one`).

    ``progress(total_steps)``, when given, makes the callback that every training step calls (pass
    :class:`geron_lib.notebook.progress.ProgressBar` in a notebook); ``done(record)`` is called after each
    run.
    """
    check_type("setup", setup, Setup)
    d = data(setup)
    steps = setup.training(0).total_steps(len(d.train_ids))
    bar = progress(len(setup.grid()) * len(setup.seeds) * steps) if progress else None
    description = describe(setup, d)
    runs = []
    for seed in setup.seeds:              # seed by seed, so that a slow spell of the machine hits every cell
        for E, sharing in setup.grid():
            runs.append(train_one(setup, d, E, sharing, seed, bar))
            if done is not None:
                done(runs[-1])
    return {"setup": dataclasses.asdict(setup), "data": description, "runs": runs}


def rounded(value, digits: int = 4):
    """``value`` (a result, or any part of one) with every float rounded to ``digits`` significant digits,
    for storing as JSON."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}")
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v, digits) for v in value]
    return value


def by_cell(result: dict, key: str) -> dict[tuple[int, str], list[float]]:
    """Per (E, sharing): one per-run number, ``key``, of every seed's run (a list, such as the loss by
    epoch, gives its last item)."""
    values = {}
    for r in _check_result(result)["runs"]:
        v = r[key][-1] if isinstance(r[key], list) else r[key]
        values.setdefault((r["E"], r["sharing"]), []).append(v)
    return values


def summary(result: dict, key: str = "perplexity") -> dict[tuple[int, str], tuple[float, float]]:
    """Per (E, sharing): the (mean, standard deviation over seeds) of one per-run number, ``key``
    (e.g. "perplexity", "parameters", "seconds_per_step", "effective_rank"; see :func:`by_cell`)."""
    return {cell: (float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0)
            for cell, v in by_cell(result, key).items()}


def load_stored(path=STORED) -> dict:
    """The grid ``scripts/tradeoff_experiment.py`` stored: by default the one shipped with the library
    (:data:`STORED`, ``geron_lib/studies/data/tradeoffs.json``)."""
    return stored.load(path, "scripts/tradeoff_experiment.py")


def _check_result(result) -> dict:
    if not isinstance(result, dict) or not isinstance(result.get("runs"), list) or not result["runs"]:
        raise TypeError("result must be a grid as run() returns or load_stored() reads: a dict with runs")
    return result


def spread(result: dict, key: str = "held_out_loss") -> dict[tuple[int, str], tuple[float, float, float]]:
    """Per (E, sharing): the (mean, lowest, highest) over seeds of one per-run number, ``key`` (see
    :func:`by_cell`; by default the held-out loss after the last epoch)."""
    return {cell: (float(np.mean(v)), float(np.min(v)), float(np.max(v)))
            for cell, v in by_cell(result, key).items()}


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
    result = _check_result(result)
    ratio = check_positive_number("embedding_ratio", embedding_ratio)
    check_choice("sharing", sharing, SHARING)
    H = result["setup"]["hidden_size"]
    cells = sorted({(r["E"], r["sharing"]) for r in result["runs"] if r["sharing"] == sharing})
    if not cells:
        raise ValueError(f"the grid has no run with sharing={sharing!r}")
    return min(cells, key=lambda c: (abs(math.log(c[0] / H / ratio)), -c[0]))


def masked_batch(setup: Setup, seed: int = 0) -> MaskedBatch:
    """One training batch of the setup's shape with no corpus behind it: ``batch_size`` rows of T random
    non-special ids, 15 % of them (``mask_prob``) replaced by [MASK] and predicted. What a training step
    costs does not depend on which words are read."""
    check_type("setup", setup, Setup)
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    ids = rng.integers(len(SPECIAL_TOKENS), setup.vocab_size, (setup.batch_size, setup.T))
    decision = np.where(rng.random(ids.shape) < setup.mask_prob, MASKED, NOT_SELECTED).astype(np.int8)
    decision[:, 0] = MASKED  # every row predicts something
    mask_id = SPECIAL_TOKENS.index("[MASK]")
    return MaskedBatch(np.where(decision == MASKED, mask_id, ids), ids, decision, np.ones_like(ids))


def step_seconds(setup: Setup, cells, *, repeat: int = 7, min_seconds: float = 0.05,
                 seed: int = 0) -> dict[tuple[int, str], list[float]]:
    """Seconds of one training step (forward, backward, clipping, AdamW) for each (E, sharing) cell's model,
    one sample per round.

    Every model trains on the same :func:`masked_batch` at half the setup's peak learning rate (what the
    schedule gives the one step of a one-step run, ``learning_rate(1, 1, lr, 0)``; the rate does not change
    what a step costs); the steps are timed side by side (:func:`geron_lib.timing.sample_seconds`: within
    each round every cell in turn, odd rounds in reverse order, this process's CPU time) with BLAS on one
    thread, as the grid trained.
    """
    check_type("setup", setup, Setup)
    cells = [tuple(c) for c in cells] if isinstance(cells, list | tuple) else []
    if not cells:
        raise ValueError("cells must be a non-empty list of (E, sharing) pairs")
    for E, sharing in cells:
        setup.model_config(E, sharing)  # checks E and sharing
    batch = masked_batch(setup, seed)
    clip = setup.training(seed)

    def one_step(model: MaskedLM, optimizer: AdamW) -> Callable[[], None]:
        def step() -> None:
            _, grads = model.loss_and_grads(batch)
            clip_grad_norm(grads, clip.max_grad_norm)
            optimizer.step(grads, learning_rate(1, 1, setup.lr, 0))
        return step

    steps = {}
    for E, sharing in cells:
        model = MaskedLM(setup.model_config(E, sharing), seed=seed, dtype=np.dtype(setup.dtype))
        steps[(E, sharing)] = one_step(model, AdamW(model.parameters(), weight_decay=clip.weight_decay))
    with threadpool_limits(limits=1, user_api="blas"):
        return sample_seconds(steps, repeat=check_int("repeat", repeat, minimum=1),
                              min_seconds=min_seconds, alternate=True)
