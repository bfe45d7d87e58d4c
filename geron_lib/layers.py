"""The small pieces every block is made of: linear maps, layer norm, softmax, activations, FFN."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf


# y = x W + b
def linear(x: np.ndarray, W: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """x W + b over the last axis. For a matrix W the leading axes of x are folded into rows first: one
    BLAS product instead of numpy's loop over a stack, which is several times slower."""
    y = (x.reshape(-1, x.shape[-1]) @ W).reshape(*x.shape[:-1], -1) if W.ndim == 2 else x @ W
    return y if b is None else y + b


def sub_cache(cache: dict | None, key) -> dict | None:
    """The dict where a forward step records what its backward pass needs (None: record nothing)."""
    return None if cache is None else cache.setdefault(key, {})


# LN(x) = gain * (x - mean(x)) / sqrt(var(x) + eps) + bias     (over the last axis, population variance)
def layer_norm(x, gain=None, bias=None, eps: float = 1e-12, cache: dict | None = None) -> np.ndarray:
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    std = np.sqrt((xc * xc).mean(axis=-1, keepdims=True) + eps)
    y = xc / std
    if cache is not None:
        cache.update(x_hat=y, std=std, gain=gain)
    if gain is not None:
        y = y * gain
    return y if bias is None else y + bias


# softmax(z)_i = exp(z_i - max z) / sum_j exp(z_j - max z)
def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    e /= e.sum(axis=axis, keepdims=True)  # in place: one (B, h, T, T) array fewer
    return e


def relu(x):
    return np.maximum(x, 0)


# GELU(x) = x Phi(x) = x (1 + erf(x / sqrt 2)) / 2                 (BERT, RoBERTa: "gelu")
def gelu(x):
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


# GELU(x) ~ x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2          (ALBERT: "gelu_new")
def gelu_new(x):
    # x * x * x, not x**3: numpy's float32 power is a hundred times slower than two multiplications
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)))


ACTIVATIONS = {"gelu": gelu, "gelu_new": gelu_new, "relu": relu}


# FFN(x) = act(x W_1 + b_1) W_2 + b_2
def feed_forward(x: np.ndarray, w: dict, act: str, cache: dict | None = None) -> np.ndarray:
    u = linear(x, w["W_1"], w.get("b_1"))
    a = ACTIVATIONS[act](u)
    if cache is not None:
        cache.update(x=x, u=u, a=a)
    return linear(a, w["W_2"], w.get("b_2"))
