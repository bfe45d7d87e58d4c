"""BERT's masked-language-model head on an :class:`~geron_lib.encoder.Encoder`, its decoder tied to the
token embedding, with the loss and its gradient for every parameter."""

from __future__ import annotations

import numpy as np

from .backward import cross_entropy_backward, encoder_backward, mlm_head_backward, zeros_like_all
from .config import EncoderConfig
from .encoder import Encoder
from .layers import ACTIVATIONS, layer_norm, linear, sub_cache
from .masking import MaskedBatch
from .validate import check_int


# logits = LN(act(h W + b)) Emb^T + b_out     (dense H -> E, layer norm over E, decoder tied to Emb: V x E)
def mlm_logits(hidden, head: dict, word: np.ndarray, act: str, eps: float, cache: dict | None = None):
    """(N, H) hidden states at the masked positions -> (N, V) logits over the vocabulary."""
    u = linear(hidden, head["W"], head["b"])                                               # (N, E)
    z = layer_norm(ACTIVATIONS[act](u), head["ln_gain"], head["ln_bias"], eps, sub_cache(cache, "ln"))
    if cache is not None:
        cache.update(hidden=hidden, u=u, z=z)
    return linear(z, word.T, head["b_out"])                                                # (N, V)


# loss = mean_n -log softmax(logits_n)[y_n]
def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """The mean cross-entropy and the softmax probabilities (which its backward pass needs)."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))  # log softmax, without overflow
    return float(-log_p[np.arange(len(targets)), targets].mean()), np.exp(log_p)


class MaskedLM:
    """An Encoder with the MLM head that :func:`geron_lib.count_parameters` counts with ``mlm_head=True``.

    The head's weights come from ``np.random.default_rng([seed, 1])``, the encoder's from ``seed``.
    """

    def __init__(self, config: EncoderConfig, *, seed: int = 0, dtype=np.float64):
        seed = check_int("seed", seed, minimum=0)
        self.encoder = Encoder(config, seed=seed, dtype=dtype)
        self.config, self.dtype = config, self.encoder.dtype
        H, E, V = config.hidden_size, config.E, config.vocab_size
        rng = np.random.default_rng([seed, 1])
        self.head = {"W": rng.normal(0.0, config.initializer_range, (H, E)).astype(self.dtype),
                     "b": np.zeros(E, self.dtype), "ln_gain": np.ones(E, self.dtype),
                     "ln_bias": np.zeros(E, self.dtype), "b_out": np.zeros(V, self.dtype)}

    def parameters(self) -> dict[str, np.ndarray]:
        """Every distinct array by name: the encoder's, then ``mlm_head.*`` (its decoder is the token
        embedding, counted once)."""
        return self.encoder.parameters() | {f"mlm_head.{k}": v for k, v in self.head.items()}

    def num_parameters(self) -> int:
        return sum(p.size for p in self.parameters().values())

    def _logits(self, batch: MaskedBatch, cache: dict | None = None):
        if not isinstance(batch, MaskedBatch):
            raise TypeError(f"batch must be a MaskedBatch (see geron_lib.masking), "
                            f"got {type(batch).__name__}")
        selected = batch.selected
        if not selected.any():
            raise ValueError("batch has no selected position: there is nothing to predict")
        if cache is None:
            hidden = self.encoder(batch.input_ids, attention_mask=batch.attention_mask)
        else:
            hidden, cache["encoder"] = self.encoder.forward_cached(batch.input_ids,
                                                                   attention_mask=batch.attention_mask)
        c = self.config
        logits = mlm_logits(hidden[selected], self.head, self.encoder.embeddings["word"], c.hidden_act,
                            c.layer_norm_eps, sub_cache(cache, "head"))
        return logits, batch.labels[selected]

    def loss(self, batch: MaskedBatch) -> float:
        """The mean cross-entropy over the batch's selected positions."""
        return cross_entropy(*self._logits(batch))[0]

    def loss_and_grads(self, batch: MaskedBatch) -> tuple[float, dict[str, np.ndarray]]:
        """The loss and its gradient for every parameter (named as :meth:`parameters`)."""
        cache = {}
        logits, targets = self._logits(batch, cache)
        loss, probs = cross_entropy(logits, targets)
        grads = zeros_like_all(self.parameters())
        g_head = {k: grads[f"mlm_head.{k}"] for k in self.head}
        d_selected = mlm_head_backward(cross_entropy_backward(probs, targets), cache["head"], self.head,
                                       self.encoder.embeddings["word"], g_head,
                                       grads["embeddings.word"], self.config.hidden_act)
        d_hidden = np.zeros(batch.input_ids.shape + (self.config.hidden_size,), self.dtype)  # (B, T, H)
        d_hidden[batch.selected] = d_selected
        encoder_backward(self.encoder, cache["encoder"], d_hidden, grads)
        return loss, grads

    def __repr__(self) -> str:
        return f"MaskedLM({self.encoder!r} + MLM head, {self.num_parameters():,} parameters)"
