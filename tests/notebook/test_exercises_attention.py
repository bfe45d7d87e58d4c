"""The output-projection chapter's checkers accept the right answer and say why a wrong one is wrong (the
compiler exercise's on hand-made programs, and once on programs jax compiled)."""

import numpy as np
import pytest
from program_texts import programs

from geron_lib.costs.params import attention_params
from geron_lib.model.attention import random_attention_weights
from geron_lib.notebook.exercises.attention import (
    check_attention_params,
    check_loop_products,
    check_sum_weights,
)
from geron_lib.studies.conversions import concat_to_sum


def test_checkers_say_why():
    assert check_attention_params(attention_params(512, 8, "sum"), 512, 8, "sum")
    no_bias = check_attention_params(attention_params(512, 8, "sum", False), 512, 8, "sum")
    assert not no_bias and "without biases" in no_bias.message
    per_head = check_attention_params(attention_params(512, 8, "sum") + 8 * 512, 512, 8, "sum")
    assert not per_head and "redundant" in per_head.message
    other = check_attention_params(attention_params(512, 8, "concat"), 512, 8, "sum")
    assert not other and "other form" in other.message

    w = random_attention_weights(16, 4, "concat", seed=1)
    ws = concat_to_sum(w, 4)
    assert check_sum_weights(ws, w, 4)
    unfolded = check_sum_weights(ws | {"b_O": w["b_O"]}, w, 4)
    assert not unfolded and "b_O + b_V @ W_O" in unfolded.message
    transposed = check_sum_weights(ws | {"W_V": ws["W_V"].swapaxes(1, 2)}, w, 4)
    assert not transposed and "transposed" in transposed.message
    wrong_block = check_sum_weights(ws | {"W_V": ws["W_V"][::-1].copy()}, w, 4)
    assert not wrong_block and "cols_i" in wrong_block.message
    changed_q = check_sum_weights(ws | {"W_Q": 2 * ws["W_Q"]}, w, 4)
    assert not changed_q and "W_Q should carry over" in changed_q.message
    not_sum = check_sum_weights(w, w, 4)
    assert not not_sum and "not sum-form weights" in not_sum.message


def _compiled(h, loop, batched, form="concat", T=16):
    """Hand-made programs of ``form`` at h heads: the loop with ``loop`` products, vmap and batched with
    ``batched`` (what compiled_programs([T], [h]) returns, but made here)."""
    return programs({(form, "loop", h, T): loop, (form, "vmap", h, T): batched,
                     (form, "batched", h, T): batched})


def test_the_compiler_checker_grades_the_loops_count_and_names_the_slips():
    compiled = _compiled(8, 41, 6)
    assert check_loop_products(41, compiled, 8) and check_loop_products(np.int64(41), compiled, 8)
    assert check_loop_products(41.0, compiled, 8)
    batched = check_loop_products(6, compiled, 8)
    assert not batched and "batched form" in batched.message and "merges none" in batched.message
    no_w_o = check_loop_products(40, compiled, 8)
    assert not no_w_o and "concat(Z_1, ..., Z_h) W_O" in no_w_o.message
    other = check_loop_products(8, compiled, 8)
    assert not other and "Count what one head multiplies" in other.message
    summed = _compiled(8, 40, 5, form="sum")
    assert check_loop_products(40, summed, 8, "sum")
    with_w_o = check_loop_products(41, summed, 8, "sum")
    assert not with_w_o and "no W_O" in with_w_o.message


@pytest.mark.parametrize("answer", ["41", None, [41], float("nan"), True, ..., {"loop": 41}])
def test_the_compiler_checker_never_crashes_on_an_answer(answer):
    verdict = check_loop_products(answer, _compiled(8, 41, 6), 8)
    assert not verdict and "should be a finite number" in verdict.message


def test_the_compiler_checker_refuses_programs_that_do_not_answer_the_question():
    with pytest.raises(ValueError, match="programs must hold the concat form's loop and batched .* at h = 4"):
        check_loop_products(41, _compiled(8, 41, 6), 4)
    two_T = _compiled(8, 41, 6) | _compiled(8, 41, 6, T=32)
    with pytest.raises(ValueError, match="at one T"):
        check_loop_products(41, two_T, 8)
    with pytest.raises(TypeError, match="programs must be a Mapping"):
        check_loop_products(41, [41], 8)
    with pytest.raises(ValueError, match="form must be one of"):
        check_loop_products(41, _compiled(8, 41, 6), 8, "both")


@pytest.mark.jax
def test_the_compiler_checker_on_programs_jax_compiled():
    pytest.importorskip("jax")
    from geron_lib.interop.jax_programs import compiled_programs

    compiled = compiled_programs([3], [2], hidden_size=8)
    # five products per head (three projections, the scores, the weighted values) and W_O once
    assert check_loop_products(5 * 2 + 1, compiled, 2)
    assert not check_loop_products(6, compiled, 2)
