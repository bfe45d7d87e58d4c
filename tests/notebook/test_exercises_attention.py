"""The output-projection chapter's checkers accept the right answer and say why a wrong one is wrong."""

from geron_lib.costs.params import attention_params
from geron_lib.model.attention import random_attention_weights
from geron_lib.notebook.exercises.attention import check_attention_params, check_sum_weights
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
