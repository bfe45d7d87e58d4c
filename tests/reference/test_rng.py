"""The vectorised generator equals the step-by-step recurrence bit for bit."""

import numpy as np
import pytest

from geron_lib import rng


@pytest.mark.parametrize("seed", [0, 1, 101, 977, 2**32 - 1, 2**32 + 5, -7, 10**15])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 1000, 4097])
def test_vectorised_draws_equal_the_loop_bit_for_bit(seed, n):
    fast, slow = rng.draws(seed, n), rng.draws_loop(seed, n)
    assert fast.dtype == slow.dtype == np.float64
    assert np.array_equal(fast, slow)


def test_first_draw_by_hand():
    s = (1664525 * 5 + 1013904223) % 2**32
    assert rng.draws(5, 1)[0] == (2 * ((s + 0.5) / 2**32) - 1) * 0.1


def test_scale_and_range():
    x = rng.draws(3, 10_000, scale=0.5)
    assert np.array_equal(x, rng.draws_loop(3, 10_000, scale=0.5))
    assert (np.abs(x) < 0.5).all() and abs(x.mean()) < 0.01  # uniform on (-0.5, 0.5)


def test_seed_is_taken_mod_2_to_the_32():
    assert np.array_equal(rng.draws(7, 50), rng.draws(7 + 2**32, 50))


def test_tensor_fills_row_major():
    t = rng.tensor(11, (3, 4, 5))
    assert t.shape == (3, 4, 5)
    assert np.array_equal(t.ravel(order="C"), rng.draws(11, 60))


def test_draws_rows_equal_separate_draws():
    seeds = [0, 977, 1008, -3]
    rows = rng.draws_rows(seeds, 33, scale=0.5)
    for row, seed in zip(rows, seeds, strict=True):
        assert np.array_equal(row, rng.draws_loop(seed, 33, scale=0.5))


@pytest.mark.parametrize("call, match", [
    (lambda: rng.draws(1.5, 3), "seed must be an integer"),
    (lambda: rng.draws(True, 3), "seed must be an integer"),
    (lambda: rng.draws(0, -1), "n must be at least 0"),
    (lambda: rng.draws(0, 3, scale=0), "scale must be positive"),
    (lambda: rng.draws(0, 10**12), "GiB"),
    (lambda: rng.tensor(0, (2, -1)), "shape must be at least 0"),
])
def test_bad_arguments(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()
