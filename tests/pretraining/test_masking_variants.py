"""The masking variants beside BERT's: whole words, SpanBERT's spans, the at-least-one-target control, and
what a schedule covers (the sequences it never trains on, the words it ever predicts)."""

import math

import numpy as np
import pytest

from geron_lib import masking as M
from geron_lib.pretraining.subword import WordPieceTokenizer
from geron_lib.pretraining.tokenizer import WordTokenizer

TOK = WordTokenizer([f"w{i}" for i in range(40)])
N_SPECIAL = len(TOK.special_ids)
# a WordPiece vocabulary where "abc" is one piece and "abd" three: a, ##b, ##d
PIECES = WordPieceTokenizer(["a", "b", "c", "d", "##b", "##c", "##d", "abc"])


def rows(n_rows: int, n_words: int, seed: int = 0) -> np.ndarray:
    words = np.random.default_rng(seed).integers(N_SPECIAL, TOK.vocab_size, (n_rows, n_words))
    return np.hstack([np.full((n_rows, 1), TOK.cls_id), words, np.full((n_rows, 1), TOK.sep_id)])


def within(observed: float, expected: float, se: float) -> bool:
    return abs(observed - expected) <= 4 * se


def multi_piece_rows(n_rows: int) -> np.ndarray:
    text = " ".join(["abd abc a abd"] * 4)  # 16 words, 28 pieces
    return PIECES.encode_batch([text] * n_rows, len(PIECES.encode(text)))


def test_word_starts_join_the_pieces_of_a_word():
    ids = PIECES.encode_batch(["abd abc a"], 7)  # [CLS] a ##b ##d abc a [SEP]
    assert M.word_starts(ids, PIECES).tolist() == [[0, 1, 1, 1, 4, 5, 6]]
    assert M.word_starts(rows(2, 5), TOK).tolist() == [list(range(7))] * 2  # every word one token


def test_whole_word_masking_selects_every_piece_of_a_word_or_none():
    ids = multi_piece_rows(3000)
    m = M.whole_word_mask(ids, PIECES, mask_prob=0.15, rng=3)
    start = M.word_starts(ids, PIECES)
    first = np.take_along_axis(m.selected, start, axis=1)
    words = ids >= len(PIECES.special_ids)
    assert (m.selected[words] == first[words]).all()  # no word partly selected
    n = int(words.sum())
    rate = m.selected.sum() / n  # each token still selected with probability p (pieces of a word together)
    assert abs(rate - 0.15) < 4 * math.sqrt(0.15 * 0.85 / (n / 28 * 16)) * 2
    s = int(m.selected.sum())
    assert within((m.decision == M.MASKED).sum() / s, 0.8, math.sqrt(0.16 / s) * 2)
    # token-level BERT masking leaves many selected three-piece words partly visible
    token = M.bert_mask(ids, PIECES, mask_prob=0.15, rng=3)
    partly = (np.take_along_axis(token.selected, start, axis=1) != token.selected) & words
    assert partly.any()


def test_span_masking_draws_spans_of_whole_words_with_one_decision_each():
    ids = multi_piece_rows(400)
    m = M.span_mask(ids, PIECES, mask_prob=0.3, rng=5)
    start = M.word_starts(ids, PIECES)
    words = ids >= len(PIECES.special_ids)
    assert (m.selected[words] == np.take_along_axis(m.selected, start, axis=1)[words]).all()
    # a run of selected positions carries one decision (spans may touch, so check within runs of a span:
    # pieces of one word always share the decision of their span)
    assert (m.decision[words] == np.take_along_axis(m.decision, start, axis=1)[words]).all()
    n_words = (words & (start == np.arange(ids.shape[1]))).sum(axis=1)
    selected_words = (m.selected & (start == np.arange(ids.shape[1]))).sum(axis=1)
    assert abs(selected_words.mean() - 0.3 * n_words.mean()) < 0.05  # the budget: p of the words


def test_span_lengths_follow_spanberts_clipped_geometric_law():
    n = np.arange(1, 11)
    law = 0.2 * 0.8 ** (n - 1)
    assert (n * law).sum() / law.sum() == pytest.approx(3.8, abs=0.05)  # SpanBERT's mean span, 3.8 words
    ids = rows(300, 1000)
    m = M.span_mask(ids, TOK, mask_prob=0.15, rng=2)
    assert m.selected.sum() / (ids >= N_SPECIAL).sum() == pytest.approx(0.15, abs=0.002)
    with pytest.raises(ValueError, match="geometric_p"):
        M.span_mask(ids, TOK, geometric_p=1.0)
    with pytest.raises(ValueError, match="max_span"):
        M.span_mask(ids, TOK, max_span=0)


def test_the_control_gives_every_row_a_target_and_changes_no_other_row():
    ids = rows(4000, 3)  # three words: 0.85^3 = 61 % of rows get nothing without the control
    plain = M.bert_mask(ids, TOK, rng=4)
    control = M.bert_mask(ids, TOK, at_least_one=True, rng=4)
    assert control.selected.any(axis=1).all()
    had = plain.selected.any(axis=1)
    assert within(1 - had.mean(), 0.85**3, math.sqrt(0.61 * 0.39 / 4000))
    for field in ("input_ids", "decision"):
        assert (getattr(plain, field)[had] == getattr(control, field)[had]).all()
    assert (control.selected[~had].sum(axis=1) == 1).all()
    with pytest.raises(TypeError, match="at_least_one must be True or False"):
        M.bert_mask(ids, TOK, at_least_one=1)


@pytest.mark.parametrize("schedule, R", [("static", 1), ("duplicated", 5), ("dynamic", 20)])
def test_coverage_is_the_closed_form(schedule, R):
    # a word is ever a target with probability 1 - (1 - p)^R; a row of w words never with (1 - p)^(w R)
    w, p = 4, 0.15
    ids = rows(5000, w, seed=7)
    c = M.MaskingSchedule(ids, TOK, schedule, mask_prob=p, copies=5, rng=1).coverage(20)
    ever = 1 - (1 - p) ** R
    assert within(c.ever_target, ever, math.sqrt(ever * (1 - ever) / (5000 * w)))
    never = (1 - p) ** (w * R)
    assert within(c.never_trained, never, max(math.sqrt(never * (1 - never) / 5000), 1e-9))
    control = M.MaskingSchedule(ids, TOK, schedule, mask_prob=p, copies=5, at_least_one=True, rng=1)
    assert control.coverage(20).never_trained == 0
