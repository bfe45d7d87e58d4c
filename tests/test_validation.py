"""Bad input to the reference functions: a clear error naming the argument, before any work."""

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import geron_lib as g

SEQ = [1, 2, 3, 4, 5, 6, 7, 8]
BOTH = [g.albert, g.roberta]


def _refuses(fn, error, match, *args, **kwargs):
    with pytest.raises(error, match=match):
        fn(*args, **kwargs)


@pytest.mark.parametrize("fn", BOTH)
@pytest.mark.parametrize("X, error, match", [
    ("12345", TypeError, "X must be token ids"),
    (None, TypeError, "X must be token ids"),
    ([[1, 2, 3], [4, 5]], ValueError, "ragged"),
    ([1, float("nan"), 3], ValueError, "NaN or infinity"),
    ([1, float("inf")], ValueError, "NaN or infinity"),
    ([True, False, True], TypeError, "booleans"),
    ([1, True, 3], TypeError, "booleans"),
    (np.array([True, False]), TypeError, "booleans"),
    ([1, 1.5, 2], ValueError, "1.5.*not a whole number"),
    (np.zeros((2, 2, 2), int), ValueError, "3 dimensions"),
    (7, ValueError, "0 dimensions"),
    ([], ValueError, "X is empty"),
    ([[]], ValueError, "X is empty"),
    ([1, -2, 3], ValueError, "negative"),
    (["a", "b"], TypeError, "X must be token ids"),
    ([1, None], TypeError, "X must be token ids"),
    ([1 + 2j], TypeError, "X must be token ids"),
    ({1: 2}, TypeError, "X must be token ids"),
    ([1e300], ValueError, "larger than any vocabulary"),
])
def test_bad_ids(fn, X, error, match):
    _refuses(fn, error, match, X)


@pytest.mark.parametrize("fn", BOTH)
@pytest.mark.parametrize("kwargs, error, match", [
    (dict(n_layers=0), ValueError, "n_layers must be at least 1"),
    (dict(n_layers=-3), ValueError, "n_layers must be at least 1"),
    (dict(n_heads=0), ValueError, "n_heads must be at least 1"),
    (dict(d_model=0), ValueError, "d_model must be at least 1"),
    (dict(d_model=9, n_heads=2), ValueError, r"d_model \(9\) must be divisible by n_heads \(2\)"),
    (dict(vocab_size=8), ValueError, r"vocab_size \(8\) must be above the largest id in X \(8\)"),
    (dict(vocab_size=0), ValueError, "vocab_size must be at least 1"),
    (dict(d_ff=0), ValueError, "d_ff must be at least 1"),
    (dict(n_layers=2.0), TypeError, "n_layers must be an integer"),
    (dict(n_heads=True), TypeError, "n_heads must be an integer"),
    (dict(d_model="8"), TypeError, "d_model must be an integer"),
    (dict(d_model=None), TypeError, "d_model must be an integer"),
    (dict(vocab_size=9.5), TypeError, "vocab_size must be an integer"),
    (dict(seed=0.5), TypeError, "seed must be an integer"),
    (dict(seed=None), TypeError, "seed must be an integer"),
])
def test_bad_sizes(fn, kwargs, error, match):
    _refuses(fn, error, match, SEQ, **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(d_embed=0), "d_embed must be at least 1"),
    (dict(d_embed=9), r"d_embed \(9\) must lie in \[1, d_model\]"),
    (dict(d_embed=-1), "d_embed must be at least 1"),
])
def test_albert_bad_d_embed(kwargs, match):
    _refuses(g.albert, ValueError, match, SEQ, **kwargs)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(mask_prob=0), ValueError, "mask_prob must lie strictly between 0 and 1"),
    (dict(mask_prob=1), ValueError, "mask_prob must lie strictly between 0 and 1"),
    (dict(mask_prob=-0.1), ValueError, "mask_prob"),
    (dict(mask_prob=float("nan")), ValueError, "mask_prob must be finite"),
    (dict(mask_prob="0.15"), TypeError, "mask_prob must be a real number"),
    (dict(mask_prob=0.95), ValueError, "masks 8 of the 8 tokens"),
    (dict(epochs=0), ValueError, "epochs must be at least 1"),
    (dict(epochs=1.0), TypeError, "epochs must be an integer"),
])
def test_roberta_bad_masking(kwargs, error, match):
    _refuses(g.roberta, error, match, SEQ, **kwargs)


@pytest.mark.parametrize("fn, kwargs, match", [
    (g.albert, dict(vocab_size=10**12), r"albert\(vocab_size=1000000000000"),
    (g.albert, dict(d_model=2**20, n_heads=1, d_embed=1), r"albert\(.*d_model=1048576"),
    (g.roberta, dict(vocab_size=10**11), r"roberta\(vocab_size=100000000000"),
    (g.roberta, dict(d_model=2**19, n_heads=1), r"roberta\(.*d_model=524288"),
    (g.albert, dict(d_ff=10**11), r"d_ff=100000000000"),
])
def test_too_large_to_fit_is_refused_before_allocating(fn, kwargs, match):
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=match) as info:
            fn(SEQ, **kwargs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "GiB" in str(info.value)
    assert peak < 1_000_000, f"allocated {peak} bytes before refusing"


def test_whole_valued_floats_are_ids():
    np.testing.assert_array_equal(g.albert([1.0, 2.0, 3.0]).hidden, g.albert([1, 2, 3]).hidden)


_garbage = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 40), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3), st.lists(st.integers(-2, 9), max_size=4),
    st.lists(st.lists(st.integers(0, 9), max_size=3), max_size=3),
)


@settings(max_examples=300, deadline=None)
@given(X=_garbage, n_layers=_garbage, n_heads=_garbage, d_model=_garbage, d_embed=_garbage,
       vocab_size=_garbage, d_ff=_garbage, seed=_garbage)
def test_albert_raises_only_clear_errors(X, n_layers, n_heads, d_model, d_embed, vocab_size, d_ff, seed):
    try:
        g.albert(X, n_layers=n_layers, n_heads=n_heads, d_model=d_model, d_embed=d_embed,
                 vocab_size=vocab_size, d_ff=d_ff, seed=seed)
    except (ValueError, TypeError) as err:
        names = ("X", "n_layers", "n_heads", "d_model", "d_embed", "vocab_size", "d_ff", "seed")
        assert any(name in str(err) for name in names), str(err)


@settings(max_examples=300, deadline=None)
@given(X=_garbage, n_layers=_garbage, d_model=_garbage, mask_prob=_garbage, epochs=_garbage)
def test_roberta_raises_only_clear_errors(X, n_layers, d_model, mask_prob, epochs):
    try:
        g.roberta(X, n_layers=n_layers, d_model=d_model, mask_prob=mask_prob, epochs=epochs)
    except (ValueError, TypeError) as err:
        names = ("X", "n_layers", "n_heads", "d_model", "mask_prob", "epochs", "vocab_size")
        assert any(name in str(err) for name in names), str(err)


def test_float_dtype_is_float32_or_float64_by_any_spelling():
    from geron_lib.validate import check_float_dtype

    assert check_float_dtype("dtype", "float32") == np.float32
    assert check_float_dtype("dtype", np.float64) == np.float64
    for bad in (np.int32, "float16", np.complex128):
        with pytest.raises(ValueError, match="dtype must be float32 or float64"):
            check_float_dtype("dtype", bad)


def test_head_grid_checks_every_size_and_the_divisibility_rule():
    from geron_lib.validate import check_head_grid

    assert check_head_grid([4, 16], [1, 4], 128, 2) == ([4, 16], [1, 4], 128, 2)
    with pytest.raises(ValueError, match=r"divisible by every h; it is not by \[3, 5\]"):
        check_head_grid([4], [1, 3, 5], 128, 1)
    with pytest.raises(ValueError, match="at least one value"):
        check_head_grid([], [1], 128, 1)
    with pytest.raises(ValueError, match="every T"):
        check_head_grid([0], [1], 128, 1)


def test_the_shared_checks_convert_numpy_numbers_and_name_the_rule():
    from fractions import Fraction

    from geron_lib.validate import (
        check_bool,
        check_finite_array,
        check_int,
        check_number,
        check_unit_interval,
    )

    assert type(check_int("n", np.int64(2**62))) is int and check_int("n", np.uint8(7), maximum=7) == 7
    with pytest.raises(ValueError, match="n must be at most 7, got 8"):
        check_int("n", 8, maximum=7)
    assert check_bool("flag", np.bool_(True)) is True
    with pytest.raises(TypeError, match="flag must be True or False"):
        check_bool("flag", 1)
    assert check_number("lr", Fraction(1, 4)) == 0.25
    with pytest.raises(ValueError, match="lr must be finite, got a number beyond the largest float"):
        check_number("lr", 10**400)  # float() raised OverflowError
    assert check_unit_interval("wd", 0) == 0.0 and check_unit_interval("p", 1, closed_right=True) == 1.0
    for bad in (1.0, -0.01, float("nan")):
        with pytest.raises(ValueError, match="wd must"):
            check_unit_interval("wd", bad)
    w = np.ones(3)
    assert check_finite_array("w", w) is w
    for bad, error, match in ((np.array([1.0, np.inf]), ValueError, "w must be finite"),
                              (np.zeros(0), ValueError, "w is empty"),
                              (np.array(["a"]), TypeError, "w must hold real numbers"),
                              ([1.0], TypeError, "w must be a numpy array")):
        with pytest.raises(error, match=match):
            check_finite_array("w", bad)


def test_float_dtype_refuses_none_and_garbage_by_name():
    from geron_lib.validate import check_float_dtype

    # numpy reads a dtype off a number or an array (np.dtype(np.float32(0.5)) is float32): refused too
    for bad in (None, "garbage", 5, 0.5, np.float32(0.5), np.zeros(2), np.float64(1.0)):
        with pytest.raises(TypeError, match="dtype must be float32 or float64"):
            check_float_dtype("dtype", bad)


def test_exact_real_reads_the_number_itself_and_nothing_else():
    import numbers
    from decimal import Decimal
    from fractions import Fraction

    from geron_lib.validate import exact_real

    class Told(int):
        def __int__(self):
            return 0

        __index__ = __int__

    class Registered:  # a Real by registration only: its value would come from its own methods
        def __float__(self):
            return 1.0

    numbers.Real.register(Registered)
    assert exact_real(Told(5)) == 5 and type(exact_real(Told(5))) is int  # its digits, not its __int__
    assert exact_real(Fraction(Told(1), Told(4))) == Fraction(1, 4)
    assert exact_real(np.float32(0.5)) == 0.5 and exact_real(np.uint8(7)) == 7
    for none in (True, np.bool_(False), np.timedelta64(5), Decimal(1), 1 + 0j, "5", None, Registered()):
        assert exact_real(none) is None, none


def test_plain_array_refuses_a_mask_and_check_held_by_a_value_the_dtype_rounds_away():
    from geron_lib.validate import check_held_by, plain_array

    assert plain_array("a", [1, 2]).tolist() == [1, 2]
    with pytest.raises(TypeError, match="a must be a plain numpy array, got a masked array"):
        plain_array("a", np.ma.array([1, 2], mask=[0, 1]))
    assert check_held_by("eps", 1e-30, np.dtype(np.float32)) == 1e-30
    with pytest.raises(ValueError, match=r"eps \(1e-300\) must be at least the smallest normal float32"):
        check_held_by("eps", 1e-300, np.dtype(np.float32))
