"""Hypothesis at the data's entries (test_rules_data.py holds the rules' tables): BERT's 80/10/10 rule for
any valid probability and batch, token ids that round-trip, the schedules' stored maskings, and bad fields
refused by name."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geron_lib.model.mlm import KEPT, MASKED, NOT_SELECTED, RANDOM
from geron_lib.pretraining import masking as M
from geron_lib.pretraining.subword import WordPieceTokenizer
from geron_lib.pretraining.tokenizer import WordTokenizer, split_words
from geron_lib.studies import dynamic_masking, finetuning

MODEST = settings(max_examples=50, deadline=None)
WORDS = [f"w{i}" for i in range(12)]
TOK = WordTokenizer(WORDS)
N_SPECIAL = len(TOK.special_ids)


# BERT's masking -------------------------------------------------------------------------------------------
@st.composite
def batches(draw):
    """(B, T) rows [CLS] words [SEP] [PAD]..., every row with at least one word."""
    B, T = draw(st.integers(1, 6)), draw(st.integers(3, 14))
    rows = []
    for _ in range(B):
        n = draw(st.integers(1, T - 2))
        words = draw(st.lists(st.integers(N_SPECIAL, TOK.vocab_size - 1), min_size=n, max_size=n))
        rows.append([TOK.cls_id, *words, TOK.sep_id] + [TOK.pad_id] * (T - 2 - n))
    return np.array(rows)


probabilities = st.floats(1e-6, 1 - 1e-6, allow_nan=False, exclude_min=True)


@MODEST
@given(batches(), probabilities, st.data(), st.integers(0, 2**32))
def test_the_80_10_10_rule_holds_for_any_probability_and_batch(ids, p, data, seed):
    max_ngram = data.draw(st.integers(1, min(4, ids.shape[1])))
    m = M.bert_mask(ids, TOK, mask_prob=p, max_ngram=max_ngram, rng=seed)
    assert np.array_equal(m.labels, ids)
    assert np.isin(m.decision, [NOT_SELECTED, MASKED, RANDOM, KEPT]).all()
    assert not m.selected[ids < N_SPECIAL].any()  # specials never selected
    assert (m.input_ids[m.decision == MASKED] == TOK.mask_id).all()
    random_words = m.input_ids[m.decision == RANDOM]
    assert ((random_words >= N_SPECIAL) & (random_words < TOK.vocab_size)).all()
    unchanged = (m.decision == NOT_SELECTED) | (m.decision == KEPT)
    assert np.array_equal(m.input_ids[unchanged], ids[unchanged])
    assert np.array_equal(m.attention_mask, (ids != TOK.pad_id).astype(np.int64))
    twin = M.bert_mask(
        ids.astype(np.int32), TOK, mask_prob=np.float64(p), max_ngram=np.int8(max_ngram), rng=np.uint64(seed)
    )
    assert np.array_equal(twin.decision, m.decision) and np.array_equal(twin.input_ids, m.input_ids)


@MODEST
@given(batches(), st.integers(1, 10**9), st.integers(0, 60), st.integers(0, 2**32))
def test_a_stored_masking_is_the_one_drawn_for_its_seed(ids, copies, epoch, seed):
    schedule = M.MaskingSchedule(ids, TOK, "duplicated", copies=copies, rng=seed)
    assert len(schedule.stored) == copies
    drawn = schedule.masks(epoch)
    again = M.bert_mask(ids, TOK, rng=np.random.default_rng([seed, epoch % copies]))
    assert np.array_equal(drawn.decision, again.decision) and np.array_equal(drawn.input_ids, again.input_ids)
    assert np.array_equal(schedule.masks(epoch + copies).decision, drawn.decision)  # a copy comes back


@MODEST
@given(
    st.integers(1, M.MAX_DISTINCT_TOKENS),
    probabilities,
    st.integers(1, 10**6),
    st.sampled_from(M.SCHEDULES),
    st.integers(1, 100),
)
def test_expected_distinct_masks_lies_between_one_and_the_draws(N, p, epochs, schedule, copies):
    n = M.draws_per_sequence(epochs, schedule, copies)
    expected = M.expected_distinct_masks(N, p, epochs, schedule, copies)
    assert 1 - 1e-9 <= expected <= min(n, 2 ** min(N, 64)) * (1 + 1e-9)  # at most 2^N sets exist
    assert M.expected_distinct_masks(
        np.int64(N), np.float32(p), np.int64(epochs), schedule, np.int16(copies)
    ) == pytest.approx(
        M.expected_distinct_masks(N, float(np.float32(p)), epochs, schedule, copies), rel=1e-12
    )


@MODEST
@given(st.integers(1, 400), st.floats(1e-4, 1 - 1e-4), st.integers(1, 10**7))
def test_expected_distinct_masks_equals_the_full_sum_in_high_precision(N, p, n):
    # every j of 0..N, in 60 digits: the binomial tail the function sums at once must not change the result
    mpmath = pytest.importorskip("mpmath")  # with sympy, which torch (the hf extra) installs
    mpmath.mp.dps = 60
    P = mpmath.mpf(p)
    full = mpmath.fsum(mpmath.binomial(N, j) * -mpmath.expm1(n * mpmath.log1p(-(P**j * (1 - P) ** (N - j))))
                       for j in range(N + 1))
    assert M.expected_distinct_masks(N, p, n, "dynamic") == pytest.approx(float(full), rel=1e-8)


# token ids -----------------------------------------------------------------------------------------------
texts = st.lists(st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join), min_size=1, max_size=6)


@MODEST
@given(texts, st.integers(0, 4), st.sampled_from((int, np.int16, np.int64, np.uint32)))
def test_a_batch_of_token_ids_round_trips(batch, extra, integer):
    T = max(3, max(len(t.split()) for t in batch) + 2 + extra)  # encode_batch needs T >= 3
    ids = TOK.encode_batch(batch, integer(T))
    assert ids.shape == (len(batch), T) and ids.dtype == np.int64
    for row, text in zip(ids, batch, strict=True):
        assert TOK.decode(row) == " ".join(["[CLS]", *text.split(), "[SEP]"])
        assert TOK.decode(row.astype(np.uint8)) == TOK.decode(row.tolist())
    assert np.array_equal(TOK.encode_batch(iter(batch), T), ids)  # a generator gives the same rows


@MODEST
@given(st.lists(st.text("abcdef ", min_size=1, max_size=12), min_size=1, max_size=5), st.integers(6, 60))
def test_wordpiece_decodes_what_it_encodes(corpus, vocab_size):
    if not any(split_words(t) for t in corpus):
        with pytest.raises(ValueError, match="texts"):
            WordPieceTokenizer.from_texts(corpus, vocab_size)
        return
    words = [w for t in corpus for w in split_words(t)]
    alphabet = {w[0] for w in words} | {"##" + c for w in words for c in w[1:]}  # first and later letters
    if vocab_size - N_SPECIAL < len(alphabet):
        with pytest.raises(ValueError, match="vocab_size"):
            WordPieceTokenizer.from_texts(corpus, vocab_size)
        return
    tok = WordPieceTokenizer.from_texts(corpus, vocab_size)
    for text in corpus:
        assert tok.decode(tok.encode(text)[1:-1] or [0]) == " ".join(split_words(text))


# bad fields, by name ---------------------------------------------------------------------------------------
bad_numbers = [math.nan, math.inf, -math.inf, -1, 0, True, None, "1", 1j]  # bad for every field here
REAL_FIELDS = {"mask_prob", "lr", "max_grad_norm", "test_share"}
# a size of 10**400 is bad where it sets an allocation or a probability, not where it counts epochs
SETUP_FIELDS = {
    "epochs": False,
    "copies": False,
    "batch_size": False,
    "n_train": True,
    "n_held_out": True,
    "T": True,
    "hidden_size": True,
    "num_hidden_layers": True,
    "intermediate_size": True,
    "mask_prob": True,
    "lr": True,
}
BUDGET_FIELDS = {"epochs": False, "batch_size": False, "lr": True, "max_grad_norm": True, "test_share": True}


@MODEST
@given(
    st.sampled_from(
        [(dynamic_masking.Setup, f, huge) for f, huge in SETUP_FIELDS.items()]
        + [(finetuning.FineTuning, f, huge) for f, huge in BUDGET_FIELDS.items()]
    ),
    st.data(),
)
def test_any_invalid_field_is_refused_by_name(where, data):
    cls, field, huge_is_bad = where
    bad = bad_numbers + ([] if field in REAL_FIELDS else [2.5]) + ([10**400] if huge_is_bad else [])
    value = data.draw(st.sampled_from(bad))
    with pytest.raises((TypeError, ValueError), match=field):
        cls(**{field: value})


@MODEST
@given(
    st.sampled_from(["words", "pieces"]),
    st.sampled_from(["cat", b"cat", 7, None, {"cat"}, {"cat": 1}, ["cat", 3], [None], [b"x"]]),
)
def test_a_tokenizer_refuses_what_is_not_a_list_of_strings(name, value):
    cls = WordTokenizer if name == "words" else WordPieceTokenizer
    with pytest.raises(TypeError, match=name):
        cls(value)
