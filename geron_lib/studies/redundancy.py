"""How many of an attention sublayer's numbers its outputs pin down, counted directly: the rank of the
Jacobian of the outputs with respect to every parameter, at random parameters and inputs.

Near a generic point the parameters that give the same outputs form a smooth family, and the directions
along it are exactly the null space of that Jacobian: its rank is the number of effective parameters, and
the parameter count minus the rank the number of redundant ones (the closed form is
:func:`geron_lib.costs.params.redundant_attention_params`). The Jacobian comes from the library's own
backward pass, one pass per output number, in float64; enough input rows make the rank the family's
dimension rather than a limit of the sample (``tests/studies/test_redundancy.py`` checks that doubling
them changes nothing).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..model.attention import ATTENTION_FORMS, random_attention_weights
from ..validate import check_bool, check_choice, check_heads, check_int, check_memory, check_open_unit

#: Relative tolerance of the numerical rank: singular values below it times the largest count as zero.
TOLERANCE = 1e-8


class EffectiveCount(NamedTuple):
    """One layer's parameters, the rank of its output Jacobian, and the singular values behind it."""

    parameters: int               # numbers the layer stores
    rank: int                     # singular values above ``tolerance`` times the largest
    singular_values: np.ndarray   # of the Jacobian, descending, divided by the largest
    tolerance: float

    @property
    def redundant(self) -> int:
        """Parameters the outputs cannot pin down: ``parameters - rank``."""
        return self.parameters - self.rank

    @property
    def gap(self) -> tuple[float, float]:
        """(smallest kept, largest dropped) relative singular value: the tolerance sits between them."""
        s = self.singular_values
        return float(s[self.rank - 1]), float(s[self.rank]) if self.rank < len(s) else 0.0


def output_jacobian(form: str, w: dict, x: np.ndarray, num_attention_heads: int) -> np.ndarray:
    """J[n, p] = d y_n / d theta_p: every output number of ``form`` on ``x`` (B, T, H) against every
    parameter of ``w`` (in its order, each raveled), by one backward pass per output number.

    A kernel: :func:`effective_parameters` checks what it passes in.
    """
    forward, backward, _ = ATTENTION_FORMS[form]
    rows = []
    for sequence in x:  # a sequence's outputs depend on its own rows only
        cache = {}
        y = forward(sequence[None], w, num_attention_heads, None, cache)  # (1, T, H)
        for n in range(y.size):
            dy = np.zeros_like(y)
            dy.flat[n] = 1.0
            g = {name: np.zeros_like(p) for name, p in w.items()}
            backward(dy, cache, w, g)
            rows.append(np.concatenate([g[name].ravel() for name in w]))
    return np.array(rows)  # (B T H, parameters)


def effective_parameters(form: str = "concat", hidden_size: int = 8, num_attention_heads: int = 2,
                         seq_len: int = 6, sequences: int = 16, *, bias: bool = True, seed: int = 0,
                         tolerance: float = TOLERANCE) -> EffectiveCount:
    """rank d(outputs)/d(parameters) of one attention sublayer of ``form``, at weights
    ``random_attention_weights(..., seed=seed)`` and ``sequences`` random inputs of ``seq_len`` rows
    (float64); the numerical rank counts the singular values above ``tolerance`` times the largest."""
    check_choice("form", form, tuple(ATTENTION_FORMS))
    H = check_int("hidden_size", hidden_size, minimum=1, maximum=64)
    h = check_int("num_attention_heads", num_attention_heads, minimum=1)
    check_heads(H, h)
    T = check_int("seq_len", seq_len, minimum=2)  # one row: the softmax is 1 and the scores never matter
    B = check_int("sequences", sequences, minimum=1)
    check_bool("bias", bias)
    tolerance = check_open_unit("tolerance", tolerance)
    w = random_attention_weights(H, h, form, bias=bias, seed=check_int("seed", seed, minimum=0))
    parameters = sum(p.size for p in w.values())
    check_memory(8 * B * T * H * parameters, f"the output Jacobian of {B * T * H} numbers by {parameters}")
    x = np.random.default_rng(seed + 1).normal(size=(B, T, H))  # (B, T, H)
    s = np.linalg.svd(output_jacobian(form, w, x, h), compute_uv=False)
    s = s / s[0]
    return EffectiveCount(parameters, int((s > tolerance).sum()), s, tolerance)
