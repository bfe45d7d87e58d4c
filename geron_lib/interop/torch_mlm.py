"""A geron_lib :class:`~geron_lib.model.mlm.MaskedLM` in PyTorch: exported into transformers'
``*ForMaskedLM`` with its MLM head, its loss and gradients by torch autograd, and ``torch.optim.AdamW`` set up
as geron_lib's AdamW. Needs torch and transformers (``pip install -e .[hf]``); nothing is downloaded.
"""

from __future__ import annotations

import numpy as np
import torch

from ..config import EncoderConfig
from ..model.mlm import MaskedBatch, MaskedLM
from ..validate import check_number, check_positive_number, check_type
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
