"""Choosing which tokens to mask for masked-language-model pretraining."""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from scipy.special import comb

from ..model.mlm import KEPT, MASKED, NOT_SELECTED, RANDOM, MaskedBatch
from ..validate import (
    check_bool,
    check_choice,
    check_int,
    check_memory,
    check_open_unit,
    check_token_ids,
    check_type,
)
from .subword import PREFIX
from .tokenizer import SPECIAL_TOKENS, Tokenizer

#: The masking schedules: one mask per sequence (BERT), ``copies`` masks cycled, a fresh mask every epoch.
SCHEDULES = ("static", "duplicated", "dynamic")
#: Bytes one masking holds or passes through per token: random draws, decisions, ids, the MaskedBatch.
MASKING_BYTES_PER_TOKEN = 64
#: Bytes one stored MaskedBatch holds per token (input ids, labels, attention mask: int64; decision: int8).
STORED_BYTES_PER_TOKEN = 25


def _check_seed(rng) -> int:
    if isinstance(rng, bool | np.bool_) or not isinstance(rng, numbers.Integral):
        raise TypeError(f"rng must be a seed (a non-negative int) or an np.random.Generator, got {rng!r}")
    return check_int("rng", rng, minimum=0)


def as_generator(rng) -> np.random.Generator:
    """A seed (a non-negative int) or an ``np.random.Generator`` as a Generator."""
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(_check_seed(rng))


def _check_masking_memory(shape: tuple[int, ...]) -> None:
    check_memory(MASKING_BYTES_PER_TOKEN * math.prod(shape), f"masking ids of shape {shape}")


def check_maskable(ids, tokenizer: Tokenizer) -> np.ndarray:
    """(B, T) ids in the tokenizer's vocabulary, every row holding at least one word to mask; refused when
    masking them would need more memory than the limit."""
    check_type("tokenizer", tokenizer, Tokenizer)
    if isinstance(ids, np.ndarray):  # an array's size is known before check_token_ids copies it
        _check_masking_memory(ids.shape)
    ids, _ = check_token_ids("ids", ids, vocab_size=tokenizer.vocab_size)
    _check_masking_memory(ids.shape)
    empty = np.flatnonzero(~(ids >= len(tokenizer.special_ids)).any(axis=1))
    if empty.size:
        raise ValueError(f"ids row {empty[0]} holds only special tokens ({', '.join(SPECIAL_TOKENS)}): "
                         "there is no word to mask; drop that row")
    return ids


def bert_mask(ids, tokenizer: Tokenizer, *, mask_prob: float = 0.15,
              max_ngram: int = 1, at_least_one: bool = False,
              rng=0) -> MaskedBatch:
    """selected ~ Bernoulli(p) per non-special token (spans if n_max > 1).

    A selected token -> [MASK] 80 %, a random word 10 %, kept 10 %: BERT's
    masking procedure on (B, T) ids. The model predicts the original token
    at every selected position; special tokens are never selected; random
    words are drawn uniformly from the non-special vocabulary.

    ``max_ngram`` = n_max > 1 is ALBERT's n-gram masking (Lan et al., ICLR
    2020, section 4.1: "n-gram masking (Joshi et al., 2019), with the length
    of each n-gram mask selected randomly", Pr(n) = (1/n) / sum_{j=1}^{n_max}
    1/j, n_max = 3): :func:`_ngram_spans` selects p w (on average) of a
    row's w words in spans that never overlap nor hold a special token;
    each span gets one 80/10/10 decision for all its tokens, as in SpanBERT
    (ALBERT's released code draws it per token). The spans are of tokens,
    not of whole words as in the paper. ``max_ngram`` is at most the rows'
    length T.

    ``at_least_one``: a row the draw leaves with no target gets one word,
    drawn uniformly (:func:`_one_target_each`); every other row's masks are
    the same as without it.
    """
    ids, mask_prob, max_ngram, at_least_one, rng = _check_bert_mask(
        ids, tokenizer, mask_prob, max_ngram, at_least_one, rng)
    n_special = len(tokenizer.special_ids)
    if max_ngram == 1:
        selected = (ids >= n_special) & (rng.random(ids.shape) < mask_prob)
        u = rng.random(ids.shape)
    else:
        span = _ngram_spans(ids >= n_special, mask_prob, max_ngram, rng)
        selected = span >= 0
        u = np.ones(ids.shape)
        # one draw per span
        u[selected] = rng.random(span.max() + 1)[span[selected]]
    random_words = rng.integers(n_special, tokenizer.vocab_size, ids.shape)
    if at_least_one:
        selected, u = _one_target_each(ids >= n_special, selected, u, rng)
    return corrupt(ids, tokenizer, selected, u, random_words)


def corrupt(ids: np.ndarray, tokenizer: Tokenizer, selected: np.ndarray,
            u: np.ndarray, random_words: np.ndarray) -> MaskedBatch:
    """id'_t = [MASK] if u_t < 0.8, a random word if u_t < 0.9, else id_t.

    BERT's 80/10/10 rule at the selected positions t of (B, T) ids, given
    the selection, the uniform draws u_t and the random words: what every
    masking variant shares.
    """
    decision = np.where(u < 0.8, MASKED, np.where(u < 0.9, RANDOM, KEPT))
    decision = np.where(selected, decision, NOT_SELECTED).astype(np.int8)
    input_ids = np.where(decision == RANDOM, random_words, ids)
    input_ids = np.where(decision == MASKED, tokenizer.mask_id, input_ids)
    attention_mask = (ids != tokenizer.pad_id).astype(np.int64)
    return MaskedBatch(input_ids, ids, decision, attention_mask)


def word_starts(ids: np.ndarray, tokenizer: Tokenizer) -> np.ndarray:
    """s_t = max {j <= t : token j starts a word}: (B, T), where each token's word begins.

    A token starts a word unless it continues one (a WordPiece ``##`` piece); with a word-level
    tokenizer every token is a word of its own, s_t = t.
    """
    continues = np.array([token.startswith(PREFIX) for token in tokenizer.vocabulary])[ids]
    positions = np.broadcast_to(np.arange(ids.shape[1]), ids.shape)
    return np.maximum.accumulate(np.where(continues, 0, positions), axis=1)


def whole_word_mask(ids, tokenizer: Tokenizer, *, mask_prob: float = 0.15,
                    rng=0) -> MaskedBatch:
    """selected_t = [v_(s_t) < p],  v ~ U(0, 1): a word is selected whole.

    BERT's whole-word masking on (B, T) ids: each word (s_t from
    :func:`word_starts`) is selected with probability p, and with it every
    piece of it, so each token still is with probability p; then 80/10/10
    per token (:func:`corrupt`), as BERT's code decides.
    """
    ids, mask_prob, rng = _check_variant(ids, tokenizer, mask_prob, rng)
    n_special = len(tokenizer.special_ids)
    v = rng.random(ids.shape)  # a word reads its first piece's draw
    start = word_starts(ids, tokenizer)
    selected = (ids >= n_special) & (np.take_along_axis(v, start, axis=1) < mask_prob)
    u = rng.random(ids.shape)
    random_words = rng.integers(n_special, tokenizer.vocab_size, ids.shape)
    return corrupt(ids, tokenizer, selected, u, random_words)


def span_mask(ids, tokenizer: Tokenizer, *, mask_prob: float = 0.15,
              geometric_p: float = 0.2, max_span: int = 10,
              rng=0) -> MaskedBatch:
    """n ~ Geo(rho) cut at n_max: Pr(n) proportional to rho (1 - rho)^(n-1).

    SpanBERT's span masking (Joshi et al. 2020, section 3.1: rho = 0.2,
    n_max = 10, a mean of 3.8 words) on (B, T) ids: spans of n whole
    words, drawn as :func:`_spans` draws them until p of a row's words are
    selected (the budget counted in words; SpanBERT counts its tokens);
    one 80/10/10 decision per span, for all its tokens.
    """
    ids, mask_prob, rho, max_span, rng = _check_span_mask(
        ids, tokenizer, mask_prob, geometric_p, max_span, rng)
    n = np.arange(1, max_span + 1)
    law = rho * (1 - rho) ** (n - 1)
    n_special = len(tokenizer.special_ids)
    maskable = ids >= n_special
    first = maskable & (word_starts(ids, tokenizer) == np.arange(ids.shape[1]))
    word = np.cumsum(first, axis=1) - 1             # (B, T) word number
    n_words = first.sum(axis=1)
    words = np.arange(n_words.max()) < n_words[:, None]             # (B, W)
    span_of_word = _spans(words, mask_prob, law / law.sum(), rng)   # (B, W)
    span = np.take_along_axis(span_of_word, np.maximum(word, 0), axis=1)
    span = np.where(maskable, span, -1)                             # (B, T)
    selected = span >= 0
    u = np.ones(ids.shape)
    # one draw per span
    u[selected] = rng.random(span.max() + 1)[span[selected]]
    random_words = rng.integers(n_special, tokenizer.vocab_size, ids.shape)
    return corrupt(ids, tokenizer, selected, u, random_words)


def _check_span_mask(ids, tokenizer, mask_prob, geometric_p, max_span, rng):
    """:func:`span_mask`'s arguments, checked: (ids, p, rho, n_max, a generator)."""
    ids, mask_prob, rng = _check_variant(ids, tokenizer, mask_prob, rng)
    return (ids, mask_prob, check_open_unit("geometric_p", geometric_p),
            check_int("max_span", max_span, minimum=1), rng)


def _check_variant(ids, tokenizer, mask_prob, rng):
    """:func:`whole_word_mask`'s and :func:`span_mask`'s shared arguments, checked: (ids, p, a generator)."""
    return check_maskable(ids, tokenizer), check_open_unit("mask_prob", mask_prob), as_generator(rng)


def _check_bert_mask(ids, tokenizer, mask_prob, max_ngram, at_least_one, rng):
    """:func:`bert_mask`'s arguments, checked: (ids, mask_prob, max_ngram, at_least_one, a generator)."""
    ids = check_maskable(ids, tokenizer)
    return (ids, check_open_unit("mask_prob", mask_prob), check_max_ngram(max_ngram, ids.shape[1]),
            check_bool("at_least_one", at_least_one), as_generator(rng))


def _one_target_each(maskable: np.ndarray, selected: np.ndarray, u: np.ndarray,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """t_b = argmax_t over the words of row b of v_bt,  v ~ U(0, 1): one target for each empty row.

    Returns copies of ``selected`` and ``u`` (the 80/10/10 draws) in which each row with nothing selected
    has its word t_b selected, with a fresh draw of u there; the other rows are left as they were.
    """
    empty = np.flatnonzero(~selected.any(axis=1))
    keys = np.where(maskable[empty], rng.random((empty.size, maskable.shape[1])), -1.0)
    at = keys.argmax(axis=1)
    selected, u = selected.copy(), u.copy()
    selected[empty, at] = True
    u[empty, at] = rng.random(empty.size)
    return selected, u


def check_max_ngram(max_ngram, T: int) -> int:
    """``max_ngram`` as an int in [1, T]: no span is longer than a row of T tokens."""
    max_ngram = check_int("max_ngram", max_ngram, minimum=1)
    if max_ngram > T:
        raise ValueError(f"max_ngram must be at most the rows' length T = {T} (no span is longer than a "
                         f"row), got {max_ngram}")
    return max_ngram


def _ngram_spans(maskable: np.ndarray, mask_prob: float, max_ngram: int,
                 rng: np.random.Generator) -> np.ndarray:
    """Pr(n) = (1/n) / sum_{j=1}^{n_max} 1/j: ALBERT's spans (:func:`_spans`), as a (B, T) map."""
    law = 1 / np.arange(1, max_ngram + 1)
    return _spans(maskable, mask_prob, law / law.sum(), rng)


def _spans(maskable: np.ndarray, mask_prob: float, law: np.ndarray,
           rng: np.random.Generator) -> np.ndarray:
    """n ~ law (n = 1..n_max), spans of maskable units until p of each row's are selected: a (B, T) map.

    A row with w maskable units gets a budget of floor(p w), plus one with
    probability frac(p w), so p w on average. Its spans are drawn one at
    a time until the budget is spent: n ~ law, cut to the budget left; the
    start uniform among the places where n maskable units not yet selected
    follow each other; n shrinks by one while there is no such place. The map
    holds each selected unit's span number (0, 1, ... in the order drawn,
    row after row) and -1 elsewhere.
    """
    n_maskable = maskable.sum(axis=1)
    budgets = np.floor(mask_prob * n_maskable).astype(np.int64)
    budgets += rng.random(len(maskable)) < mask_prob * n_maskable - budgets
    span = np.full(maskable.shape, -1, dtype=np.int64)
    n_spans = 0
    for row, budget in enumerate(budgets):
        free = maskable[row].copy()
        lengths = iter(rng.choice(len(law), size=budget, p=law) + 1)
        while budget:
            n = min(int(next(lengths)), budget)
            while not (fits := _starts(free, n)).size:
                n -= 1
            start = fits[rng.integers(fits.size)]
            free[start:start + n] = False
            span[row, start:start + n] = n_spans
            n_spans += 1
            budget -= n
    return span


def _starts(free: np.ndarray, n: int) -> np.ndarray:
    """s such that free[s : s + n] is all True."""
    run = np.concatenate(([0], np.cumsum(free)))
    return np.flatnonzero(run[n:] - run[:-n] == n)


class Coverage(NamedTuple):
    """What a schedule trains on (:meth:`MaskingSchedule.coverage`): the share of sequences never trained
    on, and the share of words ever a target."""

    never_trained: float
    ever_target: float


class _StoredMaskings(Sequence):
    """The ``n`` maskings a schedule stores, masking m drawn by ``draw(m)`` the first time it is read and
    kept: the same maskings as drawing all n up front (each has its own seed), with no work for the copies
    no epoch reaches."""

    def __init__(self, draw, n: int):
        self._draw, self._n, self._drawn = draw, n, {}

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, m):
        if isinstance(m, slice):
            return [self[i] for i in range(*m.indices(self._n))]
        m = range(self._n)[m]  # an IndexError beyond the end, as a list's
        if m not in self._drawn:
            self._drawn[m] = self._draw(m)
        return self._drawn[m]

    @property
    def drawn(self) -> int:
        """How many of the maskings have been drawn so far."""
        return len(self._drawn)


class MaskingSchedule:
    """Which masking each sequence gets in each epoch.

    ``"static"``: one masking per sequence, drawn once in preprocessing (BERT);
    ``"duplicated"``: ``copies`` maskings drawn in preprocessing, epoch e uses copy e mod copies (RoBERTa's
    static baseline: 10 copies over 40 epochs); ``"dynamic"``: a fresh masking every epoch (RoBERTa).
    Masking number m is :func:`bert_mask` with the generator seeded by (base, m), where base is ``rng``
    (a seed) or one draw from it (a Generator): so every schedule starts from the same epoch-0 masking.
    ``stored`` holds the maskings preprocessing stores; each is drawn when first read, so that copies no
    epoch reaches cost nothing (``copies=10**7`` builds at once). ``at_least_one`` gives every masking
    one target at least in every sequence (:func:`bert_mask`'s control).
    """

    def __init__(self, ids, tokenizer: Tokenizer, schedule: str = "dynamic", *,
                 mask_prob: float = 0.15, copies: int = 10, max_ngram: int = 1, at_least_one: bool = False,
                 rng=0):
        self.schedule = check_choice("schedule", schedule, SCHEDULES)
        self.ids = check_maskable(ids, tokenizer)
        self.tokenizer = tokenizer
        self.mask_prob = check_open_unit("mask_prob", mask_prob)
        self.copies = check_int("copies", copies, minimum=1, maximum=sys.maxsize)  # the stored copies' len()
        self.max_ngram = check_max_ngram(max_ngram, self.ids.shape[1])
        self.at_least_one = check_bool("at_least_one", at_least_one)
        self.base = int(rng.integers(2**63)) if isinstance(rng, np.random.Generator) else _check_seed(rng)
        n_stored = {"static": 1, "duplicated": self.copies, "dynamic": 0}[schedule]
        self.stored = _StoredMaskings(self._draw, n_stored)  # preprocessing, drawn as read

    def _draw(self, m: int) -> MaskedBatch:
        return bert_mask(self.ids, self.tokenizer, mask_prob=self.mask_prob, max_ngram=self.max_ngram,
                         at_least_one=self.at_least_one, rng=np.random.default_rng([self.base, m]))

    def mask_index(self, epoch: int) -> int:
        """m(e) = 0 (static),  e mod copies (duplicated),  e (dynamic).

        The masking used in epoch e.
        """
        return mask_index(epoch, self.schedule, self.copies)

    def masks(self, epoch: int) -> MaskedBatch:
        """masks(e) = stored[m(e)] if stored, else draw m(e) now.

        The masking of every sequence in ``epoch`` (0-based).
        """
        m = self.mask_index(epoch)
        return self.stored[m] if self.stored else self._draw(m)

    def distinct_masks(self, epochs: int) -> np.ndarray:
        """(epochs, sequences): how many distinct sets of selected positions each sequence has seen by the
        end of each epoch."""
        epochs = check_int("epochs", epochs, minimum=1)
        B, T = self.ids.shape
        n_masks = min(epochs, len(self.stored)) if self.stored else epochs
        # the counts, one set entry (bytes object and slot) per distinct masking of a row, stored maskings
        check_memory(8 * epochs * B + (90 + T // 8) * B * n_masks
                     + (STORED_BYTES_PER_TOKEN * B * T * n_masks if self.stored else 0),
                     f"distinct_masks over {epochs} epochs of {B} sequences")
        seen = [set() for _ in range(len(self.ids))]
        counts = np.zeros((epochs, len(self.ids)), dtype=np.int64)
        for e in range(epochs):
            for row_seen, row in zip(seen, np.packbits(self.masks(e).selected, axis=1), strict=True):
                row_seen.add(row.tobytes())
            counts[e] = [len(s) for s in seen]
        return counts

    def coverage(self, epochs: int) -> Coverage:
        """never = mean_b [b has no target], ever = words ever a target / words.

        Over ``epochs`` epochs: the share of sequences never trained on
        (every masking they got is empty) and the share of their words that
        are a target at least once. Under Bernoulli selection a row of w
        words is never trained on with probability (1 - p)^(w R), and a word
        is ever a target with probability 1 - (1 - p)^R, R the maskings a
        sequence gets (:func:`draws_per_sequence`): epochs 0 ... R - 1 read
        them all.
        """
        R = draws_per_sequence(epochs, self.schedule, self.copies)
        ever = np.zeros(self.ids.shape, dtype=bool)
        for e in range(R):
            ever = ever | self.masks(e).selected
        words = self.ids >= len(self.tokenizer.special_ids)
        return Coverage(float((~ever.any(axis=1)).mean()),
                        float(ever.sum() / words.sum()))

    def __repr__(self) -> str:
        copies = f", copies={self.copies}" if self.schedule == "duplicated" else ""
        ngram = f", max_ngram={self.max_ngram}" if self.max_ngram > 1 else ""
        ngram += ", at_least_one=True" if self.at_least_one else ""
        return (f"MaskingSchedule({self.schedule!r}, {len(self.ids)} sequences, mask_prob={self.mask_prob}"
                f"{copies}{ngram}, {len(self.stored)} maskings stored, {self.stored.drawn} drawn)")


def mask_index(epoch: int, schedule: str, copies: int = 10) -> int:
    """m(e) = 0 (static),  e mod copies (duplicated),  e (dynamic): the masking a schedule uses in epoch e
    (0-based), numbered in the order the maskings are drawn."""
    epoch = check_int("epoch", epoch, minimum=0)
    copies = check_int("copies", copies, minimum=1)
    return {"static": 0, "duplicated": epoch % copies,
            "dynamic": epoch}[check_choice("schedule", schedule, SCHEDULES)]


def draws_per_sequence(epochs: int, schedule: str, copies: int = 10) -> int:
    """R = 1 (static),  min(epochs, copies) (duplicated),  epochs (dynamic): the maskings drawn for one
    sequence over ``epochs`` epochs."""
    epochs = check_int("epochs", epochs, minimum=1)
    copies = check_int("copies", copies, minimum=1)
    return {"static": 1, "duplicated": min(epochs, copies),
            "dynamic": epochs}[check_choice("schedule", schedule, SCHEDULES)]


#: The longest sequence :func:`expected_distinct_masks` sums over: up to here every term whose binomial
#: weight matters is a normal float64 (the largest C(w, a) is 2.7e299 at w = 1000).
MAX_DISTINCT_TOKENS = 1000


def expected_distinct_masks(n_tokens: int, mask_prob: float, epochs: int,
                            schedule: str, copies: int = 10) -> float:
    """E[D_R] = sum_a C(w, a) (1 - (1 - q_a)^R), q_a = p^a (1 - p)^(w - a)

    The expected number of distinct sets of selected positions a sequence
    of ``n_tokens`` = w words sees in ``epochs`` epochs: R independent draws
    (R from :func:`draws_per_sequence`), each of the C(w, a) masks Omega of
    a = |Omega| positions drawn with probability q_a (the book's q_Omega),
    seen at least once with probability 1 - (1 - q_a)^R.
    """
    w, p, R = _check_distinct(n_tokens, mask_prob, epochs, schedule, copies)
    a = np.arange(w + 1)                  # how many positions are selected
    q = p**a * (1 - p) ** (w - a)         # the probability of one such set
    seen = -np.expm1(R * np.log1p(-q))    # 1 - (1 - q_a)^R
    return float((comb(w, a) * seen).sum())


def _check_distinct(n_tokens, mask_prob, epochs, schedule, copies) -> tuple[int, float, int]:
    """:func:`expected_distinct_masks`'s arguments, checked: (w, p, R)."""
    w = check_int("n_tokens", n_tokens, minimum=1, maximum=MAX_DISTINCT_TOKENS)
    p = check_open_unit("mask_prob", mask_prob)
    for name, value in (("epochs", epochs), ("copies", copies)):
        check_int(name, value, maximum=2**53)  # R is used as a float
    return w, p, draws_per_sequence(epochs, schedule, copies)
