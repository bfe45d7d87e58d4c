"""Backward passes, one beside the equation of each forward function it differentiates.

The forward functions (``layers``, ``attention``, ``encoder``) fill a ``cache`` dict with what is needed
here; nothing is recomputed. Each ``*_backward(dy, cache, w, g)`` takes dL/d(output), returns
dL/d(input) and ADDS the weight gradients into ``g``, a dict with the keys of the weights ``w``.
A sublayer shared by several layers gets the same ``g`` at every use, so its gradient is the sum over
its uses.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf

from .attention import merge_heads, split_heads


def zeros_like_all(params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A zero gradient for every parameter, by the same names."""
    return {name: np.zeros_like(p) for name, p in params.items()}


def _rows(a: np.ndarray) -> np.ndarray:
    """(..., n) -> (N, n): every batch axis flattened into rows."""
    return a.reshape(-1, a.shape[-1])


# y = x W + b:   dW = x^T dy,   db = sum_rows dy,   dx = dy W^T
def linear_backward(dy, x, W, gW, gb=None) -> np.ndarray:
    gW += _rows(x).T @ _rows(dy)
    if gb is not None:
        gb += _rows(dy).sum(axis=0)
    return dy @ W.T


# y = gain x_hat + bias,  x_hat = (x - mean x) / std:
#   d gain = sum dy x_hat,   d bias = sum dy,   dx = (g - mean g - x_hat mean(g x_hat)) / std,  g = dy gain
def layer_norm_backward(dy, cache, g_gain=None, g_bias=None) -> np.ndarray:
    x_hat, std, gain = cache["x_hat"], cache["std"], cache["gain"]
    if g_gain is not None:
        g_gain += _rows(dy * x_hat).sum(axis=0)
    if g_bias is not None:
        g_bias += _rows(dy).sum(axis=0)
    g = dy if gain is None else dy * gain
    return (g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)) / std


# GELU'(x) = Phi(x) + x phi(x)
def gelu_grad(x):
    return 0.5 * (1 + erf(x / math.sqrt(2))) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


# gelu_new'(x) = (1 + t) / 2 + x (1 - t^2) c (1 + 3 a x^2) / 2,
#   t = tanh(c (x + a x^3)),  c = sqrt(2 / pi),  a = 0.044715
def gelu_new_grad(x):
    c, a = math.sqrt(2 / math.pi), 0.044715
    t = np.tanh(c * (x + a * x**3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * a * x * x)


# relu'(x) = 1 if x > 0 else 0
def relu_grad(x):
    return (x > 0).astype(x.dtype)


ACTIVATION_GRADS = {"gelu": gelu_grad, "gelu_new": gelu_new_grad, "relu": relu_grad}


# A = softmax(z):   dz = A * (dA - sum_j dA_j A_j)
def softmax_backward(dA, A) -> np.ndarray:
    return A * (dA - (dA * A).sum(axis=-1, keepdims=True))


# FFN(x) = act(u) W_2 + b_2,  u = x W_1 + b_1
def feed_forward_backward(dy, cache, w, g, act: str) -> np.ndarray:
    da = linear_backward(dy, cache["a"], w["W_2"], g["W_2"], g.get("b_2"))
    du = da * ACTIVATION_GRADS[act](cache["u"])
    return linear_backward(du, cache["x"], w["W_1"], g["W_1"], g.get("b_1"))


# A_h = softmax(S_h),  S_h = Q_h K_h^T / sqrt(d_head):   dQ_h = dS_h K_h,   dK_h = dS_h^T Q_h
def attention_probs_backward(dA, cache, w, g) -> np.ndarray:
    """dL/dx through the queries and keys, from dL/dA (B, h, T, T)."""
    q, k, x = cache["q"], cache["k"], cache["x"]
    dS = softmax_backward(dA, cache["A"]) / math.sqrt(q.shape[-1])  # (B, h, T, T)
    dq, dk = dS @ k, dS.swapaxes(-1, -2) @ q                       # (B, h, T, d_head)
    dx = linear_backward(merge_heads(dq), x, w["W_Q"], g["W_Q"], g.get("b_Q"))
    return dx + linear_backward(merge_heads(dk), x, w["W_K"], g["W_K"], g.get("b_K"))


# out = concat_h(A_h V_h) W_O + b_O:   dA_h = dO_h V_h^T,   dV_h = A_h^T dO_h
def concat_attention_backward(dy, cache, w, g) -> np.ndarray:
    A, v = cache["A"], cache["v"]
    d_heads = linear_backward(dy, cache["heads"], w["W_O"], g["W_O"], g.get("b_O"))  # (B, T, H)
    dO = split_heads(d_heads, A.shape[1])                                            # (B, h, T, d_head)
    dA, dv = dO @ v.swapaxes(-1, -2), A.swapaxes(-1, -2) @ dO
    dx = linear_backward(merge_heads(dv), cache["x"], w["W_V"], g["W_V"], g.get("b_V"))
    return dx + attention_probs_backward(dA, cache, w, g)


# out = sum_h A_h X W'_V,h + b_O:   dA_h = dy (X W'_V,h)^T,   dW'_V,h = X^T A_h^T dy
def sum_attention_backward(dy, cache, w, g) -> np.ndarray:
    A, v, x = cache["A"], cache["v"], cache["x"]
    if "b_O" in g:
        g["b_O"] += _rows(dy).sum(axis=0)
    dA = dy[:, None] @ v.swapaxes(-1, -2)              # (B, h, T, T)
    dv = A.swapaxes(-1, -2) @ dy[:, None]              # (B, h, T, H)
    g["W_V"] += np.einsum("bti,bhtj->hij", x, dv)      # (h, H, H)
    dx = (dv @ w["W_V"].swapaxes(-1, -2)).sum(axis=1)  # (B, T, H)
    return dx + attention_probs_backward(dA, cache, w, g)


def multi_head_attention_backward(dy, cache, w, g, form: str) -> np.ndarray:
    return (concat_attention_backward if form == "concat" else sum_attention_backward)(dy, cache, w, g)


# X_1 = LN(X + MultiHead(X));   Y = LN(X_1 + FFN(X_1)):   each residual adds its two paths' gradients
def block_backward(dy, cache, attention, ffn, g_attention, g_ffn, *, form: str, act: str) -> np.ndarray:
    d = layer_norm_backward(dy, cache["ln_ffn"], g_ffn.get("ln_gain"), g_ffn.get("ln_bias"))
    d = d + feed_forward_backward(d, cache["ffn"], ffn, g_ffn, act)
    d = layer_norm_backward(d, cache["ln_attention"], g_attention.get("ln_gain"), g_attention.get("ln_bias"))
    return d + multi_head_attention_backward(d, cache["attention"], attention, g_attention, form)


# X_0 = LN(Emb[ids] + Pos[position_ids] + Type[type]) (W_P + b_P):   each table row gets the sum over its uses
def embed_backward(dy, cache, w, g) -> None:
    if "W_P" in w:
        dy = linear_backward(dy, cache["x_E"], w["W_P"], g["W_P"], g["b_P"])
    de = layer_norm_backward(dy, cache["ln"], g["ln_gain"], g["ln_bias"])  # (B, T, E)
    ids, types = cache["ids"], cache["token_type_ids"]
    np.add.at(g["word"], ids, de)
    np.add.at(g["position"], cache["positions"], de)
    if "token_type" in w:
        if types is None:
            g["token_type"][0] += _rows(de).sum(axis=0)
        else:
            np.add.at(g["token_type"], types, de)


def _grad_view(encoder, grads: dict[str, np.ndarray]):
    """weights dict -> the matching dict of gradient arrays (the same arrays for a shared sublayer)."""
    name_of = {id(p): name for name, p in encoder.parameters().items()}
    return lambda w: {k: grads[name_of[id(p)]] for k, p in w.items()}


def encoder_backward(encoder, cache: dict, d_hidden: np.ndarray, grads: dict[str, np.ndarray]) -> None:
    """Add dL/d(every encoder parameter) into ``grads`` (named as ``encoder.parameters()``), given
    dL/d(last hidden states) and the cache of :meth:`geron_lib.encoder.Encoder.forward_cached`."""
    c, view = encoder.config, _grad_view(encoder, grads)
    d = d_hidden
    for i in reversed(range(len(encoder.layers))):
        attention, ffn = encoder.layers[i]
        d = block_backward(d, cache[i], attention, ffn, view(attention), view(ffn),
                           form=c.attention, act=c.hidden_act)
    embed_backward(d, cache["embed"], encoder.embeddings, view(encoder.embeddings))


# loss = mean_n -log softmax(z_n)[y_n]:   dz_n = (softmax(z_n) - onehot(y_n)) / N
def cross_entropy_backward(probs: np.ndarray, targets: np.ndarray) -> np.ndarray:
    dz = probs.copy()
    dz[np.arange(len(targets)), targets] -= 1
    return dz / len(targets)


# logits = z Emb^T + b_out,  z = LN(act(h W + b)):   dEmb += dlogits^T z   (the tied decoder's share)
def mlm_head_backward(d_logits, cache, head, word, g_head, g_word, act: str) -> np.ndarray:
    """dL/d(hidden states at the masked positions); adds into the head's and the token table's grads."""
    g_word += d_logits.T @ cache["z"]
    g_head["b_out"] += d_logits.sum(axis=0)
    da = layer_norm_backward(d_logits @ word, cache["ln"], g_head["ln_gain"], g_head["ln_bias"])
    du = da * ACTIVATION_GRADS[act](cache["u"])
    return linear_backward(du, cache["hidden"], head["W"], g_head["W"], g_head["b"])
