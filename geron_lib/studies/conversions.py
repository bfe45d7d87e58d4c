"""Converting attention weights between the two forms of :mod:`geron_lib.model.attention`.

concat -> sum is exact:  W'_V,i = W_V,i W_O,i  and  b'_O = b_O + b_V W_O  (every row of A_i sums to 1).
sum -> concat factors every W'_V,i through d_head dimensions: exact when its rank <= d_head, otherwise the
best such approximation (truncated SVD, by the Eckart-Young theorem), returned with its error.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..model.attention import check_attention_weights
from ..validate import check_int, check_memory


def _check_weights(w: dict, num_attention_heads, form: str, maps: int) -> tuple[int, int]:
    """(H, h) of complete, finite float32 or float64 weights of ``form`` (integer weights would truncate
    the factors, and numpy's SVD takes no float16), with memory for ``maps`` arrays of (h, H, H): the
    value maps and what is computed from them."""
    H, h = check_attention_weights(w, num_attention_heads, form)
    for k, v in w.items():
        if isinstance(v, np.ndarray) and v.dtype not in (np.float32, np.float64):
            raise TypeError(f"w[{k!r}] must hold float32 or float64 numbers, got {v.dtype}")
    check_memory(maps * h * H * H * w["W_V"].itemsize, f"{maps} x {h} value maps of {H} x {H}")
    return H, h


def _check_sum_to_concat(w, num_attention_heads, rank) -> tuple[int, int, int]:
    """:func:`sum_to_concat`'s arguments, checked: (H, h, r), memory for W_V and U and V^T of its SVD."""
    H, h = _check_weights(w, num_attention_heads, "sum", maps=3)
    d_head = H // h
    r = d_head if rank is None else check_int("rank", rank, minimum=1)
    if r > d_head:
        raise ValueError(f"rank must lie in [1, d_head] = [1, {d_head}] (d_head = hidden_size / "
                         f"num_attention_heads = {H} / {h}): a concat head cannot carry more; got {r}")
    return H, h, r


def value_maps(w: dict, num_attention_heads: int, form: str) -> np.ndarray:
    """W'_V,i = W_V[:, cols_i] W_O[cols_i, :]:  (H x d_head)(d_head x H) = H x H, of rank at most d_head.

    Every head's full-width value map as one (h, H, H) array, for either form.
    """
    H, h = _check_weights(w, num_attention_heads, form, maps=1)
    if form == "sum":
        return w["W_V"]
    d_head = H // h
    W_V = w["W_V"].reshape(H, h, d_head).transpose(1, 0, 2)  # (h, H, d_head): head i's columns of W_V
    W_O = w["W_O"].reshape(h, d_head, H)                     # (h, d_head, H): head i's rows of W_O
    return W_V @ W_O                                         # (h, H, H)


def concat_to_sum(w: dict, num_attention_heads: int) -> dict:
    """W'_V,i = W_V,i W_O,i,  b'_O = b_O + b_V W_O   (A_i 1_T = 1_T).

    Sum-form weights that compute exactly what the concat-form weights
    ``w`` compute: every row of A_i sums to one, so the value bias reaches
    the output as the constant row b_V W_O, which b'_O holds.
    """
    _check_weights(w, num_attention_heads, "concat", maps=1)
    keep = ("W_Q", "b_Q", "W_K", "b_K")
    out = {k: w[k].copy() for k in keep if w.get(k) is not None}
    out["W_V"] = value_maps(w, num_attention_heads, "concat")  # (h, H, H)
    b_O, b_V = w.get("b_O"), w.get("b_V")
    if b_V is not None:
        b_VO = b_V @ w["W_O"]
        b_O = b_VO if b_O is None else b_O + b_VO
    if b_O is not None:
        out["b_O"] = b_O.copy()
    return out


class Factored(NamedTuple):
    """Concat-form weights from :func:`sum_to_concat`, and their error.

    ``error`` = sqrt(sum_i ||W'_V,i - W_V,i W_O,i||^2 / sum_i ||W'_V,i||^2), Frobenius norms: 0 up to
    rounding when every W'_V,i has rank at most the rank used.
    """

    weights: dict
    error: float


def sum_to_concat(w: dict, num_attention_heads: int,
                  rank: int | None = None) -> Factored:
    """W'_V,i = U S V^T ~ (U_r S_r^(1/2)) (S_r^(1/2) V_r^T)   (truncated SVD).

    Concat-form weights whose heads have value maps of rank ``rank``
    (default d_head) closest to the sum-form ``w``, zero-padded to d_head
    columns of W_V and rows of W_O, and the relative error (0 when every
    W'_V,i has rank <= r).
    """
    H, h, r = _check_sum_to_concat(w, num_attention_heads, rank)
    d_head = H // h
    U, S, Vt = np.linalg.svd(w["W_V"])  # (h, H, H), (h, H), (h, H, H)
    root = np.sqrt(S[:, :r])            # (h, r)
    dtype = w["W_V"].dtype
    W_V = np.zeros((h, H, d_head), dtype)
    W_V[:, :, :r] = U[:, :, :r] * root[:, None, :]
    W_O = np.zeros((h, d_head, H), dtype)
    W_O[:, :r, :] = root[:, :, None] * Vt[:, :r, :]
    keep = ("W_Q", "b_Q", "W_K", "b_K")
    out = {k: w[k].copy() for k in keep if w.get(k) is not None}
    out["W_V"] = W_V.transpose(1, 0, 2).reshape(H, H)  # block i: head i
    out["W_O"] = W_O.reshape(H, H)                     # block i: head i
    if w.get("b_O") is not None:
        out["b_V"] = np.zeros(H, w["b_O"].dtype)
        out["b_O"] = w["b_O"].copy()
    total = float((S**2).sum())
    dropped = float((S[:, r:] ** 2).sum())
    return Factored(out, (dropped / total) ** 0.5 if total else 0.0)
