"""Pretraining a :class:`~geron_lib.mlm.MaskedLM` by gradient descent: BERT's learning-rate schedule,
gradient clipping, AdamW, and the loop over epochs of a masking schedule."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from .masking import MaskedBatch, MaskingSchedule
from .mlm import MaskedLM
from .validate import check_int, check_number, check_positive_number


# lr(t) = peak t / warmup  for t <= warmup,  then  peak (total + 1 - t) / (total + 1 - warmup)   (t >= 1)
def learning_rate(step: int, total: int, peak: float, warmup: int) -> float:
    """BERT's schedule: a linear warm-up to ``peak`` at step ``warmup``, then a linear decay that would
    reach zero one step after the last."""
    if step <= warmup:
        return peak * step / warmup
    return peak * max(0, total + 1 - step) / (total + 1 - warmup)


# g <- g min(1, max_norm / ||g||),   ||g|| over every parameter at once
def clip_grad_norm(grads: dict[str, np.ndarray], max_norm: float) -> float:
    """Scale the gradients in place so that their global norm is at most ``max_norm``; returns the norm
    before clipping."""
    norm = math.sqrt(sum(float((g * g).sum()) for g in grads.values()))
    if norm > max_norm:
        for g in grads.values():
            g *= max_norm / norm
    return norm


class AdamW:
    """Adam with decoupled weight decay (Loshchilov and Hutter), updating the parameters in place.

    Weight decay applies to matrices and embedding tables only, not to biases and layer-norm parameters.
    """

    def __init__(self, params: dict[str, np.ndarray], *, betas=(0.9, 0.999), eps: float = 1e-6,
                 weight_decay: float = 0.01):
        self.params = params
        self.beta1, self.beta2 = (check_number(f"betas[{i}]", b) for i, b in enumerate(betas))
        self.eps = check_positive_number("eps", eps)
        self.weight_decay = check_number("weight_decay", weight_decay)
        self.m = {k: np.zeros_like(p) for k, p in params.items()}
        self.v = {k: np.zeros_like(p) for k, p in params.items()}
        self.t = 0

    # m <- b1 m + (1 - b1) g,   v <- b2 v + (1 - b2) g^2
    # theta <- theta - lr (m_hat / (sqrt(v_hat) + eps) + wd theta),
    #   m_hat = m / (1 - b1^t),   v_hat = v / (1 - b2^t)
    def step(self, grads: dict[str, np.ndarray], lr: float) -> None:
        self.t += 1
        for k, p in self.params.items():
            g, m, v = grads[k], self.m[k], self.v[k]
            m += (1 - self.beta1) * (g - m)
            v += (1 - self.beta2) * (g * g - v)
            m_hat, v_hat = m / (1 - self.beta1**self.t), v / (1 - self.beta2**self.t)
            update = m_hat / (np.sqrt(v_hat) + self.eps)
            if p.ndim >= 2:
                update += self.weight_decay * p
            p -= lr * update


class ProgressBar:
    """A notebook progress bar (ipywidgets), shown when made; ``advance(text)`` once per step."""

    def __init__(self, total: int, description: str = "training"):
        import ipywidgets as widgets
        from IPython.display import display

        self.bar = widgets.IntProgress(value=0, min=0, max=check_int("total", total, minimum=1),
                                       description=description)
        self.label = widgets.Label()
        display(widgets.HBox([self.bar, self.label]))

    def advance(self, text: str = "") -> None:
        self.bar.value += 1
        self.label.value = text


@dataclass
class TrainingHistory:
    """Per epoch: the mean training loss over its batches (under that epoch's masks) and the loss on the
    fixed held-out masks after it; per step: the gradient norm before clipping and the learning rate."""

    train_loss: list[float] = field(default_factory=list)
    held_out_loss: list[float] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)


def evaluate(model: MaskedLM, batch: MaskedBatch, batch_size: int = 256) -> float:
    """The MLM loss over every selected position of ``batch`` (in chunks of ``batch_size`` rows)."""
    total, count = 0.0, 0
    for start in range(0, len(batch), batch_size):
        chunk = batch[start:start + batch_size]
        n = int(chunk.selected.sum())
        if n:
            total, count = total + n * model.loss(chunk), count + n
    return total / count


def train_mlm(model: MaskedLM, schedule: MaskingSchedule, *, epochs: int, batch_size: int = 32,
              lr: float = 1e-3, warmup: float = 0.1, weight_decay: float = 0.01, max_grad_norm: float = 1.0,
              seed: int = 0, held_out: MaskedBatch | None = None, progress: ProgressBar | None = None,
              blas_threads: int | None = 1) -> TrainingHistory:
    """Train ``model`` in place for ``epochs`` epochs of ``schedule``'s maskings; batches are drawn in an
    order shuffled by ``seed`` (the same order whatever the schedule). Returns the losses by epoch.

    ``blas_threads`` caps the BLAS threads while training (None: no cap). One thread suits the book's tiny
    matrices: on a busy 2-core machine, handing such small products between threads costs more than it saves.
    """
    if not isinstance(model, MaskedLM):
        raise TypeError(f"model must be a MaskedLM, got {type(model).__name__}")
    if not isinstance(schedule, MaskingSchedule):
        raise TypeError(f"schedule must be a MaskingSchedule, got {type(schedule).__name__}")
    if held_out is not None and not isinstance(held_out, MaskedBatch):
        raise TypeError(f"held_out must be a MaskedBatch or None, got {type(held_out).__name__}")
    if held_out is not None and not held_out.selected.any():
        raise ValueError("held_out has no selected position: there is nothing to evaluate")
    epochs = check_int("epochs", epochs, minimum=1)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    lr = check_positive_number("lr", lr)
    warmup = check_number("warmup", warmup)
    if not 0 <= warmup < 1:
        raise ValueError(f"warmup (the fraction of steps spent warming up) must lie in [0, 1), got {warmup}")
    max_grad_norm = check_positive_number("max_grad_norm", max_grad_norm)
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    if blas_threads is not None:
        blas_threads = check_int("blas_threads", blas_threads, minimum=1)

    n = len(schedule.ids)
    total = epochs * math.ceil(n / batch_size)  # steps planned (a batch with nothing masked is skipped)
    optimizer = AdamW(model.parameters(), weight_decay=weight_decay)
    history = TrainingHistory()
    with threadpool_limits(limits=blas_threads, user_api="blas"):
        for epoch in range(epochs):
            masks, order = schedule.masks(epoch), rng.permutation(n)
            losses = []
            for start in range(0, n, batch_size):
                batch = masks[order[start:start + batch_size]]
                if batch.selected.any():
                    loss, grads = model.loss_and_grads(batch)
                    history.grad_norm.append(clip_grad_norm(grads, max_grad_norm))
                    history.lr.append(learning_rate(optimizer.t + 1, total, lr, round(warmup * total)))
                    optimizer.step(grads, history.lr[-1])
                    losses.append(loss)
                if progress is not None:
                    progress.advance(f"epoch {epoch + 1}/{epochs}, loss {losses[-1]:.3f}" if losses else "")
            history.train_loss.append(float(np.mean(losses)) if losses else math.nan)
            if held_out is not None:
                history.held_out_loss.append(evaluate(model, held_out))
    return history
