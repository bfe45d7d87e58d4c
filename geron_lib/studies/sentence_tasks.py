"""Why next-sentence prediction can be solved by topic alone and sentence-order
prediction cannot (ALBERT, section 3.1): the English corpus's paragraphs as documents
of sentences, and what a classifier that sees only the words two segments share (their
topic) can do on each task. Lines stay within 88 characters: the book lists them."""

from __future__ import annotations

import re

import numpy as np

from ..pretraining.sentence_pairs import SentencePair, check_pairs
from ..pretraining.tokenizer import check_texts, split_words
from ..validate import check_int, check_type

# a sentence ends at . ! or ? followed by a space and a capital letter (abbreviations
# such as "e.g. the" stay inside their sentence, since a lower-case word follows them)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def split_sentences(paragraph: str) -> list[str]:
    """The sentences of a paragraph: cut after . ! or ? before a capital letter."""
    if not isinstance(paragraph, str):
        raise TypeError(f"paragraph must be a str, got {type(paragraph).__name__}")
    return [s for s in _SENTENCE_END.split(paragraph.strip()) if s]


def documents(paragraphs, *, min_sentences: int = 2) -> list[list[str]]:
    """Every paragraph of at least ``min_sentences`` sentences, as a document: its list
    of sentences."""
    paragraphs = check_texts(paragraphs, "paragraphs")
    min_sentences = check_int("min_sentences", min_sentences, minimum=1)
    docs = [split_sentences(p) for p in paragraphs]
    return [d for d in docs if len(d) >= min_sentences]


def word_overlap(first: str, second: str) -> float:
    """|A & B| / |A | B| over the sets of lower-case words (punctuation left out)."""
    check_type("first", first, str)
    check_type("second", second, str)
    a, b = ({w for w in split_words(s) if w[0].isalnum()} for s in (first, second))
    return len(a & b) / len(a | b) if a | b else 0.0


def topic_only_accuracy(pairs: list[SentencePair]) -> float:
    """acc = max over c of mean[(overlap >= c) == (label == 0)], or 1 minus it.

    The best score of a rule that reads only the words two segments share,
    its threshold c chosen on these very pairs (so an optimistic figure).
    Label 0 is NSP's "B follows A" and SOP's "in order".
    """
    if not check_pairs(pairs):
        raise ValueError("pairs is empty: give at least one sentence pair")
    overlap = np.array([word_overlap(p.first, p.second) for p in pairs])
    positive = np.array([p.label == 0 for p in pairs])
    best = 0.0
    for c in np.unique(overlap):
        hit = ((overlap >= c) == positive).mean()
        best = max(best, hit, 1 - hit)
    return float(best)
