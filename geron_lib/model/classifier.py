"""A sequence classifier for fine-tuning: the encoder, its pooler on the first position ([CLS]) and a
linear layer to the classes, as BERT and ALBERT fine-tune on sentence-level tasks (transformers'
``AlbertForSequenceClassification``: pooler, dropout, classifier; here without dropout, as ALBERT trains)."""

from __future__ import annotations

import numpy as np

from ..validate import check_int, check_memory, check_token_ids, check_type
from .encoder import Encoder
from .layers import linear, linear_backward
from .mlm import cross_entropy, cross_entropy_backward


def classifier_head(hidden: np.ndarray, pooler: dict, head: dict,
                    cache: dict | None = None) -> np.ndarray:
    """p = tanh(h_[CLS] W_pool + b_pool),  z = p W_c + b_c.

    The pooled first position and the class logits: (B, T, H) -> (B, C).
    Writes ``cache``: the first position h and the pooled p.
    """
    first = hidden[:, 0]                                          # (B, H)
    pooled = np.tanh(linear(first, pooler["W"], pooler["b"]))     # (B, H)
    if cache is not None:
        cache.update(first=first, pooled=pooled)
    return linear(pooled, head["W"], head["b"])                   # (B, C)


def classifier_head_backward(d_logits: np.ndarray, cache: dict,
                             pooler: dict, head: dict, g_pooler: dict,
                             g_head: dict, T: int) -> np.ndarray:
    """dW_c = p^T dz,  db_c = sum_b dz,  da = (dz W_c^T) (1 - p^2),
    dW_pool = h^T da,  db_pool = sum_b da,  dh_[CLS] = da W_pool^T.

    Adds into ``g_pooler`` and ``g_head``; returns dL/d hidden, (B, T, H),
    zero but at the first position.
    """
    first, pooled = cache["first"], cache["pooled"]
    d_pooled = linear_backward(d_logits, pooled, head["W"],
                               g_head["W"], g_head["b"])
    d_pre = d_pooled * (1 - pooled**2)                          # (B, H)
    d_hidden = np.zeros((len(first), T, first.shape[1]), first.dtype)
    d_hidden[:, 0] = linear_backward(d_pre, first, pooler["W"],
                                     g_pooler["W"], g_pooler["b"])
    return d_hidden                                             # (B, T, H)


class SequenceClassifier:
    """An :class:`~geron_lib.model.encoder.Encoder` with a pooler and a linear layer to ``n_classes``.

    :meth:`from_encoder` starts from a pretrained encoder (its weights copied); the pooler and the
    classifier are new, drawn from ``np.random.default_rng([seed, 2])`` (N(0, initializer_range^2), biases
    zero). The loss is the mean cross-entropy of the batch's labels.
    """

    def __init__(self, encoder: Encoder, n_classes: int, *, seed: int = 0):
        check_type("encoder", encoder, Encoder)
        self.n_classes = check_int("n_classes", n_classes, minimum=2)
        seed = check_int("seed", seed, minimum=0)
        c, dtype = encoder.config, encoder.dtype
        check_memory(c.hidden_size * (c.hidden_size + self.n_classes + 2) * dtype.itemsize,
                     f"a pooler and a classifier to {self.n_classes:,} classes")
        rng = np.random.default_rng([seed, 2])
        H, std = c.hidden_size, c.initializer_range
        self.encoder, self.config, self.dtype = encoder, c, dtype
        self.pooler = {"W": rng.normal(0.0, std, (H, H)).astype(dtype), "b": np.zeros(H, dtype)}
        self.head = {"W": rng.normal(0.0, std, (H, self.n_classes)).astype(dtype),
                     "b": np.zeros(self.n_classes, dtype)}

    @classmethod
    def from_encoder(cls, encoder: Encoder, n_classes: int, *, seed: int = 0) -> SequenceClassifier:
        """A classifier on a copy of ``encoder``'s weights (the pretrained encoder is left as it was)."""
        check_type("encoder", encoder, Encoder)
        attention, ffn, seen = [], [], set()
        for a, f in encoder.layers:
            for w, out in ((a, attention), (f, ffn)):
                if id(w) not in seen:
                    seen.add(id(w))
                    out.append({k: v.copy() for k, v in w.items()})
        copy = Encoder.from_weights(encoder.config, {k: v.copy() for k, v in encoder.embeddings.items()},
                                    attention, ffn, dtype=encoder.dtype)
        return cls(copy, n_classes, seed=seed)

    def parameters(self) -> dict[str, np.ndarray]:
        """Every distinct array by name: the encoder's, then ``pooler.*`` and ``classifier.*``."""
        return (self.encoder.parameters() | {f"pooler.{k}": v for k, v in self.pooler.items()}
                | {f"classifier.{k}": v for k, v in self.head.items()})

    def _check_labels(self, input_ids, labels) -> np.ndarray:
        ids, _ = check_token_ids("input_ids", input_ids, vocab_size=self.config.vocab_size)
        if isinstance(labels, str | bytes | dict | set) or np.ndim(labels) != 1 or len(labels) != len(ids):
            raise ValueError(f"labels must hold one class per row of input_ids ({len(ids)}), "
                             f"got shape {np.shape(labels)}")
        return check_token_ids("labels", labels, vocab_size=self.n_classes, limit_name="n_classes")[0].ravel()

    def logits(self, input_ids, *, token_type_ids=None, attention_mask=None) -> np.ndarray:
        """The class logits, (B, C); the masks are keyword-only, as in :class:`Encoder`."""
        hidden = self.encoder(input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask)
        return classifier_head(hidden, self.pooler, self.head)

    def loss_and_grads(self, input_ids, labels, *, token_type_ids=None,
                       attention_mask=None) -> tuple[float, dict[str, np.ndarray]]:
        """The mean cross-entropy of ``labels`` and its gradient for every parameter (named as
        :meth:`parameters`)."""
        labels = self._check_labels(input_ids, labels)
        hidden, cache = self.encoder.forward_cached(input_ids, token_type_ids=token_type_ids,
                                                    attention_mask=attention_mask)
        head_cache = {}
        logits = classifier_head(hidden, self.pooler, self.head, head_cache)
        loss, probs = cross_entropy(logits, labels)
        grads = {name: np.zeros_like(p) for name, p in self.parameters().items()}
        g_pooler = {k: grads[f"pooler.{k}"] for k in self.pooler}
        g_head = {k: grads[f"classifier.{k}"] for k in self.head}
        d_hidden = classifier_head_backward(cross_entropy_backward(probs, labels), head_cache, self.pooler,
                                            self.head, g_pooler, g_head, hidden.shape[1])
        self.encoder.backward(cache, d_hidden, grads)
        return loss, grads

    def __repr__(self) -> str:
        n = sum(p.size for p in self.parameters().values())
        return f"SequenceClassifier({self.encoder!r} + pooler + {self.n_classes} classes, {n:,} parameters)"
