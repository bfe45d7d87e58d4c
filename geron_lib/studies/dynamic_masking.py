"""RoBERTa's static-against-dynamic masking comparison in miniature: the same model, data, batch order and
number of steps for every schedule; only which masks the sequences carry in each epoch differs."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..config import EncoderConfig
from ..model.mlm import MaskedBatch, MaskedLM
from ..pretraining import corpus
from ..pretraining.masking import SCHEDULES, MaskingSchedule, bert_mask
from ..pretraining.tokenizer import WordTokenizer
from ..pretraining.train import TrainingConfig, train_mlm
from ..validate import (
    check_float_dtype,
    check_heads,
    check_int,
    check_memory,
    check_open_unit,
    check_positive_number,
    check_type,
)
from . import stored

#: The held-out sentences carry one fixed masking, drawn with this seed, for every run.
HELD_OUT_MASK_SEED = 12345
#: The longer runs, shipped with the library (``scripts/masking_experiment.py`` writes them).
STORED = stored.DATA / "masking_experiment.json"


@dataclass(frozen=True)
class Setup:
    """Every setting of one experiment (the defaults are the chapter's in-notebook run)."""

    n_train: int = 256          # training sentences
    n_held_out: int = 256       # held-out sentences (never in the training set)
    T: int = 16                 # positions per sequence: [CLS] words [SEP] [PAD]...
    hidden_size: int = 32
    num_hidden_layers: int = 2
    num_attention_heads: int = 2
    intermediate_size: int = 64
    epochs: int = 20
    copies: int = 5             # maskings stored by the "duplicated" schedule
    mask_prob: float = 0.15
    batch_size: int = 32
    lr: float = 3e-3
    seeds: tuple[int, ...] = (0, 1, 2)
    dtype: str = "float32"

    def __post_init__(self):
        def store(name, value):  # numpy numbers as Python ones (the setup is stored as JSON)
            object.__setattr__(self, name, value)

        for name in ("n_train", "n_held_out", "epochs", "copies", "batch_size", "hidden_size",
                     "num_hidden_layers", "num_attention_heads", "intermediate_size"):
            store(name, check_int(name, getattr(self, name), minimum=1))
        store("T", check_int("T", self.T, minimum=3))
        check_heads(self.hidden_size, self.num_attention_heads)
        store("mask_prob", check_open_unit("mask_prob", self.mask_prob))
        store("lr", check_positive_number("lr", self.lr))
        if isinstance(self.seeds, str) or not isinstance(self.seeds, tuple | list):
            raise TypeError(f"seeds must be a tuple of seeds, got {type(self.seeds).__name__}")
        if not self.seeds:
            raise ValueError("seeds is empty: give at least one seed")
        store("seeds", tuple(check_int("seeds", s, minimum=0) for s in self.seeds))
        store("dtype", check_float_dtype("dtype", self.dtype).name)
        # the training and held-out ids, the position table and the layers' weights, before any is built
        H, F, L = self.hidden_size, self.intermediate_size, self.num_hidden_layers
        check_memory(8 * self.T * (self.n_train + self.n_held_out + H + 1) + 8 * L * (4 * H * H + 2 * H * F),
                     f"a Setup's ids and weights (T={self.T}, n_train={self.n_train}, n_held_out="
                     f"{self.n_held_out}, hidden_size={H}, intermediate_size={F}, num_hidden_layers={L})")

    def training(self, seed: int) -> TrainingConfig:
        """How each run trains: these epochs, batch size and peak learning rate; batches shuffled by
        ``seed``."""
        return TrainingConfig(epochs=self.epochs, batch_size=self.batch_size, lr=self.lr, seed=seed)

    @property
    def steps_per_run(self) -> int:
        return self.training(0).total_steps(self.n_train)


def data(setup: Setup) -> tuple[WordTokenizer, np.ndarray, np.ndarray]:
    """The tokenizer (built on every training-split sentence) and the (n, T) training and held-out ids."""
    check_type("setup", setup, Setup)
    train_text, held_text = corpus.split(corpus.load(), setup.n_held_out, seed=0)
    tokenizer = WordTokenizer.from_texts(train_text)
    return (tokenizer, tokenizer.encode_batch(train_text[: setup.n_train], setup.T),
            tokenizer.encode_batch(held_text, setup.T))


def model_config(setup: Setup, vocab_size: int) -> EncoderConfig:
    check_type("setup", setup, Setup)
    return EncoderConfig(vocab_size=vocab_size, hidden_size=setup.hidden_size,
                         num_hidden_layers=setup.num_hidden_layers,
                         num_attention_heads=setup.num_attention_heads,
                         intermediate_size=setup.intermediate_size, max_position_embeddings=setup.T,
                         type_vocab_size=1, layer_norm_eps=1e-5, model_type="roberta")


def torch_comparison_data(setup: Setup) -> tuple[WordTokenizer, np.ndarray, MaskedBatch, EncoderConfig]:
    """What appendix A2's numpy and PyTorch runs share: the tokenizer, the training ids, the held-out batch
    with its fixed masks, and the model's configuration (RoBERTa's padding id and one more position row,
    as transformers' RoBERTa numbers its positions)."""
    check_type("setup", setup, Setup)
    tokenizer, train_ids, held_ids = data(setup)
    config = model_config(setup, tokenizer.vocab_size).replace(pad_token_id=tokenizer.pad_id,
                                                                max_position_embeddings=setup.T + 1)
    held_out = bert_mask(held_ids, tokenizer, mask_prob=setup.mask_prob, rng=HELD_OUT_MASK_SEED)
    return tokenizer, train_ids, held_out, config


def run(setup: Setup = Setup(), *, progress: Callable[[int], Callable[[str], None]] | None = None) -> dict:
    """Train one model per (schedule, seed); returns the setup and the losses by epoch,
    ``result["train"][schedule]`` and ``result["held_out"][schedule]``, each (seeds, epochs).

    ``progress(total_steps)``, when given, makes the callback that every training step calls (pass
    :class:`geron_lib.notebook.progress.ProgressBar` in a notebook).
    """
    check_type("setup", setup, Setup)
    tokenizer, train_ids, held_ids = data(setup)
    config = model_config(setup, tokenizer.vocab_size)
    held_out = bert_mask(held_ids, tokenizer, mask_prob=setup.mask_prob, rng=HELD_OUT_MASK_SEED)
    bar = progress(len(SCHEDULES) * len(setup.seeds) * setup.steps_per_run) if progress else None
    result = {"setup": dataclasses.asdict(setup), "train": {}, "held_out": {}}
    for name in SCHEDULES:
        runs = []
        for seed in setup.seeds:
            model = MaskedLM(config, seed=seed, dtype=np.dtype(setup.dtype))
            schedule = MaskingSchedule(train_ids, tokenizer, name, mask_prob=setup.mask_prob,
                                       copies=setup.copies, rng=seed)
            runs.append(train_mlm(model, schedule, setup.training(seed), held_out=held_out, progress=bar))
        result["train"][name] = [h.train_loss for h in runs]
        result["held_out"][name] = [h.held_out_loss for h in runs]
    return result


def _check_result(result) -> None:
    if not isinstance(result, dict) or not {"train", "held_out"} <= result.keys():
        raise TypeError("result must be a dict with 'train' and 'held_out' losses, as run() and "
                        "load_stored() return")


def rounded(result: dict, digits: int = 5) -> dict:
    """The result with its losses rounded, for storing as JSON."""
    _check_result(result)
    digits = check_int("digits", digits, minimum=0)
    return {"setup": result["setup"]} | {
        part: {name: [[round(x, digits) for x in run] for run in runs] for name, runs in result[part].items()}
        for part in ("train", "held_out")}


def load_stored(path=STORED) -> dict:
    """The longer runs that ``scripts/masking_experiment.py`` wrote: by default the ones shipped with the
    library (:data:`STORED`, ``geron_lib/studies/data/masking_experiment.json``)."""
    return stored.load(path, "scripts/masking_experiment.py")


def summary(result: dict, epoch: int = -1) -> dict[str, dict[str, tuple[float, float]]]:
    """Per schedule, the (mean, standard deviation over seeds) of the training and held-out losses at
    ``epoch`` (default: the last)."""
    _check_result(result)
    epoch = check_int("epoch", epoch)
    n_epochs = min(len(run) for part in ("train", "held_out") for runs in result[part].values()
                   for run in runs)
    if not -n_epochs <= epoch < n_epochs:
        raise ValueError(f"epoch must lie in [-{n_epochs}, {n_epochs - 1}] (the runs hold {n_epochs} "
                         f"epochs), got {epoch}")
    out = {}
    for name in result["train"]:
        out[name] = {}
        for part in ("train", "held_out"):
            values = np.asarray(result[part][name])[:, epoch]
            out[name][part] = (float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else 0.0)
    return out
