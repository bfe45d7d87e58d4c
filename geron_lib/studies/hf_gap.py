"""Where the numpy and the PyTorch runs of the appendix "From numpy to PyTorch" part: the Trainer's own
batches replayed through chapter 4's numpy loop, with or without the collator's special replacements, and
geron_lib's masks in the Trainer's batch order. Each swaps one ingredient between the two runs, so the paired
differences split the gap into arithmetic and padding, special replacements, the draw of the masks and the
batch order. ``scripts/hf_gap_experiment.py`` runs it over many seeds and stores the losses (:data:`STORED`);
:func:`decomposition` reads them under the book's statistics policy. The batches ``train_mlm`` draws
(:func:`numpy_batches`) also feed the appendix's plain PyTorch loop, in one process and, through
``scripts/data_parallel.py`` (:data:`DATA_PARALLEL`), in two.

:func:`gap_runs`, :func:`as_masked_batch` and :func:`data_parallel_run` need torch, transformers and
accelerate (the ``hf`` extra) and import them when called; the rest works without them.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy import stats as scipy_stats

from ..config import EncoderConfig
from ..model.mlm import KEPT, MASKED, NOT_SELECTED, RANDOM, MaskedBatch, MaskedLM
from ..pretraining.masking import MaskingSchedule, as_generator
from ..pretraining.tokenizer import Tokenizer
from ..pretraining.train import TrainingConfig, learning_rate, train_mlm
from ..validate import check_int, check_type, plain_array
from . import stored
from .intervals import ALPHA, holm, holm_levels
from .paired import Interval, paired_interval

#: The per-seed held-out losses over many seeds, shipped with the library (the script writes them).
STORED = stored.DATA / "hf_gap.json"
#: The runs of one seed, each differing from the next by one ingredient, from the Trainer to train_mlm.
RUNS = ("PyTorch", "replayed", "words_only", "torch_order", "numpy")
#: The family of comparisons :func:`decomposition` makes, declared here: each ingredient as (the run with
#: it, the run without it), neighbours in :data:`RUNS`, and their sum, the whole gap.
FACTORS = {
    "arithmetic and padding": ("PyTorch", "replayed"),
    "special replacements": ("replayed", "words_only"),
    "the masks": ("words_only", "torch_order"),
    "the batch order": ("torch_order", "numpy"),
    "all: PyTorch - numpy": ("PyTorch", "numpy"),
}
#: The two-process run of the appendix's plain PyTorch loop, which ``scripts/data_parallel.py`` writes.
DATA_PARALLEL = stored.DATA / "data_parallel.json"


def as_masked_batch(batch: dict, tokenizer: Tokenizer, width: int) -> MaskedBatch:
    """x_t = labels_t where labels_t != -100, else input_ids_t: a collator batch as a MaskedBatch.

    ``batch`` holds the collator's (B, T') ``input_ids``, ``labels`` and ``attention_mask`` (numpy arrays
    or tensors); they are padded back to ``width`` >= T' positions, and each selected position's decision
    (MASKED, RANDOM or KEPT) is read from what it became.
    """
    from ..interop.torch_mlm import IGNORE_INDEX

    arrays = {k: plain_array(f"batch[{k!r}]", batch[k]).astype(np.int64)
              for k in ("input_ids", "labels", "attention_mask")}
    width = check_int("width", width, minimum=arrays["input_ids"].shape[1])
    pad = {"input_ids": tokenizer.pad_id, "labels": IGNORE_INDEX, "attention_mask": 0}
    padded = {}
    for k, a in arrays.items():
        padded[k] = np.full((len(a), width), pad[k], dtype=np.int64)
        padded[k][:, : a.shape[1]] = a
    inputs, labels = padded["input_ids"], padded["labels"]
    selected = labels != IGNORE_INDEX
    original = np.where(selected, labels, inputs)
    decision = np.where(inputs == tokenizer.mask_id, MASKED, np.where(inputs == original, KEPT, RANDOM))
    decision = np.where(selected, decision, NOT_SELECTED).astype(np.int8)
    return MaskedBatch(inputs, original, decision, padded["attention_mask"])


def words_only(batch: MaskedBatch, tokenizer: Tokenizer, rng=0) -> MaskedBatch:
    """x'_t ~ U(words) where x'_t is a special token other than [MASK]: special replacements redrawn.

    The collator's random replacements come from the whole vocabulary; this redraws every one that is
    [PAD], [CLS], [SEP] or [UNK] uniformly from the words, as ``bert_mask`` draws (``rng``: a seed or an
    np.random.Generator).
    """
    check_type("batch", batch, MaskedBatch)
    rng = as_generator(rng)
    n_special = len(tokenizer.special_ids)
    special = np.isin(batch.input_ids, [i for i in tokenizer.special_ids if i != tokenizer.mask_id])
    redraw = batch.selected & special
    words = rng.integers(n_special, tokenizer.vocab_size, batch.input_ids.shape)
    return MaskedBatch(
        np.where(redraw, words, batch.input_ids), batch.labels, batch.decision, batch.attention_mask
    )


def batch_rows(batches, ids) -> list[np.ndarray]:
    """For every batch, the rows of ``ids`` (n, T) it holds, found by their original ids."""
    ids = np.asarray(ids, dtype=np.int64)
    index = {row.tobytes(): i for i, row in enumerate(ids)}
    if len(index) < len(ids):
        raise ValueError("ids holds a row twice: a batch's rows cannot be told apart")
    return [np.array([index[row.tobytes()] for row in b.labels[:, : ids.shape[1]]]) for b in batches]


class Replayed(MaskingSchedule):
    """A schedule whose epoch e holds the given batches where ``train_mlm`` with ``config`` reads them.

    ``train_mlm`` shuffles the rows of every epoch with a generator seeded by ``config.seed``; this
    schedule draws the same permutations and puts batch k of epoch e at the rows that train_mlm takes for
    its k-th step, so that train_mlm trains on ``batches`` (steps_per_epoch x epochs of them, in order).
    """

    def __init__(self, ids, tokenizer: Tokenizer, batches, config: TrainingConfig):
        super().__init__(ids, tokenizer, "dynamic")
        check_type("config", config, TrainingConfig)
        n, size = len(self.ids), config.batch_size
        steps = -(-n // size)
        if len(batches) != steps * config.epochs:
            raise ValueError(
                f"batches must hold {steps} per epoch for {config.epochs} epochs, got {len(batches)}"
            )
        rng = np.random.default_rng(config.seed)  # as train_mlm draws its order
        self.epochs = []
        for epoch in range(config.epochs):
            order = rng.permutation(n)
            parts = batches[epoch * steps : (epoch + 1) * steps]
            rows = np.concatenate([order[k * size : (k + 1) * size] for k in range(steps)])
            stacked = [
                np.concatenate([getattr(b, f) for b in parts])
                for f in ("input_ids", "labels", "decision", "attention_mask")
            ]
            arranged = [np.empty_like(a) for a in stacked]
            for a, s in zip(arranged, stacked, strict=True):
                a[rows] = s
            self.epochs.append(MaskedBatch(*arranged))

    def masks(self, epoch: int) -> MaskedBatch:
        return self.epochs[epoch]


def numpy_batches(schedule: MaskingSchedule, training: TrainingConfig) -> list[MaskedBatch]:
    """batch_t = masks(e)[order_e[k B : (k + 1) B]]: the batches ``train_mlm`` draws, in its order.

    For every epoch e, ``train_mlm(model, schedule, training)`` permutes the rows with a generator seeded by
    ``training.seed`` and takes them ``training.batch_size`` at a time; a batch with nothing selected, which
    train_mlm skips, is left out.
    """
    check_type("schedule", schedule, MaskingSchedule)
    check_type("training", training, TrainingConfig)
    n, size = len(schedule.ids), training.batch_size
    rng, batches = np.random.default_rng(training.seed), []  # as train_mlm draws its order
    for epoch in range(training.epochs):
        masks, order = schedule.masks(epoch), rng.permutation(n)
        parts = (masks[order[start:start + size]] for start in range(0, n, size))
        batches += [b for b in parts if b.selected.any()]
    return batches


def lr_schedule(training: TrainingConfig, n_sequences: int) -> Callable[[int], float]:
    """lr(t) = ``learning_rate(t, total, peak, warmup)``: chapter 4's rate at step t = 1, 2, ... of a run of
    ``training`` over ``n_sequences`` sentences (a linear warm-up over the first tenth, then a linear
    decay), as ``train_mlm`` sets it."""
    check_type("training", training, TrainingConfig)
    total = training.total_steps(n_sequences)
    warmup = round(training.warmup * total)
    return functools.partial(learning_rate, total=total, peak=training.lr, warmup=warmup)


def gap_runs(tokenizer: Tokenizer, train_ids: np.ndarray, held_out: MaskedBatch, config: EncoderConfig,
             training: TrainingConfig, *, mask_prob: float, seed: int) -> dict[str, float]:
    """{run: held-out loss after the last epoch} for the runs of :data:`RUNS`, with ``seed``.

    As the appendix trains (``geron_lib.studies.dynamic_masking.torch_comparison_data`` gives its
    tokenizer, ids, held-out batch and config): the same initial weights ``MaskedLM(config, seed)`` in
    float32 for every run, ``training`` with its seed set to ``seed``. "numpy" is train_mlm on
    ``MaskingSchedule(..., "dynamic", rng=seed)``; "PyTorch" is hf_train_mlm seeded by seed + 1;
    "replayed" trains train_mlm on the batches the Trainer drew, "words_only" on the same with the special
    replacements redrawn from the words, "torch_order" on the numpy run's masks in the Trainer's batch
    order.
    """
    from ..interop.hf_training import hf_tokenizer, hf_train_mlm
    from ..interop.torch_mlm import hf_masked_lm

    check_type("tokenizer", tokenizer, Tokenizer)
    check_type("held_out", held_out, MaskedBatch)
    check_type("config", config, EncoderConfig)
    check_type("training", training, TrainingConfig)
    seed = check_int("seed", seed, minimum=0)
    training = dataclasses.replace(training, seed=seed)
    width = train_ids.shape[1]
    schedule = lr_schedule(training, len(train_ids))

    def model():
        return MaskedLM(config, seed=seed, dtype=np.float32)

    def trained(masking):
        return float(train_mlm(model(), masking, training, held_out=held_out).held_out_loss[-1])

    ours = MaskingSchedule(train_ids, tokenizer, "dynamic", mask_prob=mask_prob, rng=seed)
    recorded = []
    theirs = hf_train_mlm(
        hf_masked_lm(model()),
        hf_tokenizer(tokenizer),
        train_ids,
        epochs=training.epochs,
        batch_size=training.batch_size,
        lr=training.lr,
        schedule=schedule,
        held_out=held_out,
        weight_decay=training.weight_decay,
        max_grad_norm=training.max_grad_norm,
        mask_prob=mask_prob,
        seed=seed + 1,
        record=recorded,
    )
    batches = [as_masked_batch(b, tokenizer, width) for b in recorded]
    redraw = np.random.default_rng([seed, 1])
    steps = len(batches) // training.epochs
    in_their_order = [ours.masks(k // steps)[rows] for k, rows in enumerate(batch_rows(batches, train_ids))]
    return {
        "PyTorch": theirs["held_out_loss"][-1],
        "replayed": trained(Replayed(train_ids, tokenizer, batches, training)),
        "words_only": trained(
            Replayed(train_ids, tokenizer, [words_only(b, tokenizer, redraw) for b in batches], training)
        ),
        "torch_order": trained(Replayed(train_ids, tokenizer, in_their_order, training)),
        "numpy": trained(ours),
    }


def load_stored(path=STORED) -> dict:
    """The per-seed held-out losses that ``scripts/hf_gap_experiment.py`` wrote, one list per run of
    :data:`RUNS`, and the setup they ran at."""
    return stored.load(path, "scripts/hf_gap_experiment.py")


class Comparison(NamedTuple):
    """One comparison of :data:`FACTORS` over the stored seeds: the mean difference (the run with the
    ingredient minus the run without) with Student's t interval at 95 % and at its Holm step's level, the
    seeds' correlation r, whether the seeds were paired (r > 0), the t test's p and its Holm-adjusted p."""

    interval: Interval
    corrected: Interval
    r: float
    paired: bool
    p: float
    holm_p: float

    @property
    def resolved(self) -> bool:
        return self.holm_p <= ALPHA


def _seed_interval(a: np.ndarray, b: np.ndarray, paired: bool, confidence: float) -> tuple[Interval, float]:
    """mean(a - b) with Student's t interval and the t test's p: paired seed by seed, else Welch's. Equal
    differences (no spread to test against) give p = 1 for a mean of 0, else 0."""
    if paired:
        interval, p = paired_interval(a, b, confidence), float(scipy_stats.ttest_rel(a, b).pvalue)
    else:
        test = scipy_stats.ttest_ind(a, b, equal_var=False)
        low, high = test.confidence_interval(confidence)
        interval = Interval(float(a.mean() - b.mean()), float(low), float(high), len(a), confidence)
        p = float(test.pvalue)
    if np.isnan(p):
        p = 1.0 if interval.mean == 0 else 0.0
    return interval, p


def decomposition(held_out: dict, seeds: int | None = None) -> dict[str, Comparison]:
    """d_i = L_with,i - L_without,i over seeds i: each comparison of :data:`FACTORS`, judged as a family.

    ``held_out`` holds one held-out loss per seed for every run of :data:`RUNS` (as :func:`load_stored`
    gives them); ``seeds``: the first that many (default all). Every run is scored on the same held-out
    sentences with the same fixed masks, and only its final loss is stored, so the model is over seeds
    alone: Student's t interval of the mean difference, paired seed by seed when the two runs' losses are
    positively correlated over the seeds (r > 0), Welch's otherwise; Holm's correction over the five
    comparisons of :data:`FACTORS`, each corrected interval at the level of its Holm step
    (:func:`~geron_lib.studies.intervals.holm_levels`).
    """
    if not isinstance(held_out, dict) or set(RUNS) - set(held_out):
        raise TypeError(f"held_out must be a dict with a list of losses for each of {RUNS}")
    runs = {k: np.asarray(held_out[k], dtype=np.float64) for k in RUNS}
    n = len(runs["numpy"])
    seeds = n if seeds is None else check_int("seeds", seeds, minimum=2, maximum=n)
    runs = {k: v[:seeds] for k, v in runs.items()}
    found = {}
    for name, (with_it, without) in FACTORS.items():
        a, b = runs[with_it], runs[without]
        r = float(np.corrcoef(a, b)[0, 1]) if a.std() and b.std() else 0.0
        found[name] = (r, *_seed_interval(a, b, r > 0, 0.95))
    p_values = {k: p for k, (_, _, p) in found.items()}
    adjusted, levels = holm(p_values), holm_levels(p_values)
    result = {}
    for name, (r, interval, p) in found.items():
        a, b = (runs[run] for run in FACTORS[name])
        corrected = _seed_interval(a, b, r > 0, levels[name])[0]
        result[name] = Comparison(interval, corrected, r, r > 0, p, adjusted[name])
    return result


def data_parallel_run(setup, *, seed: int = 0, epochs: int | None = None) -> dict:
    """L_t on the global batch t of ``train_mlm``'s run with ``seed``, trained data-parallel by the
    processes a launcher started (torch.distributed set up, any number P of them).

    At the appendix's ``setup`` (``epochs`` of them; default the setup's): the batches :func:`numpy_batches`
    gives, process p taking rows p, p + P, p + 2P, ... of each (as a DistributedSampler deals them), from
    the initial weights ``MaskedLM(config, seed)`` in float32, through
    :func:`~geron_lib.interop.torch_mlm.data_parallel_train_mlm`. Returns the setup, the number of
    processes, each step's loss on the global batch and the held-out loss after the last step.
    """
    import torch

    from ..interop.torch_mlm import data_parallel_train_mlm, hf_loss, hf_masked_lm
    from .dynamic_masking import Setup, torch_comparison_data

    check_type("setup", setup, Setup)
    seed = check_int("seed", seed, minimum=0)
    if epochs is not None:
        setup = dataclasses.replace(setup, epochs=check_int("epochs", epochs, minimum=1))
    tokenizer, train_ids, held_out, config = torch_comparison_data(setup)
    training = setup.training(seed)
    batches = numpy_batches(MaskingSchedule(train_ids, tokenizer, "dynamic", mask_prob=setup.mask_prob,
                                            rng=seed), training)
    rank, P = torch.distributed.get_rank(), torch.distributed.get_world_size()
    hf = hf_masked_lm(MaskedLM(config, seed=seed, dtype=np.float32))
    losses = data_parallel_train_mlm(hf, [b[rank::P] for b in batches], lr_schedule(training, len(train_ids)),
                                     weight_decay=training.weight_decay, max_grad_norm=training.max_grad_norm)
    return {"setup": dataclasses.asdict(setup), "seed": seed, "processes": P, "train_loss": losses,
            "held_out_loss": hf_loss(hf, held_out)}


def load_data_parallel(path=DATA_PARALLEL) -> dict:
    """The two-process run that ``scripts/data_parallel.py`` wrote: its setup, seed, number of processes,
    each step's loss on the global batch and the final held-out loss."""
    return stored.load(path, "scripts/data_parallel.py")
