"""Converting attention weights between the concat and the sum forms: exact one way, best-rank the other."""

import numpy as np
import pytest
from attention_cases import SHAPES, attention_inputs, max_relative_error

from geron_lib.costs.params import attention_params
from geron_lib.model.attention import concat_attention, random_attention_weights, sum_attention
from geron_lib.studies.conversions import concat_to_sum, sum_to_concat, value_maps


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("B, T, H, h", SHAPES)
def test_concat_to_sum_is_exact(bias, B, T, H, h):
    w = random_attention_weights(H, h, "concat", bias=bias, seed=7)
    x, mask = attention_inputs(B, T, H, seed=1)
    ws = concat_to_sum(w, h)
    for m in (None, mask):
        assert max_relative_error(sum_attention(x, ws, h, m), concat_attention(x, w, h, m)) < 1e-10
    # the converted layer is a sum-form layer of the formula's size, whose value maps have rank <= d_head
    assert sum(a.size for a in ws.values()) == attention_params(H, h, "sum", bias)
    assert (np.linalg.matrix_rank(ws["W_V"]) <= H // h).all()


def test_value_maps_are_blocks_of_W_V_times_blocks_of_W_O():
    H, h = 12, 3
    w = random_attention_weights(H, h, "concat", seed=2)
    V = value_maps(w, h, "concat")
    for j in range(h):
        cols = slice(4 * j, 4 * j + 4)
        np.testing.assert_allclose(V[j], w["W_V"][:, cols] @ w["W_O"][cols, :], atol=1e-14)
    np.testing.assert_array_equal(value_maps(concat_to_sum(w, h), h, "sum"), V)


@pytest.mark.parametrize("B, T, H, h", SHAPES)
def test_sum_to_concat_is_exact_within_the_rank(B, T, H, h):
    w = random_attention_weights(H, h, "concat", seed=8)
    ws = concat_to_sum(w, h)
    back, error = sum_to_concat(ws, h)
    assert error < 1e-12
    x, mask = attention_inputs(B, T, H, seed=2)
    assert max_relative_error(concat_attention(x, back, h, mask), concat_attention(x, w, h, mask)) < 1e-10
    assert sum(a.size for a in back.values()) == attention_params(H, h, "concat")


def test_sum_to_concat_exact_for_any_rank_at_most_the_one_asked():
    H, h, r = 24, 2, 5  # d_head = 12, every V'_h of rank 5
    rng = np.random.default_rng(9)
    ws = random_attention_weights(H, h, "sum", seed=9)
    ws["W_V"] = rng.normal(size=(h, H, r)) @ rng.normal(size=(h, r, H))
    x, mask = attention_inputs(2, 6, H)
    for rank in (r, 8, 12):
        back, error = sum_to_concat(ws, h, rank)
        assert error < 1e-12
        assert max_relative_error(concat_attention(x, back, h, mask), sum_attention(x, ws, h, mask)) < 1e-10
    assert sum_to_concat(ws, h, r - 1).error > 1e-3


def test_one_head_makes_the_forms_the_same_family():
    ws = random_attention_weights(16, 1, "sum", seed=12)  # full rank 16 = d_head
    back, error = sum_to_concat(ws, 1)
    assert error < 1e-12
    x, mask = attention_inputs(2, 5, 16)
    assert max_relative_error(concat_attention(x, back, 1, mask), sum_attention(x, ws, 1, mask)) < 1e-10


def test_sum_to_concat_error_is_the_best_possible():
    H, h = 16, 2
    ws = random_attention_weights(H, h, "sum", bias=False, seed=10)
    errors = []
    rng = np.random.default_rng(11)
    for rank in range(1, H // h + 1):
        back, error = sum_to_concat(ws, h, rank)
        V = value_maps(back, h, "concat")
        direct = np.linalg.norm(ws["W_V"] - V) / np.linalg.norm(ws["W_V"])
        assert error == pytest.approx(direct, rel=1e-10)
        assert (np.linalg.matrix_rank(V) <= rank).all()
        # Eckart-Young: nudging the factors of the truncated SVD never lowers the error
        for _ in range(5):
            nudged = back | {"W_V": back["W_V"] + 1e-3 * rng.normal(size=(H, H)) * (back["W_V"] != 0)}
            worse = np.linalg.norm(ws["W_V"] - value_maps(nudged, h, "concat")) / np.linalg.norm(ws["W_V"])
            assert worse >= error
        errors.append(error)
    assert all(a > b for a, b in zip(errors, errors[1:], strict=False)) and errors[-1] > 0.1
    assert sum_to_concat(ws | {"W_V": np.zeros((h, H, H))}, h).error == 0.0


def test_bad_conversion_input():
    c = random_attention_weights(12, 3, "concat")
    s = concat_to_sum(c, 3)
    with pytest.raises(ValueError, match=r"rank must lie in \[1, d_head\] = \[1, 4\]"):
        sum_to_concat(s, 3, 5)
    with pytest.raises(ValueError, match="rank must be at least 1"):
        sum_to_concat(s, 3, 0)
    with pytest.raises(TypeError, match="rank must be an integer"):
        sum_to_concat(s, 3, True)
    with pytest.raises(TypeError, match="rank must be an integer"):
        sum_to_concat(s, 3, 2.5)
    with pytest.raises(ValueError, match="divisible by num_attention_heads"):
        concat_to_sum(c, 5)
    with pytest.raises(ValueError, match="divisible by num_attention_heads"):
        sum_to_concat(s, 5)
    with pytest.raises(ValueError, match="missing \\['W_O'\\]"):
        concat_to_sum(s, 3)  # sum-form weights given where concat ones are expected
    with pytest.raises(ValueError, match="holds W_O"):
        sum_to_concat(c | {"W_V": s["W_V"]}, 3)
    with pytest.raises(ValueError, match="form must be one of"):
        value_maps(c, 3, "both")
