"""Both attention forms of :mod:`geron_lib.model.attention` in functional JAX, on the same weight dicts, each
written three ways: one head at a time in a Python loop (as the discussion's code is written), that same
per-head function under ``jax.vmap``, and batched over a heads axis (as the numpy kernels are).

Every form is ``f(x, w, num_attention_heads, additive_mask=None)``: ``x`` (B, T, H), ``w`` a weight dict of
the form (``random_attention_weights``), ``additive_mask`` (B or 1, 1, 1 or T, T) as the function
``additive_mask`` makes it. They
are kernels that trust their inputs, pure functions of arrays that ``jax.jit`` compiles with
``num_attention_heads`` static. Needs the optional jax extra (``pip install -e .[jax]``).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp


def softmax(z):
    """softmax(z)_i = exp(z_i - max z) / sum_j exp(z_j - max z), over the last axis."""
    e = jnp.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _linear(x, W, b=None):
    """y = x W + b over the last axis (b may be absent)."""
    return x @ W if b is None else x @ W + b


def per_head_weights(w: dict, num_attention_heads: int) -> dict:
    """W_Q,i = W_Q[:, cols_i], b_Q,i = b_Q[cols_i] (K and V likewise), stacked over i.

    Every head's own weights along a leading heads axis, the axis ``jax.vmap`` maps over: (h, H, d_head)
    and (h, d_head). The sum form's W_V is (h, H, H) already; W_O and b_O act on all heads together, so
    they are left out.
    """
    h = num_attention_heads
    H = w["W_Q"].shape[0]
    d_head = H // h
    out = {}
    for name in ("Q", "K", "V"):
        W, b = w[f"W_{name}"], w.get(f"b_{name}")
        out[f"W_{name}"] = W if W.ndim == 3 else W.reshape(H, h, d_head).transpose(1, 0, 2)
        if b is not None:
            out[f"b_{name}"] = b.reshape(h, d_head)
    return out


def head_probs(x, w_i: dict, additive_mask=None):
    """A_i = softmax(Q_i K_i^T / sqrt(d_head) + mask),  Q_i = X W_Q,i + b_Q,i,  K_i likewise.

    ``w_i`` is one head's weights (of :func:`per_head_weights`); returns (B, T, T).
    """
    Q = _linear(x, w_i["W_Q"], w_i.get("b_Q"))       # (B, T, d_head)
    K = _linear(x, w_i["W_K"], w_i.get("b_K"))       # (B, T, d_head)
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(Q.shape[-1])  # (B, T, T)
    return softmax(scores if additive_mask is None else scores + additive_mask[:, 0])


def concat_head(x, w_i: dict, additive_mask=None):
    """Z_i = A_i (X W_V,i + b_V,i): head i of the concat form, before W_O: (B, T, d_head)."""
    return head_probs(x, w_i, additive_mask) @ _linear(x, w_i["W_V"], w_i.get("b_V"))


def sum_head(x, w_i: dict, additive_mask=None):
    """A_i X W'_V,i: head i of the summed form, full width: (B, T, H)."""
    return head_probs(x, w_i, additive_mask) @ (x @ w_i["W_V"])


def _head(heads: dict, i: int) -> dict:
    """Head i's weights out of :func:`per_head_weights`' stacks."""
    return {name: a[i] for name, a in heads.items()}


def concat_attention_loop(x, w: dict, num_attention_heads: int, additive_mask=None):
    """MultiHead(X) = concat(Z_1, ..., Z_h) W_O + b_O, one head at a time in a Python loop: (B, T, H)."""
    heads = per_head_weights(w, num_attention_heads)
    Z = [concat_head(x, _head(heads, i), additive_mask)
         for i in range(num_attention_heads)]  # h x (B, T, d_head)
    return _linear(jnp.concatenate(Z, axis=-1), w["W_O"], w.get("b_O"))           # (B, T, H)


def concat_attention_vmap(x, w: dict, num_attention_heads: int, additive_mask=None):
    """MultiHead(X) = concat(Z_1, ..., Z_h) W_O + b_O, the per-head Z_i under ``jax.vmap``: (B, T, H)."""
    heads = per_head_weights(w, num_attention_heads)
    Z = jax.vmap(concat_head, in_axes=(None, 0, None))(x, heads, additive_mask)  # (h, B, T, d_head)
    B, T, H = x.shape
    concat = jnp.moveaxis(Z, 0, 2).reshape(B, T, H)                     # (B, T, H), the heads in order
    return _linear(concat, w["W_O"], w.get("b_O"))                      # (B, T, H)


def split_heads(y, num_attention_heads: int):
    """(B, T, H) -> (B, h, T, d_head): head i takes columns i*d_head .. (i+1)*d_head - 1."""
    B, T, H = y.shape
    return y.reshape(B, T, num_attention_heads, H // num_attention_heads).transpose(0, 2, 1, 3)


def attention_probs(x, w: dict, num_attention_heads: int, additive_mask=None):
    """A_i = softmax(Q_i K_i^T / sqrt(d_head) + mask), every head at once: (B, h, T, T)."""
    q = split_heads(_linear(x, w["W_Q"], w.get("b_Q")), num_attention_heads)  # (B, h, T, d_head)
    k = split_heads(_linear(x, w["W_K"], w.get("b_K")), num_attention_heads)  # (B, h, T, d_head)
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])                   # (B, h, T, T)
    return softmax(scores if additive_mask is None else scores + additive_mask)


def concat_attention(x, w: dict, num_attention_heads: int, additive_mask=None):
    """MultiHead(X) = concat(A_i X W_V,i) W_O + b_O, all heads in one batched product: (B, T, H)."""
    A = attention_probs(x, w, num_attention_heads, additive_mask)                       # (B, h, T, T)
    v = split_heads(_linear(x, w["W_V"], w.get("b_V")), num_attention_heads)  # (B, h, T, d_head)
    Z = A @ v                                                                  # (B, h, T, d_head)
    concat = Z.transpose(0, 2, 1, 3).reshape(x.shape)                          # (B, T, H)
    return _linear(concat, w["W_O"], w.get("b_O"))                             # (B, T, H)


def sum_attention_loop(x, w: dict, num_attention_heads: int, additive_mask=None):
    """MultiHead(X) = A_1 X W'_V,1 + ... + A_h X W'_V,h + b_O, one head at a time in a Python loop.

    The discussion's code, in JAX: (B, T, H).
    """
    heads = per_head_weights(w, num_attention_heads)
    out = sum(sum_head(x, _head(heads, i), additive_mask) for i in range(num_attention_heads))  # (B, T, H)
    return out if w.get("b_O") is None else out + w["b_O"]


def sum_attention_vmap(x, w: dict, num_attention_heads: int, additive_mask=None):
    """MultiHead(X) = sum_i A_i X W'_V,i + b_O, the per-head term under ``jax.vmap``: (B, T, H)."""
    heads = per_head_weights(w, num_attention_heads)
    out = jax.vmap(sum_head, in_axes=(None, 0, None))(x, heads, additive_mask).sum(axis=0)  # (B, T, H)
    return out if w.get("b_O") is None else out + w["b_O"]


def sum_attention(x, w: dict, num_attention_heads: int, additive_mask=None):
    """MultiHead(X) = sum_i A_i X W'_V,i + b_O, with W'_V (h, H, H), all heads in one batched product."""
    A = attention_probs(x, w, num_attention_heads, additive_mask)  # (B, h, T, T)
    v = x[:, None] @ w["W_V"]                             # (B, h, T, H): every head's values, full width
    out = (A @ v).sum(axis=1)                             # (B, T, H)
    return out if w.get("b_O") is None else out + w["b_O"]


#: The forms by the name ``EncoderConfig.attention`` takes, each written three ways.
JAX_FORMS = {"concat": {"loop": concat_attention_loop, "vmap": concat_attention_vmap,
                        "batched": concat_attention},
             "sum": {"loop": sum_attention_loop, "vmap": sum_attention_vmap, "batched": sum_attention}}
