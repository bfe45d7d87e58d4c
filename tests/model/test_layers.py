"""The layers' kernels: what they compute, in the dtype they are given."""

import numpy as np
import pytest

from geron_lib.model.layers import ACTIVATIONS, gelu, gelu_new


@pytest.mark.parametrize("act", sorted(ACTIVATIONS))
def test_activations_and_derivatives_keep_float32_and_its_precision(act):
    x = np.linspace(-4, 4, 101)
    for fn in ACTIVATIONS[act]:
        y = fn(x.astype(np.float32))
        assert y.dtype == np.float32, fn.__name__  # no silent upcast
        np.testing.assert_allclose(y, fn(x), rtol=2e-6, atol=2e-6, err_msg=fn.__name__)


def test_gelu_forms():
    x = np.array([-3.0, -1.0, 0.0, 0.5, 2.0])
    from scipy.stats import norm

    np.testing.assert_allclose(gelu(x), x * norm.cdf(x), rtol=1e-14)
    t = np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))
    np.testing.assert_allclose(gelu_new(x), 0.5 * x * (1 + t), rtol=1e-14)
