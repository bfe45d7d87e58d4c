"""Both attention forms one head at a time, written to be read beside the papers: they equal the batched
kernels of :mod:`geron_lib.model.attention` (the tests say so) and trust their inputs like them."""

from __future__ import annotations

import math

import numpy as np

from .layers import linear, softmax


def _columns(w: dict, name: str, cols: slice):
    """(W[:, cols], b[cols]) of the projection ``name`` (Q, K or V): a head's share (b may be absent)."""
    b = w.get(f"b_{name}")
    return w[f"W_{name}"][:, cols], None if b is None else b[cols]


def head_probs(x: np.ndarray, w: dict, i: int, d_head: int,
               additive_mask=None) -> np.ndarray:
    """A_i = softmax(Q_i K_i^T / sqrt(d_head) + mask),  Q_i = X W_Q,i + b_Q,i.

    K_i likewise. Head i owns columns i*d_head .. (i+1)*d_head - 1 of W_Q
    and W_K; returns (B, T, T).
    """
    cols = slice(i * d_head, (i + 1) * d_head)
    Q = linear(x, *_columns(w, "Q", cols))              # (B, T, d_head)
    K = linear(x, *_columns(w, "K", cols))              # (B, T, d_head)
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(d_head)  # (B, T, T)
    if additive_mask is not None:
        scores = scores + additive_mask[:, 0]          # (B, T, T): padding out
    return softmax(scores)


def concat_attention_loop(x: np.ndarray, w: dict, num_attention_heads: int,
                          additive_mask=None) -> np.ndarray:
    """MultiHead(X) = concat(head_1, ..., head_h) W_O + b_O.

    head_i = A_i (X W_V,i + b_V,i): the concat form one head at a time, as in
    the paper.
    """
    d_head = x.shape[-1] // num_attention_heads
    heads = []
    for i in range(num_attention_heads):
        cols = slice(i * d_head, (i + 1) * d_head)
        A = head_probs(x, w, i, d_head, additive_mask)   # (B, T, T)
        V = linear(x, *_columns(w, "V", cols))  # (B, T, d_head)
        heads.append(A @ V)                     # (B, T, d_head)
    concat = np.concatenate(heads, axis=-1)     # (B, T, H)
    return linear(concat, w["W_O"], w.get("b_O"))  # (B, T, H)


def sum_attention_loop(x: np.ndarray, w: dict, num_attention_heads: int,
                       additive_mask=None) -> np.ndarray:
    """MultiHead(X) = A_1 X W'_V,1 + ... + A_h X W'_V,h + b_O.

    The summed form one head at a time, as in the discussion it answers.
    """
    d_head = x.shape[-1] // num_attention_heads
    out = np.zeros(x.shape, np.result_type(x, w["W_V"]))  # (B, T, H)
    for i in range(num_attention_heads):
        A = head_probs(x, w, i, d_head, additive_mask)  # (B, T, T)
        out = out + A @ (x @ w["W_V"][i])  # (B, T, H): head i, full width
    return out if w.get("b_O") is None else out + w["b_O"]
