"""What the attention tests share: batch shapes, inputs with a padding mask, and the error they compare by."""

import numpy as np

from geron_lib.model.attention import additive_mask

#: (B, T, H, h): one token and one head, odd sizes, h = H (d_head = 1), and wider ones.
SHAPES = [(1, 1, 4, 1), (2, 5, 12, 3), (3, 7, 16, 16), (2, 9, 24, 4), (1, 6, 32, 8)]


def attention_inputs(B, T, H, seed=0):
    """x (B, T, H) standard normal and the additive mask of ~30 % padding, every row keeping position 0."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(B, T, H))
    keep = (rng.random((B, T)) < 0.7).astype(int)
    keep[:, 0] = 1  # every row attends to at least one position
    return x, additive_mask(keep, np.float64)


def max_relative_error(a, b):
    """max |a - b| / max |b|."""
    return np.abs(a - b).max() / np.abs(b).max()
