"""The float32 speed-ups compute the textbook formulas: folded matrix products, x*x*x, in-place softmax."""

import math

import numpy as np
import pytest

from geron_lib.model.attention import additive_mask, attention_probs, split_heads
from geron_lib.model.layers import gelu_new, linear, softmax

rng = np.random.default_rng(0)


@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 3, 5), (2, 2, 3, 5)])
def test_linear_folds_leading_axes_into_one_product(shape):
    x, W, b = rng.normal(size=shape), rng.normal(size=(5, 7)), rng.normal(size=7)
    np.testing.assert_allclose(linear(x, W, b), x @ W + b, rtol=1e-13, atol=1e-13)
    assert linear(x, W).shape == shape[:-1] + (7,)


def test_linear_with_a_stack_of_matrices_broadcasts_as_matmul():
    x, W = rng.normal(size=(3, 5)), rng.normal(size=(4, 5, 2))
    np.testing.assert_array_equal(linear(x, W), x @ W)


def test_gelu_new_is_the_tanh_formula():
    x = np.linspace(-8, 8, 1001)
    expected = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(gelu_new(x), expected, rtol=1e-14, atol=1e-15)
    assert gelu_new(x.astype(np.float32)).dtype == np.float32


def test_softmax_leaves_its_input_alone():
    z = rng.normal(size=(2, 3, 4))
    before = z.copy()
    p = softmax(z)
    np.testing.assert_array_equal(z, before)
    np.testing.assert_allclose(p, np.exp(z) / np.exp(z).sum(-1, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(softmax(np.array([1, 2, 3])).sum(), 1.0)  # integers too


def test_attention_probs_is_the_formula_with_the_mask():
    H, h = 8, 2
    x = rng.normal(size=(2, 5, H))
    w = {"W_Q": rng.normal(size=(H, H)), "W_K": rng.normal(size=(H, H))}
    keep = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    q, k = split_heads(x @ w["W_Q"], h), split_heads(x @ w["W_K"], h)
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(H // h) + additive_mask(keep, np.float64)
    expected = np.exp(scores - scores.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    A = attention_probs(x, w, h, additive_mask(keep, np.float64))
    np.testing.assert_allclose(A, expected, atol=1e-14)
    assert np.all(A[0, :, :, 3:] == 0)  # padded keys get no weight
