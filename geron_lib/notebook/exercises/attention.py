"""Checkers for the output-projection chapter: parameter counts, a concat -> sum conversion by hand, and what
XLA keeps of a loop over heads (read from programs jax compiled)."""

from __future__ import annotations

import numpy as np

from ...costs.params import attention_params
from ...model.attention import check_attention_weights, concat_attention, sum_attention
from ...studies.compiled_heads import product_table
from ...studies.conversions import value_maps
from ...validate import check_choice, check_int
from ..noise import rounding_noise
from . import Feedback, grade_number, say

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
                        slips=slips, factors={h: f"h = {h}, the number of heads"})


def check_sum_weights(w_sum, w_concat: dict, num_attention_heads: int) -> Feedback:
    """Do the sum-form weights ``w_sum`` compute what the concat-form ``w_concat`` computes?"""
    H, h = check_attention_weights(w_concat, num_attention_heads, "concat")  # the exercise's own weights
    try:
        check_attention_weights(w_sum, num_attention_heads, "sum")
    except (TypeError, ValueError) as err:
        return Feedback(False, f"These are not sum-form weights yet: {err}.")
    dtype = w_concat["W_Q"].dtype
    for k in ("W_Q", "b_Q", "W_K", "b_K", "W_V", "b_O"):
        if w_sum.get(k) is not None and w_sum[k].dtype != dtype:
            got = w_sum[k].dtype
            why = (f"{got} keeps about {np.finfo(got).precision} significant digits, so even the right "
                   "weights would differ from them by more than this check allows" if got.kind == "f"
                   else f"{got} holds whole numbers only")
            return Feedback(False, f"w_sum[{k!r}] is {got}, but the concat weights are {dtype}: {why}. "
                                   f"Compute them in {dtype}.")
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
        return Feedback(False, f"The value maps differ{say(f' (largest output difference {gap:.2g})', '')}: "
                               f"{why}")
    return Feedback(False, f"W_V is right, but outputs still differ{say(f' by {gap:.2g}', '')}, by the same "
                           "row at every position: fold the value bias into the output bias, "
                           "b_O + b_V @ W_O.")


def check_loop_products(answer, programs, num_attention_heads: int, form: str = "concat") -> Feedback:
    """Exercise: how many matrix products does XLA keep in the optimised program of ``form`` written as a
    Python loop over ``num_attention_heads`` heads? ``programs`` holds that program and the batched one at
    one T, as ``geron_lib.interop.jax_programs.compiled_programs([T], [h])`` returns them (compiled by jax,
    the optional jax extra, on this backend; this module reads their text only)."""
    form = check_choice("form", form, ("concat", "sum"))
    h = check_int("num_attention_heads", num_attention_heads, minimum=1)
    counts = {}
    for row in product_table(programs):
        if row["form"] == form and row["h"] == h:
            counts.setdefault(row["style"], []).append(row["after"])
    if len(counts.get("loop", [])) != 1 or len(counts.get("batched", [])) != 1:
        raise ValueError(f"programs must hold the {form} form's loop and batched programs at h = {h}, at one "
                         f"T, as compiled_programs([T], [{h}]) returns them")
    (loop,), (batched,) = counts["loop"], counts["batched"]
    own = ("its projections X W_Q,i, X W_K,i and X W_V,i" if form == "concat"
           else "its projections X W_Q,i and X W_K,i, its full-width values X W'_V,i")
    slips = {batched: "That is what the batched form (and jax.vmap) keeps: one product per role, the heads "
                      "in its batch dimension. The loop is compiled as written: here XLA merges none of its "
                      "per-head products."}
    if form == "concat":
        slips[loop - 1] = ("Every head's products are there; add the one that runs once, for all heads "
                           "together: concat(Z_1, ..., Z_h) W_O.")
    else:
        slips[loop + 1] = "The summed form has no W_O: nothing runs once after the heads."
    return grade_number(answer, loop, what=f"the products XLA keeps of the {form} form's loop over h = {h} "
                        "heads", slips=slips, factors={h: f"h = {h}, the number of heads"},
                        hint=f"Count what one head multiplies: {own}, its scores Q_i K_i^T and its weighted "
                             "values A_i times the values; then what runs once for all heads. The chapter's "
                             "table shows the count at fewer heads.")
