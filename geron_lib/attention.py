"""Multi-head self-attention in its two parameterisations, batched over rows and heads.

concat (Vaswani et al.):  MultiHead(X) = concat(A_1 X W_V,1, ..., A_h X W_V,h) W_O + b_O,
                          each W_V,h is H x d_head, W_O is H x H.
sum (full-width heads):   MultiHead(X) = A_1 X W'_V,1 + ... + A_h X W'_V,h + b_O,
                          each W'_V,h is H x H, and there is no W_O.
Both share A_h = softmax(Q_h K_h^T / sqrt(d_head)), with Q_h, K_h the h-th d_head columns of X W_Q, X W_K.
"""

from __future__ import annotations

import math

import numpy as np

from .layers import linear, softmax


def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """(B, T, H) -> (B, h, T, d_head): head j takes columns j*d_head .. (j+1)*d_head - 1."""
    B, T, H = x.shape
    return x.reshape(B, T, num_heads, H // num_heads).transpose(0, 2, 1, 3)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(B, h, T, d_head) -> (B, T, H): the heads concatenated in order."""
    B, h, T, d_head = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, h * d_head)


def additive_mask(attention_mask: np.ndarray, dtype) -> np.ndarray:
    """(B, T) of 1 (attend) / 0 (padding) -> (B, 1, 1, T) added to the scores before the softmax."""
    keep = np.asarray(attention_mask, dtype=dtype)[:, None, None, :]
    return (1 - keep) * np.finfo(dtype).min


# A_h = softmax(Q_h K_h^T / sqrt(d_head) + mask)
def attention_probs(x: np.ndarray, w: dict, num_heads: int, mask=None) -> np.ndarray:
    """The attention matrices of every head, (B, h, T, T)."""
    q = split_heads(linear(x, w["W_Q"], w.get("b_Q")), num_heads)  # (B, h, T, d_head)
    k = split_heads(linear(x, w["W_K"], w.get("b_K")), num_heads)  # (B, h, T, d_head)
    scores = q @ k.swapaxes(-1, -2)                                 # (B, h, T, T)
    scores /= math.sqrt(q.shape[-1])  # in place: at long T the (B, h, T, T) arrays dominate memory
    if mask is not None:
        scores += mask
    return softmax(scores)


def concat_attention(x: np.ndarray, w: dict, num_heads: int, mask=None) -> np.ndarray:
    """concat(A_h X W_V,h) W_O + b_O, all heads in one batched matmul; (B, T, H) -> (B, T, H)."""
    A = attention_probs(x, w, num_heads, mask)                     # (B, h, T, T)
    v = split_heads(linear(x, w["W_V"], w.get("b_V")), num_heads)  # (B, h, T, d_head)
    return linear(merge_heads(A @ v), w["W_O"], w.get("b_O"))      # (B, T, H)


def sum_attention(x: np.ndarray, w: dict, num_heads: int, mask=None) -> np.ndarray:
    """sum_h A_h X W'_V,h + b_O, all heads in one batched matmul; W'_V is (h, H, H)."""
    A = attention_probs(x, w, num_heads, mask)  # (B, h, T, T)
    v = x[:, None] @ w["W_V"]                   # (B, h, T, H): every head's full-width values
    out = (A @ v).sum(axis=1)                   # (B, T, H)
    return out if w.get("b_O") is None else out + w["b_O"]


def multi_head_attention(x: np.ndarray, w: dict, num_heads: int, form: str, mask=None) -> np.ndarray:
    """Dispatch on the form named by ``EncoderConfig.attention``."""
    return (concat_attention if form == "concat" else sum_attention)(x, w, num_heads, mask)
