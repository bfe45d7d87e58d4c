"""Both attention forms in JAX (geron_lib.interop.jax_attention), each written three ways: equal to the numpy
forms on the same weights (float32 to 1e-5, float64 to 1e-12), their gradients equal to the library's
hand-written backward, and the program entries of geron_lib.interop.jax_programs (their texts and refusals).
Needs the optional jax extra: under CI=true a skip fails."""

import numpy as np
import pytest

from geron_lib.model.attention import ATTENTION_FORMS, additive_mask, random_attention_weights

pytestmark = pytest.mark.jax

STYLES = ("loop", "vmap", "batched")
B, T, H, h = 2, 5, 12, 3


@pytest.fixture(scope="module")
def jax():
    return pytest.importorskip("jax")


@pytest.fixture(scope="module")
def forms(jax):
    from geron_lib.interop.jax_attention import JAX_FORMS

    return JAX_FORMS


@pytest.fixture(scope="module")
def programs(jax):
    from geron_lib.interop import jax_programs

    return jax_programs


@pytest.fixture
def x64(jax):
    """float64 in jax for one test only: the setting is restored when it ends."""
    with jax.enable_x64(True):
        yield
    assert jax.numpy.ones(1).dtype == np.float32, "jax_enable_x64 leaked out of the test"


def inputs(form: str, dtype, *, padded: bool):
    w = {k: v.astype(dtype) for k, v in random_attention_weights(H, h, form, seed=1).items()}
    x = np.random.default_rng(2).normal(size=(B, T, H)).astype(dtype)  # (B, T, H)
    keep = np.ones((B, T))
    keep[1, 3:] = 0  # the second row's last two positions are padding
    return x, w, additive_mask(keep, dtype) if padded else None


def check_equal(jax, forms, form, style, dtype, tolerance, padded):
    x, w, mask = inputs(form, dtype, padded=padded)
    want = ATTENTION_FORMS[form][0](x, w, h, mask)  # the numpy kernel, batched
    got = np.asarray(jax.jit(forms[form][style], static_argnums=2)(x, w, h, mask))
    assert got.dtype == dtype and got.shape == (B, T, H)
    np.testing.assert_allclose(got, want, rtol=0, atol=tolerance)


@pytest.mark.parametrize("padded", [False, True], ids=["no mask", "padding mask"])
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("form", ["concat", "sum"])
def test_every_style_equals_the_numpy_form_in_float32(jax, forms, form, style, padded):
    check_equal(jax, forms, form, style, np.float32, 1e-5, padded)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("form", ["concat", "sum"])
def test_every_style_equals_the_numpy_form_in_float64(jax, forms, x64, form, style):
    check_equal(jax, forms, form, style, np.float64, 1e-12, padded=True)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("form", ["concat", "sum"])
def test_jax_grad_equals_the_hand_written_backward(jax, forms, x64, form, style):
    x, w, mask = inputs(form, np.float64, padded=True)
    R = np.random.default_rng(3).normal(size=(B, T, H))  # L = sum(MultiHead(X) * R), so dL/dy = R
    forward, backward, _ = ATTENTION_FORMS[form]
    cache = {}
    forward(x, w, h, mask, cache)
    g = {k: np.zeros_like(v) for k, v in w.items()}
    dx = backward(R, cache, w, g)

    def loss(x, w):
        return (forms[form][style](x, w, h, mask) * R).sum()

    gx, gw = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, w)
    np.testing.assert_allclose(gx, dx, rtol=0, atol=1e-12)
    assert set(gw) == set(g)
    for k in g:
        np.testing.assert_allclose(gw[k], g[k], rtol=0, atol=1e-12, err_msg=k)


def test_programs_are_stablehlo_then_hlo(programs):
    x, w, _ = inputs("sum", np.float32, padded=False)
    lowered, optimised = programs.program_texts("sum", "vmap", x, w, h)
    assert "func.func public @main" in lowered and "stablehlo.dot_general" in lowered
    assert optimised.startswith("HloModule") and "ENTRY" in optimised
    assert set(programs.versions()) == {"jax", "jaxlib", "backend", "platform_version", "runtime",
                                        "XLA_FLAGS"}


def test_program_entries_refuse_bad_requests(programs):
    x, w, _ = inputs("concat", np.float32, padded=False)
    with pytest.raises(ValueError, match="style must be one of 'loop', 'vmap', 'batched'; got 'fused'"):
        programs.program_texts("concat", "fused", x, w, h)
    with pytest.raises(ValueError, match="the concat form needs"):
        programs.program_texts("concat", "loop", x, {"W_Q": w["W_Q"]}, h)
    bad_h = r"hidden_size \(12\) must be divisible by every h; it is not by \[5\]"
    with pytest.raises(ValueError, match=bad_h):
        programs.compiled_programs([4], [5], hidden_size=12)
    with pytest.raises(ValueError, match="dtype must be float32 or float64, got float16"):
        programs.compiled_programs([4], [1], hidden_size=4, dtype="float16")


def test_compiled_programs_cover_every_form_style_and_size(programs):
    texts = programs.compiled_programs([2, 3], [1], hidden_size=4, dtype="float64")
    assert list(texts) == [(form, style, 1, t) for form in ("concat", "sum") for style in STYLES
                           for t in (2, 3)]
    assert all("f64" in lowered and "f64[" in optimised for lowered, optimised in texts.values())
