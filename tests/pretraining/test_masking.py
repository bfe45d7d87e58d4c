"""BERT's 80/10/10 masking, the three schedules, and the expected number of distinct masks."""

import itertools
import math

import numpy as np
import pytest

from geron_lib import masking as M
from geron_lib.pretraining.tokenizer import WordTokenizer

TOK = WordTokenizer([f"w{i}" for i in range(40)])
N_SPECIAL = len(TOK.special_ids)


def rows_of_words(n_rows: int, n_words: int, seed: int = 0) -> np.ndarray:
    """[CLS] n_words words [SEP] [PAD] [PAD], rows of random words."""
    words = np.random.default_rng(seed).integers(N_SPECIAL, TOK.vocab_size, (n_rows, n_words))
    cls, sep, pad = (np.full((n_rows, 1), i) for i in (TOK.cls_id, TOK.sep_id, TOK.pad_id))
    return np.hstack([cls, words, sep, pad, pad])


def within(observed: float, expected: float, se: float, k: float = 4.0) -> bool:
    return abs(observed - expected) <= k * se


IDS = rows_of_words(2000, 50)  # 100,000 words to mask


@pytest.mark.parametrize("p", [0.15, 0.4])
def test_selection_rate_split_and_uniformity_over_1e5_tokens(p):
    m = M.bert_mask(IDS, TOK, mask_prob=p, rng=11)
    words = IDS >= N_SPECIAL
    n = int(words.sum())
    assert n == 100_000
    selected = m.selected
    assert within(selected.sum() / n, p, math.sqrt(p * (1 - p) / n))
    s = int(selected.sum())
    for code, share in ((M.MASKED, 0.8), (M.RANDOM, 0.1), (M.KEPT, 0.1)):
        assert within((m.decision == code).sum() / s, share, math.sqrt(share * (1 - share) / s)), code
    per_position = selected[:, 1:51].mean(axis=0)  # every word position is equally likely to be chosen
    assert np.all(np.abs(per_position - p) <= 4 * math.sqrt(p * (1 - p) / len(IDS)))


def test_special_tokens_are_never_selected_and_inputs_follow_the_decisions():
    ids = IDS.copy()
    ids[:, 5] = TOK.unk_id  # an unknown word inside every row
    m = M.bert_mask(ids, TOK, mask_prob=0.9, rng=1)
    special = ids < N_SPECIAL
    assert not m.selected[special].any()
    assert (m.input_ids[special] == ids[special]).all()
    assert (m.labels == ids).all()
    assert (m.input_ids[m.decision == M.NOT_SELECTED] == ids[m.decision == M.NOT_SELECTED]).all()
    assert (m.input_ids[m.decision == M.MASKED] == TOK.mask_id).all()
    assert (m.input_ids[m.decision == M.KEPT] == ids[m.decision == M.KEPT]).all()
    random_words = m.input_ids[m.decision == M.RANDOM]
    assert random_words.min() >= N_SPECIAL  # a random replacement is a word, never a special token
    assert len(np.unique(random_words)) == TOK.vocab_size - N_SPECIAL
    assert (m.attention_mask == (ids != TOK.pad_id)).all()


def test_a_seed_and_a_generator_give_reproducible_masks():
    a = M.bert_mask(IDS[:50], TOK, rng=5)
    b = M.bert_mask(IDS[:50], TOK, rng=np.random.default_rng(5))
    assert (a.input_ids == b.input_ids).all() and (a.decision == b.decision).all()
    assert (a.decision != M.bert_mask(IDS[:50], TOK, rng=6).decision).any()


def test_schedules_static_duplicated_dynamic():
    ids = IDS[:20]
    static, dup, dyn = (M.MaskingSchedule(ids, TOK, s, copies=4, rng=3)
                        for s in ("static", "duplicated", "dynamic"))
    assert [len(s.stored) for s in (static, dup, dyn)] == [1, 4, 0]  # what preprocessing stores
    assert [dup.mask_index(e) for e in range(9)] == [0, 1, 2, 3, 0, 1, 2, 3, 0]
    for s in (static, dup, dyn):  # the method is the module's function, which the diagrams draw
        assert [s.mask_index(e) for e in range(9)] == [M.mask_index(e, s.schedule, 4) for e in range(9)]
    assert [static.mask_index(e) for e in range(3)] == [0, 0, 0] and dyn.mask_index(7) == 7
    first = static.masks(0).decision
    for s in (dup, dyn):  # every schedule starts from the same masking
        assert (s.masks(0).decision == first).all()
    for e in range(1, 8):
        assert (static.masks(e).decision == first).all()
        assert (dup.masks(e).decision == dup.masks(e % 4).decision).all()
        assert (dyn.masks(e).decision != dyn.masks(e - 1).decision).any()
    assert (dyn.masks(6).decision == dyn.masks(6).decision).all()  # the same epoch, the same masks
    generator = M.MaskingSchedule(ids, TOK, rng=np.random.default_rng(8))
    assert (generator.masks(2).decision == M.MaskingSchedule(ids, TOK, rng=np.random.default_rng(8))
            .masks(2).decision).all()


@pytest.mark.parametrize("schedule, n_words, p, epochs", [("dynamic", 6, 0.3, 10), ("dynamic", 4, 0.15, 40),
                                                          ("duplicated", 6, 0.3, 10), ("static", 6, 0.3, 10)])
def test_distinct_masks_match_the_closed_form(schedule, n_words, p, epochs):
    s = M.MaskingSchedule(rows_of_words(3000, n_words, seed=1), TOK, schedule, mask_prob=p, copies=4, rng=2)
    by_epoch = s.distinct_masks(epochs)
    assert by_epoch.shape == (epochs, 3000) and (np.diff(by_epoch, axis=0) >= 0).all()
    assert (by_epoch[0] == 1).all()
    counts = by_epoch[-1]
    expected = M.expected_distinct_masks(n_words, p, epochs, schedule, copies=4)
    if schedule == "static":
        assert expected == pytest.approx(1.0) and (counts == 1).all()
    else:
        assert within(counts.mean(), expected, counts.std(ddof=1) / math.sqrt(len(counts)))


def test_closed_form_against_enumeration():
    # N = 3 words, p = 0.3: enumerate every sequence of n masks and count distinct sets exactly
    N, p, n = 3, 0.3, 3
    sets = list(itertools.product([0, 1], repeat=N))
    prob = {s: p ** sum(s) * (1 - p) ** (N - sum(s)) for s in sets}
    exact = sum(math.prod(prob[s] for s in draw) * len(set(draw))
                for draw in itertools.product(sets, repeat=n))
    assert M.expected_distinct_masks(N, p, n, "dynamic") == pytest.approx(exact, rel=1e-12)
    assert M.expected_distinct_masks(N, p, 50, "duplicated", copies=n) == pytest.approx(exact, rel=1e-12)
    # a long sequence almost never repeats a mask: n epochs give n distinct masks
    assert M.expected_distinct_masks(500, 0.15, 40, "dynamic") == pytest.approx(40, rel=1e-12)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(mask_prob=0.0), ValueError, "mask_prob must lie strictly between 0 and 1"),
    (dict(mask_prob=1.0), ValueError, "mask_prob must lie strictly between 0 and 1"),
    (dict(mask_prob=-0.2), ValueError, "mask_prob"),
    (dict(rng=1.5), TypeError, "rng must be a seed"),
    (dict(rng=-1), ValueError, "rng must be at least 0"),
])
def test_bert_mask_refuses_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        M.bert_mask(IDS[:2], TOK, **kwargs)


def test_bad_inputs_are_refused_with_clear_errors():
    only_special = np.array([[TOK.cls_id, TOK.sep_id, TOK.pad_id], [TOK.cls_id, 7, TOK.sep_id]])
    with pytest.raises(ValueError, match="row 0 holds only special tokens"):
        M.bert_mask(only_special, TOK)
    with pytest.raises(ValueError, match="row 0 holds only special tokens"):
        M.MaskingSchedule(only_special, TOK)
    with pytest.raises(ValueError, match="ids is empty"):
        M.MaskingSchedule(np.zeros((0, 4), int), TOK)
    with pytest.raises(ValueError, match="schedule must be one of 'static', 'duplicated', 'dynamic'"):
        M.MaskingSchedule(IDS[:2], TOK, "weekly")
    with pytest.raises(ValueError, match="copies must be at least 1"):
        M.MaskingSchedule(IDS[:2], TOK, "duplicated", copies=0)
    with pytest.raises(TypeError, match="tokenizer must be a Tokenizer"):
        M.bert_mask(IDS[:2], "vocab.txt")
    with pytest.raises(ValueError, match="vocab_size"):
        M.bert_mask(np.array([[1, TOK.vocab_size, 2]]), TOK)
    with pytest.raises(ValueError, match="schedule must be one of"):
        M.expected_distinct_masks(5, 0.15, 3, "hourly")
    with pytest.raises(ValueError, match="epoch must be at least 0"):
        M.mask_index(-1, "static")
    with pytest.raises(ValueError, match="copies must be at least 1"):
        M.mask_index(3, "duplicated", 0)
    with pytest.raises(ValueError, match="schedule must be one of"):
        M.mask_index(3, "weekly")
    with pytest.raises(ValueError, match="mask_prob must lie strictly between 0 and 1"):
        M.expected_distinct_masks(5, 1.5, 3, "dynamic")
    with pytest.raises(ValueError, match="epoch must be at least 0"):
        M.MaskingSchedule(IDS[:2], TOK).masks(-1)
