"""The layers' kernels: what they compute, and how (the activations avoid numpy's slow power)."""

import numpy as np
import pytest

from geron_lib.model.layers import ACTIVATIONS, gelu, gelu_new, layer_norm, layer_norm_backward, linear


class Traced(np.ndarray):
    """An array that records the name of every numpy ufunc applied to it."""

    calls: list[str] = []

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        Traced.calls.append(ufunc.__name__)
        def plain(x):
            return x.view(np.ndarray) if isinstance(x, Traced) else x

        if "out" in kwargs:  # in-place ufuncs write into an array that may be traced
            kwargs["out"] = tuple(plain(x) for x in kwargs["out"])
        out = getattr(ufunc, method)(*map(plain, inputs), **kwargs)
        return out.view(Traced) if isinstance(out, np.ndarray) else out


@pytest.mark.parametrize("act", sorted(ACTIVATIONS))
def test_activations_and_derivatives_never_call_power(act):
    # x ** 3 goes through np.power, about 90 times slower than x * x * x on a float32 array: neither the
    # activation nor its derivative may use it (gelu_new_grad once did)
    x = np.linspace(-4, 4, 101, dtype=np.float32).view(Traced)
    for fn in ACTIVATIONS[act]:
        Traced.calls = []
        y = fn(x)
        assert Traced.calls, "the trace saw no ufunc at all"
        assert not {"power", "float_power"} & set(Traced.calls), (fn.__name__, Traced.calls)
        assert y.dtype == np.float32, fn.__name__  # no silent upcast either


def test_gelu_forms():
    x = np.array([-3.0, -1.0, 0.0, 0.5, 2.0])
    from scipy.stats import norm

    np.testing.assert_allclose(gelu(x), x * norm.cdf(x), rtol=1e-14)
    t = np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))
    np.testing.assert_allclose(gelu_new(x), 0.5 * x * (1 + t), rtol=1e-14)


def test_linear_folds_rows_and_layer_norm_backward_reads_what_its_forward_wrote():
    rng = np.random.default_rng(0)
    x, W, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5)), rng.normal(size=5)
    np.testing.assert_allclose(linear(x, W, b), np.einsum("bti,io->bto", x, W) + b, rtol=1e-13)
    cache = {}
    gain, bias = rng.normal(size=4), rng.normal(size=4)
    y = layer_norm(x, gain, bias, 1e-12, cache)
    assert set(cache) == {"x_hat", "std", "gain"}
    np.testing.assert_allclose(y.mean(axis=-1), bias.mean() + (cache["x_hat"] * gain).mean(axis=-1))
    g_gain, g_bias = np.zeros(4), np.zeros(4)
    dx = layer_norm_backward(np.ones_like(y), cache, g_gain, g_bias)
    np.testing.assert_allclose(g_bias, np.full(4, 6.0))
    assert dx.shape == x.shape
