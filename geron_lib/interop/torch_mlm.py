"""A geron_lib :class:`~geron_lib.model.mlm.MaskedLM` in PyTorch: exported into transformers'
``*ForMaskedLM`` with its MLM head, its loss and gradients by torch autograd, ``torch.optim.AdamW`` set up
as geron_lib's AdamW, and chapter 4's loop in plain PyTorch, in one process or data-parallel over several.
Needs torch and transformers (``pip install -e .[hf]``); nothing is downloaded.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ..config import EncoderConfig
from ..model.mlm import MaskedBatch, MaskedLM
from ..validate import check_number, check_positive_number, check_sequence, check_type
from .hf_weights import hf_mlm_names, hf_mlm_state_dict, is_transposed
from .torch_models import hf_model

#: transformers ignores a label of -100 in its cross-entropy: the positions that were not selected.
IGNORE_INDEX = -100


def hf_masked_lm(model: MaskedLM):
    """theta_transformers <- theta_geron_lib   (W^T for every weight matrix).

    The decoder is tied to Emb. transformers' ``BertForMaskedLM``,
    ``AlbertForMaskedLM`` or ``RobertaForMaskedLM`` (as
    ``model.config.model_type`` says) holding ``model``'s weights, encoder
    and MLM head, in ``model``'s dtype (float64 or float32), without dropout,
    in eval mode.
    """
    check_type("model", model, MaskedLM)
    # ValueError for what transformers cannot hold
    state = hf_mlm_state_dict(model)
    dtype = torch.float64 if model.dtype == np.float64 else torch.float32
    hf = hf_model(model.config, head="mlm").to(dtype)
    tensors = {k: torch.from_numpy(np.ascontiguousarray(v))
               for k, v in state.items()}
    hf.load_state_dict(tensors, strict=True)
    return hf


def hf_mlm_inputs(batch: MaskedBatch) -> dict[str, torch.Tensor]:
    """labels_t = x_t where t is selected, else -100.

    A :class:`MaskedBatch` as transformers' arguments: ``input_ids``,
    ``attention_mask`` and ``labels``, (B, T) int64 tensors each; no token
    types, so transformers adds the embedding of type 0 everywhere, as
    geron_lib does.
    """
    check_type("batch", batch, MaskedBatch)
    labels = np.where(batch.selected, batch.labels, IGNORE_INDEX)
    arrays = {"input_ids": batch.input_ids,
              "attention_mask": batch.attention_mask,
              "labels": labels}
    return {name: torch.from_numpy(np.asarray(a, dtype=np.int64))
            for name, a in arrays.items()}


def hf_loss_and_grads(
    hf, config: EncoderConfig, batch: MaskedBatch
) -> tuple[float, dict[str, np.ndarray]]:
    """L = mean over labels != -100 of -log softmax(logits)[label].

    dL/dtheta by torch autograd: the loss of transformers' model ``hf`` on
    ``batch`` and the gradient of every parameter, named and laid out as
    :meth:`MaskedLM.parameters` (so that they compare with
    :meth:`MaskedLM.loss_and_grads` array for array): the gradient of the
    tied decoder arrives in the token embedding's, as in geron_lib.
    """
    check_type("config", config, EncoderConfig)
    names = hf_mlm_names(config)
    hf.zero_grad(set_to_none=True)
    loss = hf(**hf_mlm_inputs(batch)).loss
    loss.backward()
    params = dict(hf.named_parameters())
    grads = {}
    for ours, theirs in names.items():
        g = params[theirs].grad.detach().numpy()
        grads[ours] = g.T if is_transposed(ours) else g
    return float(loss.detach()), grads


def compare_mlm(model: MaskedLM, batch: MaskedBatch) -> dict[str, float]:
    """diff = max |x_transformers - x_geron_lib|, for the loss and for every parameter's gradient.

    Exports ``model`` with :func:`hf_masked_lm`, runs both on ``batch`` and returns ``{"loss": ...,
    name: ...}``, a name per array of :meth:`MaskedLM.parameters`.
    """
    ours, our_grads = model.loss_and_grads(batch)
    theirs, their_grads = hf_loss_and_grads(hf_masked_lm(model), model.config, batch)
    return {"loss": abs(ours - theirs)} | {k: float(np.abs(our_grads[k] - their_grads[k]).max())
                                           for k in our_grads}


def _check_adamw(lr, eps, weight_decay) -> tuple[float, float, float]:
    """:func:`torch_adamw`'s numbers, checked: lr > 0, eps > 0, a number for the decay."""
    return (check_positive_number("lr", lr), check_positive_number("eps", eps),
            check_number("weight_decay", weight_decay))


def torch_adamw(hf, *, lr: float, betas=(0.9, 0.999), eps: float = 1e-6,
                weight_decay: float = 0.01):
    """theta <- theta - lr (m^ / (sqrt(v^) + eps) + wd theta).

    ``torch.optim.AdamW`` on the parameters of ``hf`` in geron_lib's two
    groups: weight decay ``wd`` on every parameter with two or more axes
    (weight matrices, embedding tables), none on biases and layer-norm
    vectors. Both put eps outside the square root of the bias-corrected
    second moment, and both decay the weights before the step, so one step
    of each gives the same parameters.
    """
    lr, eps, weight_decay = _check_adamw(lr, eps, weight_decay)
    params = [p for p in hf.parameters() if p.requires_grad]
    matrices = [p for p in params if p.ndim >= 2]  # weights, embeddings
    vectors = [p for p in params if p.ndim < 2]    # biases, layer norms
    groups = [{"params": matrices, "weight_decay": weight_decay},
              {"params": vectors, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=tuple(betas), eps=eps)


def _check_loop(batches, schedule, max_grad_norm, held_out=None) -> tuple[list, float]:
    """The loops' arguments, checked: (the batches as a list, max_grad_norm)."""
    batches = check_sequence("batches", batches, "MaskedBatches")
    if not batches:
        raise ValueError("batches is empty: give at least one MaskedBatch to train on")
    for k, b in enumerate(batches):
        check_type(f"batches[{k}]", b, MaskedBatch)
    if not callable(schedule):
        raise TypeError(f"schedule must be a function of the step (1, 2, ...), got {type(schedule).__name__}")
    if held_out is not None:
        check_type("held_out", held_out, MaskedBatch)
    return batches, check_positive_number("max_grad_norm", max_grad_norm)


def hf_loss(hf, batch: MaskedBatch) -> float:
    """L = mean over labels != -100 of -log softmax(logits)[label]: the loss of ``hf`` on ``batch``, no
    gradient."""
    with torch.no_grad():
        return float(hf(**hf_mlm_inputs(batch)).loss)


def torch_train_mlm(hf, batches, schedule: Callable[[int], float], *,
                    weight_decay: float = 0.01, max_grad_norm: float = 1.0,
                    held_out: MaskedBatch | None = None,
                    ) -> dict[str, list[float]]:
    """theta <- AdamW(theta, clip(grad L(theta; batch_t)), lr(t)), t = 1, 2, ...

    Chapter 4's loop in plain PyTorch: for every MaskedBatch of ``batches``
    in order, the loss of the ``*ForMaskedLM`` ``hf`` (an ``nn.Module``),
    its gradient by ``loss.backward()``, the global norm clipped at
    ``max_grad_norm`` and one ``optimizer.step()`` of torch.optim.AdamW in
    geron_lib's groups at the rate ``schedule(t)``. Trains ``hf`` in place;
    returns each step's training loss and, with ``held_out``, the loss on
    its fixed masks after each step.
    """
    batches, max_grad_norm = _check_loop(batches, schedule, max_grad_norm,
                                         held_out)
    optimizer = torch_adamw(hf, lr=schedule(1), weight_decay=weight_decay)
    history = {"train_loss": [], "held_out_loss": []}
    hf.train()  # no dropout: the same arithmetic as eval mode
    for t, batch in enumerate(batches, 1):
        for group in optimizer.param_groups:
            group["lr"] = schedule(t)
        optimizer.zero_grad()
        loss = hf(**hf_mlm_inputs(batch)).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(hf.parameters(), max_grad_norm)
        optimizer.step()
        history["train_loss"].append(float(loss.detach()))
        if held_out is not None:
            history["held_out_loss"].append(hf_loss(hf, held_out))
    return history


def data_parallel_train_mlm(hf, shares, schedule: Callable[[int], float], *,
                            weight_decay: float = 0.01,
                            max_grad_norm: float = 1.0) -> list[float]:
    """g = (1 / N) sum_p sum_{t in Omega_p} grad l_t,  N = sum_p |Omega_p|.

    :func:`torch_train_mlm` in each of P processes that a launcher
    (``torchrun``, ``accelerate launch``) started, torch.distributed set
    up: ``shares`` holds this process's rows of every global batch, and
    process p predicts the positions Omega_p. DistributedDataParallel
    averages the P gradients after every backward pass; so that the average
    is the gradient of the global batch's mean loss, each process
    backpropagates its summed loss times P / N, with N counted over all
    processes (an all-reduce), as transformers' Trainer does
    (``average_tokens_across_devices``). Returns each step's loss on the
    global batch, the same in every process.
    """
    shares, max_grad_norm = _check_loop(shares, schedule, max_grad_norm)
    P = torch.distributed.get_world_size()
    model = torch.nn.parallel.DistributedDataParallel(hf)
    optimizer = torch_adamw(hf, lr=schedule(1), weight_decay=weight_decay)
    losses = []
    model.train()
    for t, share in enumerate(shares, 1):
        for group in optimizer.param_groups:
            group["lr"] = schedule(t)
        inputs = hf_mlm_inputs(share)
        labels = inputs.pop("labels").flatten()      # (B_p T,)
        logits = model(**inputs).logits.flatten(0, 1)  # (B_p T, V)
        summed = torch.nn.functional.cross_entropy(
            logits, labels, ignore_index=IGNORE_INDEX, reduction="sum")
        # this process's summed loss and count, then the sums over all
        totals = torch.stack([summed.detach(),
                              (labels != IGNORE_INDEX).sum().to(summed)])
        torch.distributed.all_reduce(totals)
        optimizer.zero_grad()
        (summed * P / totals[1]).backward()  # DDP averages over the P
        torch.nn.utils.clip_grad_norm_(hf.parameters(), max_grad_norm)
        optimizer.step()
        losses.append(float(totals[0] / totals[1]))
    return losses
