"""Factorised embeddings: a V x H table against a V x E lookup followed by an E x H projection,
the width where factorising stops saving, and the rank a factorised table can have."""

from __future__ import annotations

import numpy as np

from ..costs.params import linear_params
from ..validate import check_bool, check_int, check_memory, check_number, check_unmasked


def _check_sizes(vocab_size, hidden_size, embedding_size=None) -> tuple[int, int, int]:
    V = check_int("vocab_size", vocab_size, minimum=1)
    H = check_int("hidden_size", hidden_size, minimum=1)
    if embedding_size is None:
        return V, H, H
    E = check_int("embedding_size", embedding_size, minimum=1)
    if E > H:
        raise ValueError(f"embedding_size must be at most hidden_size ({H}), got {E}")
    return V, H, E


def token_embedding_params(vocab_size: int, hidden_size: int,
                           embedding_size: int | None = None, *,
                           projection: bool | None = None) -> int:
    """N_direct = V H,  N_factorised = V E + E H + H   (lookup, map, bias).

    The parameters that turn a token id into an H-wide vector. ``projection``
    as ``EncoderConfig.embedding_projection``: None maps E -> H only when
    E < H (E = H is the direct table); True keeps the map at E = H too, as a
    factorised table does.
    """
    V, H, E = _check_table_sizes(vocab_size, hidden_size, embedding_size,
                                 projection)
    mapped = E < H or bool(projection)
    return V * E + linear_params(E, H) if mapped else V * H


def _check_table_sizes(vocab_size, hidden_size, embedding_size, projection) -> tuple[int, int, int]:
    """:func:`token_embedding_params`'s arguments, checked; (V, H, E)."""
    V, H, E = _check_sizes(vocab_size, hidden_size, embedding_size)
    if projection is not None:
        check_bool("projection", projection)
    if projection is False and E < H:
        raise ValueError(f"projection is False, but embedding_size ({E}) is below hidden_size ({H}): only "
                         "an E -> H map can widen the embeddings")
    return V, H, E


def break_even_width(vocab_size: int, hidden_size: int, *,
                     bias: bool = True) -> float:
    """E* = V H / (V + H);  with the bias H:  E* = H (V - 1) / (V + H).

    The width E* below which factorising saves parameters (it saves for
    every E < E*): V E + E H = V H at the first, V E + E H + H = V H at the
    second, which counts the projection's bias.
    """
    V, H, _ = _check_sizes(vocab_size, hidden_size)
    check_bool("bias", bias)
    return H * (V - 1) / (V + H) if bias else V * H / (V + H)


def _check_rank(table: np.ndarray, rank) -> int:
    E = check_int("rank", rank, minimum=1)
    if E > min(table.shape):
        raise ValueError(f"rank must be at most min(V, H) = {min(table.shape)}, got {E}")
    return E


def _check_table(table) -> np.ndarray:
    check_unmasked("table", table)
    if not isinstance(table, np.ndarray) or table.ndim != 2 or table.dtype not in (np.float32, np.float64):
        raise TypeError("table must be a 2-D float32 or float64 numpy array (V, H)")
    if table.size == 0 or not np.isfinite(table).all():
        raise ValueError(f"table must be non-empty and finite, got shape {table.shape}")
    return table


def best_rank_factors(table: np.ndarray,
                      rank: int) -> tuple[np.ndarray, np.ndarray]:
    """Tok_(E) = lookup projection: (V, E) (E, H), Tok's truncated SVD.

    With Tok = U diag(sigma) U'^T, the lookup is U_E diag(sigma_E) and the
    projection U'_E^T: their product is the best rank-E approximation of
    the direct table ``table``.
    """
    Tok, E = _check_table(table), _check_rank(table, rank)
    U, sigma, right = np.linalg.svd(Tok, full_matrices=False)
    return U[:, :E] * sigma[:E], right[:E]  # (V, E), (E, H)


def rank_errors(table: np.ndarray) -> np.ndarray:
    """||Tok - Tok_(E)|| / ||Tok|| = sqrt(sum_{j>E} sigma_j^2 / sum_j sigma_j^2)

    Eckart-Young: the relative Frobenius error of the best rank-E
    approximation Tok_(E) of the direct table Tok, for E = 0, 1, ...,
    min(V, H).
    """
    sigma2 = np.linalg.svd(_check_table(table), compute_uv=False) ** 2
    tail = np.cumsum(sigma2[::-1])[::-1]  # tail[E]: sum of sigma_j^2, j > E
    tail = np.concatenate([tail, [0.0]])
    if tail[0] == 0:  # an all-zero table: rank 0, no error at any rank
        return np.zeros_like(tail)
    return np.sqrt(tail / tail[0])


def low_rank_table(vocab_size: int, hidden_size: int, rank: int, *, noise: float,
                   seed: int = 0) -> np.ndarray:
    """Tok = G_V G_H^T / sqrt(r) + noise N,  G_V: (V, r),  G_H: (H, r),  N: (V, H), all entries N(0, 1).

    A synthetic V x H table: rank-``rank`` structure plus Gaussian noise (noise 0: exactly low rank).
    """
    V, H, _ = _check_sizes(vocab_size, hidden_size)
    r = check_int("rank", rank, minimum=1)
    if r > min(V, H):
        raise ValueError(f"rank must be at most min(vocab_size, hidden_size) = {min(V, H)}, got {r}")
    noise = check_number("noise", noise)
    if noise < 0:
        raise ValueError(f"noise must be at least 0, got {noise}")
    seed = check_int("seed", seed, minimum=0)
    check_memory(8 * (2 * V * H + (V + H) * r), f"a vocab_size={V} x hidden_size={H} table")
    rng = np.random.default_rng(seed)
    structure = rng.standard_normal((V, r)) @ rng.standard_normal((r, H)) / np.sqrt(r)
    return structure + noise * rng.standard_normal((V, H))
