"""Factorised embeddings: counts agree with count_parameters, the break-even width separates saving from
not saving, and the rank view follows Eckart-Young."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geron_lib import EncoderConfig, count_parameters
from geron_lib.studies.factorised import (
    best_rank_factors,
    break_even_width,
    low_rank_table,
    rank_errors,
    token_embedding_params,
)


@settings(max_examples=80, deadline=None)
@given(V=st.integers(1, 5000), H=st.integers(1, 300), data=st.data())
def test_token_count_matches_count_parameters(V, H, data):
    E = data.draw(st.integers(1, H))
    config = EncoderConfig(vocab_size=V, embedding_size=E, hidden_size=H, num_attention_heads=1)
    c = count_parameters(config)
    assert token_embedding_params(V, H, E) == c.token_embeddings + c.embedding_projection
    assert token_embedding_params(V, H) == V * H
    # a factorised table keeps its E -> H map at E = H too (transformers' AlbertModel builds it so)
    kept = count_parameters(config.replace(embedding_projection=True))
    assert token_embedding_params(V, H, E, projection=True) == (kept.token_embeddings
                                                              + kept.embedding_projection)
    assert token_embedding_params(V, H, H, projection=True) == V * H + H * H + H
    assert token_embedding_params(V, H, H, projection=False) == token_embedding_params(V, H, H) == V * H


@settings(max_examples=200, deadline=None)
@given(V=st.integers(2, 10**6), H=st.integers(2, 8192))
def test_break_even_separates_saving_from_not(V, H):
    for bias in (True, False):
        star = break_even_width(V, H, bias=bias)
        below, above = math.ceil(star) - 1, math.floor(star) + 1
        if below >= 1:
            assert V * below + below * H + (H if bias else 0) < V * H
        assert V * above + above * H + (H if bias else 0) > V * H
    # the saving is exactly (V + H)(E* - E) with the bias-counting E*
    E = max(1, H // 3)  # below H, since H >= 2
    saving = V * H - token_embedding_params(V, H, E)
    assert saving == pytest.approx((V + H) * (break_even_width(V, H) - E))
    # the bias moves E* down by H / (V + H) < 1
    assert break_even_width(V, H, bias=False) - break_even_width(V, H) == pytest.approx(H / (V + H))


def test_break_even_for_albert_base():
    # V H / (V + H) = 30000 * 768 / 30768 = 748.83...: every E up to 748 saves
    assert break_even_width(30000, 768, bias=False) == pytest.approx(30000 * 768 / 30768)
    assert token_embedding_params(30000, 768, 748) < 30000 * 768 < token_embedding_params(30000, 768, 749)


@pytest.mark.parametrize("E", [1, 3, 8])
def test_factorised_table_has_rank_at_most_E(E):
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((200, E)), rng.standard_normal((E, 40))  # (V, E), (E, H)
    assert np.linalg.matrix_rank(A @ B) == E
    assert rank_errors(A @ B)[E] == pytest.approx(0, abs=1e-7)


def test_best_rank_factors_reach_the_eckart_young_error():
    T = low_rank_table(300, 64, 10, noise=0.3, seed=1)
    errors = rank_errors(T)
    assert errors.shape == (65,) and errors[0] == 1 and errors[-1] == 0
    assert np.all(np.diff(errors) <= 1e-12)  # more rank never hurts
    rng = np.random.default_rng(2)
    for E in (1, 5, 10, 30):
        A, B = best_rank_factors(T, E)
        assert A.shape == (300, E) and B.shape == (E, 64)
        achieved = np.linalg.norm(T - A @ B) / np.linalg.norm(T)
        assert achieved == pytest.approx(errors[E], rel=1e-9)
        # any other rank-E factorisation does no better (here: a random one, least-squares fitted)
        P = rng.standard_normal((E, 64))
        fitted = np.linalg.lstsq(P.T, T.T, rcond=None)[0].T @ P
        assert np.linalg.norm(T - fitted) / np.linalg.norm(T) >= errors[E] - 1e-12


def test_low_rank_table_structure():
    exact = low_rank_table(100, 32, 4, noise=0.0, seed=3)
    assert np.linalg.matrix_rank(exact) == 4
    np.testing.assert_array_equal(exact, low_rank_table(100, 32, 4, noise=0.0, seed=3))
    noisy = rank_errors(low_rank_table(2000, 64, 8, noise=0.1, seed=3))
    random = rank_errors(np.random.default_rng(3).standard_normal((2000, 64)))
    # structure: rank 8 keeps nearly everything; a random table keeps only about 8/64 of its energy
    assert noisy[8] < 0.2 < 0.9 < random[8]


@pytest.mark.parametrize("call, error, match", [
    (lambda: token_embedding_params(0, 8), ValueError, "vocab_size"),
    (lambda: token_embedding_params(10, 8, 9), ValueError, "embedding_size must be at most"),
    (lambda: token_embedding_params(10, 8.0), TypeError, "hidden_size"),
    (lambda: token_embedding_params(10, 8, 4, projection=False), ValueError, "only an E -> H map"),
    (lambda: token_embedding_params(10, 8, 8, projection=1), TypeError, "projection"),
    (lambda: break_even_width(10, 8, bias="yes"), TypeError, "bias"),
    (lambda: best_rank_factors([[1.0]], 1), TypeError, "table"),
    (lambda: best_rank_factors(np.ones((3, 2)), 3), ValueError, "rank must be at most"),
    (lambda: rank_errors(np.full((2, 2), np.nan)), ValueError, "finite"),
    (lambda: low_rank_table(10, 8, 9, noise=0.1), ValueError, "rank"),
    (lambda: low_rank_table(10, 8, 2, noise=-1), ValueError, "noise"),
    (lambda: low_rank_table(10**6, 10**5, 2, noise=0.0), ValueError, "GiB"),
])
def test_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()
