"""Multi-head self-attention in its two parameterisations, batched over rows and heads, each forward
beside its backward.

concat (Vaswani et al.):  MultiHead(X) = concat(A_1 X W_V,1, ..., A_h X W_V,h) W_O + b_O,
                          each W_V,i is H x d_head, W_O is H x H.
sum (full-width heads):   MultiHead(X) = A_1 X W'_V,1 + ... + A_h X W'_V,h + b_O,
                          each W'_V,i is H x H, and there is no W_O.
Both share A_i = softmax(Q_i K_i^T / sqrt(d_head)), with Q_i, K_i the i-th d_head columns of X W_Q, X W_K.

The forms are kernels that trust their inputs; :func:`multi_head_attention` is the checked public entry
(it also runs the per-head loops of :mod:`geron_lib.model.attention_loops`).
"""

from __future__ import annotations

import math

import numpy as np

from ..costs.memory import forward_activation_bytes
from ..validate import (
    check_bool,
    check_choice,
    check_finite_array,
    check_heads,
    check_int,
    check_memory,
    check_unmasked,
)
from .attention_loops import concat_attention_loop, sum_attention_loop
from .layers import linear, linear_backward, rows, softmax, softmax_backward


def split_heads(x: np.ndarray, num_attention_heads: int) -> np.ndarray:
    """head_i = x[..., i d_head : (i+1) d_head]: (B, T, H) -> (B, h, T, d_head)

    Head i takes the columns i*d_head .. (i+1)*d_head - 1.
    """
    B, T, H = x.shape
    h = num_attention_heads
    heads = x.reshape(B, T, h, H // h)  # (B, T, h, d_head)
    return heads.transpose(0, 2, 1, 3)  # (B, h, T, d_head)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """concat(x_1, ..., x_h) = merge_heads(x):  (B, h, T, d_head) -> (B, T, H).

    The inverse of :func:`split_heads`.
    """
    B, h, T, d_head = x.shape
    side_by_side = x.transpose(0, 2, 1, 3)  # (B, T, h, d_head)
    return side_by_side.reshape(B, T, h * d_head)


def additive_mask(attention_mask: np.ndarray, dtype) -> np.ndarray:
    """(B, T) of 1 (attend) / 0 (padding) -> (B, 1, 1, T) added to the scores before the softmax."""
    keep = np.asarray(attention_mask, dtype=dtype)[:, None, None, :]
    return (1 - keep) * np.finfo(dtype).min


def attention_probs(x: np.ndarray, w: dict, num_attention_heads: int, additive_mask=None,
                    cache: dict | None = None) -> np.ndarray:
    """A_i = softmax(Q_i K_i^T / sqrt(d_head) + mask), every head at once: (B, h, T, T).

    Writes ``cache``: x, q, k, A.
    """
    q = split_heads(linear(x, w["W_Q"], w.get("b_Q")), num_attention_heads)  # (B, h, T, d_head)
    k = split_heads(linear(x, w["W_K"], w.get("b_K")), num_attention_heads)  # (B, h, T, d_head)
    scores = q @ k.swapaxes(-1, -2)                                           # (B, h, T, T)
    scores /= math.sqrt(q.shape[-1])  # in place: at long T the (B, h, T, T) arrays dominate memory
    if additive_mask is not None:
        scores += additive_mask
    A = softmax(scores)
    if cache is not None:
        cache.update(x=x, q=q, k=k, A=A)
    return A


def attention_probs_backward(dA, cache, w, g) -> np.ndarray:
    """dS_i = softmax'(dA_i) / sqrt(d_head), dQ_i = dS_i K_i, dK_i = dS_i^T Q_i.

    dL/dx through the queries and the keys. Reads ``cache``: x, q, k, A
    (written by :func:`attention_probs`).
    """
    q, k, x = cache["q"], cache["k"], cache["x"]
    d_head = q.shape[-1]
    dS = softmax_backward(dA, cache["A"]) / math.sqrt(d_head)  # (B, h, T, T)
    dq = merge_heads(dS @ k)                       # (B, T, H)
    dk = merge_heads(dS.swapaxes(-1, -2) @ q)      # (B, T, H)
    dx_q = linear_backward(dq, x, w["W_Q"], g["W_Q"], g.get("b_Q"))
    dx_k = linear_backward(dk, x, w["W_K"], g["W_K"], g.get("b_K"))
    return dx_q + dx_k


def concat_attention(x: np.ndarray, w: dict, num_attention_heads: int,
                     additive_mask=None,
                     cache: dict | None = None) -> np.ndarray:
    """MultiHead(X) = concat(A_i X W_V,i) W_O + b_O: (B, T, H).

    All heads in one batched product. Writes ``cache``: those of
    :func:`attention_probs`, v, heads.
    """
    h = num_attention_heads
    A = attention_probs(x, w, h, additive_mask, cache)            # (B, h, T, T)
    v = split_heads(linear(x, w["W_V"], w.get("b_V")), h)  # (B, h, T, d_head)
    heads = merge_heads(A @ v)                           # (B, T, H)
    if cache is not None:
        cache.update(v=v, heads=heads)
    return linear(heads, w["W_O"], w.get("b_O"))         # (B, T, H)


def concat_attention_backward(dy, cache, w, g) -> np.ndarray:
    """dO_i = (dy W_O^T)_i,  dA_i = dO_i V_i^T,  dV_i = A_i^T dO_i.

    dW_O, db_O, dW_V and db_V are added into g. Reads ``cache``: A, v,
    heads, x (written by :func:`concat_attention`).
    """
    A, v = cache["A"], cache["v"]
    d_heads = linear_backward(dy, cache["heads"], w["W_O"], g["W_O"],
                              g.get("b_O"))          # (B, T, H)
    dO = split_heads(d_heads, A.shape[1])            # (B, h, T, d_head)
    dA = dO @ v.swapaxes(-1, -2)                     # (B, h, T, T)
    dv = merge_heads(A.swapaxes(-1, -2) @ dO)        # (B, T, H)
    dx_v = linear_backward(dv, cache["x"], w["W_V"], g["W_V"], g.get("b_V"))
    return dx_v + attention_probs_backward(dA, cache, w, g)


def sum_attention(x: np.ndarray, w: dict, num_attention_heads: int,
                  additive_mask=None, cache: dict | None = None) -> np.ndarray:
    """MultiHead(X) = sum_i A_i X W'_V,i + b_O, with W'_V of shape (h, H, H).

    All heads in one batched product. Writes ``cache``: those of
    :func:`attention_probs`, v.
    """
    h = num_attention_heads
    A = attention_probs(x, w, h, additive_mask, cache)  # (B, h, T, T)
    v = x[:, None] @ w["W_V"]  # (B, h, T, H): every head's values, full width
    if cache is not None:
        cache["v"] = v
    out = (A @ v).sum(axis=1)                                    # (B, T, H)
    return out if w.get("b_O") is None else out + w["b_O"]


def sum_attention_backward(dy, cache, w, g) -> np.ndarray:
    """dA_i = dy (X W'_V,i)^T,  dW'_V,i = X^T A_i^T dy,  dx = sum_i A_i^T dy W'_V,i^T + (via A_i).

    Reads ``cache``: A, v, x (written by :func:`sum_attention`).
    """
    A, v, x = cache["A"], cache["v"], cache["x"]
    if "b_O" in g:
        g["b_O"] += rows(dy).sum(axis=0)
    dA = dy[:, None] @ v.swapaxes(-1, -2)              # (B, h, T, T)
    dv = A.swapaxes(-1, -2) @ dy[:, None]              # (B, h, T, H)
    g["W_V"] += np.einsum("bti,bhtj->hij", x, dv)      # (h, H, H)
    dx = (dv @ w["W_V"].swapaxes(-1, -2)).sum(axis=1)  # (B, T, H)
    return dx + attention_probs_backward(dA, cache, w, g)


#: The attention forms by the name ``EncoderConfig.attention`` takes: (forward, backward, per-head loop).
ATTENTION_FORMS = {"concat": (concat_attention, concat_attention_backward, concat_attention_loop),
                   "sum": (sum_attention, sum_attention_backward, sum_attention_loop)}


def _shape_rule(form: str, name: str, H: int, h: int) -> tuple[int, ...]:
    """The shape every weight must have in ``form``: vectors (H,), matrices (H, H), sum-form W_V (h, H, H)."""
    if name.startswith("b_"):
        return (H,)
    return (h, H, H) if (form, name) == ("sum", "W_V") else (H, H)


def check_attention_weights(w, num_attention_heads, form: str) -> tuple[int, int]:
    """(H, h) after checking ``w`` is a complete, consistent weight dict of ``form``."""
    h = check_int("num_attention_heads", num_attention_heads, minimum=1)
    check_choice("form", form, tuple(ATTENTION_FORMS))
    if not isinstance(w, dict):
        raise TypeError(f"w must be a dict of weight arrays, got {type(w).__name__}")
    required = ("W_Q", "W_K", "W_V", "W_O") if form == "concat" else ("W_Q", "W_K", "W_V")
    missing = [k for k in required if w.get(k) is None]
    if missing:
        raise ValueError(f"w is missing {missing}: the {form} form needs {list(required)}")
    if form == "sum":
        for k, why in (("W_O", "it has no output projection"), ("b_V", "fold value biases into b_O")):
            if w.get(k) is not None:
                raise ValueError(f"w holds {k}, which the sum form does not have ({why})")
    for k in (*required, "b_Q", "b_K", "b_V", "b_O"):
        if w.get(k) is not None and not isinstance(w[k], np.ndarray):
            raise TypeError(f"w[{k!r}] must be a numpy array, got {type(w[k]).__name__}")
    if w["W_Q"].ndim != 2:
        raise ValueError(f"w['W_Q'] must be a hidden_size x hidden_size matrix, got shape {w['W_Q'].shape}")
    H = w["W_Q"].shape[-1]
    check_heads(H, h, where="the width of W_Q")
    for k in (*required, "b_Q", "b_K", "b_V", "b_O"):
        if w.get(k) is not None and w[k].shape != _shape_rule(form, k, H, h):
            raise ValueError(f"w[{k!r}] has shape {w[k].shape}; with hidden_size = {H} and "
                             f"num_attention_heads = {h} the {form} form needs {_shape_rule(form, k, H, h)}")
    for k in (*required, "b_Q", "b_K", "b_V", "b_O"):  # NaN or inf poisons every output (and hangs an SVD)
        if w.get(k) is not None:
            check_finite_array(f"w[{k!r}]", w[k])
    return H, h


def _mask_fits(M, B: int, T: int) -> bool:
    """(B or 1, 1, 1 or T, T): one additive mask M for every head, per key or per (query, key)."""
    return (isinstance(M, np.ndarray) and M.ndim == 4 and M.shape[0] in (1, B) and M.shape[1] == 1
            and M.shape[2] in (1, T) and M.shape[3] == T)


def check_attention(x, w, num_attention_heads, form: str, additive_mask=None) -> tuple[int, int]:
    """(H, h) after checking inputs, weights and additive mask of one attention call, before any work."""
    H, h = check_attention_weights(w, num_attention_heads, form)
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f":
        raise TypeError(f"x must be a float numpy array of shape (B, T, hidden_size), got "
                        f"{type(x).__name__}" + (f" of {x.dtype}" if isinstance(x, np.ndarray) else ""))
    if x.ndim != 3 or x.shape[-1] != H:
        raise ValueError(f"x must have shape (B, T, hidden_size) with hidden_size = {H} (the width of W_Q), "
                         f"got {x.shape}")
    B, T, _ = x.shape
    check_memory(forward_activation_bytes(B, T, H, h, H, form, x.itemsize),
                 f"attention on x of shape {x.shape}")
    check_finite_array("x", x)
    M = check_unmasked("additive_mask", additive_mask)
    if M is not None and not _mask_fits(M, B, T):
        got = M.shape if isinstance(M, np.ndarray) else type(M).__name__
        raise ValueError(f"additive_mask must be an additive mask of shape (B, 1, 1, T) = {(B, 1, 1, T)} (as "
                         f"the function additive_mask makes it) or (B, 1, T, T), B or 1 rows; got {got}")
    if M is not None and (M.dtype.kind != "f" or np.isnan(M).any() or M.max() > 0):
        raise ValueError("additive_mask must be an additive float mask: 0 where a key is attended, a large "
                         "negative number where it is not (the function additive_mask makes it from an "
                         "attention_mask of ones and zeros)")
    if M is not None and np.isneginf(M).all(axis=-1).any():
        raise ValueError("additive_mask holds -inf for every key of a row: that query attends to nothing, "
                         "and its softmax is 0 / 0; leave it a key, or mask with a large finite negative "
                         "number as the function additive_mask does (a row of padding then weighs every key "
                         "alike)")
    return H, h


def multi_head_attention(x: np.ndarray, w: dict, num_attention_heads: int, form: str = "concat",
                         additive_mask=None, *, per_head: bool = False) -> np.ndarray:
    """MultiHead(X) in ``form`` ("concat" or "sum"), batched or, with ``per_head``, one head at a time.

    The checked entry: ``x``, ``w`` and ``additive_mask`` are validated before any work.
    """
    check_attention(x, w, num_attention_heads, form, additive_mask)
    forward, _, loop = ATTENTION_FORMS[form]
    with np.errstate(over="ignore", invalid="ignore"):  # reported below, by name
        attend = loop if check_bool("per_head", per_head) else forward
        out = attend(x, w, num_attention_heads, additive_mask)
    if not np.isfinite(out).all():
        raise ValueError("x and w are finite, but the output overflowed to NaN or infinity: scale them down")
    return out


def random_attention_weights(hidden_size: int, num_attention_heads: int, form: str = "concat", *,
                             bias: bool = True, seed: int = 0) -> dict:
    """W ~ N(0, 1 / H) for every weight of one attention sublayer, biases too when ``bias`` (non-zero, so
    that tests and figures exercise them); for tests, figures and timings."""
    H = check_int("hidden_size", hidden_size, minimum=1)
    h = check_int("num_attention_heads", num_attention_heads, minimum=1)
    check_choice("form", form, tuple(ATTENTION_FORMS))
    check_bool("bias", bias)
    check_heads(H, h)
    shapes = {"W_Q": (H, H), "W_K": (H, H), "W_V": (h, H, H) if form == "sum" else (H, H)}
    shapes |= {"W_O": (H, H)} if form == "concat" else {}
    check_memory(8 * sum(math.prod(s) for s in shapes.values()),
                 f"{form} weights for hidden_size = {H}, num_attention_heads = {h}")
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    w = {name: rng.normal(0.0, 1 / math.sqrt(H), shape) for name, shape in shapes.items()}
    if bias:
        names = ("b_Q", "b_K", "b_V", "b_O") if form == "concat" else ("b_Q", "b_K", "b_O")
        w |= {name: rng.normal(0.0, 1 / math.sqrt(H), H) for name in names}
    return w
