"""Where heads look: attention weights drawn as one small matrix per head, heads side by side."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ..validate import check_int, check_type, plain_array
from .plots import new_figure


def head_patterns_figure(tokens: list[str], A: np.ndarray, layers=None, *, width: float = 9.0) -> Figure:
    """Panel (l, i) draws A_{l,i}: row t is where token t looks (its weights over the tokens, summing to
    one), darker for more weight. ``A`` is (L, h, T, T) as ``studies.trained_attention.head_patterns``
    returns it; ``layers`` picks rows of panels by layer number (1 to L; default every layer)."""
    check_type("tokens", tokens, list)
    A = plain_array("A", A)
    if A.ndim != 4 or A.shape[2] != A.shape[3] or A.shape[2] != len(tokens):
        raise ValueError(f"A must be (L, h, T, T) with T = len(tokens) = {len(tokens)}; got {A.shape}")
    L, h, T, _ = A.shape
    layers = list(range(1, L + 1)) if layers is None else [check_int("every layer", n, minimum=1)
                                                             for n in layers]
    if not layers:
        raise ValueError("layers is empty: give at least one layer number")
    if max(layers) > L:
        raise ValueError(f"layers must lie between 1 and L = {L}; got {max(layers)}")
    fig, axes = new_figure(len(layers), h, width=width, height=1.4 + width / h * len(layers))
    axes = np.array(axes).reshape(len(layers), h)
    for row, layer in enumerate(layers):
        for i in range(h):
            ax = axes[row, i]
            ax.imshow(A[layer - 1, i], cmap="Greys", vmin=0, vmax=1, interpolation="nearest")
            ax.grid(False)
            ax.set_xticks(range(T), tokens if row == len(layers) - 1 else [], rotation=90, fontsize=9)
            ax.set_yticks(range(T), tokens if i == 0 else [], fontsize=9)
            ax.tick_params(length=0)
            ax.set_title(f"layer {layer}, head {i + 1}", fontsize=10)
    fig.supylabel("token looking (query, row t)", fontsize=10)
    fig.supxlabel("token looked at (key)", fontsize=10)
    return fig
