"""A WordPiece tokenizer (BERT's subwords), its vocabulary learned from the training text.

Why WordPiece: the book's models are BERT and ALBERT, and their masking (:func:`~.masking.bert_mask`) works
on BERT's special tokens, [PAD] [CLS] [SEP] [MASK] [UNK], which WordPiece keeps as they are; ALBERT's
SentencePiece is a close cousin (subwords of a learned vocabulary, a marker for where words join). RoBERTa's
byte-level BPE would need no [UNK] but has its own special tokens, and its vocabulary of raw bytes suits
a large multilingual crawl more than a small English corpus.

Training follows Hugging Face's ``WordPieceTrainer``, which runs byte-pair-encoding merges with the
continuing-subword prefix ``##``: words (from :func:`~.tokenizer.split_words`: lower case, punctuation
apart) start as characters, the first bare and the rest marked ``##``; the most frequent adjacent pair in
the corpus (ties broken by the pieces' spelling, so training is deterministic) is merged into a new piece,
again and again until the vocabulary is full. Encoding is BERT's: each word is cut greedily into the longest
piece of the vocabulary that starts it, then the longest ``##`` piece that continues it, and so on; a word
that cannot be cut (a character never seen) or longer than 100 characters becomes [UNK].
"""

from __future__ import annotations

import heapq
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise

from ..validate import check_int, check_type
from .tokenizer import SPECIAL_TOKENS, Tokenizer, WordTokenizer, check_texts, split_words

#: Marks a piece that continues a word.
PREFIX = "##"
#: Longer words become [UNK] whole (BERT's and transformers' ``max_input_chars_per_word``).
MAX_WORD_CHARS = 100
_PIECE = re.compile(r"(?:##)?[a-z0-9']+|[^\sa-zA-Z0-9'#]|#")


def _merged(a: str, b: str) -> str:
    return a + b[len(PREFIX):]


def learn_pieces(word_counts: dict[str, int], n_pieces: int) -> list[str]:
    """pieces <- alphabet;  repeat: (a, b) = argmax_pairs count(a b);  pieces += [a b]  until n_pieces.

    The WordPiece vocabulary (without the special tokens) of ``word_counts`` (word -> count): the
    characters, sorted, then one piece per merge in the order made. Stops early when no pair is left.
    Every word is one word of :func:`~.tokenizer.split_words`, its count a positive integer.
    """
    check_type("word_counts", word_counts, Mapping)
    n_pieces = check_int("n_pieces", n_pieces, minimum=1)
    for w, n in word_counts.items():
        if not isinstance(w, str):
            raise TypeError(f"word_counts's words must be str, got {w!r} ({type(w).__name__})")
        if not WordTokenizer.is_token(w):
            raise ValueError(f"word_counts's words must be {WordTokenizer.TOKEN_RULE}; got {w!r}")
        check_int(f"word_counts[{w!r}]", n, minimum=1)
    words = [[w[0], *(PREFIX + c for c in w[1:])] for w in word_counts]
    counts = list(word_counts.values())
    pieces = sorted({p for w in words for p in w})
    if len(pieces) > n_pieces:
        raise ValueError(f"the vocabulary must hold the {len(pieces)} characters of the texts, but only "
                         f"{n_pieces} places are left after the special tokens: raise vocab_size")
    pair_count, holders = Counter(), defaultdict(set)  # pair -> count in the corpus, words holding it
    for i, (w, n) in enumerate(zip(words, counts, strict=True)):
        for pair in pairwise(w):
            pair_count[pair] += n
            holders[pair].add(i)
    heap = [(-n, pair) for pair, n in pair_count.items()]
    heapq.heapify(heap)
    known = set(pieces)
    while len(pieces) < n_pieces and heap:
        n, pair = heapq.heappop(heap)
        if -n != pair_count.get(pair, 0):
            continue                                             # a stale entry: the count has changed
        new = _merged(*pair)
        if new not in known:
            known.add(new)
            pieces.append(new)
        changed = set()
        for i in sorted(holders.pop(pair)):
            w, m = words[i], counts[i]
            for p in pairwise(w):                                # take the word's pairs out ...
                pair_count[p] -= m
                changed.add(p)
            words[i] = w = _apply(w, pair, new)
            for p in pairwise(w):                                # ... and put the merged word's back
                pair_count[p] += m
                holders[p].add(i)
                changed.add(p)
        for p in changed:
            if pair_count[p] > 0:
                heapq.heappush(heap, (-pair_count[p], p))
            else:
                del pair_count[p]
    return pieces


def _apply(word: list[str], pair: tuple[str, str], new: str) -> list[str]:
    """``word`` with every occurrence of ``pair`` (left to right, not overlapping) replaced by ``new``."""
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(new)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


class WordPieceTokenizer(Tokenizer):
    """Text to WordPiece ids and back: ids 0-4 are BERT's special tokens, then the pieces in the order given
    (a piece that continues a word starts with ``##``)."""

    TOKEN_RULE = "lower-case word starts, ##continuations or single marks"

    @staticmethod
    def is_token(token: str) -> bool:
        return bool(_PIECE.fullmatch(token)) and token == token.lower()

    def __init__(self, pieces: Sequence[str]):
        super().__init__(pieces, name="pieces")
        self._cache: dict[str, list[str]] = {}

    @classmethod
    def from_texts(cls, texts: Iterable[str], vocab_size: int = 4000) -> WordPieceTokenizer:
        """The tokenizer whose vocabulary, ``vocab_size`` tokens with the special ones, is learned from
        ``texts`` by :func:`learn_pieces` (fewer when the texts run out of pairs to merge)."""
        texts = check_texts(texts)
        vocab_size = check_int("vocab_size", vocab_size, minimum=len(SPECIAL_TOKENS) + 1)
        counts = Counter(w for t in texts for w in split_words(t))
        if not counts:
            raise ValueError("texts hold no word to learn pieces from")
        word_counts = {w: counts[w] for w in sorted(counts)}
        return cls(learn_pieces(word_counts, vocab_size - len(SPECIAL_TOKENS)))

    def word_pieces(self, word: str) -> list[str]:
        """The pieces of one word, longest match first: the longest vocabulary piece starting the word, then
        the longest ``##`` piece continuing it, ...; ``["[UNK]"]`` when that fails or the word is too long."""
        check_type("word", word, str)
        if word not in self._cache:
            self._cache[word] = self._cut(word)
        return self._cache[word]

    def _cut(self, word: str) -> list[str]:
        if len(word) > MAX_WORD_CHARS:
            return [SPECIAL_TOKENS[self.unk_id]]
        pieces, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = word[start:end] if start == 0 else PREFIX + word[start:end]
                if piece in self._ids:
                    break
            else:
                return [SPECIAL_TOKENS[self.unk_id]]
            pieces.append(piece)
            start = end
        return pieces

    def tokenize(self, text: str) -> list[str]:
        """The pieces of every word of ``text`` (:func:`~.tokenizer.split_words`), in order."""
        return [p for w in split_words(text) for p in self.word_pieces(w)]

    def decode(self, ids) -> str:
        """Ids back to text: words space-separated, each ``##`` piece joined to the piece before it."""
        return super().decode(ids).replace(" " + PREFIX, "")

    def __repr__(self) -> str:
        n = self.vocab_size - len(SPECIAL_TOKENS)
        continuing = sum(p.startswith(PREFIX) for p in self.vocabulary)
        return f"WordPieceTokenizer({self.vocab_size} tokens: {len(SPECIAL_TOKENS)} special, " \
               f"{n - continuing} word starts, {continuing} ##continuations)"
