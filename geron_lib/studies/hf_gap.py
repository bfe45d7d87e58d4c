"""Where the numpy and the PyTorch runs of the appendix "From numpy to PyTorch" part: the Trainer's own
batches replayed through chapter 4's numpy loop, with or without the collator's special replacements, and
geron_lib's masks in the Trainer's batch order. Each swaps one ingredient between the two runs, so the paired
differences split the gap into arithmetic and padding, special replacements, the draw of the masks and the
batch order. ``scripts/hf_gap_experiment.py`` runs it over many seeds and stores the losses (:data:`STORED`).

:func:`gap_runs` and :func:`as_masked_batch` need torch, transformers and accelerate (the ``hf`` extra) and
import them when called; :func:`load_stored` works without them.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ..config import EncoderConfig
from ..model.mlm import KEPT, MASKED, NOT_SELECTED, RANDOM, MaskedBatch, MaskedLM
from ..pretraining.masking import MaskingSchedule, as_generator
from ..pretraining.tokenizer import Tokenizer
from ..pretraining.train import TrainingConfig, learning_rate, train_mlm
from ..validate import check_int, check_type, plain_array
from . import stored

#: The per-seed held-out losses over many seeds, shipped with the library (the script writes them).
STORED = stored.DATA / "hf_gap.json"
#: The runs of one seed, each differing from the next by one ingredient, from the Trainer to train_mlm.
RUNS = ("PyTorch", "replayed", "words_only", "torch_order", "numpy")


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
    total = training.total_steps(len(train_ids))
    schedule = functools.partial(
        learning_rate, total=total, peak=training.lr, warmup=round(training.warmup * total)
    )

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
