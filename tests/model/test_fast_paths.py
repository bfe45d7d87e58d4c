"""The speed-ups compute the textbook formulas: folded matrix products, in-place GELUs and softmax, a float32
Phi, layer norm by dot products, a sparse scatter-add, heads merged in order, a one-array cross-entropy."""

import math

import numpy as np
import pytest

from geron_lib.model.attention import additive_mask, attention_probs, merge_heads, split_heads
from geron_lib.model.layers import (
    gelu,
    gelu_grad,
    gelu_new,
    gelu_new_grad,
    layer_norm,
    layer_norm_backward,
    linear,
    normal_cdf,
    scatter_add_rows,
    softmax,
    softmax_backward,
)
from geron_lib.model.mlm import cross_entropy

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


def test_normal_cdf_is_scipys_in_float64_and_close_in_float32():
    from scipy.special import erf, ndtr

    x = np.linspace(-12, 12, 200_001)
    np.testing.assert_array_equal(normal_cdf(x), 0.5 * (1 + erf(x / math.sqrt(2))))
    fast = normal_cdf(x.astype(np.float32))
    assert fast.dtype == np.float32
    # float32 rounds Phi near 1 to 6e-8 already; the rational fit stays within 4 such steps
    assert np.abs(fast - ndtr(x.astype(np.float32).astype(np.float64))).max() < 2.5e-7
    assert fast.min() == 0 and fast.max() == 1


@pytest.mark.parametrize("dtype, tolerance", [(np.float64, 1e-15), (np.float32, 2.5e-7)])
def test_gelu_and_its_derivatives_are_the_formulas(dtype, tolerance):
    from scipy.special import ndtr

    x = np.linspace(-10, 10, 20_001).astype(dtype)
    x64 = x.astype(np.float64)
    phi = np.exp(-x64 * x64 / 2) / math.sqrt(2 * math.pi)
    scale = np.maximum(np.abs(x64), 1)
    assert np.all(np.abs(gelu(x) - x64 * ndtr(x64)) <= tolerance * scale)
    assert np.all(np.abs(gelu_grad(x) - (ndtr(x64) + x64 * phi)) <= 2 * tolerance * scale)
    c, a = math.sqrt(2 / math.pi), 0.044715
    t = np.tanh(c * (x64 + a * x64**3))
    expected = 0.5 * (1 + t) + 0.5 * x64 * (1 - t * t) * c * (1 + 3 * a * x64**2)
    # float32: 1 - t^2 in the textbook form rounds away 1e-6 at |x| ~ 5 already
    assert np.abs(gelu_new_grad(x) - expected).max() < (1e-13 if dtype == np.float64 else 2e-6)
    for f in (gelu, gelu_grad, gelu_new, gelu_new_grad):
        assert f(x).dtype == dtype


@pytest.mark.parametrize("gain", [True, False])
def test_layer_norm_and_its_backward_are_the_textbook_formulas(gain):
    x, dy = rng.normal(size=(2, 3, 8)), rng.normal(size=(2, 3, 8))
    g, b = (rng.normal(size=8), rng.normal(size=8)) if gain else (None, None)
    cache, g_gain, g_bias = {}, np.zeros(8), np.zeros(8)
    y = layer_norm(x, g, b, 1e-5, cache)
    x_hat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, x_hat * (1 if g is None else g) + (0 if b is None else b), rtol=1e-13)
    dx = layer_norm_backward(dy, cache, g_gain if gain else None, g_bias if gain else None)
    d = dy * (1 if g is None else g)
    expected = (d - d.mean(-1, keepdims=True) - x_hat * (d * x_hat).mean(-1, keepdims=True)) / np.sqrt(
        x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(dx, expected, rtol=1e-12, atol=1e-13)
    if gain:
        np.testing.assert_allclose(g_gain, (dy * x_hat).sum((0, 1)), rtol=1e-13)
        np.testing.assert_allclose(g_bias, dy.sum((0, 1)), rtol=1e-13)
    params32 = (None, None) if g is None else (g.astype(np.float32), b.astype(np.float32))
    assert layer_norm(x.astype(np.float32), *params32).dtype == np.float32  # no silent upcast


def test_softmax_backward_is_the_formula():
    z, dA = rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 3, 5))
    A = softmax(z)
    np.testing.assert_allclose(softmax_backward(dA, A), A * (dA - (dA * A).sum(-1, keepdims=True)),
                               rtol=1e-13, atol=1e-15)


def test_scatter_add_rows_is_np_add_at():
    index = np.array([[3, 1, 3], [0, 3, 1]])  # repeated rows, and rows never used
    values = rng.normal(size=(2, 3, 4))
    table = rng.normal(size=(6, 4))
    expected = table.copy()
    np.add.at(expected, index, values)
    scatter_add_rows(table, index, values)
    np.testing.assert_allclose(table, expected, rtol=1e-14)


def test_merge_heads_puts_the_heads_side_by_side_and_undoes_split_heads():
    x = rng.normal(size=(2, 3, 5, 4))  # (B, h, T, d_head)
    np.testing.assert_array_equal(merge_heads(x), np.concatenate([x[:, i] for i in range(3)], axis=-1))
    y = rng.normal(size=(2, 5, 12))
    np.testing.assert_array_equal(merge_heads(split_heads(y, 3)), y)


def test_cross_entropy_is_the_log_softmax_formula():
    logits, targets = rng.normal(size=(6, 9)) * 30, rng.integers(0, 9, 6)
    log_p = logits - logits.max(-1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(-1, keepdims=True))
    loss, probs = cross_entropy(logits, targets)
    assert loss == pytest.approx(-log_p[np.arange(6), targets].mean(), rel=1e-13)
    np.testing.assert_allclose(probs, np.exp(log_p), rtol=1e-12)
