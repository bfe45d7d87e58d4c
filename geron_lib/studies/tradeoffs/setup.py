"""The trade-off grid's settings and data: :class:`Setup` (every setting; the context grid's base is its
defaults trained longer), and the corpus split into training and held-out paragraphs, packed into rows,
with the tokenizer learned from the training text (:func:`data`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...config import SHARING, EncoderConfig
from ...model.mlm import MaskedBatch
from ...pretraining import corpus
from ...pretraining.masking import bert_mask
from ...pretraining.subword import WordPieceTokenizer
from ...pretraining.train import TrainingConfig
from ...validate import check_choice, check_int, check_type
from ..dynamic_masking import HELD_OUT_MASK_SEED


@dataclass(frozen=True)
class Setup:
    """Every setting of the experiment (:class:`~geron_lib.studies.context_grid.Grid`'s base: these
    defaults, with more epochs and evaluations)."""

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
