"""Pretraining a :class:`~geron_lib.model.mlm.MaskedLM` by gradient descent: BERT's learning-rate schedule,
gradient clipping, AdamW, and the loop over epochs of a masking schedule."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from ..model.mlm import MaskedBatch, MaskedLM
from ..validate import (
    check_int,
    check_number,
    check_positive_number,
    check_type,
    check_unit_interval,
    check_unmasked,
)
from .masking import MaskingSchedule


def learning_rate(step: int, total: int, peak: float, warmup: int) -> float:
    """lr(tau) = peak tau / warmup for 1 <= tau <= warmup, then
    lr(tau) = peak (total + 1 - tau) / (total + 1 - warmup),  tau = step.

    BERT's schedule: a linear warm-up to ``peak`` at step ``warmup``, then a
    linear decay that would reach zero one step after the last (step total + 1,
    which torch's LambdaLR asks for).
    """
    step, total, peak, warmup = _check_schedule(step, total, peak, warmup)
    if step <= warmup:
        return peak * step / warmup
    return peak * max(0, total + 1 - step) / (total + 1 - warmup)


def _check_schedule(step, total, peak, warmup) -> tuple[int, int, float, int]:
    """:func:`learning_rate`'s arguments, checked: 1 <= step <= total + 1, 0 <= warmup <= total, peak > 0."""
    total = check_int("total", total, minimum=1)
    return (check_int("step", step, minimum=1, maximum=total + 1), total, check_positive_number("peak", peak),
            check_int("warmup", warmup, minimum=0, maximum=total))


def clip_grad_norm(grads: dict[str, np.ndarray], max_norm: float) -> float:
    """g <- g min(1, max_norm / ||g||),  ||g|| over every parameter at once.

    Replaces each gradient in ``grads`` by its clipped copy; returns the norm
    before clipping.
    """
    max_norm = check_positive_number("max_norm", max_norm)
    norm = global_norm(grads)
    if norm > max_norm:
        for k, g in grads.items():
            grads[k] = g * (max_norm / norm)
    return norm


def global_norm(grads: dict[str, np.ndarray]) -> float:
    """||g|| = sqrt(sum over every parameter's gradient of sum g^2).

    Refuses a norm that is not finite: the loss diverged.
    """
    check_grads("grads", grads)
    norm = math.sqrt(sum(float((g * g).sum()) for g in grads.values()))
    if not math.isfinite(norm):
        raise ValueError("grads must be finite: they hold NaN or infinity (the loss diverged)")
    return norm


def check_grads(name: str, grads, like: dict | None = None) -> dict:
    """``grads`` itself: a non-empty dict of float arrays, named and shaped as ``like`` when given."""
    if not isinstance(grads, dict) or not grads:
        raise TypeError(f"{name} must be a non-empty dict of float arrays, got {type(grads).__name__}")
    for k, g in grads.items():
        if not isinstance(check_unmasked(f"{name}[{k!r}]", g), np.ndarray) or g.dtype.kind != "f":
            raise TypeError(f"{name}[{k!r}] must be a float numpy array, got {type(g).__name__}")
    if like is not None:
        if grads.keys() != like.keys():
            missing, extra = sorted(like.keys() - grads.keys()), sorted(grads.keys() - like.keys())
            raise ValueError(f"{name} must hold one gradient per parameter: missing {missing[:3]}, "
                             f"unknown {extra[:3]}")
        for k, g in grads.items():
            if g.shape != like[k].shape:
                raise ValueError(f"{name}[{k!r}] has shape {g.shape}, its parameter {like[k].shape}")
    return grads


class AdamW:
    """Adam with decoupled weight decay (Loshchilov and Hutter), updating the parameters in place.

    Weight decay applies to matrices and embedding tables only, not to biases and layer-norm parameters.
    """

    def __init__(self, params: dict[str, np.ndarray], *, betas=(0.9, 0.999), eps: float = 1e-6,
                 weight_decay: float = 0.01):
        self.params = check_grads("params", params)
        if not isinstance(betas, tuple | list) or len(betas) != 2:
            raise TypeError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        # beta = 1 would divide by 1 - beta^tau = 0
        self.beta1, self.beta2 = (check_unit_interval(f"betas[{i}]", b) for i, b in enumerate(betas))
        self.eps = check_positive_number("eps", eps)
        self.weight_decay = check_unit_interval("weight_decay", weight_decay)
        self.m = {k: np.zeros_like(p) for k, p in params.items()}
        self.v = {k: np.zeros_like(p) for k, p in params.items()}
        self.t = 0

    def _check_step(self, grads, lr) -> float:
        """``lr`` as a float, after checking it and ``grads`` (a NaN or inf would poison the weights)."""
        lr = check_number("lr", lr)
        if lr < 0:
            raise ValueError(f"lr must be at least 0, got {lr}")
        check_grads("grads", grads, like=self.params)
        for k, g in grads.items():  # a dot product: no temporary array
            if not math.isfinite(float(np.vdot(g, g))):
                raise ValueError(f"grads[{k!r}] must be finite: it holds NaN or infinity")
        return lr

    def step(self, grads: dict[str, np.ndarray], lr: float) -> None:
        """m <- b1 m + (1 - b1) g,  v <- b2 v + (1 - b2) g^2,
        theta <- theta - lr (m^ / (sqrt(v^) + eps) + wd theta),
        m^ = m / (1 - b1^tau),  v^ = v / (1 - b2^tau) at step tau.

        The hatted moments undo their start at zero; the decay wd applies to
        matrices only. Updates the parameters in place.
        """
        lr = self._check_step(grads, lr)
        self.t += 1
        b1, b2, tau = self.beta1, self.beta2, self.t
        for k, p in self.params.items():
            g = grads[k]
            self.m[k] = b1 * self.m[k] + (1 - b1) * g
            self.v[k] = b2 * self.v[k] + (1 - b2) * g**2
            m_hat = self.m[k] / (1 - b1**tau)
            v_hat = self.v[k] / (1 - b2**tau)
            decay = self.weight_decay * p if p.ndim >= 2 else 0
            p -= lr * (m_hat / (np.sqrt(v_hat) + self.eps) + decay)


#: The most epochs (and held-out evaluations) one training run may plan: the book's runs take at most
#: 40; each epoch stores its evaluation step, and a run of more would take days on a laptop.
MAX_EPOCHS = 10_000


@dataclass(frozen=True)
class TrainingConfig:
    """How to train: every setting of :func:`train_mlm`, checked once, here.

    ``warmup`` is the fraction of the steps spent warming up. ``evaluations``: how many held-out
    evaluations, spread evenly over the steps (None: one after each epoch). ``blas_threads`` caps the BLAS
    threads while training (None: no cap); one thread suits the book's tiny matrices: on a busy 2-core
    machine, handing such small products between threads costs more than it saves.
    """

    epochs: int = 1
    batch_size: int = 32
    lr: float = 1e-3
    warmup: float = 0.1
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    seed: int = 0
    evaluations: int | None = None
    blas_threads: int | None = 1

    def __post_init__(self):
        checked = {"epochs": check_int("epochs", self.epochs, minimum=1, maximum=MAX_EPOCHS),
                   "batch_size": check_int("batch_size", self.batch_size, minimum=1)}
        checked["lr"] = check_positive_number("lr", self.lr)
        # the fraction of the steps spent warming up; AdamW's decay, a fraction of the weights per unit lr
        for name in ("warmup", "weight_decay"):
            checked[name] = check_unit_interval(name, getattr(self, name))
        checked["max_grad_norm"] = check_positive_number("max_grad_norm", self.max_grad_norm)
        checked["seed"] = check_int("seed", self.seed, minimum=0)
        if self.blas_threads is not None:
            checked["blas_threads"] = check_int("blas_threads", self.blas_threads, minimum=1)
        if self.evaluations is not None:
            checked["evaluations"] = check_int("evaluations", self.evaluations, minimum=1, maximum=MAX_EPOCHS)
        for name, value in checked.items():  # numpy numbers stored as Python ones
            object.__setattr__(self, name, value)

    def total_steps(self, n_sequences: int) -> int:
        """Steps planned for ``n_sequences`` (a batch with nothing masked is skipped)."""
        n_sequences = check_int("n_sequences", n_sequences, minimum=1)
        return self.epochs * math.ceil(n_sequences / self.batch_size)

    def evaluation_steps(self, n_sequences: int) -> list[int]:
        """After which steps (1-based, of :meth:`total_steps`) the held-out loss is measured: the nearest to
        k / evaluations of the steps, k = 1 ... evaluations (at most one per step)."""
        total, per_epoch = self.total_steps(n_sequences), math.ceil(n_sequences / self.batch_size)
        if self.evaluations is None:
            return [per_epoch * (e + 1) for e in range(self.epochs)]
        if self.evaluations > total:
            raise ValueError(f"evaluations ({self.evaluations}) must be at most the {total} training steps "
                             f"({self.epochs} epochs of {per_epoch} batches): one per step at most")
        return [round(total * (k + 1) / self.evaluations) for k in range(self.evaluations)]


@dataclass
class TrainingHistory:
    """Per epoch: the mean training loss over its batches (under that epoch's masks); at every evaluation
    step (by default the end of each epoch): the loss on the fixed held-out masks; per step: the gradient
    norm before clipping and the learning rate."""

    train_loss: list[float] = field(default_factory=list)
    held_out_loss: list[float] = field(default_factory=list)
    held_out_step: list[int] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)


def evaluate(model: MaskedLM, batch: MaskedBatch, batch_size: int = 256) -> float:
    """loss = sum over chunks of n_chunk loss_chunk / sum n_chunk: the MLM loss over every selected position.

    ``batch`` is read in chunks of ``batch_size`` rows; a batch with no selected position is refused.
    """
    check_type("model", model, MaskedLM)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    model.check_batch(batch, training=False, rows=batch_size)
    total, count = 0.0, 0
    for start in range(0, len(batch), batch_size):
        chunk = batch[start:start + batch_size]
        n = int(chunk.selected.sum())
        if n:
            total, count = total + n * model.loss(chunk), count + n
    return total / count


def _check_training(model, schedule, config, held_out, progress) -> None:
    check_type("model", model, MaskedLM)
    check_type("schedule", schedule, MaskingSchedule)
    check_type("config", config, TrainingConfig)
    V = model.config.vocab_size
    if schedule.ids.max() >= V:
        raise ValueError(f"schedule's ids hold {schedule.ids.max()}, but the model's vocab_size is {V}: "
                         "every id must be below vocab_size")
    model.check_size(min(config.batch_size, len(schedule.ids)), schedule.ids.shape[1], training=True)
    if held_out is not None:
        model.check_batch(held_out, training=False, name="held_out", rows=256)  # as evaluate reads it
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a function of one string, or None, got {type(progress).__name__}")


def train_mlm(model: MaskedLM, schedule: MaskingSchedule,
              config: TrainingConfig = TrainingConfig(), *,
              held_out: MaskedBatch | None = None,
              progress: Callable[[str], None] | None = None,
              ) -> TrainingHistory:
    """theta <- AdamW(theta, clip(grad L(theta; batch)), lr(tau)) at step tau.

    One step per batch of every epoch's masking. Trains ``model`` in place;
    batches are drawn in an order shuffled by ``config.seed`` (the same
    order whatever the schedule). ``progress(text)`` is called after every step.
    Returns the history: the mean training loss of each epoch, the held-out
    loss at each evaluation, and each step's gradient norm and rate.
    """
    _check_training(model, schedule, config, held_out, progress)
    c, n = config, len(schedule.ids)
    rng = np.random.default_rng(c.seed)
    total = c.total_steps(n)
    warmup = round(c.warmup * total)
    evaluations, step = set(c.evaluation_steps(n)), 0
    optimizer = AdamW(model.parameters(), weight_decay=c.weight_decay)
    history = TrainingHistory()
    with threadpool_limits(limits=c.blas_threads, user_api="blas"):
        for epoch in range(c.epochs):
            masks, order = schedule.masks(epoch), rng.permutation(n)
            losses = []
            for start in range(0, n, c.batch_size):
                batch = masks[order[start:start + c.batch_size]]
                if batch.selected.any():
                    loss, grads = model.loss_and_grads(batch)
                    norm = clip_grad_norm(grads, c.max_grad_norm)
                    lr = learning_rate(optimizer.t + 1, total, c.lr, warmup)
                    optimizer.step(grads, lr)
                    history.grad_norm.append(norm)
                    history.lr.append(lr)
                    losses.append(loss)
                step += 1
                if held_out is not None and step in evaluations:
                    history.held_out_loss.append(evaluate(model, held_out))
                    history.held_out_step.append(step)
                if progress is not None:
                    loss_text = f", loss {losses[-1]:.3f}" if losses else ""
                    progress(f"epoch {epoch + 1}/{c.epochs}{loss_text}")
            mean = float(np.mean(losses)) if losses else math.nan
            history.train_loss.append(mean)
    return history
