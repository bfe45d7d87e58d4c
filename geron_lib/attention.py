"""Multi-head self-attention in its two parameterisations, batched over rows and heads.

concat (Vaswani et al.):  MultiHead(X) = concat(A_1 X W_V,1, ..., A_h X W_V,h) W_O + b_O,
                          each W_V,h is H x d_head, W_O is H x H.
sum (full-width heads):   MultiHead(X) = A_1 X W'_V,1 + ... + A_h X W'_V,h + b_O,
                          each W'_V,h is H x H, and there is no W_O.
Both share A_h = softmax(Q_h K_h^T / sqrt(d_head)), with Q_h, K_h the h-th d_head columns of X W_Q, X W_K.
Each form comes twice: batched (one matmul over a heads axis) and as a loop over heads, written to be read.
"""

from __future__ import annotations

import math

import numpy as np

from .layers import linear, softmax
from .validate import check_bool, check_choice, check_int, check_memory

FORMS = ("concat", "sum")


def _shape_rule(form: str, name: str, H: int, h: int) -> tuple[int, ...]:
    """The shape every weight must have in ``form``: vectors (H,), matrices (H, H), sum-form W_V (h, H, H)."""
    if name.startswith("b_"):
        return (H,)
    return (h, H, H) if (form, name) == ("sum", "W_V") else (H, H)


def check_attention_weights(w, num_heads, form: str) -> tuple[int, int]:
    """(H, h) after checking ``w`` is a complete, consistent weight dict of ``form``."""
    h = check_int("num_heads", num_heads, minimum=1)
    check_choice("form", form, FORMS)
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
        raise ValueError(f"w['W_Q'] must be a d_model x d_model matrix, got shape {w['W_Q'].shape}")
    H = w["W_Q"].shape[-1]
    if H % h:
        raise ValueError(f"d_model ({H}, the width of W_Q) must be divisible by num_heads ({h}): "
                         "every head gets d_head = d_model / num_heads columns")
    for k in (*required, "b_Q", "b_K", "b_V", "b_O"):
        if w.get(k) is not None and w[k].shape != _shape_rule(form, k, H, h):
            raise ValueError(f"w[{k!r}] has shape {w[k].shape}; with d_model = {H} and num_heads = {h} "
                             f"the {form} form needs {_shape_rule(form, k, H, h)}")
    return H, h


def _mask_fits(mask, B: int, T: int) -> bool:
    """(B or 1, 1, 1 or T, T): one mask for every head, per key or per (query, key)."""
    return (isinstance(mask, np.ndarray) and mask.ndim == 4 and mask.shape[0] in (1, B)
            and mask.shape[1] == 1 and mask.shape[2] in (1, T) and mask.shape[3] == T)


def check_attention(x, w, num_heads, form: str, mask=None) -> tuple[int, int]:
    """(H, h) after checking inputs, weights and mask of one attention call, before any work."""
    H, h = check_attention_weights(w, num_heads, form)
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f":
        raise TypeError(f"x must be a float numpy array of shape (B, T, d_model), got {type(x).__name__}"
                        + (f" of {x.dtype}" if isinstance(x, np.ndarray) else ""))
    if x.ndim != 3 or x.shape[-1] != H:
        raise ValueError(f"x must have shape (B, T, d_model) with d_model = {H} (the width of W_Q), "
                         f"got {x.shape}")
    B, T, _ = x.shape
    if mask is not None and not _mask_fits(mask, B, T):
        got = mask.shape if isinstance(mask, np.ndarray) else type(mask).__name__
        raise ValueError(f"mask must be an additive mask array of shape (B, 1, 1, T) = {(B, 1, 1, T)} "
                         f"(as additive_mask makes) or (B, 1, T, T), B or 1 rows; got {got}")
    values = h * T * H if form == "sum" else T * H  # the value tensor the batched form holds
    check_memory(x.itemsize * B * (3 * h * T * T + 2 * values + 6 * T * H),
                 f"attention on x of shape {x.shape}")
    return H, h


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
def attention_probs(x: np.ndarray, w: dict, num_heads: int, mask=None,
                    cache: dict | None = None) -> np.ndarray:
    """The attention matrices of every head, (B, h, T, T)."""
    q = split_heads(linear(x, w["W_Q"], w.get("b_Q")), num_heads)  # (B, h, T, d_head)
    k = split_heads(linear(x, w["W_K"], w.get("b_K")), num_heads)  # (B, h, T, d_head)
    scores = q @ k.swapaxes(-1, -2)                                 # (B, h, T, T)
    scores /= math.sqrt(q.shape[-1])  # in place: at long T the (B, h, T, T) arrays dominate memory
    if mask is not None:
        scores += mask
    A = softmax(scores)
    if cache is not None:
        cache.update(x=x, q=q, k=k, A=A)
    return A


def concat_attention(x: np.ndarray, w: dict, num_heads: int, mask=None,
                     cache: dict | None = None) -> np.ndarray:
    """concat(A_h X W_V,h) W_O + b_O, all heads in one batched matmul; (B, T, H) -> (B, T, H)."""
    check_attention(x, w, num_heads, "concat", mask)
    A = attention_probs(x, w, num_heads, mask, cache)              # (B, h, T, T)
    v = split_heads(linear(x, w["W_V"], w.get("b_V")), num_heads)  # (B, h, T, d_head)
    heads = merge_heads(A @ v)                                     # (B, T, H)
    if cache is not None:
        cache.update(v=v, heads=heads)
    return linear(heads, w["W_O"], w.get("b_O"))                   # (B, T, H)


def sum_attention(x: np.ndarray, w: dict, num_heads: int, mask=None,
                  cache: dict | None = None) -> np.ndarray:
    """sum_h A_h X W'_V,h + b_O, all heads in one batched matmul; W'_V is (h, H, H)."""
    check_attention(x, w, num_heads, "sum", mask)
    A = attention_probs(x, w, num_heads, mask, cache)  # (B, h, T, T)
    v = x[:, None] @ w["W_V"]                          # (B, h, T, H): every head's full-width values
    if cache is not None:
        cache["v"] = v
    out = (A @ v).sum(axis=1)                          # (B, T, H)
    return out if w.get("b_O") is None else out + w["b_O"]


def multi_head_attention(x: np.ndarray, w: dict, num_heads: int, form: str, mask=None,
                         cache: dict | None = None) -> np.ndarray:
    """Dispatch on the form named by ``EncoderConfig.attention``; ``cache`` records what backward needs."""
    check_choice("form", form, FORMS)
    return (concat_attention if form == "concat" else sum_attention)(x, w, num_heads, mask, cache)


def _columns(b, cols: slice):
    """The slice ``cols`` of an optional bias vector."""
    return None if b is None else b[cols]


# A_j = softmax(Q_j K_j^T / sqrt(d_head) + mask),  Q_j = X W_Q[:, cols_j] + b_Q[cols_j],  K_j likewise
def head_probs(x: np.ndarray, w: dict, j: int, d_head: int, mask=None) -> np.ndarray:
    """The attention matrix of head j alone, (B, T, T); head j owns columns j*d_head .. (j+1)*d_head - 1."""
    cols = slice(j * d_head, (j + 1) * d_head)
    Q = linear(x, w["W_Q"][:, cols], _columns(w.get("b_Q"), cols))  # (B, T, d_head)
    K = linear(x, w["W_K"][:, cols], _columns(w.get("b_K"), cols))  # (B, T, d_head)
    scores = Q @ K.swapaxes(-1, -2) / math.sqrt(d_head)             # (B, T, T)
    return softmax(scores if mask is None else scores + mask[:, 0])


# MultiHead(X) = concat(head_1, ..., head_h) W_O + b_O,   head_j = A_j (X W_V,j + b_V,j)
def concat_attention_loop(x: np.ndarray, w: dict, num_heads: int, mask=None) -> np.ndarray:
    """The concat form one head at a time, as in the paper; equals :func:`concat_attention`."""
    H, h = check_attention(x, w, num_heads, "concat", mask)
    d_head = H // h
    heads = []
    for j in range(h):
        cols = slice(j * d_head, (j + 1) * d_head)
        A = head_probs(x, w, j, d_head, mask)                           # (B, T, T)
        V = linear(x, w["W_V"][:, cols], _columns(w.get("b_V"), cols))  # (B, T, d_head)
        heads.append(A @ V)                                             # (B, T, d_head)
    return linear(np.concatenate(heads, axis=-1), w["W_O"], w.get("b_O"))  # (B, T, H)


# MultiHead(X) = A_1 X W'_V,1 + ... + A_h X W'_V,h + b_O
def sum_attention_loop(x: np.ndarray, w: dict, num_heads: int, mask=None) -> np.ndarray:
    """The summed form one head at a time, as in the discussion; equals :func:`sum_attention`."""
    H, h = check_attention(x, w, num_heads, "sum", mask)
    out = np.zeros(x.shape, np.result_type(x, w["W_V"]))  # (B, T, H)
    for j in range(h):
        A = head_probs(x, w, j, H // h, mask)  # (B, T, T)
        out += A @ (x @ w["W_V"][j])           # (B, T, H): head j's full-width values, weighted
    return out if w.get("b_O") is None else out + w["b_O"]


def random_attention_weights(d_model: int, num_heads: int, form: str = "concat", *, bias: bool = True,
                             seed: int = 0) -> dict:
    """Weights of one attention sublayer drawn from N(0, 1/d_model), biases too when ``bias``
    (non-zero, so that tests and figures exercise them); for tests, figures and timings."""
    H = check_int("d_model", d_model, minimum=1)
    h = check_int("num_heads", num_heads, minimum=1)
    check_choice("form", form, FORMS)
    check_bool("bias", bias)
    if H % h:
        raise ValueError(f"d_model ({H}) must be divisible by num_heads ({h})")
    shapes = {"W_Q": (H, H), "W_K": (H, H), "W_V": (h, H, H) if form == "sum" else (H, H)}
    shapes |= {"W_O": (H, H)} if form == "concat" else {}
    check_memory(8 * sum(math.prod(s) for s in shapes.values()), f"{form} weights for d_model = {H}, h = {h}")
    rng = np.random.default_rng(check_int("seed", seed))
    w = {name: rng.normal(0.0, 1 / math.sqrt(H), shape) for name, shape in shapes.items()}
    if bias:
        names = ("b_Q", "b_K", "b_V", "b_O") if form == "concat" else ("b_Q", "b_K", "b_O")
        w |= {name: rng.normal(0.0, 1 / math.sqrt(H), H) for name in names}
    return w
