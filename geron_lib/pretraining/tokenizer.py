"""Tokenizers with BERT's special tokens, [PAD], [CLS], [SEP], [MASK], [UNK]: what they share
(:class:`Tokenizer`) and the word-level one (:class:`WordTokenizer`); the subword one is in ``subword``."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from ..validate import check_int, check_memory, check_sequence, check_token_ids

#: The special tokens, with ids 0 to 4 in this order.
SPECIAL_TOKENS = ("[PAD]", "[CLS]", "[SEP]", "[MASK]", "[UNK]")

_WORD = re.compile(r"[a-z0-9']+|[^\sa-z0-9']")


def split_words(text: str) -> list[str]:
    """Lower-case words and single punctuation marks: "The cat, asleep." -> the, cat, ",", asleep, "."."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return _WORD.findall(text.lower())


def check_strings(name: str, values) -> list[str]:
    """``values`` as a list of str (see :func:`~geron_lib.validate.check_sequence`)."""
    values = check_sequence(name, values, "strings")
    for i, v in enumerate(values):
        if not isinstance(v, str):
            raise TypeError(f"{name}[{i}] must be a str, got {type(v).__name__}")
    return values


def check_texts(texts, name: str = "texts") -> list[str]:
    """``texts`` as a non-empty list of str (see :func:`check_strings`); ``name`` is the argument's."""
    texts = check_strings(name, texts)
    if not texts:
        raise ValueError(f"{name} is empty: give at least one sentence")
    return texts


def _check_rows_memory(n_rows: int, T: int) -> None:
    check_memory(8 * n_rows * T, f"{n_rows:,} rows of T={T:,} int64 ids")


class Tokenizer:
    """What every tokenizer here shares: ids 0-4 are BERT's special tokens, then its tokens in the order
    given; text to ids (one sequence or a padded batch) and back. A subclass says how text splits
    (:meth:`tokenize`) and what a token may be (:data:`TOKEN_RULE`, :meth:`is_token`)."""

    #: What every token must be, as the error for a bad one says.
    TOKEN_RULE = "strings"

    @staticmethod
    def is_token(token: str) -> bool:
        """Whether ``token`` keeps :data:`TOKEN_RULE`."""
        return True

    def __init__(self, tokens: Sequence[str], *, name: str = "tokens"):
        tokens = check_strings(name, tokens)
        if not tokens:
            raise ValueError(f"{name} is empty: a tokenizer needs at least one token")
        bad = [t for t in tokens if not self.is_token(t)]
        if bad:
            raise ValueError(f"{name} must be {self.TOKEN_RULE}; got {bad[0]!r}")
        if len(set(tokens)) != len(tokens) or set(tokens) & set(SPECIAL_TOKENS):
            raise ValueError(f"{name} must be distinct and must not repeat the special tokens")
        self.vocabulary = list(SPECIAL_TOKENS) + tokens
        self._ids = {w: i for i, w in enumerate(self.vocabulary)}
        self.pad_id, self.cls_id, self.sep_id, self.mask_id, self.unk_id = range(len(SPECIAL_TOKENS))

    @property
    def vocab_size(self) -> int:
        return len(self.vocabulary)

    @property
    def special_ids(self) -> tuple[int, ...]:
        return tuple(range(len(SPECIAL_TOKENS)))

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text`` (a subclass's rule)."""
        raise NotImplementedError

    def encode(self, text: str) -> list[int]:
        """[CLS] tokens [SEP] as ids; an unknown token becomes [UNK]."""
        return [self.cls_id, *(self._ids.get(t, self.unk_id) for t in self.tokenize(text)), self.sep_id]

    def encode_batch(self, texts: Iterable[str], T: int) -> np.ndarray:
        """(B, T) ids, one text a row: [CLS] tokens [SEP] then [PAD]; tokens beyond T - 2 are cut."""
        texts = check_texts(texts)
        T = check_int("T", T, minimum=3)
        _check_rows_memory(len(texts), T)
        ids = np.full((len(texts), T), self.pad_id, dtype=np.int64)
        for row, text in zip(ids, texts, strict=True):
            encoded = self.encode(text)
            if len(encoded) > T:
                encoded = encoded[: T - 1] + [self.sep_id]
            row[: len(encoded)] = encoded
        return ids

    def pack_batch(self, texts: Iterable[str], T: int) -> np.ndarray:
        """(B, T) ids, consecutive texts packed into each row: [CLS] text [SEP] text [SEP] ... then [PAD].

        RoBERTa's "full sentences" input: rows are filled with whole texts in order, so few positions are
        padding; a row takes the next text only if all of it fits; a text longer than T - 2 tokens gets a
        row of its own, cut.
        """
        texts = check_texts(texts)
        T = check_int("T", T, minimum=3)
        _check_rows_memory(1, T)                                          # at least one row
        rows, row = [], [self.cls_id]
        for text in texts:
            tokens = self.encode(text)[1:-1][: T - 2] + [self.sep_id]     # text [SEP], cut to fit a row
            if len(row) + len(tokens) > T and len(row) > 1:
                rows.append(row)
                row = [self.cls_id]
            row += tokens
        rows.append(row)
        _check_rows_memory(len(rows), T)
        ids = np.full((len(rows), T), self.pad_id, dtype=np.int64)
        for out, r in zip(ids, rows, strict=True):
            out[: len(r)] = r
        return ids

    def decode(self, ids) -> str:
        """Ids back to their tokens, space-separated, [PAD] left out."""
        ids, _ = check_token_ids("ids", ids, vocab_size=self.vocab_size)
        return " ".join(self.vocabulary[i] for i in ids.ravel() if i != self.pad_id)


class WordTokenizer(Tokenizer):
    """Words to ids and back. Ids 0-4 are the special tokens, then the words in the order given."""

    TOKEN_RULE = "lower-case single words or marks, as split_words cuts text"

    @staticmethod
    def is_token(token: str) -> bool:
        return split_words(token) == [token]

    def __init__(self, words: Sequence[str]):
        super().__init__(words, name="words")

    @classmethod
    def from_texts(cls, texts: Iterable[str], *, min_count: int = 1) -> WordTokenizer:
        """The words seen at least ``min_count`` times, most frequent first (ties alphabetically)."""
        texts = check_texts(texts)
        min_count = check_int("min_count", min_count, minimum=1)
        counts = Counter(w for t in texts for w in split_words(t))
        words = sorted((w for w, n in counts.items() if n >= min_count), key=lambda w: (-counts[w], w))
        if not words:
            raise ValueError(f"no word occurs at least min_count={min_count} times in texts")
        return cls(words)

    def tokenize(self, text: str) -> list[str]:
        """The words of ``text`` (:func:`split_words`)."""
        return split_words(text)

    def __repr__(self) -> str:
        return f"WordTokenizer({self.vocab_size} tokens: {len(SPECIAL_TOKENS)} special, " \
               f"{self.vocab_size - len(SPECIAL_TOKENS)} words)"
