"""ALBERT's n-gram masking: the span-length law, the budget, one 80/10/10 decision per span, spans that keep
clear of special tokens, the unchanged max_ngram = 1 path, and bad max_ngram."""

import functools
import hashlib
import math

import numpy as np
import pytest
from scipy.stats import chisquare

from geron_lib import masking as M
from geron_lib.pretraining.masking import _ngram_spans
from geron_lib.pretraining.tokenizer import WordTokenizer

TOK = WordTokenizer([f"w{i}" for i in range(40)])
N_SPECIAL = len(TOK.special_ids)
N = 3
LAW = np.array([1, 1 / 2, 1 / 3]) / (1 + 1 / 2 + 1 / 3)  # p(n) = (1/n) / sum_k 1/k: 6/11, 3/11, 2/11
SEED = 8


def words(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(N_SPECIAL, TOK.vocab_size, shape)


def long_rows(n_rows: int = 600, n_words: int = 1000) -> np.ndarray:
    """[CLS] n_words words [SEP]: no special token inside, so only the budget ever cuts a span."""
    return np.hstack([np.full((n_rows, 1), TOK.cls_id), words((n_rows, n_words), 1),
                      np.full((n_rows, 1), TOK.sep_id)])


def ragged_rows(n_rows: int = 2000, seed: int = 2) -> np.ndarray:
    """[CLS] a [SEP] b [SEP] [PAD]..., segments of 1 to 30 words, an [UNK] in every third row's first one."""
    gen = np.random.default_rng(seed)
    rows = np.full((n_rows, 64), TOK.pad_id)
    for row in rows:
        a, b = gen.integers(1, 31, 2)
        row[: a + b + 3] = [TOK.cls_id, *words(a, gen.integers(1000)), TOK.sep_id,
                            *words(b, gen.integers(1000)), TOK.sep_id]
    rows[::3, 1] = TOK.unk_id
    return rows


def spans(span: np.ndarray) -> dict[str, np.ndarray]:
    """Per span number k of a (B, T) span map: its tokens' count, lowest and highest row and column."""
    rows, cols = np.nonzero(span >= 0)
    k = span[rows, cols]
    n_spans = k.max() + 1
    out = {"length": np.bincount(k, minlength=n_spans)}
    for name, values in (("row", rows), ("col", cols)):
        low, high = np.full(n_spans, span.size), np.full(n_spans, -1)
        np.minimum.at(low, k, values)
        np.maximum.at(high, k, values)
        out[f"{name}_min"], out[f"{name}_max"] = low, high
    return out


@functools.cache
def span_length_counts() -> np.ndarray:
    """How many spans have length 1, 2, 3, among those drawn while N or more tokens of their row's budget were
    left. The budget cannot cut those, and whether a span counts depends only on the spans drawn before it,
    so their lengths follow p(n) exactly. (Leaving out each row's last span instead would not do: the span
    that reaches the budget is more often a long one, so the others lean short: n = 1 took 0.5486 of the
    3.3e5 spans left over in six draws, 3.6 standard errors above 6/11.)"""
    ids = long_rows()
    s = spans(_ngram_spans(ids >= N_SPECIAL, 0.15, N, np.random.default_rng(SEED)))
    length, row = s["length"], s["row_min"]
    budget = np.bincount(row, weights=length, minlength=len(ids))  # a row's spans spend its budget exactly
    spent_before_row = np.cumsum(budget) - budget
    left = budget[row] - (np.cumsum(length) - length - spent_before_row[row])
    return np.bincount(length[left >= N], minlength=N + 1)[1:]


def test_span_lengths_follow_one_over_n():
    counts = span_length_counts()  # 600 rows x about 91 spans
    assert counts.sum() > 40_000
    # chi-square goodness of fit, 2 degrees of freedom, at alpha = 0.001
    assert chisquare(counts, LAW * counts.sum()).pvalue > 1e-3, counts / counts.sum()


def test_a_wrong_law_is_detected():
    """The same test power against a law favouring longer spans (ALBERT's favor_shorter_ngram=False)."""
    counts = span_length_counts()
    assert chisquare(counts, LAW[::-1] * counts.sum()).pvalue < 1e-3


@pytest.mark.parametrize("p", [0.15, 0.6])
def test_budget_is_mask_prob_of_the_maskable_tokens(p):
    ids = ragged_rows()
    m = M.bert_mask(ids, TOK, mask_prob=p, max_ngram=N, rng=4)
    n_maskable = (ids >= N_SPECIAL).sum(axis=1)
    chosen = m.selected.sum(axis=1)
    budget = p * n_maskable
    # every row selects its budget rounded down or up: never a token more than ceil(p M), even at p = 0.6
    assert np.all((chosen == np.floor(budget)) | (chosen == np.ceil(budget)))
    # overall share: the random rounding is its only noise, Var = sum_r f_r (1 - f_r), f_r = frac(p M_r)
    f = budget - np.floor(budget)
    se = math.sqrt((f * (1 - f)).sum()) / n_maskable.sum()
    assert abs(chosen.sum() / n_maskable.sum() - p) <= 4 * se


def test_one_decision_per_span_shared_80_10_10():
    ids = long_rows()
    m = M.bert_mask(ids, TOK, max_ngram=N, rng=SEED)
    span = _ngram_spans(ids >= N_SPECIAL, 0.15, N, np.random.default_rng(SEED))
    assert (m.selected == (span >= 0)).all()  # the helper's spans are bert_mask's
    rows, cols = np.nonzero(span >= 0)
    k, decision = span[rows, cols], m.decision[rows, cols].astype(np.int64)
    low, high = np.full(k.max() + 1, 9), np.full(k.max() + 1, -1)
    np.minimum.at(low, k, decision)
    np.maximum.at(high, k, decision)
    assert (low == high).all()  # every token of a span got the same decision
    n_spans = len(low)
    for code, share in ((M.MASKED, 0.8), (M.RANDOM, 0.1), (M.KEPT, 0.1)):
        observed = (low == code).mean()
        assert abs(observed - share) <= 4 * math.sqrt(share * (1 - share) / n_spans), (code, observed)
    assert (m.input_ids[m.decision == M.MASKED] == TOK.mask_id).all()
    assert (m.input_ids[m.decision == M.KEPT] == ids[m.decision == M.KEPT]).all()


@pytest.mark.parametrize("max_ngram", [3, 5])
def test_spans_never_hold_or_cross_a_special_token(max_ngram):
    ids = ragged_rows(seed=3)
    maskable = ids >= N_SPECIAL
    m = M.bert_mask(ids, TOK, mask_prob=0.6, max_ngram=max_ngram, rng=6)
    assert not m.selected[~maskable].any()
    assert (m.input_ids[~maskable] == ids[~maskable]).all()
    span = _ngram_spans(maskable, 0.6, max_ngram, np.random.default_rng(6))
    assert (m.selected == (span >= 0)).all()
    s = spans(span)
    assert (s["row_min"] == s["row_max"]).all()  # one row each
    # contiguous (and so not cut by another span), and every token maskable: no special inside
    assert (s["col_max"] - s["col_min"] + 1 == s["length"]).all()
    assert maskable[span >= 0].all()
    assert s["length"].max() == max_ngram and s["length"].min() == 1


def digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(a.dtype.str.encode())
        h.update(a.tobytes())
    return h.hexdigest()


def pinned_rows() -> np.ndarray:
    ids = words((64, 30), 2024)
    ids[:, 0], ids[:, 12], ids[:, 24], ids[:, 25:] = TOK.cls_id, TOK.sep_id, TOK.sep_id, TOK.pad_id
    ids[::3, 7] = TOK.unk_id
    return ids


# Digests of bert_mask and MaskingSchedule on pinned_rows(), computed with masking.py as of commit 2170b8a,
# before max_ngram existed.
BEFORE = {"default": "cff03bd418b927bdc2f38b3af6477333b9d3f917578154a9769e019c9a15e44e",
          "p0.4 rng9": "e94423a910e35395151542c5e76e54fbac8ff6fe931373265b445d328570f03e",
          "duplicated": "a6824ae9fe49bfb7ee29aafe39b4832899e07a86508af2fb28c36ba18fd400f7"}


def test_max_ngram_1_is_bert_masking_unchanged():
    ids = pinned_rows()
    for name, kwargs in (("default", {}), ("p0.4 rng9", {"mask_prob": 0.4, "rng": 9})):
        default, explicit = M.bert_mask(ids, TOK, **kwargs), M.bert_mask(ids, TOK, max_ngram=1, **kwargs)
        fields = ("input_ids", "labels", "decision", "attention_mask")
        assert digest(*(getattr(default, f) for f in fields)) == BEFORE[name]
        assert digest(*(getattr(explicit, f) for f in fields)) == BEFORE[name]
    schedule = M.MaskingSchedule(ids, TOK, "duplicated", copies=3, max_ngram=1, rng=5)
    assert digest(*(schedule.masks(e).decision for e in range(3))) == BEFORE["duplicated"]


def test_masking_schedule_passes_max_ngram_through():
    ids = pinned_rows()
    schedule = M.MaskingSchedule(ids, TOK, "dynamic", max_ngram=N, rng=5)
    direct = M.bert_mask(ids, TOK, max_ngram=N, rng=np.random.default_rng([5, 2]))
    assert (schedule.masks(2).decision == direct.decision).all()
    unigrams = M.MaskingSchedule(ids, TOK, "dynamic", rng=5)
    assert (schedule.masks(2).decision != unigrams.masks(2).decision).any()
    assert "max_ngram=3" in repr(schedule)


@pytest.mark.parametrize("bad, error, rule", [(0, ValueError, "at least 1"), (-2, ValueError, "at least 1"),
                                              (2.0, TypeError, "an integer"), (True, TypeError, "an integer"),
                                              ("3", TypeError, "an integer")])
def test_bad_max_ngram_is_refused(bad, error, rule):
    ids = pinned_rows()
    with pytest.raises(error, match=f"max_ngram must be {rule}"):
        M.bert_mask(ids, TOK, max_ngram=bad)
    with pytest.raises(error, match=f"max_ngram must be {rule}"):
        M.MaskingSchedule(ids, TOK, max_ngram=bad)
