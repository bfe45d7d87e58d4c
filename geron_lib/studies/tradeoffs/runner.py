"""Training a grid's runs: one run of a cell (E, sharing, seed), trained and measured (:func:`train_one`),
the data a grid trains on as its result records it (:func:`describe`), and a result rounded for storing as
JSON."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ...costs.params import count_parameters
from ...model.checkpoint import encoder_arrays
from ...model.mlm import MaskedLM
from ...pretraining.masking import MaskingSchedule
from ...pretraining.train import evaluate, train_mlm
from .metrics import (
    held_out_token_losses,
    hidden_rank,
    moved_rows,
    movement,
    shuffled_within_rows,
    token_table_rank,
    unigram_loss,
)
from .setup import Data, Setup


def train_one(setup: Setup, d: Data, E: int, sharing: str, seed: int,
              progress: Callable[[str], None] | None = None, *, save_to: Path | None = None,
              context_check: bool = False) -> dict:
    """Train one model, (E, sharing, seed), and measure it: held-out loss at every evaluation, perplexity,
    parameters, median seconds per step, layer movement, the rank of its token table before and after
    training (all rows, and the rows that training moved), and the rank of its last hidden states on the
    held-out text. ``save_to``: where to store the trained encoder's weights (``np.savez`` of
    :func:`~geron_lib.model.checkpoint.encoder_arrays`), for fine-tuning later. ``context_check``: also
    the final held-out loss with each row's tokens shuffled (:func:`shuffled_within_rows`), as
    ``held_out_loss_shuffled``, and the loss at each held-out prediction (``held_out_token_losses``),
    for intervals over the held-out tokens as well as the seeds."""
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
    context = ({"held_out_loss_shuffled": evaluate(model, shuffled_within_rows(d.held_out, seed=0)),
                "held_out_token_losses": held_out_token_losses(model, d.held_out).tolist()}
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
