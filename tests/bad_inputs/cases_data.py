"""Bad and unusual inputs at the data entries: masking and its schedules, the tokenizers, sentence pairs, the
corpus, the reference functions and the studies a reader calls. Each case is a clear error (its message names
the argument) or a right answer."""

from __future__ import annotations

import tempfile
from fractions import Fraction
from pathlib import Path

import numpy as np

from bad_inputs.case import Case
from geron_lib.config import EncoderConfig
from geron_lib.model.attention import random_attention_weights
from geron_lib.model.classifier import SequenceClassifier
from geron_lib.model.encoder import Encoder
from geron_lib.pretraining import corpus
from geron_lib.pretraining import masking as M
from geron_lib.pretraining.sentence_pairs import (
    SentencePair,
    encode_pairs,
    label_counts,
    nsp_pairs,
    sop_pairs,
)
from geron_lib.pretraining.subword import WordPieceTokenizer, learn_pieces
from geron_lib.pretraining.tokenizer import WordTokenizer, split_words
from geron_lib.reference import encoders as ref
from geron_lib.reference import masks as ref_masks
from geron_lib.reference import rng as ref_rng
from geron_lib.studies import attention_timing as at
from geron_lib.studies import (
    compiled_heads,
    depth,
    factorised,
    finetuning,
    hf_gap,
    paired,
    paper,
    roberta_paper,
    sentence_tasks,
    stored,
    trained_attention,
)
from geron_lib.studies import conversions as conv
from geron_lib.studies import dynamic_masking as dm
from geron_lib.studies import tradeoffs as tx

TOK = WordTokenizer(["the", "cat", "sat", "on", "mat"])
IDS = TOK.encode_batch(["the cat sat on the mat"], 9)
WP = WordPieceTokenizer.from_texts(["the cat sat on the mat"], vocab_size=40)
DOCS = [["A cat sat.", "It slept."], ["Dogs ran.", "They barked.", "Then they ate."]]
PAIR = SentencePair("the cat", "sat", 0)
X = [[1, 2, 3, 4], [4, 3, 2, 1]]
SMALL = EncoderConfig(
    vocab_size=20,
    hidden_size=8,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=16,
    max_position_embeddings=16,
)
CLASSIFIER = SequenceClassifier.from_encoder(Encoder(SMALL), 2)
W_SUM = random_attention_weights(8, 2, "sum", seed=0)
W_CAT = random_attention_weights(8, 2, "concat", seed=0)
TABLE = np.random.default_rng(0).normal(size=(6, 4))
NAN, INF = float("nan"), float("inf")

CASES: list[Case] = []


def err(entry, label, call, raises, *names):
    CASES.append(Case(entry, label, call, raises=raises, names=names))


def ok(entry, label, call, expect):
    CASES.append(Case(entry, label, call, expect=expect))


def with_inf(w, key):
    w = {k: v.copy() for k, v in w.items()}
    w[key].flat[0] = np.inf
    return w


# masking: bert_mask -----------------------------------------------------------------------------------------
E = "bert_mask"
for label, p, exc in (
    ("mask_prob NaN", NAN, ValueError),
    ("mask_prob inf", INF, ValueError),
    ("mask_prob 0", 0, ValueError),
    ("mask_prob 1", 1, ValueError),
    ("mask_prob -0.1", -0.1, ValueError),
    ("mask_prob True", True, TypeError),
    ("mask_prob '0.15'", "0.15", TypeError),
    ("mask_prob None", None, TypeError),
    ("mask_prob 10**400", 10**400, ValueError),
):
    err(E, label, lambda p=p: M.bert_mask(IDS, TOK, mask_prob=p), exc, "mask_prob")
ok(
    E,
    "mask_prob a Fraction",
    lambda: M.bert_mask(IDS, TOK, mask_prob=Fraction(1, 2)).labels.shape == (1, 9),
    lambda v: v is True,
)
ok(E, "mask_prob np.float32", lambda: M.bert_mask(IDS, TOK, mask_prob=np.float32(0.5)), lambda m: len(m) == 1)
for label, ids, exc in (
    ("ids a str", "the cat", TypeError),
    ("ids None", None, TypeError),
    ("ids empty", [], ValueError),
    ("ids -1", [[1, -1, 2]], ValueError),
    ("ids above vocab", [[1, 99, 2]], ValueError),
    ("ids 3-D", np.ones((1, 2, 3), int), ValueError),
    ("ids ragged", [[1, 5], [1]], ValueError),
    ("ids bools", [[True, False]], TypeError),
    ("ids 1.5", [[1, 5.5, 2]], ValueError),
    ("ids NaN", [[1.0, NAN]], ValueError),
    ("ids only specials", [[1, 2, 0]], ValueError),
):
    err(E, label, lambda ids=ids: M.bert_mask(ids, TOK), exc, "ids")
ok(E, "ids a 1-D list", lambda: M.bert_mask([1, 5, 6, 2], TOK).labels.tolist(), lambda v: v == [[1, 5, 6, 2]])
ok(E, "ids uint8 array", lambda: M.bert_mask(IDS.astype(np.uint8), TOK).labels.dtype, lambda d: d == np.int64)
err(E, "tokenizer a list", lambda: M.bert_mask(IDS, ["the"]), TypeError, "tokenizer")
for label, n, exc in (
    ("max_ngram 0", 0, ValueError),
    ("max_ngram 2.0", 2.0, TypeError),
    ("max_ngram True", True, TypeError),
    ("max_ngram 10**12", 10**12, ValueError),
):
    err(E, label, lambda n=n: M.bert_mask(IDS, TOK, max_ngram=n), exc, "max_ngram")
ok(
    E,
    "max_ngram np.int64(3)",
    lambda: M.bert_mask(IDS, TOK, mask_prob=0.5, max_ngram=np.int64(3)),
    lambda m: m.selected.any(),
)
for label, r, exc in (
    ("rng -1", -1, ValueError),
    ("rng 1.5", 1.5, TypeError),
    ("rng True", True, TypeError),
    ("rng 'seed'", "seed", TypeError),
    ("rng the legacy RandomState", np.random.RandomState(0), TypeError),
):
    err(E, label, lambda r=r: M.bert_mask(IDS, TOK, rng=r), exc, "rng")
ok(
    E,
    "rng np.uint64 seed",
    lambda: (
        M.bert_mask(IDS, TOK, rng=np.uint64(7)).decision.tolist()
        == M.bert_mask(IDS, TOK, rng=7).decision.tolist()
    ),
    lambda v: v is True,
)
ok(E, "rng 10**30", lambda: M.bert_mask(IDS, TOK, rng=10**30), lambda m: len(m) == 1)
err(
    E,
    "ids of a huge broadcast batch",
    lambda: M.bert_mask(np.broadcast_to(IDS, (10**8, 9)), TOK),
    ValueError,
    "ids",
)

# masking: MaskingSchedule and the counts --------------------------------------------------------------------
E = "MaskingSchedule"
ok(
    E,
    "copies=10**7 builds at once",
    lambda: M.MaskingSchedule(IDS, TOK, "duplicated", copies=10**7),
    lambda s: len(s.stored) == 10**7,
)
ok(
    E,
    "copies=10**7 over 40 epochs",
    lambda: M.MaskingSchedule(IDS, TOK, "duplicated", copies=10**7).distinct_masks(40)[-1, 0],
    lambda v: 1 <= v <= 40,
)
for label, s in (("schedule 'Dynamic'", "Dynamic"), ("schedule None", None), ("schedule 0", 0)):
    err(E, label, lambda s=s: M.MaskingSchedule(IDS, TOK, s), ValueError, "schedule")
for label, c, exc in (
    ("copies 0", 0, ValueError),
    ("copies 2.5", 2.5, TypeError),
    ("copies -3", -3, ValueError),
    ("copies np.bool_", np.bool_(True), TypeError),
):
    err(E, label, lambda c=c: M.MaskingSchedule(IDS, TOK, "duplicated", copies=c), exc, "copies")
err(E, "mask_prob NaN", lambda: M.MaskingSchedule(IDS, TOK, mask_prob=NAN), ValueError, "mask_prob")
err(E, "rng -5", lambda: M.MaskingSchedule(IDS, TOK, rng=-5), ValueError, "rng")
err(E, "ids empty", lambda: M.MaskingSchedule([], TOK), ValueError, "ids")
ok(
    E,
    "copies np.int32(3)",
    lambda: M.MaskingSchedule(IDS, TOK, "duplicated", copies=np.int32(3)).copies,
    lambda c: c == 3 and type(c) is int,
)
err(E, "distinct_masks epochs 0", lambda: M.MaskingSchedule(IDS, TOK).distinct_masks(0), ValueError, "epochs")
err(
    E,
    "distinct_masks epochs 10**12",
    lambda: M.MaskingSchedule(IDS, TOK).distinct_masks(10**12),
    ValueError,
    "epochs",
)
err(E, "masks epoch -1", lambda: M.MaskingSchedule(IDS, TOK).masks(-1), ValueError, "epoch")
err(E, "masks epoch 1.0", lambda: M.MaskingSchedule(IDS, TOK).masks(1.0), TypeError, "epoch")
ok(
    E,
    "masks epoch 10**30 (static)",
    lambda: M.MaskingSchedule(IDS, TOK, "static").masks(10**30),
    lambda m: len(m) == 1,
)

E = "mask_index"
ok(
    E,
    "epoch np.int64",
    lambda: M.mask_index(np.int64(23), "duplicated", 10),
    lambda v: v == 3 and type(v) is int,
)
err(E, "epoch -1", lambda: M.mask_index(-1, "static"), ValueError, "epoch")
err(E, "schedule 'random'", lambda: M.mask_index(1, "random"), ValueError, "schedule")
err(E, "copies 0", lambda: M.mask_index(1, "duplicated", 0), ValueError, "copies")

E = "draws_per_sequence"
ok(E, "epochs 10**20 duplicated", lambda: M.draws_per_sequence(10**20, "duplicated", 10), lambda v: v == 10)
err(E, "epochs 0", lambda: M.draws_per_sequence(0, "static"), ValueError, "epochs")
err(E, "epochs 'forty'", lambda: M.draws_per_sequence("forty", "static"), TypeError, "epochs")

E = "expected_distinct_masks"
ok(
    E,
    "n_tokens 10**8 dynamic",
    lambda: M.expected_distinct_masks(10**8, 0.15, 10, "dynamic"),
    lambda v: abs(v - 10) < 1e-9,
)
ok(
    E,
    "n_tokens 10**6 duplicated",
    lambda: M.expected_distinct_masks(10**6, 0.15, 40, "duplicated", 10),
    lambda v: abs(v - 10) < 1e-9,
)
ok(
    E,
    "n_tokens 1 dynamic: 2 sets at most",
    lambda: M.expected_distinct_masks(1, 0.5, 1000, "dynamic"),
    lambda v: abs(v - 2) < 1e-9,
)
ok(
    E,
    "n_tokens 10 static",
    lambda: M.expected_distinct_masks(10, 0.15, 40, "static"),
    lambda v: abs(v - 1) < 1e-12,
)
ok(
    E,
    "numpy integers",
    lambda: M.expected_distinct_masks(np.int64(10), np.float64(0.15), np.int32(40), "dynamic"),
    lambda v: abs(v - M.expected_distinct_masks(10, 0.15, 40, "dynamic")) < 1e-12,
)
err(
    E,
    "n_tokens 10**30",
    lambda: M.expected_distinct_masks(10**30, 0.15, 10, "dynamic"),
    ValueError,
    "n_tokens",
)
err(
    E, "epochs 10**400", lambda: M.expected_distinct_masks(10, 0.15, 10**400, "dynamic"), ValueError, "epochs"
)
err(E, "n_tokens 0", lambda: M.expected_distinct_masks(0, 0.15, 10, "dynamic"), ValueError, "n_tokens")
err(E, "n_tokens 10.0", lambda: M.expected_distinct_masks(10.0, 0.15, 10, "dynamic"), TypeError, "n_tokens")
err(E, "mask_prob NaN", lambda: M.expected_distinct_masks(10, NAN, 10, "dynamic"), ValueError, "mask_prob")
err(E, "mask_prob 1", lambda: M.expected_distinct_masks(10, 1, 10, "dynamic"), ValueError, "mask_prob")
err(E, "schedule 'STATIC'", lambda: M.expected_distinct_masks(10, 0.15, 10, "STATIC"), ValueError, "schedule")

# tokenizers -------------------------------------------------------------------------------------------------
E = "WordTokenizer"
err(E, "words a str", lambda: WordTokenizer("cat"), TypeError, "words")
err(E, "words bytes", lambda: WordTokenizer(b"cat"), TypeError, "words")
err(E, "words an int", lambda: WordTokenizer(5), TypeError, "words")
err(E, "words None", lambda: WordTokenizer(None), TypeError, "words")
err(E, "words a set", lambda: WordTokenizer({"cat", "dog"}), TypeError, "words")
err(E, "words empty", lambda: WordTokenizer([]), ValueError, "words")
err(E, "words holding an int", lambda: WordTokenizer(["cat", 3]), TypeError, "words")
err(E, "words holding None", lambda: WordTokenizer(["cat", None]), TypeError, "words")
err(E, "words holding a list", lambda: WordTokenizer([["cat"]]), TypeError, "words")
err(E, "words upper-case", lambda: WordTokenizer(["Cat"]), ValueError, "words")
err(E, "words with a space", lambda: WordTokenizer(["the cat"]), ValueError, "words")
err(E, "words an empty str", lambda: WordTokenizer([""]), ValueError, "words")
err(E, "words repeated", lambda: WordTokenizer(["cat", "cat"]), ValueError, "words")
err(E, "words a special token", lambda: WordTokenizer(["[MASK]"]), ValueError, "words")
ok(E, "words a generator", lambda: WordTokenizer(w for w in ["cat", "dog"]).vocab_size, lambda v: v == 7)
ok(E, "words a tuple", lambda: WordTokenizer(("cat", "dog")).encode("dog cat"), lambda v: v == [1, 6, 5, 2])
ok(E, "words numpy strings", lambda: WordTokenizer(np.array(["cat", "dog"])).vocab_size, lambda v: v == 7)
E = "WordTokenizer.from_texts"
err(E, "texts a str", lambda: WordTokenizer.from_texts("the cat"), TypeError, "texts")
err(E, "texts empty", lambda: WordTokenizer.from_texts([]), ValueError, "texts")
err(E, "texts a set", lambda: WordTokenizer.from_texts({"the cat", "a dog"}), TypeError, "texts")
err(E, "texts holding bytes", lambda: WordTokenizer.from_texts([b"the cat"]), TypeError, "texts")
err(E, "texts of spaces only", lambda: WordTokenizer.from_texts(["  ", ""]), ValueError, "texts")
err(E, "min_count 0", lambda: WordTokenizer.from_texts(["a b"], min_count=0), ValueError, "min_count")
err(
    E,
    "min_count 10**100",
    lambda: WordTokenizer.from_texts(["a b"], min_count=10**100),
    ValueError,
    "min_count",
)
ok(
    E,
    "texts a generator",
    lambda: WordTokenizer.from_texts(t for t in ["b a", "a"]).vocabulary[5:],
    lambda v: v == ["a", "b"],
)
E = "Tokenizer.encode"
err(E, "text None", lambda: TOK.encode(None), TypeError, "text")
err(E, "text a list", lambda: TOK.encode(["the", "cat"]), TypeError, "text")
ok(E, "text empty", lambda: TOK.encode(""), lambda v: v == [1, 2])
ok(E, "unknown word", lambda: TOK.encode("the dog"), lambda v: v == [1, 5, 4, 2])
E = "Tokenizer.encode_batch"
err(E, "T=10**9", lambda: TOK.encode_batch(["the cat"], T=10**9), ValueError, "T")
err(E, "T 2", lambda: TOK.encode_batch(["the cat"], 2), ValueError, "T")
err(E, "T 8.0", lambda: TOK.encode_batch(["the cat"], 8.0), TypeError, "T")
err(E, "T True", lambda: TOK.encode_batch(["the cat"], True), TypeError, "T")
err(E, "T NaN", lambda: TOK.encode_batch(["the cat"], NAN), TypeError, "T")
err(E, "texts a str", lambda: TOK.encode_batch("the cat", 8), TypeError, "texts")
err(E, "texts empty", lambda: TOK.encode_batch([], 8), ValueError, "texts")
err(E, "texts holding None", lambda: TOK.encode_batch(["the", None], 8), TypeError, "texts")
err(E, "texts an int", lambda: TOK.encode_batch(3, 8), TypeError, "texts")
ok(
    E,
    "T np.int64(4), cut",
    lambda: TOK.encode_batch(["the cat sat"], np.int64(4)).tolist(),
    lambda v: v == [[1, 5, 6, 2]],
)
ok(
    E,
    "texts a generator",
    lambda: TOK.encode_batch((t for t in ["cat", "the"]), 3).tolist(),
    lambda v: v == [[1, 6, 2], [1, 5, 2]],
)
ok(E, "empty text", lambda: TOK.encode_batch([""], 4).tolist(), lambda v: v == [[1, 2, 0, 0]])
E = "Tokenizer.pack_batch"
err(E, "T=10**9", lambda: TOK.pack_batch(["the cat"], T=10**9), ValueError, "T")
ok(
    E,
    "T=10**6 for 10**3 texts: one row",
    lambda: TOK.pack_batch(["the cat"] * 1000, T=10**6).shape,
    lambda v: v == (1, 10**6),
)
err(E, "T 0", lambda: TOK.pack_batch(["the cat"], 0), ValueError, "T")
err(E, "texts a str", lambda: TOK.pack_batch("the cat", 8), TypeError, "texts")
ok(
    E,
    "two texts in one row",
    lambda: TOK.pack_batch(["the cat", "sat"], 8).tolist(),
    lambda v: v == [[1, 5, 6, 2, 7, 2, 0, 0]],
)
E = "Tokenizer.decode"
err(E, "ids above vocab", lambda: TOK.decode([1, 99]), ValueError, "ids")
err(E, "ids -1", lambda: TOK.decode([1, -1]), ValueError, "ids")
err(E, "ids a str", lambda: TOK.decode("1 5"), TypeError, "ids")
err(E, "ids empty", lambda: TOK.decode([]), ValueError, "ids")
ok(
    E,
    "ids np.int8 array",
    lambda: TOK.decode(np.array([1, 5, 6, 2], np.int8)),
    lambda v: v == "[CLS] the cat [SEP]",
)
ok(E, "ids whole floats", lambda: TOK.decode([5.0, 6.0]), lambda v: v == "the cat")
E = "split_words"
err(E, "text bytes", lambda: split_words(b"the cat"), TypeError, "text")
ok(E, "text empty", lambda: split_words(""), lambda v: v == [])
ok(E, "non-ASCII letters are marks", lambda: split_words("café"), lambda v: v == ["caf", "é"])

E = "WordPieceTokenizer"
err(E, "pieces a str", lambda: WordPieceTokenizer("cat"), TypeError, "pieces")
err(E, "pieces an int", lambda: WordPieceTokenizer(7), TypeError, "pieces")
err(E, "pieces empty", lambda: WordPieceTokenizer([]), ValueError, "pieces")
err(E, "pieces holding an int", lambda: WordPieceTokenizer(["c", 1]), TypeError, "pieces")
err(E, "pieces '##'", lambda: WordPieceTokenizer(["c", "##"]), ValueError, "pieces")
err(E, "pieces upper-case", lambda: WordPieceTokenizer(["C"]), ValueError, "pieces")
err(E, "pieces repeated", lambda: WordPieceTokenizer(["c", "c"]), ValueError, "pieces")
ok(
    E,
    "pieces a generator",
    lambda: WordPieceTokenizer(p for p in ["c", "a", "##a"]).tokenize("ca"),
    lambda v: v == ["c", "##a"],
)
E = "WordPieceTokenizer.from_texts"
err(E, "texts a str", lambda: WordPieceTokenizer.from_texts("the cat"), TypeError, "texts")
err(
    E,
    "vocab_size 5",
    lambda: WordPieceTokenizer.from_texts(["the cat"], vocab_size=5),
    ValueError,
    "vocab_size",
)
err(
    E,
    "vocab_size too small for the characters",
    lambda: WordPieceTokenizer.from_texts(["the cat"], 7),
    ValueError,
    "vocab_size",
)
err(
    E,
    "vocab_size 4000.0",
    lambda: WordPieceTokenizer.from_texts(["the cat"], 4000.0),
    TypeError,
    "vocab_size",
)
err(E, "texts of punctuation-free spaces", lambda: WordPieceTokenizer.from_texts([" "]), ValueError, "texts")
ok(
    E,
    "vocab_size 10**12 stops when pairs run out",
    lambda: WordPieceTokenizer.from_texts(["ab ab"], 10**12).vocabulary[5:],
    lambda v: v == ["##b", "a", "ab"],
)
E = "WordPieceTokenizer.word_pieces"
err(E, "word None", lambda: WP.word_pieces(None), TypeError, "word")
err(E, "word an int", lambda: WP.word_pieces(5), TypeError, "word")
ok(E, "word too long", lambda: WP.word_pieces("a" * 101), lambda v: v == ["[UNK]"])
ok(E, "word unseen letter", lambda: WP.word_pieces("zzz"), lambda v: v == ["[UNK]"])
E = "learn_pieces"
err(E, "word_counts a list", lambda: learn_pieces(["ab"], 10), TypeError, "word_counts")
err(E, "word_counts empty word", lambda: learn_pieces({"": 1}, 10), ValueError, "word_counts")
err(E, "word_counts count 0", lambda: learn_pieces({"ab": 0}, 10), ValueError, "word_counts")
err(E, "word_counts count 1.5", lambda: learn_pieces({"ab": 1.5}, 10), TypeError, "word_counts")
err(E, "word_counts key an int", lambda: learn_pieces({3: 1}, 10), TypeError, "word_counts")
err(E, "n_pieces '10'", lambda: learn_pieces({"ab": 1}, "10"), TypeError, "n_pieces")
err(E, "n_pieces 0", lambda: learn_pieces({"ab": 1}, 0), ValueError, "n_pieces")
ok(E, "n_pieces np.int64", lambda: learn_pieces({"ab": 2}, np.int64(3)), lambda v: v == ["##b", "a", "ab"])

# sentence pairs ---------------------------------------------------------------------------------------------
for E, fn in (("nsp_pairs", nsp_pairs), ("sop_pairs", sop_pairs)):
    err(E, "documents a tuple", lambda fn=fn: fn(tuple(DOCS)), TypeError, "documents")
    err(E, "documents empty", lambda fn=fn: fn([]), ValueError, "documents")
    err(E, "documents a str", lambda fn=fn: fn("A cat sat. It slept."), TypeError, "documents")
    err(E, "a document a str", lambda fn=fn: fn(["A cat sat.", "It slept."]), TypeError, "documents")
    err(E, "a sentence an int", lambda fn=fn: fn([["A cat.", 3], ["B."]]), TypeError, "documents")
    err(E, "rng -1", lambda fn=fn: fn(DOCS, rng=-1), ValueError, "rng")
    err(E, "rng 0.5", lambda fn=fn: fn(DOCS, rng=0.5), TypeError, "rng")
    err(E, "no document of two sentences", lambda fn=fn: fn([["A."], ["B."]]), ValueError, "documents")
    ok(E, "rng np.int64", lambda fn=fn: fn(DOCS, rng=np.int64(3)) == fn(DOCS, rng=3), lambda v: v is True)
ok("sop_pairs", "one document", lambda: len(sop_pairs([["A.", "B.", "C."]])), lambda v: v == 2)
err("nsp_pairs", "the other document empty", lambda: nsp_pairs([["A.", "B."], []]), ValueError, "documents")
err("nsp_pairs", "one document", lambda: nsp_pairs([["A.", "B.", "C."]]), ValueError, "documents")
E = "label_counts"
err(E, "pairs a str", lambda: label_counts("ab"), TypeError, "pairs")
err(E, "pairs holding a tuple", lambda: label_counts([("a", "b", 0)]), TypeError, "pairs")
err(E, "label -1", lambda: label_counts([SentencePair("a", "b", -1)]), ValueError, "pairs")
err(E, "label 5", lambda: label_counts([SentencePair("a", "b", 5)]), ValueError, "pairs")
ok(E, "no pairs", lambda: label_counts([]).tolist(), lambda v: v == [0, 0])
ok(
    E,
    "np.int64 labels",
    lambda: label_counts([SentencePair("a", "b", np.int64(1))]).tolist(),
    lambda v: v == [0, 1],
)
E = "encode_pairs"
err(E, "T=10**9", lambda: encode_pairs([PAIR], TOK, 10**9), ValueError, "T")
err(E, "T 4", lambda: encode_pairs([PAIR], TOK, 4), ValueError, "T")
err(E, "pairs empty", lambda: encode_pairs([], TOK, 8), ValueError, "pairs")
err(E, "pairs a tuple of str", lambda: encode_pairs([("a", "b", 0)], TOK, 8), TypeError, "pairs")
err(E, "pair label 2", lambda: encode_pairs([SentencePair("a", "b", 2)], TOK, 8), ValueError, "pairs")
err(E, "pair label True", lambda: encode_pairs([SentencePair("a", "b", True)], TOK, 8), TypeError, "pairs")
err(E, "pair first None", lambda: encode_pairs([SentencePair(None, "b", 0)], TOK, 8), TypeError, "pairs")
err(E, "tokenizer a dict", lambda: encode_pairs([PAIR], {"the": 5}, 8), TypeError, "tokenizer")
ok(E, "cut to fit T 6", lambda: encode_pairs([PAIR], TOK, 6)[0].tolist(), lambda v: v == [[1, 5, 6, 2, 7, 2]])

# corpus -----------------------------------------------------------------------------------------------------
E = "corpus.generate"
err(E, "n_sentences 0", lambda: corpus.generate(0, 1), ValueError, "n_sentences")
err(E, "n_sentences 10**9", lambda: corpus.generate(10**9, 1), ValueError, "n_sentences")
err(E, "seed -1", lambda: corpus.generate(3, -1), ValueError, "seed")
err(E, "seed 1.0", lambda: corpus.generate(3, 1.0), TypeError, "seed")
ok(
    E,
    "np.int64 arguments",
    lambda: corpus.generate(np.int64(3), np.int64(5)) == corpus.generate(3, 5),
    lambda v: v is True,
)
E = "corpus.load"
err(E, "name 'Grammar'", lambda: corpus.load("Grammar"), ValueError, "name")
err(E, "name a Path", lambda: corpus.load(corpus.CORPUS_PATH), ValueError, "name")
E = "corpus.split"
err(E, "sentences a str", lambda: corpus.split("a b c", 1), TypeError, "sentences")
ok(
    E,
    "items paragraph indices",
    lambda: sorted(sum(corpus.split(list(range(5)), 2), [])),
    lambda v: v == [0, 1, 2, 3, 4],
)
err(E, "n_held_out all", lambda: corpus.split(["a", "b"], 2), ValueError, "n_held_out")
err(E, "n_held_out 0", lambda: corpus.split(["a", "b"], 0), ValueError, "n_held_out")
err(E, "seed -2", lambda: corpus.split(["a", "b"], 1, seed=-2), ValueError, "seed")
ok(E, "n_held_out np.int16", lambda: corpus.split(["a", "b", "c"], np.int16(1)), lambda v: len(v[1]) == 1)

# reference --------------------------------------------------------------------------------------------------
for E, fn in (("albert", ref.albert), ("roberta", ref.roberta)):
    err(E, "X a str", lambda fn=fn: fn("1 2 3"), TypeError, "X")
    err(E, "X empty", lambda fn=fn: fn([]), ValueError, "X")
    err(E, "X -1", lambda fn=fn: fn([[1, -1]]), ValueError, "X")
    err(E, "n_heads 3 for d_model 8", lambda fn=fn: fn(X, n_heads=3), ValueError, "n_heads")
    err(E, "n_layers 0", lambda fn=fn: fn(X, n_layers=0), ValueError, "n_layers")
    err(E, "n_layers 10**9", lambda fn=fn: fn(X, n_layers=10**9), ValueError, "n_layers")
    err(E, "d_model 2.0", lambda fn=fn: fn(X, d_model=2.0), TypeError, "d_model")
    err(E, "vocab_size below the largest id", lambda fn=fn: fn(X, vocab_size=3), ValueError, "vocab_size")
    err(E, "vocab_size 10**12", lambda fn=fn: fn(X, vocab_size=10**12), ValueError, "vocab_size")
    err(E, "d_ff 0", lambda fn=fn: fn(X, d_ff=0), ValueError, "d_ff")
    err(E, "seed 1.5", lambda fn=fn: fn(X, seed=1.5), TypeError, "seed")
    err(E, "seed None", lambda fn=fn: fn(X, seed=None), TypeError, "seed")
    ok(
        E,
        "numpy integers",
        lambda fn=fn: (
            fn(np.array(X), n_layers=np.int64(2), d_model=np.int32(8)).n_params
            == fn(X, n_layers=2, d_model=8).n_params
        ),
        lambda v: v is True,
    )
    ok(E, "seed 10**30", lambda fn=fn: fn(X, seed=10**30).hidden.shape, lambda v: v == (2, 4, 8))
err("albert", "d_embed above d_model", lambda: ref.albert(X, d_embed=9), ValueError, "d_embed")
err("albert", "d_embed 0", lambda: ref.albert(X, d_embed=0), ValueError, "d_embed")
err("roberta", "mask_prob NaN", lambda: ref.roberta(X, mask_prob=NAN), ValueError, "mask_prob")
err(
    "roberta",
    "mask_prob 0.99 masks every token",
    lambda: ref.roberta(X, mask_prob=0.99),
    ValueError,
    "mask_prob",
)
err("roberta", "epochs 0", lambda: ref.roberta(X, epochs=0), ValueError, "epochs")
err("roberta", "epochs 10**9", lambda: ref.roberta(X, epochs=10**9), ValueError, "epochs")
E = "reference.rng"
err("rng.draws", "n 10**10", lambda: ref_rng.draws(0, 10**10), ValueError, "draws")
err("rng.draws", "n -1", lambda: ref_rng.draws(0, -1), ValueError, "n")
err("rng.draws", "scale NaN", lambda: ref_rng.draws(0, 3, NAN), ValueError, "scale")
err("rng.draws", "scale 0", lambda: ref_rng.draws(0, 3, 0), ValueError, "scale")
err("rng.draws", "seed 0.5", lambda: ref_rng.draws(0.5, 3), TypeError, "seed")
ok(
    "rng.draws",
    "seed 2**32 + 5 is seed 5",
    lambda: ref_rng.draws(2**32 + 5, 4).tolist() == ref_rng.draws(5, 4).tolist(),
    lambda v: v is True,
)
ok(
    "rng.draws",
    "seed 10**30",
    lambda: ref_rng.draws(10**30, 4).tolist() == ref_rng.draws(10**30 % 2**32, 4).tolist(),
    lambda v: v is True,
)
ok("rng.draws", "n 0", lambda: ref_rng.draws(0, 0).shape, lambda v: v == (0,))
err("rng.draws_loop", "n 10**10", lambda: ref_rng.draws_loop(0, 10**10), ValueError, "n")
ok(
    "rng.draws_loop",
    "equals draws",
    lambda: ref_rng.draws_loop(-7, 5).tolist() == ref_rng.draws(-7, 5).tolist(),
    lambda v: v is True,
)
err("rng.draws_rows", "seeds an int", lambda: ref_rng.draws_rows(5, 3), TypeError, "seeds")
err("rng.draws_rows", "seeds holding a float", lambda: ref_rng.draws_rows([1, 2.5], 3), TypeError, "seeds")
ok(
    "rng.draws_rows",
    "seeds 10**30 and -1",
    lambda: ref_rng.draws_rows([10**30, -1], 3)[1].tolist() == ref_rng.draws(-1, 3).tolist(),
    lambda v: v is True,
)
ok(
    "rng.draws_rows",
    "seeds a generator",
    lambda: ref_rng.draws_rows((s for s in [1, 2]), 2).shape,
    lambda v: v == (2, 2),
)
err(
    "rng.draws_rows",
    "10**6 seeds x 10**4",
    lambda: ref_rng.draws_rows(range(10**6), 10**4),
    ValueError,
    "draws",
)
err("rng.tensor", "shape an int", lambda: ref_rng.tensor(0, 5), TypeError, "shape")
err("rng.tensor", "shape holding -1", lambda: ref_rng.tensor(0, (2, -1)), ValueError, "shape")
err("rng.tensor", "shape (10**6, 10**6)", lambda: ref_rng.tensor(0, (10**6, 10**6)), ValueError, "draws")
ok(
    "rng.tensor",
    "shape np.int64 dims",
    lambda: ref_rng.tensor(0, (np.int64(2), 3)).shape,
    lambda v: v == (2, 3),
)
E = "masks.fixed_count_masks"
err(E, "n_rows 10**9", lambda: ref_masks.fixed_count_masks(0, 0, 10**9, 10, 2), ValueError, "n_rows")
err(E, "n_mask above T", lambda: ref_masks.fixed_count_masks(0, 0, 2, 4, 5), ValueError, "n_mask")
err(E, "epoch -1", lambda: ref_masks.fixed_count_masks(0, -1, 2, 4, 1), ValueError, "epoch")
ok(E, "seed 10**30", lambda: ref_masks.fixed_count_masks(10**30, 0, 2, 6, 2).shape, lambda v: v == (2, 2))
E = "masks.masked_count"
err(E, "T 0", lambda: ref_masks.masked_count(0, 0.15), ValueError, "T")
err(E, "mask_prob inf", lambda: ref_masks.masked_count(10, INF), ValueError, "mask_prob")
ok(E, "half to even", lambda: ref_masks.masked_count(10, 0.25), lambda v: v == 2)

# studies: conversions ---------------------------------------------------------------------------------------
E = "sum_to_concat"
err(E, "W_V holding inf", lambda: conv.sum_to_concat(with_inf(W_SUM, "W_V"), 2), ValueError, "W_V")
err(E, "W_Q holding inf", lambda: conv.sum_to_concat(with_inf(W_SUM, "W_Q"), 2), ValueError, "W_Q")
err(
    E,
    "W_V holding NaN",
    lambda: conv.sum_to_concat({**W_SUM, "W_V": W_SUM["W_V"] * NAN}, 2),
    ValueError,
    "W_V",
)
err(E, "rank 0", lambda: conv.sum_to_concat(W_SUM, 2, rank=0), ValueError, "rank")
err(E, "rank 5 above d_head 4", lambda: conv.sum_to_concat(W_SUM, 2, rank=5), ValueError, "rank")
err(E, "rank 2.0", lambda: conv.sum_to_concat(W_SUM, 2, rank=2.0), TypeError, "rank")
err(E, "concat weights", lambda: conv.sum_to_concat(W_CAT, 2), ValueError, "W_O")
err(E, "w a list", lambda: conv.sum_to_concat([W_SUM], 2), TypeError, "w")
err(E, "num_attention_heads 3", lambda: conv.sum_to_concat(W_SUM, 3), ValueError, "num_attention_heads")
err(
    E,
    "W_V int dtype",
    lambda: conv.sum_to_concat({**W_SUM, "W_V": W_SUM["W_V"].astype(int)}, 2),
    TypeError,
    "W_V",
)
ok(
    E,
    "rank np.int64(4)",
    lambda: conv.sum_to_concat(conv.concat_to_sum(W_CAT, 2), 2, rank=np.int64(4)).error,
    lambda e: e < 1e-12,
)
E = "concat_to_sum"
err(E, "W_O holding inf", lambda: conv.concat_to_sum(with_inf(W_CAT, "W_O"), 2), ValueError, "W_O")
err(E, "sum weights", lambda: conv.concat_to_sum(W_SUM, 2), ValueError, "W_O")
err(E, "num_attention_heads 0", lambda: conv.concat_to_sum(W_CAT, 0), ValueError, "num_attention_heads")
err(
    E,
    "W_V of the wrong shape",
    lambda: conv.concat_to_sum({**W_CAT, "W_V": np.zeros((8, 4))}, 2),
    ValueError,
    "W_V",
)
ok(E, "np.int64 heads", lambda: conv.concat_to_sum(W_CAT, np.int64(2))["W_V"].shape, lambda v: v == (2, 8, 8))
E = "value_maps"
err(E, "form 'Sum'", lambda: conv.value_maps(W_SUM, 2, "Sum"), ValueError, "form")
err(
    E,
    "a huge broadcast W_V",
    lambda: conv.value_maps(
        {k: np.broadcast_to(np.float64(0.1), (4096, 4096)) if k.startswith("W") else None for k in W_CAT},
        64,
        "concat",
    ),
    ValueError,
    "value maps",
)

# studies: factorised ----------------------------------------------------------------------------------------
E = "token_embedding_params"
ok(
    E,
    "numpy integers, exact",
    lambda: factorised.token_embedding_params(np.int64(30000), np.int32(4096), np.int64(128)),
    lambda v: v == 30000 * 128 + 128 * 4096 + 4096 and type(v) is int,
)
ok(
    E,
    "huge Python ints, exact",
    lambda: factorised.token_embedding_params(10**12, 10**6),
    lambda v: v == 10**18,
)
err(
    E,
    "embedding_size above hidden_size",
    lambda: factorised.token_embedding_params(100, 8, 9),
    ValueError,
    "embedding_size",
)
err(E, "vocab_size 0", lambda: factorised.token_embedding_params(0, 8), ValueError, "vocab_size")
err(E, "hidden_size 8.0", lambda: factorised.token_embedding_params(100, 8.0), TypeError, "hidden_size")
err(
    E,
    "projection 'yes'",
    lambda: factorised.token_embedding_params(100, 8, 4, projection="yes"),
    TypeError,
    "projection",
)
err(
    E,
    "projection False with E < H",
    lambda: factorised.token_embedding_params(100, 8, 4, projection=False),
    ValueError,
    "projection",
)
E = "break_even_width"
err(E, "bias 1", lambda: factorised.break_even_width(100, 8, bias=1), TypeError, "bias")
err(E, "vocab_size -5", lambda: factorised.break_even_width(-5, 8), ValueError, "vocab_size")
ok(
    E,
    "numpy integers",
    lambda: factorised.break_even_width(np.int64(30000), np.int64(768), bias=False),
    lambda v: abs(v - 30000 * 768 / 30768) < 1e-9,
)
E = "best_rank_factors"
err(E, "table a list", lambda: factorised.best_rank_factors([[1.0, 2.0]], 1), TypeError, "table")
err(
    E,
    "table holding NaN",
    lambda: factorised.best_rank_factors(np.array([[1.0, NAN]]), 1),
    ValueError,
    "table",
)
err(E, "table int dtype", lambda: factorised.best_rank_factors(np.ones((2, 2), int), 1), TypeError, "table")
err(E, "table 1-D", lambda: factorised.best_rank_factors(np.ones(3), 1), TypeError, "table")
err(E, "rank above min(V, H)", lambda: factorised.best_rank_factors(TABLE, 5), ValueError, "rank")
ok(
    E,
    "rank np.int64, full",
    lambda: np.allclose(np.matmul(*factorised.best_rank_factors(TABLE, np.int64(4))), TABLE),
    lambda v: v is True,
)
E = "rank_errors"
err(E, "table holding inf", lambda: factorised.rank_errors(np.array([[1.0, INF]])), ValueError, "table")
err(E, "table empty", lambda: factorised.rank_errors(np.zeros((0, 3))), ValueError, "table")
ok(E, "a zero table", lambda: factorised.rank_errors(np.zeros((2, 2))), lambda v: np.isfinite(v).all())
E = "low_rank_table"
err(E, "noise NaN", lambda: factorised.low_rank_table(10, 4, 2, noise=NAN), ValueError, "noise")
err(E, "noise -1", lambda: factorised.low_rank_table(10, 4, 2, noise=-1), ValueError, "noise")
err(E, "seed -1", lambda: factorised.low_rank_table(10, 4, 2, noise=0.1, seed=-1), ValueError, "seed")
err(E, "rank 5 above H", lambda: factorised.low_rank_table(10, 4, 5, noise=0.1), ValueError, "rank")
err(
    E,
    "vocab_size 10**6 x 10**4",
    lambda: factorised.low_rank_table(10**6, 10**4, 2, noise=0.1),
    ValueError,
    "table",
)
ok(
    E,
    "noise 0: exactly low rank",
    lambda: np.linalg.matrix_rank(factorised.low_rank_table(10, 4, 2, noise=0)),
    lambda v: v == 2,
)

# studies: depth ---------------------------------------------------------------------------------------------
E = "params_by_depth"
err(E, "depths an int", lambda: depth.params_by_depth(SMALL, 3), TypeError, "depths")
err(E, "depths a str", lambda: depth.params_by_depth(SMALL, "123"), TypeError, "depths")
err(E, "depths empty", lambda: depth.params_by_depth(SMALL, []), ValueError, "depths")
err(E, "depths holding 0", lambda: depth.params_by_depth(SMALL, [1, 0]), ValueError, "depths")
err(E, "depths holding 2.0", lambda: depth.params_by_depth(SMALL, [2.0]), TypeError, "depths")
err(E, "config a dict", lambda: depth.params_by_depth({"hidden_size": 8}, [1]), TypeError, "config")
ok(
    E,
    "depths a generator of np.int64",
    lambda: depth.params_by_depth(SMALL, (np.int64(L) for L in (1, 2))),
    lambda v: v["all"][0] == v["all"][1] and v["none"][1] > v["none"][0],
)
E = "layer_movement"
err(E, "states an array", lambda: depth.layer_movement(np.zeros((3, 1, 2, 4))), TypeError, "states")
err(E, "states of one array", lambda: depth.layer_movement([np.zeros((1, 2, 4))]), TypeError, "states")
err(
    E,
    "states of two shapes",
    lambda: depth.layer_movement([np.zeros((1, 2, 4)), np.zeros((1, 3, 4))]),
    ValueError,
    "states",
)
err(
    E,
    "states holding NaN",
    lambda: depth.layer_movement([np.zeros((1, 2, 4)), np.full((1, 2, 4), NAN)]),
    ValueError,
    "states",
)
err(
    E,
    "states of strings",
    lambda: depth.layer_movement([np.full((1, 2, 4), "a"), np.full((1, 2, 4), "b")]),
    TypeError,
    "states",
)
ok(
    E,
    "two equal states",
    lambda: depth.layer_movement([np.ones((1, 2, 4)), np.ones((1, 2, 4))]),
    lambda v: v[0].tolist() == [0.0] and abs(v[1][0] - 1) < 1e-12,
)
E = "movement_by_sharing"
err(
    E,
    "seq_len above max_position_embeddings",
    lambda: depth.movement_by_sharing(SMALL, seq_len=17),
    ValueError,
    "seq_len",
)
err(E, "batch 10**9", lambda: depth.movement_by_sharing(SMALL, batch=10**9, seq_len=16), ValueError, "batch")
err(E, "seed -1", lambda: depth.movement_by_sharing(SMALL, seed=-1, seq_len=4), ValueError, "seed")
err(E, "batch 0", lambda: depth.movement_by_sharing(SMALL, batch=0), ValueError, "batch")
E = "forward_time_by_sharing"
err(
    E,
    "repeats 0",
    lambda: depth.forward_time_by_sharing(SMALL, [1], seq_len=4, repeats=0),
    ValueError,
    "repeats",
)
err(
    E,
    "repeats 10**9",
    lambda: depth.forward_time_by_sharing(SMALL, [1], seq_len=4, repeats=10**9),
    ValueError,
    "repeats",
)
err(E, "seed -1", lambda: depth.forward_time_by_sharing(SMALL, [1], seq_len=4, seed=-1), ValueError, "seed")
err(
    E,
    "clock not callable",
    lambda: depth.forward_time_by_sharing(SMALL, [1], seq_len=4, clock=5),
    TypeError,
    "clock",
)
err(E, "seq_len 17", lambda: depth.forward_time_by_sharing(SMALL, [1], seq_len=17), ValueError, "seq_len")
E = "weight_bytes_per_forward"
err(E, "dtype float16", lambda: depth.weight_bytes_per_forward(SMALL, np.float16), ValueError, "dtype")
err(E, "dtype 'banana'", lambda: depth.weight_bytes_per_forward(SMALL, "banana"), TypeError, "dtype")
err(E, "config None", lambda: depth.weight_bytes_per_forward(None), TypeError, "config")
ok(
    E,
    "float64 doubles float32",
    lambda: (
        [2 * b for b in depth.weight_bytes_per_forward(SMALL)]
        == list(depth.weight_bytes_per_forward(SMALL, "float64"))
    ),
    lambda v: v is True,
)
E = "cache_sizes"
err(E, "root an int", lambda: depth.cache_sizes(3), TypeError, "root")
ok(E, "root missing", lambda: depth.cache_sizes("/no/such/folder"), lambda v: v == {})

# studies: paired, finetuning, sentence tasks ----------------------------------------------------------------
E = "paired_interval"
err(E, "a of strings", lambda: paired.paired_interval(["x", "y"], [1, 2]), TypeError, "a")
err(E, "b a generator", lambda: paired.paired_interval([1, 2], (x for x in [1, 2])), TypeError, "b")
err(E, "a of booleans", lambda: paired.paired_interval([True, False], [1, 2]), TypeError, "a")
err(E, "a complex", lambda: paired.paired_interval([1j, 2], [1, 2]), TypeError, "a")
err(E, "a None", lambda: paired.paired_interval(None, [1, 2]), TypeError, "a")
err(E, "one pair", lambda: paired.paired_interval([1], [2]), ValueError, "a and b")
err(E, "lengths differ", lambda: paired.paired_interval([1, 2, 3], [1, 2]), ValueError, "a and b")
err(E, "a holding NaN", lambda: paired.paired_interval([1, NAN], [1, 2]), ValueError, "a and b")
err(E, "confidence 1", lambda: paired.paired_interval([1, 2], [2, 1], confidence=1), ValueError, "confidence")
err(
    E,
    "confidence NaN",
    lambda: paired.paired_interval([1, 2], [2, 1], confidence=NAN),
    ValueError,
    "confidence",
)
err(
    E,
    "confidence '95%'",
    lambda: paired.paired_interval([1, 2], [2, 1], confidence="95%"),
    TypeError,
    "confidence",
)
ok(
    E,
    "equal differences",
    lambda: paired.paired_interval([2, 3], [1, 2]),
    lambda v: (v.mean, v.low, v.high) == (1.0, 1.0, 1.0),
)
ok(
    E,
    "numpy float32 arrays",
    lambda: paired.paired_interval(np.float32([1, 2, 4]), np.float32([1, 1, 1])).mean,
    lambda v: abs(v - 4 / 3) < 1e-6,
)
E = "FineTuning"
for field, value, exc in (
    ("epochs", 0, ValueError),
    ("batch_size", 2.5, TypeError),
    ("lr", NAN, ValueError),
    ("lr", 0, ValueError),
    ("warmup", 1, ValueError),
    ("warmup", INF, ValueError),
    ("weight_decay", -0.1, ValueError),
    ("max_grad_norm", INF, ValueError),
    ("test_share", 0, ValueError),
    ("test_share", "0.3", TypeError),
):
    err(E, f"{field} {value!r}", lambda f=field, v=value: finetuning.FineTuning(**{f: v}), exc, field)
ok(
    E,
    "numpy values",
    lambda: finetuning.FineTuning(epochs=np.int64(2), lr=np.float32(1e-3)).epochs,
    lambda v: v == 2,
)
E = "section_label"
err(E, "section an int", lambda: finetuning.section_label(3), TypeError, "section")
ok(
    E,
    "unknown section",
    lambda: finetuning.section_label("faq"),
    lambda v: v == finetuning.SECTIONS.index("other"),
)
E = "finetuning.tasks"
err(E, "paragraph_ids an int", lambda: finetuning.tasks(5, TOK, 16), TypeError, "paragraph_ids")
err(E, "paragraph_ids repeated", lambda: finetuning.tasks([0] * 10, TOK, 16), ValueError, "paragraph_ids")
err(E, "paragraph_ids -1", lambda: finetuning.tasks([-1], TOK, 16), ValueError, "paragraph_ids")
err(E, "tokenizer None", lambda: finetuning.tasks(range(10), None, 16), TypeError, "tokenizer")
err(E, "T 4", lambda: finetuning.tasks(range(10), TOK, 4), ValueError, "T")
err(E, "budget a dict", lambda: finetuning.tasks(range(10), TOK, 16, {"epochs": 1}), TypeError, "budget")
err(E, "seed -1", lambda: finetuning.tasks(range(10), TOK, 16, seed=-1), ValueError, "seed")
E = "finetuning.accuracy"
err(E, "model None", lambda: finetuning.accuracy(None, (IDS, IDS, np.zeros(1, int))), TypeError, "model")
err(
    E,
    "batch_size 0",
    lambda: finetuning.accuracy(CLASSIFIER, (IDS, IDS * 0, np.zeros(1, int)), batch_size=0),
    ValueError,
    "batch_size",
)
err(
    E,
    "batch_size -1",
    lambda: finetuning.accuracy(CLASSIFIER, (IDS, IDS * 0, np.zeros(1, int)), batch_size=-1),
    ValueError,
    "batch_size",
)
err(
    E,
    "examples empty",
    lambda: finetuning.accuracy(CLASSIFIER, (IDS[:0], IDS[:0], np.zeros(0, int))),
    ValueError,
    "examples",
)
err(E, "examples of two arrays", lambda: finetuning.accuracy(CLASSIFIER, (IDS, IDS)), TypeError, "examples")
ok(
    E,
    "batch_size np.int64(1)",
    lambda: finetuning.accuracy(CLASSIFIER, (IDS, IDS * 0, np.zeros(1, int)), batch_size=np.int64(1)),
    lambda v: v in (0.0, 1.0),
)
E = "finetune"
err(E, "encoder a config", lambda: finetuning.finetune(SMALL, None), TypeError, "encoder")
err(E, "task None", lambda: finetuning.finetune(Encoder(SMALL), None), TypeError, "task")
E = "sentence_tasks"
err("split_sentences", "paragraph None", lambda: sentence_tasks.split_sentences(None), TypeError, "paragraph")
ok("split_sentences", "paragraph empty", lambda: sentence_tasks.split_sentences(""), lambda v: v == [])
err("documents", "paragraphs a str", lambda: sentence_tasks.documents("A b. C d."), TypeError, "paragraphs")
err(
    "documents",
    "min_sentences 0",
    lambda: sentence_tasks.documents(["A. B."], min_sentences=0),
    ValueError,
    "min_sentences",
)
ok(
    "documents",
    "min_sentences np.int64",
    lambda: sentence_tasks.documents(["A b. C d.", "E."], min_sentences=np.int64(2)),
    lambda v: v == [["A b.", "C d."]],
)
err("word_overlap", "first None", lambda: sentence_tasks.word_overlap(None, "a"), TypeError, "first")
err("word_overlap", "second a list", lambda: sentence_tasks.word_overlap("a", ["a"]), TypeError, "second")
ok("word_overlap", "two empty strings", lambda: sentence_tasks.word_overlap("", ""), lambda v: v == 0.0)
err(
    "topic_only_accuracy",
    "pairs holding tuples",
    lambda: sentence_tasks.topic_only_accuracy([("a", "b", 0)]),
    TypeError,
    "pairs",
)
err("topic_only_accuracy", "pairs empty", lambda: sentence_tasks.topic_only_accuracy([]), ValueError, "pairs")
ok("topic_only_accuracy", "one pair", lambda: sentence_tasks.topic_only_accuracy([PAIR]), lambda v: v == 1.0)

# studies: attention timing ----------------------------------------------------------------------------------
E = "loop_vs_batched"
err(E, "seed -1", lambda: at.loop_vs_batched("sum", [4], [2], hidden_size=8, seed=-1), ValueError, "seed")
err(E, "repeat 0", lambda: at.loop_vs_batched("sum", [4], [2], hidden_size=8, repeat=0), ValueError, "repeat")
err(
    E,
    "repeat 10**9",
    lambda: at.loop_vs_batched("sum", [4], [2], hidden_size=8, repeat=10**9),
    ValueError,
    "repeat",
)
err(E, "form 'both'", lambda: at.loop_vs_batched("both", [4], [2]), ValueError, "form")
err(E, "T_values an int", lambda: at.loop_vs_batched("sum", 4, [2]), TypeError, "T_values")
err(
    E,
    "h 3 for hidden_size 8",
    lambda: at.loop_vs_batched("sum", [4], [3], hidden_size=8),
    ValueError,
    "hidden_size",
)
err(E, "T 10**5", lambda: at.loop_vs_batched("sum", [10**5], [2], hidden_size=8), ValueError, "attention")
err(
    E,
    "clock a str",
    lambda: at.loop_vs_batched("sum", [4], [2], hidden_size=8, clock="cpu"),
    TypeError,
    "clock",
)
E = "time_split"
err(E, "seed -1", lambda: at.time_split(4, 2, hidden_size=8, seed=-1), ValueError, "seed")
err(E, "repeat 10**9", lambda: at.time_split(4, 2, hidden_size=8, repeat=10**9), ValueError, "repeat")
err(E, "seq_len 10**5", lambda: at.time_split(10**5, 2, hidden_size=8), ValueError, "seq_len")
err(E, "num_attention_heads 3", lambda: at.time_split(4, 3, hidden_size=8), ValueError, "num_attention_heads")
err(E, "clock None", lambda: at.time_split(4, 2, hidden_size=8, clock=None), TypeError, "clock")
E = "page_faults_per_call"
err(E, "fn not callable", lambda: at.page_faults_per_call(3), TypeError, "fn")
err(E, "calls 0", lambda: at.page_faults_per_call(lambda: None, calls=0), ValueError, "calls")
ok(
    E,
    "calls np.int64",
    lambda: at.page_faults_per_call(lambda: None, calls=np.int64(2)),
    lambda v: v is None or v >= 0,
)

# studies: dynamic masking -----------------------------------------------------------------------------------
E = "dynamic_masking.Setup"
for field, value, exc in (
    ("n_train", 0, ValueError),
    ("T", 2, ValueError),
    ("T", 10**9, ValueError),
    ("mask_prob", 1.5, ValueError),
    ("mask_prob", NAN, ValueError),
    ("lr", INF, ValueError),
    ("seeds", (), ValueError),
    ("seeds", (0, -1), ValueError),
    ("seeds", 3, TypeError),
    ("dtype", "float16", ValueError),
    ("hidden_size", 0, ValueError),
    ("num_attention_heads", 3, ValueError),
    ("copies", 0, ValueError),
    ("epochs", 1.0, TypeError),
):
    err(E, f"{field} {value!r}", lambda f=field, v=value: dm.Setup(**{f: v}), exc, field)
ok(
    E,
    "numpy integers",
    lambda: dm.Setup(n_train=np.int64(8), seeds=(np.int64(1),)).steps_per_run,
    lambda v: v == 20,
)
err("dynamic_masking.run", "setup a dict", lambda: dm.run({"n_train": 8}), TypeError, "setup")
err("dynamic_masking.summary", "result a list", lambda: dm.summary([1]), TypeError, "result")
err(
    "dynamic_masking.summary",
    "epoch 10",
    lambda: dm.summary({"train": {"static": [[1.0, 2.0]]}, "held_out": {"static": [[1.0, 2.0]]}}, epoch=10),
    ValueError,
    "epoch",
)
ok(
    "dynamic_masking.summary",
    "one seed",
    lambda: dm.summary({"train": {"static": [[1.0, 2.0]]}, "held_out": {"static": [[3.0, 4.0]]}}),
    lambda v: v == {"static": {"train": (2.0, 0.0), "held_out": (4.0, 0.0)}},
)

# found in a second pass -------------------------------------------------------------------------------------
err(
    "best_rank_factors",
    "table float16",
    lambda: factorised.best_rank_factors(np.ones((3, 3), np.float16), 1),
    TypeError,
    "table",
)
err(
    "rank_errors",
    "table float16",
    lambda: factorised.rank_errors(np.ones((3, 3), np.float16)),
    TypeError,
    "table",
)
ok(
    "FineTuning",
    "numpy values stored as Python ones",
    lambda: finetuning.FineTuning(epochs=np.int64(2), lr=np.float32(0.5)),
    lambda b: type(b.epochs) is int and type(b.lr) is float,
)
err("dynamic_masking.load_stored", "path an int", lambda: dm.load_stored(5), TypeError, "path")
err(
    "dynamic_masking.rounded",
    "digits 2.5",
    lambda: dm.rounded({"setup": {}, "train": {}, "held_out": {}}, 2.5),
    TypeError,
    "digits",
)
err("dynamic_masking.rounded", "result a list", lambda: dm.rounded([1]), TypeError, "result")
ok(
    "dynamic_masking.rounded",
    "digits np.int64(1)",
    lambda: dm.rounded({"setup": {}, "train": {"s": [[1.26]]}, "held_out": {"s": [[2.0]]}}, np.int64(1))[
        "train"
    ]["s"],
    lambda v: v == [[1.3]],
)
err("dynamic_masking.data", "setup an int", lambda: dm.data(5), TypeError, "setup")
err("dynamic_masking.model_config", "setup an int", lambda: dm.model_config(5, 10), TypeError, "setup")
err("paper.accountings", "vocab_sizes an int", lambda: paper.accountings(5), TypeError, "vocab_sizes")
err("paper.accountings", "vocab_sizes holding 0", lambda: paper.accountings([0]), ValueError, "vocab_sizes")
ok("paper.to_millions", "count np.int64", lambda: paper.to_millions(np.int64(12_500_000)), lambda v: v == 13)
err("paper.to_millions", "count -1", lambda: paper.to_millions(-1), ValueError, "count")
err("paper.to_millions", "rounding 'ceil'", lambda: paper.to_millions(5, "ceil"), ValueError, "rounding")
err("compiled_heads.compare", "before an int", lambda: compiled_heads.compare(1, "x"), TypeError, "before")
err(
    "compiled_heads.compare",
    "after None",
    lambda: compiled_heads.compare("HloModule m", None),
    TypeError,
    "after",
)
err(
    "compiled_heads.products",
    "text not a program",
    lambda: compiled_heads.products("garbage"),
    ValueError,
    "text",
)
err("roberta_paper.row", "model unknown", lambda: roberta_paper.row("RoBERTa"), ValueError, "model")

# found by a fuzzer over every argument ----------------------------------------------------------------------
err(
    "MaskingSchedule",
    "copies 10**400",
    lambda: M.MaskingSchedule(IDS, TOK, "duplicated", copies=10**400),
    ValueError,
    "copies",
)
ok(
    "expected_distinct_masks",
    "n_tokens 10**12, at once",
    lambda: M.expected_distinct_masks(10**12, 0.15, 4, "dynamic"),
    lambda v: v == 4.0,
)
ok(
    "expected_distinct_masks",
    "n_tokens 2**53, p 1/2",
    lambda: M.expected_distinct_masks(2**53, 0.5, 7, "dynamic"),
    lambda v: v == 7.0,
)
err(
    "expected_distinct_masks",
    "n_tokens 10**400",
    lambda: M.expected_distinct_masks(10**400, 0.15, 4, "dynamic"),
    ValueError,
    "n_tokens",
)
err("WordTokenizer", "words a 0-d array", lambda: WordTokenizer(np.array("cat")), TypeError, "words")
err(
    "Tokenizer.encode_batch",
    "texts a 2-D array",
    lambda: TOK.encode_batch(np.array([["the"], ["cat"]]), 4),
    TypeError,
    "texts",
)
err("masks.masked_count", "T 10**400", lambda: ref_masks.masked_count(10**400, 0.15), ValueError, "T")
for label, scale, exc in (
    ("scale NaN", NAN, ValueError),
    ("scale 0", 0, ValueError),
    ("scale True", True, TypeError),
    ("scale 'x'", "x", TypeError),
):
    err("rng.draws_loop", label, lambda s=scale: ref_rng.draws_loop(0, 3, s), exc, "scale")
err("rng.draws", "n 10**400", lambda: ref_rng.draws(0, 10**400), ValueError, "n =")
err("rng.draws_rows", "seeds a set", lambda: ref_rng.draws_rows({1, 2}, 3), TypeError, "seeds")
err("rng.draws_rows", "seeds a 0-d array", lambda: ref_rng.draws_rows(np.array(3), 3), TypeError, "seeds")
err(
    "forward_time_by_sharing",
    "batch 10**12",
    lambda: depth.forward_time_by_sharing(SMALL, [1], batch=10**12, seq_len=4),
    ValueError,
    "batch",
)
err("params_by_depth", "depths a set", lambda: depth.params_by_depth(SMALL, {1, 2}), TypeError, "depths")
err(
    "params_by_depth",
    "depths a 0-d array",
    lambda: depth.params_by_depth(SMALL, np.array(2)),
    TypeError,
    "depths",
)
err(
    "loop_vs_batched",
    "batch 10**400",
    lambda: at.loop_vs_batched("sum", [4], [2], hidden_size=8, batch=10**400),
    ValueError,
    "batch",
)
err(
    "loop_vs_batched",
    "T_values a 0-d array",
    lambda: at.loop_vs_batched("sum", np.array(4), [2]),
    TypeError,
    "T_values",
)
ok(
    "paired_interval",
    "confidence a Fraction",
    lambda: paired.paired_interval([1, 2, 4], [1, 1, 1], confidence=Fraction(9, 10)),
    lambda v: v.confidence == 0.9 and v.low < v.mean < v.high,
)
err(
    "page_faults_per_call",
    "calls 10**12",
    lambda: at.page_faults_per_call(lambda: None, calls=10**12),
    ValueError,
    "calls",
)
err(
    "FineTuning",
    "weight_decay 1.5",
    lambda: finetuning.FineTuning(weight_decay=1.5),
    ValueError,
    "weight_decay",
)
err(
    "documents",
    "paragraphs a 0-d array",
    lambda: sentence_tasks.documents(np.array("A b. C d.")),
    TypeError,
    "paragraphs",
)
err(
    "finetuning.tasks",
    "paragraph_ids a set",
    lambda: finetuning.tasks(set(range(10)), TOK, 16),
    TypeError,
    "paragraph_ids",
)

# the paper's tables --------------------------------------------------------------------------------------
ROW = paper.TABLE_1[2]
err("paper.reproduces", "rows a str", lambda: paper.reproduces(paper.PLAIN, "ALBERT base"), TypeError, "rows")
err("paper.reproduces", "accounting None", lambda: paper.reproduces(None, [ROW]), TypeError, "accounting")
err(
    "paper.reproducing",
    "candidates an int",
    lambda: paper.reproducing([ROW], candidates=5),
    TypeError,
    "candidates",
)
err(
    "paper.reproducing",
    "candidates empty",
    lambda: paper.reproducing([ROW], candidates=[]),
    TypeError,
    "candidates",
)
err("paper.reproducing", "rounding 'half'", lambda: paper.reproducing([ROW], "half"), ValueError, "rounding")
err(
    "paper.extra_needed",
    "accounting a str",
    lambda: paper.extra_needed(ROW, accounting="plain"),
    TypeError,
    "accounting",
)
err(
    "paper.largest_count",
    "candidates holding a str",
    lambda: paper.largest_count(ROW, ["plain"]),
    TypeError,
    "candidates",
)
ok(
    "paper.largest_count",
    "candidates a generator",
    lambda: paper.largest_count(ROW, (a for a in [paper.PLAIN])),
    lambda v: v == paper.PLAIN.count(ROW.config),
)
err(
    "paper.markdown_table",
    "columns a list",
    lambda: paper.markdown_table([ROW], [paper.PLAIN]),
    TypeError,
    "columns",
)
err(
    "pattern_shares",
    "A empty",
    lambda: trained_attention.pattern_shares(np.zeros((1, 1, 0, 0))),
    ValueError,
    "A",
)
err(
    "pattern_shares",
    "A holding NaN",
    lambda: trained_attention.pattern_shares(np.full((1, 1, 2, 2), NAN)),
    ValueError,
    "A",
)
err(
    "pattern_shares",
    "A of strings",
    lambda: trained_attention.pattern_shares(np.full((1, 1, 2, 2), "a")),
    TypeError,
    "A",
)
ok(
    "pattern_shares",
    "A a nested list",
    lambda: trained_attention.pattern_shares([[[[0.5, 0.5], [0.5, 0.5]]]])["first"].tolist(),
    lambda v: v == [[0.5]],
)
err(
    "sum_to_concat",
    "W_V float16",
    lambda: conv.sum_to_concat({**W_SUM, "W_V": W_SUM["W_V"].astype(np.float16)}, 2),
    TypeError,
    "W_V",
)
ok(
    "sum_to_concat",
    "float32 weights, exact round trip",
    lambda: (
        conv.sum_to_concat(
            conv.concat_to_sum({k: v.astype(np.float32) for k, v in W_CAT.items()}, 2), 2
        ).error
    ),
    lambda e: e < 1e-5,
)
err(
    "finetuning.tasks",
    "paragraph_ids past the corpus",
    lambda: finetuning.tasks(range(10**7, 10**7 + 10), TOK, 16),
    ValueError,
    "paragraph_ids",
)


# the stored results: one reader -----------------------------------------------------------------------------
err("hf_gap.load_stored", "path an int", lambda: hf_gap.load_stored(5), TypeError, "path")
err("tradeoffs.load_stored", "path None", lambda: tx.load_stored(None), TypeError, "path")


def written(text: str) -> Path:
    """A new file holding ``text``, in a folder of its own."""
    path = Path(tempfile.mkdtemp()) / "results.json"
    path.write_text(text, encoding="utf-8")
    return path


E = "stored.load"
err(E, "path bytes", lambda: stored.load(b"results.json", "scripts/x.py"), TypeError, "path")
err(E, "no such file", lambda: stored.load("no/such/results.json", "scripts/x.py"), FileNotFoundError,
    "no/such/results.json", "scripts/x.py")
err(E, "a folder", lambda: stored.load(tempfile.mkdtemp(), "scripts/x.py"), FileNotFoundError, "scripts/x.py")
err(E, "JSON cut short", lambda: stored.load(written('{"runs": ['), "scripts/x.py"), ValueError,
    "results.json", "not valid JSON", "scripts/x.py")
err(E, "an empty file", lambda: stored.load(written(""), "scripts/x.py"), ValueError, "results.json")
err(E, "a JSON list", lambda: stored.load(written("[1, 2]"), "scripts/x.py"), ValueError, "results.json",
    "JSON object")
err(E, "script None", lambda: stored.load(written("{}"), None), TypeError, "script")
ok(E, "a str path", lambda: stored.load(str(written('{"runs": [1]}')), "scripts/x.py"),
   lambda v: v == {"runs": [1]})
