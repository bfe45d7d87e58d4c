"""A model moved off its initial weights, for gradient checks: zero biases and unit layer-norm gains are
special points where a wrong backward can still agree with finite differences."""

import numpy as np


def randomised(model, seed: int):
    """Move every parameter off its initial value, so zero biases and unit gains are not special points."""
    rng = np.random.default_rng(seed)
    for p in model.parameters().values():
        p += rng.normal(0, 0.3, p.shape)
    return model
