"""The small pieces every block is made of, each forward beside its backward: linear maps, layer norm,
softmax, the activations and the feed-forward sublayer.

A forward that is given a ``cache`` dict records there what its backward reads; a backward
``*_backward(dy, ...)`` takes dL/d(output), returns dL/d(input) and ADDS each weight's gradient into the
array passed for it (a sublayer shared by several layers receives the sum over its uses).
These are kernels: they trust their inputs, which the public entries (``Encoder``, ``MaskedLM``,
``multi_head_attention``) check once.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf


def rows(a: np.ndarray) -> np.ndarray:
    """(..., n) -> (N, n): every leading axis folded into rows."""
    return a.reshape(-1, a.shape[-1])


def sub_cache(cache: dict | None, key) -> dict | None:
    """The dict where a forward step records what its backward pass needs (None: record nothing)."""
    return None if cache is None else cache.setdefault(key, {})


def linear(x: np.ndarray, W: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """y = x W + b over the last axis.

    For a matrix W the leading axes of x are folded into rows first: one BLAS product instead of numpy's
    loop over a stack, which is several times slower.
    """
    y = (rows(x) @ W).reshape(*x.shape[:-1], -1) if W.ndim == 2 else x @ W
    return y if b is None else y + b


def linear_backward(dy, x, W, gW, gb=None) -> np.ndarray:
    """dW = x^T dy,  db = sum_rows dy,  dx = dy W^T   (for y = x W + b)."""
    gW += rows(x).T @ rows(dy)
    if gb is not None:
        gb += rows(dy).sum(axis=0)
    return dy @ W.T


def layer_norm(x, gain=None, bias=None, eps: float = 1e-12, cache: dict | None = None) -> np.ndarray:
    """LN(x) = gain * (x - mean(x)) / sqrt(var(x) + eps) + bias   (over the last axis, population variance).

    Writes ``cache``: x_hat = (x - mean(x)) / std, std, gain.
    """
    xc = x - x.mean(axis=-1, keepdims=True)
    std = np.sqrt((xc * xc).mean(axis=-1, keepdims=True) + eps)
    x_hat = xc / std
    if cache is not None:
        cache.update(x_hat=x_hat, std=std, gain=gain)
    y = x_hat if gain is None else x_hat * gain
    return y if bias is None else y + bias


def layer_norm_backward(dy, cache, g_gain=None, g_bias=None) -> np.ndarray:
    """d gain = sum dy x_hat,  d bias = sum dy,  dx = (g - mean g - x_hat mean(g x_hat)) / std,  g = dy gain.

    Reads ``cache``: x_hat, std, gain (written by :func:`layer_norm`).
    """
    x_hat, std, gain = cache["x_hat"], cache["std"], cache["gain"]
    if g_gain is not None:
        g_gain += rows(dy * x_hat).sum(axis=0)
    if g_bias is not None:
        g_bias += rows(dy).sum(axis=0)
    g = dy if gain is None else dy * gain
    return (g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)) / std


def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """softmax(z)_i = exp(z_i - max z) / sum_j exp(z_j - max z)."""
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    e /= e.sum(axis=axis, keepdims=True)  # in place: one (B, h, T, T) array fewer
    return e


def softmax_backward(dA, A) -> np.ndarray:
    """dz = A * (dA - sum_j dA_j A_j)   (for A = softmax(z) over the last axis)."""
    return A * (dA - (dA * A).sum(axis=-1, keepdims=True))


def gelu(x):
    """GELU(x) = x Phi(x) = x (1 + erf(x / sqrt 2)) / 2, the exact form ("gelu")."""
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def gelu_grad(x):
    """GELU'(x) = Phi(x) + x phi(x)."""
    return 0.5 * (1 + erf(x / math.sqrt(2))) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


_C, _A = math.sqrt(2 / math.pi), 0.044715


def gelu_new(x):
    """GELU(x) ~ x (1 + t) / 2,  t = tanh(c (x + a x^3)),  c = sqrt(2/pi),  a = 0.044715 ("gelu_new").

    x * x * x, not x**3: numpy's float32 power is about a hundred times slower than two multiplications.
    """
    return 0.5 * x * (1 + np.tanh(_C * (x + _A * x * x * x)))


def gelu_new_grad(x):
    """gelu_new'(x) = (1 + t) / 2 + x (1 - t^2) c (1 + 3 a x^2) / 2,  t = tanh(c (x + a x^3))."""
    t = np.tanh(_C * (x + _A * x * x * x))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _C * (1 + 3 * _A * x * x)


def relu(x):
    """relu(x) = max(x, 0)."""
    return np.maximum(x, 0)


def relu_grad(x):
    """relu'(x) = 1 if x > 0 else 0."""
    return (x > 0).astype(x.dtype)


#: ``hidden_act`` name -> (activation, its derivative). The names ``EncoderConfig`` accepts.
ACTIVATIONS = {"gelu": (gelu, gelu_grad), "gelu_new": (gelu_new, gelu_new_grad), "relu": (relu, relu_grad)}


def feed_forward(x: np.ndarray, w: dict, act: str, cache: dict | None = None) -> np.ndarray:
    """FFN(x) = act(u) W_2 + b_2,  u = x W_1 + b_1.

    Writes ``cache``: x, u, a = act(u).
    """
    u = linear(x, w["W_1"], w.get("b_1"))  # (B, T, F)
    a = ACTIVATIONS[act][0](u)
    if cache is not None:
        cache.update(x=x, u=u, a=a)
    return linear(a, w["W_2"], w.get("b_2"))


def feed_forward_backward(dy, cache, w, g, act: str) -> np.ndarray:
    """da = dy W_2^T,  du = da act'(u),  dx = du W_1^T   (and dW_2, db_2, dW_1, db_1 into ``g``).

    Reads ``cache``: x, u, a (written by :func:`feed_forward`).
    """
    da = linear_backward(dy, cache["a"], w["W_2"], g["W_2"], g.get("b_2"))
    du = da * ACTIVATIONS[act][1](cache["u"])
    return linear_backward(du, cache["x"], w["W_1"], g["W_1"], g.get("b_1"))
