"""Checkers for the output-projection chapter: parameter counts, and a concat -> sum conversion by hand."""

from __future__ import annotations

import numpy as np

from ...costs.params import attention_params
from ...model.attention import check_attention_weights, concat_attention, sum_attention
from ...studies.conversions import value_maps
from ..noise import rounding_noise
from . import Feedback, grade_number

HINTS = {
    "concat": "The concat form stores four H x H matrices W_Q, W_K, W_V, W_O, plus four bias vectors of "
              "length H when it has biases.",
    "sum": "The sum form stores W_Q and W_K (H x H each), h full-width value maps of H x H and, with "
           "biases, b_Q, b_K and ONE b_O: no W_O, and no per-head value biases.",
}


def check_attention_params(answer, hidden_size: int, num_attention_heads: int, form: str,
                           bias: bool = True) -> Feedback:
    """Is ``answer`` the number of parameters of one attention sublayer of ``form``?"""
    expected = attention_params(hidden_size, num_attention_heads, form, bias)
    H, h = hidden_size, num_attention_heads
    # known slips, the most telling last (a later entry wins where two coincide)
    slips = {attention_params(H, h, "sum" if form == "concat" else "concat", bias):
             "That is the other form's count. " + HINTS[form]}
    if form == "sum":
        slips[expected + h * H] = ("You gave every head a value bias: they are redundant, since each row of "
                                   "A_i sums to 1, A_i 1_T b = 1_T b, so all of them fold into b_O.")
    if bias:
        slips[attention_params(H, h, form, bias=False)] = ("That is the count without biases; this layer "
                                                           "has them. " + HINTS[form])
    return grade_number(answer, expected, what=f"the number of parameters of the {form} form at "
                        f"H = {H}, h = {h}{'' if bias else ' without biases'}", hint=HINTS[form],
                        slips=slips)


def check_sum_weights(w_sum, w_concat: dict, num_attention_heads: int) -> Feedback:
    """Do the sum-form weights ``w_sum`` compute what the concat-form ``w_concat`` computes?"""
    H, h = check_attention_weights(w_concat, num_attention_heads, "concat")  # the exercise's own weights
    try:
        check_attention_weights(w_sum, num_attention_heads, "sum")
    except (TypeError, ValueError) as err:
        return Feedback(False, f"These are not sum-form weights yet: {err}.")
    x = np.random.default_rng(0).normal(size=(2, 5, H))  # (B, T, H)
    want = concat_attention(x, w_concat, h)  # both weight dicts checked above
    gap = float(np.abs(sum_attention(x, w_sum, h) - want).max())
    scale = float(np.abs(want).max())
    if gap <= 1e-9 * max(scale, 1.0):
        return Feedback(True, f"Both forms give the same outputs (largest difference {rounding_noise(gap)}).")
    for k in ("W_Q", "b_Q", "W_K", "b_K"):
        if (w_sum.get(k) is None) != (w_concat.get(k) is None) or (
                w_sum.get(k) is not None and not np.allclose(w_sum[k], w_concat[k])):
            return Feedback(False, f"{k} should carry over unchanged: the attention matrices A_i are the "
                                   "same in both forms.")
    V = value_maps(w_concat, h, "concat")  # (h, H, H)
    if not np.allclose(w_sum["W_V"], V):
        if np.allclose(w_sum["W_V"], V.swapaxes(1, 2)):
            why = "each of your W'_V,i is transposed: it maps a row x to x W'_V,i, so it is W_V,i W_O,i."
        else:
            why = ("W'_V,i should be W_V[:, cols_i] @ W_O[cols_i, :], where cols_i are head i's d_head "
                   "columns of W_V, the same indices as head i's rows of W_O.")
        return Feedback(False, f"The value maps differ (largest output difference {gap:.2g}): {why}")
    return Feedback(False, f"W_V is right, but outputs still differ by {gap:.2g}, by the same row at every "
                           "position: fold the value bias into the output bias, b_O + b_V @ W_O.")
