"""NSP and SOP pairs: what each task asks, and how its examples are built."""

import numpy as np
import pytest

from geron_lib import EncoderConfig, count_parameters
from geron_lib.pretraining.sentence_pairs import (
    IN_ORDER,
    IS_NEXT,
    RANDOM_NEXT,
    SWAPPED,
    SentencePair,
    encode_pairs,
    label_counts,
    nsp_pairs,
    sop_pairs,
)
from geron_lib.pretraining.tokenizer import WordTokenizer

# three "documents" whose sentences say where they come from
DOCS = [[f"doc{d} sentence{s}" for s in range(40)] for d in range(3)]


def where(sentence):
    d, s = sentence.split()
    return int(d[3:]), int(s[8:])


def test_nsp_pairs_are_next_or_from_another_document():
    pairs = nsp_pairs(DOCS, rng=0)
    assert len(pairs) == 3 * 39
    for first, second, label in pairs:
        (d1, s1), (d2, s2) = where(first), where(second)
        if label == IS_NEXT:
            assert (d2, s2) == (d1, s1 + 1)
        else:
            assert label == RANDOM_NEXT and d2 != d1  # another document: a topic change gives it away
    n_next, n_random = label_counts(pairs)
    assert abs(n_random / len(pairs) - 0.5) <= 4 * np.sqrt(0.25 / len(pairs))


def test_sop_pairs_are_consecutive_in_or_out_of_order_within_one_document():
    pairs = sop_pairs(DOCS, rng=1)
    assert len(pairs) == 3 * 39
    for first, second, label in pairs:
        (d1, s1), (d2, s2) = where(first), where(second)
        assert d1 == d2  # never a topic change: only the order tells the classes apart
        assert (s2 - s1) == (1 if label == IN_ORDER else -1) and label in (IN_ORDER, SWAPPED)
    assert abs(label_counts(pairs)[SWAPPED] / len(pairs) - 0.5) <= 4 * np.sqrt(0.25 / len(pairs))


def test_pairs_are_seeded():
    assert nsp_pairs(DOCS, rng=3) == nsp_pairs(DOCS, rng=3) != nsp_pairs(DOCS, rng=4)
    assert sop_pairs(DOCS, rng=3) == sop_pairs(DOCS, rng=3) != sop_pairs(DOCS, rng=4)


def test_the_head_is_the_same_size_for_both_tasks():
    # one linear map from the pooled H-wide [CLS] vector to two classes: 2 H + 2 parameters
    for preset in ("bert-base", "albert-base-v2"):
        config = EncoderConfig.preset(preset)
        assert count_parameters(config, nsp_head=True).nsp_head == 2 * config.hidden_size + 2


@pytest.mark.parametrize("documents, error, match", [
    ("one sentence. another.", TypeError, "documents must be a list"),
    ([["a", "b"]], ValueError, "at least 2 non-empty document"),  # NSP needs another document to draw from
    ([["a", "b"], []], ValueError, "at least 2 non-empty document"),  # an empty one has nothing to draw
    ([["a"], ["b"]], ValueError, "two or more sentences"),
    ([["a", 3]], TypeError, r"documents\[0\]\[1\] must be a str"),
    ([("a", "b"), ["c"]], TypeError, r"documents\[0\] must be a list"),
])
def test_bad_documents_are_refused(documents, error, match):
    with pytest.raises(error, match=match):
        nsp_pairs(documents)


# w0 .. w9 get ids 5 .. 14 (after the five special tokens: [PAD] 0, [CLS] 1, [SEP] 2, [MASK] 3, [UNK] 4)
WORDS = WordTokenizer([f"w{i}" for i in range(10)])


def words(*numbers):
    return " ".join(f"w{i}" for i in numbers)


def test_encode_pairs_lays_out_cls_a_sep_b_sep_then_padding():
    pairs = [SentencePair(words(1, 2), words(3, 4, 5), SWAPPED), SentencePair(words(9), "w0 zzz", IN_ORDER)]
    ids, types, labels = encode_pairs(pairs, WORDS, 10)
    np.testing.assert_array_equal(ids, [[1, 6, 7, 2, 8, 9, 10, 2, 0, 0],
                                        [1, 14, 2, 5, 4, 2, 0, 0, 0, 0]])  # an unknown word is [UNK]
    np.testing.assert_array_equal(types, [[0, 0, 0, 0, 1, 1, 1, 1, 0, 0],
                                          [0, 0, 0, 1, 1, 1, 0, 0, 0, 0]])
    np.testing.assert_array_equal(labels, [SWAPPED, IN_ORDER])
    assert ids.dtype == types.dtype == labels.dtype == np.int64


def segments(row):
    """The two segments of an encoded row, read back by its [CLS] and [SEP] positions."""
    assert row[0] == WORDS.cls_id
    seps = np.flatnonzero(row == WORDS.sep_id)
    assert len(seps) == 2
    return list(row[1:seps[0]]), list(row[seps[0] + 1:seps[1]])


def test_the_longer_segment_is_cut_first_to_fit_T():
    a, b = list(range(6)), [7, 8]
    ids, types, _ = encode_pairs([SentencePair(words(*a), words(*b), 0)], WORDS, 8)
    # 6 + 2 tokens and 3 special ones in 8 places: 3 tokens go, all of them from the longer first segment
    assert segments(ids[0]) == ([5, 6, 7], [12, 13])
    assert (ids[0] != 0).all() and types[0].tolist() == [0] * 5 + [1] * 3
    # 5 + 4 tokens into 9 - 3 = 6: the cut takes the longer until they are even, then both: 3 and 3
    ids, _, _ = encode_pairs([SentencePair(words(0, 1, 2, 3, 4), words(5, 6, 7, 8), 1)], WORDS, 9)
    assert segments(ids[0]) == ([5, 6, 7], [10, 11, 12])
    # an odd budget leaves the two one token apart, each cut at its end; the row is full
    for T in (6, 7, 8):
        ids, _, _ = encode_pairs([SentencePair(words(0, 1, 2, 3, 4), words(5, 6, 7, 8), 1)], WORDS, T)
        first, second = segments(ids[0])
        assert len(first) + len(second) == T - 3 and abs(len(first) - len(second)) <= 1
        assert first == [5, 6, 7, 8, 9][: len(first)] and second == [10, 11, 12, 13][: len(second)]
        assert ids[0, -1] == WORDS.sep_id


def test_a_pair_that_fits_exactly_is_not_cut():
    ids, _, _ = encode_pairs([SentencePair(words(1, 2), words(3), 0)], WORDS, 6)
    np.testing.assert_array_equal(ids[0], [1, 6, 7, 2, 8, 2])


def test_sop_pairs_encode_with_their_labels():
    pairs = sop_pairs([[words(0, 1), words(2), words(3, 4, 5)]], rng=2)
    ids, types, labels = encode_pairs(pairs, WORDS, 12)
    assert labels.tolist() == [p.label for p in pairs]
    for row, pair in zip(ids, pairs, strict=True):
        first, second = segments(row)
        assert (WORDS.decode(first), WORDS.decode(second)) == (pair.first, pair.second)


PAIR = SentencePair("w1", "w2", 0)


@pytest.mark.parametrize("pairs, tokenizer, T, error, match", [
    ((PAIR,), WORDS, 8, TypeError, "pairs must be a list"),
    ([], WORDS, 8, ValueError, "pairs is empty"),
    ([PAIR, ("w1", "w2", 0)], WORDS, 8, TypeError, r"pairs\[1\] must be a SentencePair"),
    ([PAIR], WORDS, 4, ValueError, "T must be at least 5"),
    ([PAIR], WORDS, 8.0, TypeError, "T must be an integer"),
    ([PAIR], "bert", 8, TypeError, "tokenizer must be a Tokenizer"),
])
def test_bad_encode_pairs_arguments_are_refused(pairs, tokenizer, T, error, match):
    with pytest.raises(error, match=match):
        encode_pairs(pairs, tokenizer, T)
