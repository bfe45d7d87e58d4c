"""NSP and SOP pairs: what each task asks, and how its examples are built."""

import numpy as np
import pytest

from geron_lib import EncoderConfig, count_parameters
from geron_lib.pretraining.sentence_pairs import (
    IN_ORDER,
    IS_NEXT,
    RANDOM_NEXT,
    SWAPPED,
    label_counts,
    nsp_pairs,
    sop_pairs,
)

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
    ([["a", "b"]], ValueError, "at least 2 document"),  # NSP needs another document to draw from
    ([["a"], ["b"]], ValueError, "two or more sentences"),
    ([["a", 3]], TypeError, r"documents\[0\]\[1\] must be a str"),
    ([("a", "b"), ["c"]], TypeError, r"documents\[0\] must be a list"),
])
def test_bad_documents_are_refused(documents, error, match):
    with pytest.raises(error, match=match):
        nsp_pairs(documents)
