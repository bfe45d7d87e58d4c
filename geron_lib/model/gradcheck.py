"""Checking hand-written gradients against central finite differences."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..validate import check_positive_number


def numeric_gradient(loss: Callable[[], float], p: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """dL/dp_i ~ (L(p + h e_i) - L(p - h e_i)) / 2h: the gradient of ``loss()`` with respect to the array
    ``p`` (changed in place, then restored)."""
    h = check_positive_number("h", h)
    out = np.zeros_like(p)
    for i in np.ndindex(p.shape):
        old = p[i]
        p[i] = old + h
        up = loss()
        p[i] = old - h
        down = loss()
        p[i] = old
        out[i] = (up - down) / (2 * h)
    return out


def relative_error(analytic: np.ndarray, numeric: np.ndarray) -> float:
    """||a - n|| / (||a|| + ||n||)   (0 when both are zero)."""
    scale = float(np.linalg.norm(analytic) + np.linalg.norm(numeric))
    return float(np.linalg.norm(analytic - numeric)) / scale if scale else 0.0


def check_gradients(model, batch, h: float = 1e-6) -> dict[str, float]:
    """For every parameter of a :class:`~geron_lib.model.mlm.MaskedLM`, the relative error of its
    backward-pass gradient on ``batch`` against central differences (use float64 weights)."""
    _, grads = model.loss_and_grads(batch)
    return {name: relative_error(grads[name], numeric_gradient(lambda: model.loss(batch), p, h))
            for name, p in model.parameters().items()}
