"""What one training step of a cell's model costs: the steps of several cells timed side by side on one
batch that needs no corpus (chapter 5 times the grid's cells with it)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from threadpoolctl import threadpool_limits

from ...model.mlm import MASKED, NOT_SELECTED, MaskedBatch, MaskedLM
from ...pretraining.tokenizer import SPECIAL_TOKENS
from ...pretraining.train import AdamW, clip_grad_norm, learning_rate
from ...timing import sample_seconds
from ...validate import check_int, check_type
from .setup import Setup


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
