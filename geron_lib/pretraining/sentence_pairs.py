"""The sentence-pair tasks BERT and ALBERT pretrain beside the masked LM: next-sentence
prediction (NSP, BERT) and sentence-order prediction (SOP, ALBERT). Both read two segments,
[CLS] A [SEP] B [SEP], and classify the pooled [CLS] vector with a linear H -> 2 head
(``count_parameters(..., nsp_head=True)`` counts it: 2 H + 2).

Here a segment is one sentence of a document (the papers pack several sentences up to a length budget; the
labels are built the same way). Labels follow transformers: NSP 0 = B follows A, 1 = B is random;
SOP 0 = A then B in the document's order, 1 = swapped.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..validate import check_int, check_memory, check_type
from .masking import as_generator
from .tokenizer import Tokenizer

IS_NEXT, RANDOM_NEXT = 0, 1
IN_ORDER, SWAPPED = 0, 1


class SentencePair(NamedTuple):
    """Two segments and the label of the pair."""

    first: str
    second: str
    label: int


def check_pairs(pairs) -> list[SentencePair]:
    """``pairs`` itself: a list (maybe empty) of :class:`SentencePair`, each of two str and a label 0 or 1."""
    check_type("pairs", pairs, list)
    for i, pair in enumerate(pairs):
        check_type(f"pairs[{i}]", pair, SentencePair)
        for field in ("first", "second"):
            check_type(f"pairs[{i}].{field}", getattr(pair, field), str)
        if check_int(f"pairs[{i}].label", pair.label) not in (0, 1):
            raise ValueError(f"pairs[{i}].label must be 0 or 1, got {pair.label}")
    return pairs


def _check_documents(documents, minimum: int) -> list[list[str]]:
    """Documents as lists of sentences; at least ``minimum`` of them, every sentence a str."""
    check_type("documents", documents, list)
    docs = []
    for i, doc in enumerate(documents):
        check_type(f"documents[{i}]", doc, list)
        for j, sentence in enumerate(doc):
            check_type(f"documents[{i}][{j}]", sentence, str)
        docs.append(doc)
    non_empty = sum(len(d) >= 1 for d in docs)
    if sum(len(d) >= 2 for d in docs) < 1 or non_empty < minimum:
        raise ValueError(f"documents must hold at least {minimum} non-empty document(s), one of them with "
                         f"two or more sentences: a pair needs two consecutive sentences; got {non_empty} "
                         "non-empty document(s)")
    return docs


def nsp_pairs(documents: list[list[str]], *, rng=0) -> list[SentencePair]:
    """(A, B) = consecutive sentences; with probability 1/2, B <- another's.

    BERT's next-sentence prediction: label 0 when B really follows A, 1 when
    B is a sentence drawn at random from another document (so that the two
    topics differ, as BERT's data script makes sure).
    """
    docs = _check_documents(documents, minimum=2)
    rng = as_generator(rng)
    pairs = []
    for d, doc in enumerate(docs):
        others = [i for i, other in enumerate(docs) if i != d and other]
        for first, second in zip(doc, doc[1:], strict=False):
            if others and rng.random() < 0.5:
                other = docs[others[rng.integers(len(others))]]
                drawn = other[rng.integers(len(other))]
                pairs.append(SentencePair(first, drawn, RANDOM_NEXT))
            else:
                pairs.append(SentencePair(first, second, IS_NEXT))
    return pairs


def sop_pairs(documents: list[list[str]], *, rng=0) -> list[SentencePair]:
    """(A, B) = consecutive sentences; with probability 1/2, (A, B) <- (B, A).

    ALBERT's sentence-order prediction: both segments always come from the
    same document, so topic alone cannot tell the classes apart (it can for
    NSP); only the order of the two can.
    """
    docs = _check_documents(documents, minimum=1)
    rng = as_generator(rng)
    pairs = []
    for doc in docs:
        for first, second in zip(doc, doc[1:], strict=False):
            if rng.random() < 0.5:
                pairs.append(SentencePair(second, first, SWAPPED))
            else:
                pairs.append(SentencePair(first, second, IN_ORDER))
    return pairs


def label_counts(pairs: list[SentencePair]) -> np.ndarray:
    """How many pairs carry label 0 and label 1."""
    pairs = check_pairs(pairs)
    return np.bincount(np.array([int(p.label) for p in pairs], dtype=np.int64), minlength=2)


def encode_pairs(pairs: list[SentencePair], tokenizer: Tokenizer, T: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ids, token_type_ids, labels): each pair as [CLS] A [SEP] B [SEP], then [PAD], A's part of type 0
    and B's of type 1, both (n, T); the longer segment is cut first until the pair fits T."""
    if not check_pairs(pairs):
        raise ValueError("pairs is empty: give at least one sentence pair")
    check_type("tokenizer", tokenizer, Tokenizer)
    T = check_int("T", T, minimum=5)
    check_memory(16 * len(pairs) * T, f"{len(pairs):,} pairs of T={T:,} ids and token types")
    ids = np.full((len(pairs), T), tokenizer.pad_id, dtype=np.int64)
    types = np.zeros_like(ids)
    for pair, out, out_types in zip(pairs, ids, types, strict=True):
        a, b = (tokenizer.encode(s)[1:-1] for s in (pair.first, pair.second))
        while len(a) + len(b) > T - 3:
            (a if len(a) >= len(b) else b).pop()
        first = [tokenizer.cls_id, *a, tokenizer.sep_id]
        out[: len(first) + len(b) + 1] = first + b + [tokenizer.sep_id]
        out_types[len(first): len(first) + len(b) + 1] = 1
    return ids, types, np.array([int(p.label) for p in pairs], dtype=np.int64)
