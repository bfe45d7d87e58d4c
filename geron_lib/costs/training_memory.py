"""A training step's memory, itemised: weights, gradients, AdamW's two moments, the activations the backward
pass reads (the caches of :mod:`geron_lib.costs.memory`'s blocks, the embeddings', the head's and the loss's)
and the temporaries on top; in bytes, before allocating anything.

It lives apart from :mod:`geron_lib.costs.memory`, the one-block figures the kernels' own modules (attention,
encoder) check at their entries: this one is the whole step, from the config and the parameter count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import EncoderConfig
from ..validate import check_float_dtype, check_int
from .itemised import Itemised
from .memory import block_backward_workspace, block_cache_elements
from .params import count_parameters
from .sequence import check_estimate_sequence

#: Bytes of one token id, position or target: numpy's default integer (int64).
INDEX_BYTES = np.dtype(np.int64).itemsize


@dataclass(frozen=True)
class TrainingMemory(Itemised):
    """The bytes of one training step, itemised; ``total`` adds the additive items up (see :meth:`items`)."""

    weights: int
    gradients: int
    adam_moments: int
    embeddings: int
    attention: int
    attention_probs: int
    layer_norms: int
    ffn: int
    mlm_head: int
    loss: int
    workspace: int
    # what the estimate is of (not added)
    batch: int
    seq_len: int
    masked: int
    itemsize: int

    #: The fields that add up to ``total``; the rest describe them.
    ADDITIVE = ("weights", "gradients", "adam_moments", "embeddings", "attention", "attention_probs",
                "layer_norms", "ffn", "mlm_head", "loss", "workspace")

    @property
    def parameters(self) -> int:
        """Everything proportional to the parameter count: weights, gradients and AdamW's m and v."""
        return self.weights + self.gradients + self.adam_moments

    @property
    def activations(self) -> int:
        """What the forward pass keeps for the backward pass (the caches, the logits and probabilities)."""
        return (self.embeddings + self.attention + self.attention_probs + self.layer_norms + self.ffn
                + self.mlm_head + self.loss)

    @property
    def step(self) -> int:
        """What ``MaskedLM.loss_and_grads`` allocates at its peak: gradients, activations, workspace."""
        return self.gradients + self.activations + self.workspace

    @property
    def total(self) -> int:
        return self.parameters + self.activations + self.workspace

    def _value(self, v: int) -> str:
        return f"{v / 2**20:>12,.2f} MiB"


def training_memory(config: EncoderConfig, batch: int, seq_len: int, *, dtype=np.float64,
                    masked: int | None = None) -> TrainingMemory:
    """M = 4 N s + s (L a_block + a_embed + a_head) + w:  weights, gradients, m, v; activations; workspace.

    One AdamW training step of :class:`~geron_lib.model.mlm.MaskedLM` on ``batch`` sequences of ``seq_len``
    tokens in ``dtype`` (s bytes a number), the head predicting n_mask = ``masked`` positions of each (all T
    when None). N is the parameter count (encoder and MLM head, shared sublayers once): weights, their
    gradients and AdamW's two moments hold N numbers each. The activations do not depend on sharing: each
    of the L layers keeps its block cache (:func:`block_cache_elements`); the embeddings keep the ids and
    position ids (int64), their layer norm's x_hat and std, and their output x_E when an E -> H map follows;
    the head keeps the n = B n_mask predicted hidden rows (H), u, x_hat and its output (E each) and std; the
    loss keeps the logits and the probabilities (n V each) and the targets (int64). The workspace is the
    largest set of temporaries the backward pass holds on top: the loss's (two n V arrays, or the logits'
    gradient and the tied decoder's V x E gradient product) or a block's (:func:`block_backward_workspace`,
    with the n H gradient of the predicted rows).
    """
    T, per_sequence = check_estimate_sequence(config, seq_len, masked)
    B = check_int("batch", batch, minimum=1)
    s = check_float_dtype("dtype", dtype).itemsize
    c = config
    V, E, H, L = c.vocab_size, c.E, c.hidden_size, c.num_hidden_layers
    n = B * per_sequence
    N = count_parameters(c, mlm_head=True).total
    block = block_cache_elements(B, T, H, c.num_attention_heads, c.intermediate_size, c.attention)
    roberta_positions = c.model_type == "roberta" and c.pad_token_id is not None  # (B, T); else a (T,) view
    embed = B * T * E + B * T + (B * T * E if c.has_embedding_projection else 0)  # x_hat, std, x_E
    loss_workspace = max(2 * n * V, n * V + V * E)
    block_workspace = n * H + block_backward_workspace(B, T, H, c.num_attention_heads, c.intermediate_size,
                                                       c.attention, c.hidden_act)
    return TrainingMemory(
        weights=N * s, gradients=N * s, adam_moments=2 * N * s,
        embeddings=s * embed + INDEX_BYTES * (B * T + (B * T if roberta_positions else T)),
        attention=s * L * block["attention"],
        attention_probs=s * L * block["attention_probs"],
        layer_norms=s * L * block["layer_norms"],
        ffn=s * L * block["ffn"],
        mlm_head=s * (n * H + 3 * n * E + n),
        loss=s * 2 * n * V + INDEX_BYTES * n,
        workspace=s * max(loss_workspace, block_workspace),
        batch=B, seq_len=T, masked=per_sequence, itemsize=s,
    )
