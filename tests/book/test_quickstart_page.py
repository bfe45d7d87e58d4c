"""The quickstart's account of the reference functions, recomputed: what albert() counts is the simplified
model the page lists, counted here by hand from that list (so its count grows with the input's length);
roberta() masks BERT's data-script count per row; and the opening's distinct masks follow the independent
per-word selection of Hugging Face's collator, recomputed by brute force over every outcome."""

import itertools
import math

import numpy as np
import pytest
from page_cells import run_cells

import geron_lib as gl
from geron_lib.pretraining.masking import expected_distinct_masks

PAGE = "book/00_quickstart"


@pytest.fixture(scope="module")
def shown():
    return run_cells(PAGE, "335bb84b", "qs-simplifications")


def reference_albert_count(V: int, E: int, H: int, T: int, F: int | None = None) -> int:
    """The simplified model, part by part: a V x E table and an E x H projection (no bias), a position
    table of T rows at width H, no token types, no layer-norm parameters, attention without biases, and a
    ReLU feed-forward network of width F = 2H (with its biases)."""
    F = 2 * H if F is None else F
    return V * E + E * H + T * H + 4 * H * H + (H * F + F) + (F * H + H)


def test_albert_counts_the_simplified_model_and_grows_with_the_input(shown):
    V, H, E = shown["V"], 8, 4
    X = shown["X"]
    assert shown["qs_H"] == H
    assert shown["qs_len_short"] == reference_albert_count(V, E, H, len(X))
    assert shown["qs_len_short"] == gl.albert(X, vocab_size=V).n_params
    assert shown["qs_len_long"] == reference_albert_count(V, E, H, 2 * len(X))
    assert (shown["qs_len_T"], shown["qs_len_T_long"]) == (len(X), 2 * len(X))
    assert shown["qs_len_long"] - shown["qs_len_short"] == len(X) * H
    # the same for other sizes and lengths: nothing else in the count depends on T
    for T in (1, 5, 30):
        ids = list(range(1, T + 1))
        r = gl.albert(ids, n_layers=3, n_heads=2, d_model=12, d_embed=6, vocab_size=40)
        assert r.n_params == reference_albert_count(40, 6, 12, T)


def bert_data_script_count(T: int, p: float, max_predictions: int = 10**9) -> int:
    """create_pretraining_data.py: min(max_predictions_per_seq, max(1, int(round(len(tokens) * p))))."""
    return min(max_predictions, max(1, int(round(T * p))))


@pytest.mark.parametrize("T", [1, 2, 6, 7, 8, 10, 13, 20, 40, 100])
@pytest.mark.parametrize("p", [0.15, 0.25, 0.5])
def test_roberta_masks_berts_data_script_count(T, p):
    if T > 1 and bert_data_script_count(T, p) >= T:
        pytest.skip("roberta() refuses a row it would mask entirely")
    r = gl.roberta(list(range(1, T + 1)), n_layers=1, d_model=4, vocab_size=T + 1, mask_prob=p, epochs=3)
    assert r.n_masked_per_sequence == bert_data_script_count(T, p)
    assert all(len(m) == len(set(m.tolist())) == bert_data_script_count(T, p) for m in r.masks)


def _distinct_by_brute_force(N: int, p: float, draws: int) -> float:
    """E[number of distinct masks] in ``draws`` independent maskings of N words, each word selected on its
    own with probability p: every outcome of every draw enumerated, with its probability."""
    masks = list(itertools.product((0, 1), repeat=N))
    weight = {m: math.prod(p if b else 1 - p for b in m) for m in masks}
    return sum(math.prod(weight[m] for m in outcome) * len(set(outcome))
               for outcome in itertools.product(masks, repeat=draws))


@pytest.mark.parametrize("N, p, draws", [(3, 0.15, 2), (4, 0.3, 3), (2, 0.5, 4)])
def test_the_openers_distinct_masks_are_those_of_independent_selection(N, p, draws):
    exact = _distinct_by_brute_force(N, p, draws)
    assert expected_distinct_masks(N, p, draws, "dynamic") == pytest.approx(exact, rel=1e-12)
    # a fixed count per row (roberta()'s rule) has C(N, n_mask) masks only, and gives other numbers
    n_mask = bert_data_script_count(N, p)
    k = math.comb(N, n_mask)
    fixed = k * (1 - (1 - 1 / k) ** draws)
    assert not np.isclose(fixed, expected_distinct_masks(N, p, draws, "dynamic"))
