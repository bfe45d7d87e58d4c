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
from ..pretraining.train import TrainingConfig, TrainingHistory, train_mlm
from ..validate import (
    check_bool,
    check_choice,
    check_float_dtype,
    check_heads,
    check_int,
    check_memory,
    check_open_unit,
    check_positive_number,
    check_type,
)
from . import intervals, stored

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
    at_least_one: bool = False  # the control: every masking gives every sentence one target at least

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
        store("at_least_one", check_bool("at_least_one", self.at_least_one))
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
    """Train one model per (schedule, seed) with :func:`train_one`; returns the setup and, per schedule,
    one list per seed: ``result["train"][schedule]`` and ``result["held_out"][schedule]``, the losses by
    epoch, and ``result["held_out_tokens"][schedule]``, the final model's loss at each held-out target.

    ``progress(total_steps)``, when given, makes the callback that every training step calls (pass
    :class:`geron_lib.notebook.progress.ProgressBar` in a notebook).
    """
    check_type("setup", setup, Setup)
    bar = progress(len(SCHEDULES) * len(setup.seeds) * setup.steps_per_run) if progress else None
    result = {"setup": dataclasses.asdict(setup)} | {part: {} for part in PARTS}
    for name in SCHEDULES:
        runs = [train_one(setup, name, seed, progress=bar) for seed in setup.seeds]
        for part in PARTS:
            result[part][name] = [r[part] for r in runs]
    return result


#: What :func:`train_one` returns of a run, and :func:`run` per schedule and seed.
PARTS = ("train", "held_out", "held_out_tokens")


def train_one(setup: Setup, schedule: str, seed: int, *,
              progress: Callable[[str], None] | None = None) -> dict[str, list[float]]:
    """One run: ``setup``'s model trained under ``schedule`` with ``seed`` (its initial weights, batch order
    and masks). Returns the training and held-out losses by epoch (``"train"``, ``"held_out"``) and the
    trained model's loss at every held-out target (``"held_out_tokens"``, in row-major order: their mean
    is the last held-out loss)."""
    check_type("setup", setup, Setup)
    check_choice("schedule", schedule, SCHEDULES)
    seed = check_int("seed", seed, minimum=0)
    model, held_out, history = _trained(setup, schedule, seed, setup.training(seed), progress)
    return {"train": history.train_loss, "held_out": history.held_out_loss,
            "held_out_tokens": model.token_losses(held_out).tolist()}


def _trained(setup: Setup, schedule: str, seed: int, training: TrainingConfig,
             progress: Callable[[str], None] | None = None) -> tuple[MaskedLM, MaskedBatch, TrainingHistory]:
    """The model trained, the held-out batch it was measured on, and the run's history."""
    tokenizer, train_ids, held_ids = data(setup)
    held_out = bert_mask(held_ids, tokenizer, mask_prob=setup.mask_prob, rng=HELD_OUT_MASK_SEED)
    model = MaskedLM(model_config(setup, tokenizer.vocab_size), seed=seed, dtype=np.dtype(setup.dtype))
    masks = MaskingSchedule(train_ids, tokenizer, schedule, mask_prob=setup.mask_prob, copies=setup.copies,
                            at_least_one=setup.at_least_one, rng=seed)
    history = train_mlm(model, masks, training, held_out=held_out, progress=progress)
    return model, held_out, history


#: A clipping threshold far above every gradient norm of the chapter's runs (their largest is a few
#: units): clipped there, a run is the run without clipping.
NO_CLIP = 1e6


def clipping_effect(setup: Setup = Setup(seeds=(0, 1, 2, 3, 4))) -> dict:
    """L_clip - L_no clip, per held-out target: dynamic masking trained twice per seed of ``setup``, the
    gradient's global norm clipped at the setup's threshold (``TrainingConfig.max_grad_norm``) and at
    :data:`NO_CLIP`, above every step's norm.

    Returns ``"clipped"`` and ``"unclipped"``, the (seeds, targets) held-out token losses of the two, and
    ``"largest_norm"``, the largest norm any step of the unclipped runs saw (below :data:`NO_CLIP`, so
    that those runs were never clipped).
    """
    check_type("setup", setup, Setup)
    losses: dict[str, list] = {"clipped": [], "unclipped": []}
    largest = 0.0
    for seed in setup.seeds:
        clipped = setup.training(seed)
        for arm, training in (("clipped", clipped),
                              ("unclipped", dataclasses.replace(clipped, max_grad_norm=NO_CLIP))):
            model, held_out, history = _trained(setup, "dynamic", seed, training)
            losses[arm].append(model.token_losses(held_out))
            if arm == "unclipped":
                largest = max(largest, max(history.grad_norm))
    return {arm: np.asarray(runs) for arm, runs in losses.items()} | {"largest_norm": largest}


def _check_result(result, parts=("train", "held_out")) -> None:
    if not isinstance(result, dict) or not set(parts) <= result.keys():
        raise TypeError(f"result must be a dict with {' and '.join(map(repr, parts))} losses, as run() and "
                        "load_stored() return")


def rounded(result: dict, digits: int = 5) -> dict:
    """The result with its losses rounded, for storing as JSON."""
    _check_result(result)
    digits = check_int("digits", digits, minimum=0)
    return {"setup": result["setup"]} | {
        part: {name: [[round(x, digits) for x in run] for run in runs] for name, runs in result[part].items()}
        for part in PARTS if part in result}


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


#: The stored runs, by name (``scripts/masking_experiment.py`` trains them): the chapter's setup with five
#: seeds, the headline; the same under the control that gives every sentence a target in every masking; and
#: RoBERTa's ratio of 40 epochs to 10 stored copies.
RUNS = {
    "chapter": Setup(seeds=(0, 1, 2, 3, 4)),
    "at_least_one": Setup(seeds=(0, 1, 2, 3, 4), at_least_one=True),
    "roberta_ratio": Setup(epochs=40, copies=10, seeds=(0, 1, 2, 3, 4)),
}

#: The primary comparisons, declared before the stored runs were trained: (name, arm, against), an arm a
#: (stored run, schedule). Each is the final held-out loss of arm minus against, over seeds and held-out
#: targets; Holm's correction runs over these four. Every other comparison the chapter draws is exploratory.
PRIMARY = (("static against dynamic", ("chapter", "static"), ("chapter", "dynamic")),
           ("static x k against dynamic", ("chapter", "duplicated"), ("chapter", "dynamic")),
           ("empty frozen masks", ("chapter", "static"), ("at_least_one", "static")),
           ("repeated masks", ("at_least_one", "static"), ("at_least_one", "dynamic")))
#: The exploratory comparisons, the same way: the rest of the decomposition and the longer runs.
EXPLORATORY = (("static x k against dynamic, every sentence trained", ("at_least_one", "duplicated"),
                ("at_least_one", "dynamic")),
               ("empty frozen masks of static x k", ("chapter", "duplicated"),
                ("at_least_one", "duplicated")),
               ("the control under dynamic masking", ("at_least_one", "dynamic"), ("chapter", "dynamic")),
               ("RoBERTa's ratio: static against dynamic", ("roberta_ratio", "static"),
                ("roberta_ratio", "dynamic")),
               ("RoBERTa's ratio: static x k against dynamic", ("roberta_ratio", "duplicated"),
                ("roberta_ratio", "dynamic")))


def token_losses(stored: dict, arm: tuple[str, str]) -> np.ndarray:
    """(seeds, targets): the final held-out loss at every held-out target of each seed's run of ``arm``, a
    (stored run, schedule)."""
    if not isinstance(arm, tuple) or len(arm) != 2:
        raise TypeError(f"arm must be a pair (stored run, schedule), got {arm!r}")
    key, schedule = arm
    if key not in stored:
        raise ValueError(f"arm's run must be one of the stored runs {sorted(stored)}, got {key!r}")
    _check_result(stored[key], PARTS)
    check_choice("arm's schedule", schedule, tuple(stored[key]["held_out_tokens"]))
    return np.array(stored[key]["held_out_tokens"][schedule], dtype=np.float64)


def comparisons(stored: dict, family=EXPLORATORY, *, confidence: float = 0.95, draws: int = intervals.DRAWS,
                seed: int = 0) -> dict[str, intervals.Difference]:
    """Per comparison (name, arm, against) of ``family``: the final held-out loss of arm minus against, with
    its interval over seeds and held-out targets (:func:`~geron_lib.studies.intervals.difference`)."""
    return {name: intervals.difference(token_losses(stored, arm), token_losses(stored, against),
                                       confidence=confidence, draws=draws, seed=seed)
            for name, arm, against in family}


def primary(stored: dict, *, draws: int = intervals.DRAWS, seed: int = 0) -> dict:
    """Per comparison of :data:`PRIMARY`: a :class:`~geron_lib.studies.context_grid.Primary`, its difference
    at 95 %, at its Holm step's level (:func:`~geron_lib.studies.intervals.holm_levels`) and its
    Holm-adjusted p, as chapter 6's grid reports its own."""
    from .context_grid import Primary  # here: context_grid imports this module (through tradeoffs)

    found = comparisons(stored, PRIMARY, draws=draws, seed=seed)
    p_values = {name: d.p for name, d in found.items()}
    adjusted, levels = intervals.holm(p_values), intervals.holm_levels(p_values)
    corrected = {name: intervals.difference(token_losses(stored, arm), token_losses(stored, against),
                                            confidence=levels[name], draws=draws, seed=seed)
                 for name, arm, against in PRIMARY}
    return {name: Primary(d, corrected[name], adjusted[name]) for name, d in found.items()}


#: How much of a gap the control closes (exploratory): static minus dynamic as they are, against the same
#: under the control; then static x k minus dynamic, the same way.
CLOSED_BY_CONTROL = {
    "static against dynamic": ((("chapter", "static"), ("chapter", "dynamic")),
                               (("at_least_one", "static"), ("at_least_one", "dynamic"))),
    "static x k against dynamic": ((("chapter", "duplicated"), ("chapter", "dynamic")),
                                   (("at_least_one", "duplicated"), ("at_least_one", "dynamic"))),
}


def gap_change(stored: dict, gap, other, *, confidence: float = 0.95, draws: int = intervals.DRAWS,
               seed: int = 0) -> intervals.Difference:
    """(a - b) - (c - d): how much the gap between arms a and b (``gap``, a pair of arms) exceeds the gap
    between c and d (``other``), with its interval over seeds and held-out targets: the per-seed,
    per-target differences a - b and c - d compared as two cells by
    :func:`~geron_lib.studies.intervals.difference`."""
    first, second = ((token_losses(stored, x) - token_losses(stored, y)) for x, y in (gap, other))
    return intervals.difference(first, second, confidence=confidence, draws=draws, seed=seed)
