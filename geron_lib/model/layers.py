"""The small pieces every block is made of, each forward beside its backward: linear maps, layer norm,
softmax, the activations and the feed-forward sublayer.

A forward that is given a ``cache`` dict records there what its backward reads; a backward
``*_backward(dy, ...)`` takes dL/d(output), returns dL/d(input) and ADDS each weight's gradient into the
array passed for it (a sublayer shared by several layers receives the sum over its uses).
These are kernels: they trust their inputs and check none of them. The public entries (``Encoder``'s
call and its ``forward_cached``, ``hidden_states`` and ``attentions``, ``MaskedLM``'s losses,
``multi_head_attention``) check the inputs once, before calling them.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse import csr_matrix
from scipy.special import erf


def rows(a: np.ndarray) -> np.ndarray:
    """(..., n) -> (N, n): every leading axis folded into rows."""
    return a.reshape(-1, a.shape[-1])


def scatter_add_rows(table: np.ndarray, index: np.ndarray, values: np.ndarray) -> None:
    """table[index_n] += values_n for every n, repeated rows summed: table (V, E), values (..., E).

    One sparse matrix product (the rows used x the positions, a 1 where a position uses a row), several
    times faster than ``np.add.at``.
    """
    used, which = np.unique(index, return_inverse=True)
    uses = csr_matrix((np.ones(index.size, values.dtype), (which.ravel(), np.arange(index.size))),
                      shape=(used.size, index.size))
    table[used] += uses @ rows(values)


def sub_cache(cache: dict | None, key) -> dict | None:
    """The dict where a forward step records what its backward pass needs (None: record nothing)."""
    return None if cache is None else cache.setdefault(key, {})


def linear(x: np.ndarray, W: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """y = x W + b over the last axis.

    For a matrix W the leading axes of x are folded into rows first: one product instead of numpy's loop over
    a stack, several times slower. The bias is added in place, into the product's own fresh array (a second
    array of y's size costs a pass).
    """
    y = (rows(x) @ W).reshape(*x.shape[:-1], -1) if W.ndim == 2 else x @ W
    if b is not None:
        y += b
    return y


def linear_backward(dy, x, W, gW, gb=None) -> np.ndarray:
    """dW = x^T dy,  db = sum_rows dy,  dx = dy W^T   (for y = x W + b), every product on rows."""
    dy2 = rows(dy)
    gW += rows(x).T @ dy2
    if gb is not None:
        gb += dy2.sum(axis=0)
    return (dy2 @ W.T).reshape(*dy.shape[:-1], -1)


def layer_norm(x, gain=None, bias=None, eps: float = 1e-12,
               cache: dict | None = None) -> np.ndarray:
    """LN(x) = gain * (x - mean(x)) / sqrt(var(x) + eps) + bias.

    Over the last axis, with the population variance. Writes ``cache``:
    x_hat = (x - mean(x)) / std, std, gain.
    """
    centred = x - x.mean(axis=-1, keepdims=True)
    std = np.sqrt((centred**2).mean(axis=-1, keepdims=True) + eps)  # (..., 1)
    x_hat = centred / std
    if cache is not None:
        cache.update(x_hat=x_hat, std=std, gain=gain)
    y = x_hat if gain is None else x_hat * gain
    return y if bias is None else y + bias


def layer_norm_backward(dy, cache, g_gain=None, g_bias=None) -> np.ndarray:
    """dx = (g - mean(g) - x_hat mean(g x_hat)) / std,  g = dy gain.

    d gain = sum dy x_hat and d bias = sum dy, over the rows. Reads
    ``cache``: x_hat, std, gain (written by :func:`layer_norm`).
    """
    x_hat, std, gain = cache["x_hat"], cache["std"], cache["gain"]
    if g_gain is not None:
        g_gain += rows(dy * x_hat).sum(axis=0)
    if g_bias is not None:
        g_bias += rows(dy).sum(axis=0)
    g = dy if gain is None else dy * gain
    mean_g = g.mean(axis=-1, keepdims=True)
    mean_g_x_hat = (g * x_hat).mean(axis=-1, keepdims=True)
    return (g - mean_g - x_hat * mean_g_x_hat) / std


def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """softmax(z)_i = exp(z_i - max z) / sum_j exp(z_j - max z)."""
    e = np.subtract(z, z.max(axis=axis, keepdims=True), dtype=np.result_type(z, 1.0))  # floats keep theirs
    np.exp(e, out=e)  # in place, as the division: one (B, h, T, T) array, not two
    e /= e.sum(axis=axis, keepdims=True)
    return e


def softmax_backward(dA, A) -> np.ndarray:
    """dz = A * (dA - sum_j dA_j A_j)   (for A = softmax(z) over the last axis)."""
    dz = dA - np.vecdot(dA, A)[..., None]  # the row sums as dot products: no dA * A array
    dz *= A
    return dz


def _polynomial(t: np.ndarray, coefficients, out: np.ndarray | None = None) -> np.ndarray:
    """c_0 + c_1 t + ... + c_n t^n by Horner's rule, in one fresh array (or in ``out``)."""
    p = np.multiply(t, coefficients[-1], out=out)
    for c in coefficients[-2:0:-1]:
        p += c
        p *= t
    p += coefficients[0]
    return p


#: Phi(x) - 1/2 ~ x P(x^2) / Q(x^2) in float32, coefficients from degree 0 up: a least-squares fit of
#: erf(z) / z as a ratio of two degree-5 polynomials in z^2 on 0 <= z <= 4, reweighted towards the
#: smallest maximum relative error (2.5e-8), then rewritten for x = z sqrt 2. Beyond |x| = 4 sqrt 2 float32
#: rounds Phi to 0 or 1, so x is clipped there.
_PHI_P = (3.989422706e-01, 3.421398214e-02, 4.693541642e-03, 1.716161995e-04, 6.287850407e-06,
          2.195007275e-08)
_PHI_Q = (1.0, 2.524280137e-01, 2.883729915e-02, 1.900878537e-03, 7.409559239e-05, 1.169334796e-06)
_PHI_CLIP = 4 * math.sqrt(2)


def normal_cdf(x: np.ndarray) -> np.ndarray:
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2: scipy's erf, except in float32, where x P(x^2) / Q(x^2) + 1/2.

    scipy's erf works in float64 and is slow; the float32 rational fit is within 2.5e-7 of Phi (float32
    itself rounds Phi near 1 to 6e-8) and several times faster.
    """
    if x.dtype != np.float32:
        return 0.5 * (1 + erf(x / math.sqrt(2)))
    s = np.clip(x, -_PHI_CLIP, _PHI_CLIP)
    t = s * s
    p = _polynomial(t, _PHI_P)
    p *= s
    p /= _polynomial(t, _PHI_Q, out=s)  # into s, no longer needed: three arrays of x's size, not four
    p += 0.5
    return np.clip(p, 0, 1, out=p)  # rounding must not take the tails past 0 or 1


def gelu(x):
    """GELU(x) = x Phi(x) = x (1 + erf(x / sqrt 2)) / 2, the exact form ("gelu")."""
    y = normal_cdf(x)
    y *= x
    return y


def gelu_grad(x):
    """GELU'(x) = Phi(x) + x phi(x),  phi(x) = exp(-x^2 / 2) / sqrt(2 pi)."""
    d = x * x
    d *= -0.5
    np.exp(d, out=d)
    d *= x
    d *= 1 / math.sqrt(2 * math.pi)
    d += normal_cdf(x)
    return d


_C, _A = math.sqrt(2 / math.pi), 0.044715


def _tanh_argument(x):
    """c (x + a x^3), computed as x (c + c a x^2) in one fresh array."""
    t = x * x
    t *= _C * _A
    t += _C
    t *= x
    return t


def gelu_new(x):
    """GELU(x) ~ x (1 + t) / 2,  t = tanh(c (x + a x^3)),  c = sqrt(2/pi),  a = 0.044715 ("gelu_new").

    Every step in place in one array: each fresh array of x's size would cost as much as a pass over it.
    """
    t = _tanh_argument(x)
    np.tanh(t, out=t)
    t += 1
    t *= x
    t *= 0.5
    return t


def gelu_new_grad(x):
    """gelu_new'(x) = (1 + t) / 2 + x (1 - t^2) c (1 + 3 a x^2) / 2,  t = tanh(c (x + a x^3)).

    Computed as (1 + t) (1 + (1 - t) x c (1 + 3 a x^2)) / 2, mostly in place.
    """
    t = _tanh_argument(x)
    np.tanh(t, out=t)
    w = x * x
    w *= 3 * _C * _A
    w += _C
    w *= x  # x c (1 + 3 a x^2)
    w *= 1 - t
    w += 1
    t += 1
    w *= t
    w *= 0.5
    return w


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
    du = ACTIVATIONS[act][1](cache["u"])
    du *= da
    return linear_backward(du, cache["x"], w["W_1"], g["W_1"], g.get("b_1"))
