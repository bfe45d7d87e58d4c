"""The reference implementation's masking: a fixed number of positions per row, drawn from its generator."""

from __future__ import annotations

import numpy as np

from ..validate import check_int, check_memory, check_open_unit
from .rng import M, draws_rows


def masked_count(T: int, mask_prob: float) -> int:
    """n_mask = max(1, round(p T)), Python's half-to-even round: positions masked per row of length T."""
    T = check_int("T", T, minimum=1, maximum=2**53)  # p T is a float
    return max(1, round(check_open_unit("mask_prob", mask_prob) * T))


def fixed_count_masks(seed: int, epoch: int, n_rows: int, T: int, n_mask: int) -> np.ndarray:
    """u_b ~ U(0, 1)^T from seed + 977 (epoch + 1) + 31 b;  mask the n_mask positions with the smallest u.

    The reference implementation's dynamic mask of one epoch: (n_rows, n_mask) positions, ascending per row.
    """
    seed, epoch = check_int("seed", seed), check_int("epoch", epoch, minimum=0)
    n_rows, T = check_int("n_rows", n_rows, minimum=1), check_int("T", T, minimum=1)
    n_mask = check_int("n_mask", n_mask, minimum=1)
    if n_mask > T:
        raise ValueError(f"n_mask ({n_mask}) must be at most T ({T})")
    # row seeds (int64), draws (uint32 states, float64), argsort (int64), the sorted positions (int64)
    check_memory(8 * n_rows + 28 * n_rows * T + 8 * n_rows * n_mask, f"masks of n_rows={n_rows:,} x T={T:,}")
    row_seeds = (seed + 977 * (epoch + 1)) % M + 31 * np.arange(n_rows)  # the generator takes seeds mod 2^32
    u = draws_rows(row_seeds.tolist(), T, scale=0.5) + 0.5           # (n_rows, T)
    return np.sort(np.argsort(u, axis=1, kind="stable")[:, :n_mask], axis=1)
