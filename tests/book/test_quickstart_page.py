"""The quickstart's claims, recomputed. Its library section: ALBERT base's encoder returns (B, T, H) with one
stored block for its L layers. Its table of the three papers: the ratios the prose draws from it, against
the papers' figures typed here once more, and the vocabulary exercise's items, counted by hand. Its account
of the reference functions: what albert() counts is the simplified model the page lists, counted here by
hand from that list (so its count grows with the input's length); roberta() masks BERT's data-script count
per row; and the opening's distinct masks follow the independent per-word selection of Hugging Face's
collator, recomputed by brute force over every outcome."""

import itertools
import math

import numpy as np
import pytest
from page_cells import run_cells

import geron_lib as gl
from geron_lib import EncoderConfig, count_parameters
from geron_lib.pretraining.masking import expected_distinct_masks

PAGE = "book/00_quickstart"


@pytest.fixture(scope="module")
def shown():
    return run_cells(PAGE, "335bb84b", "qs-simplifications")


@pytest.fixture(scope="module")
def library():
    return run_cells(PAGE, "3246bab0", "87b2da20", "9881ca24", "545bd463", "qs-encoder-numbers",
                     "qs-papers-table", "qs-papers-numbers", "335bb84b", "29284ad9")


def test_the_library_section_runs_albert_base(library):
    config, ids = library["albert_base"], library["ids"]
    assert (config.hidden_size, config.num_hidden_layers, config.E) == (768, 12, 128)
    assert library["hidden"].shape == ids.shape + (config.hidden_size,)
    assert (library["qs_enc_B"], library["qs_enc_T"], library["qs_enc_H"]) == ids.shape + (768,)
    assert library["qs_enc_L"] == 12 and library["qs_enc_blocks"] == 1
    assert library["qs_enc_mib"] == pytest.approx(count_parameters(config).total * 8 / 2**20)


def test_the_table_prose_says_what_the_papers_print(library):
    # BERT: 256 x 1M steps on 16 GB; ALBERT: 4096 x 125K; RoBERTa base: 8K x 500K on 160 GB (Table 9)
    assert library["qs_tab_E"] == 128
    assert library["qs_tab_albert_steps"] == 1_000_000 / 125_000
    assert library["qs_tab_data"] == 160 / 16
    assert library["qs_tab_batch"] == 8_000 / 256
    assert library["qs_tab_seqs"] == (8_000 * 500_000) / (256 * 1_000_000)
    assert (library["qs_tab_rb_extra"], library["qs_tab_bert_own"], library["qs_paper_bert_base"]) == (
        15, 110, 108)
    bert, albert = (count_parameters(EncoderConfig.preset(n), pooler=True).total
                    for n in ("bert-base", "albert-base-v2"))
    assert library["qs_tab_fewer"] == pytest.approx(bert / albert)


def test_the_vocabulary_exercise_counts_by_hand(library):
    # RoBERTa base against BERT base: 50,265 - 30,522 token rows, 514 - 512 positions, 1 - 2 types, H = 768
    H = 768
    assert library["qs_ex_tokens"] == (50_265 - 30_522) * H
    assert library["qs_ex_positions"] == (514 - 512) * H
    assert library["qs_ex_types"] == (1 - 2) * H
    assert library["qs_ex_total"] == (50_265 - 30_522 + 514 - 512 + 1 - 2) * H
    assert round(library["qs_ex_total_m"]) == library["qs_tab_rb_extra"]


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


def test_the_simplifications_the_box_adds_are_the_codes():
    # layer norms at eps 1e-5 (BERT's and ALBERT's presets 1e-12, RoBERTa's 1e-5)
    from geron_lib.reference.encoders import REFERENCE_EPS, _mlm_loss, reference_block, reference_config

    assert REFERENCE_EPS == reference_config(8, 2, 16, 9, 8).layer_norm_eps == 1e-5
    assert {EncoderConfig.preset(n).layer_norm_eps for n in ("bert-base", "albert-base-v2")} == {1e-12}
    assert EncoderConfig.preset("roberta-base").layer_norm_eps == 1e-5
    # feed-forward biases zero, and counted
    H, F = 8, 16
    attention, ffn = reference_block(0, H, F)
    assert not ffn["b_1"].any() and not ffn["b_2"].any() and set(attention) == {"W_Q", "W_K", "W_V", "W_O"}
    assert reference_albert_count(9, 4, H, 8) == gl.albert(list(range(1, 9)), vocab_size=9).n_params
    # the NSP head counted: one H x 2 matrix, no bias (2 more), no pooler (H^2 + H more)
    X = [1, 2, 3, 4, 5, 6, 7, 8]
    rb = gl.roberta(X, n_layers=2, n_heads=2, d_model=H, vocab_size=9, epochs=1)
    assert rb.n_params_with_nsp - rb.n_params == 2 * H
    # the loss floors a probability at 1e-15: a target the model gives e^-2000 costs -log(1e-15) nats
    emb = np.array([[100.0, 0.0], [-100.0, 0.0]])
    hidden = np.array([[[10.0, 0.0]]])                 # (B, T, d): logits 1000 and -1000
    loss = _mlm_loss(hidden, emb, np.array([[0]]), np.array([[1]]))
    assert loss == pytest.approx(-math.log(1e-15))
