"""The data's entries at bad and unusual inputs: BERT's masking and its schedules, the word and WordPiece
tokenizers, sentence pairs and the corpus. Each rule refuses with a message naming the argument; an unusual
input that means something gets the right answer. ``uses.tok`` is the word tokenizer of conftest.py (ids 5
to 9 for "the cat sat on mat"), ``uses.word_ids`` its ids of "the cat sat on the mat" in 9 positions."""

from fractions import Fraction
from functools import partial as call

import numpy as np
import pytest

from bad_inputs.inputs import INF, NAN
from bad_inputs.outcome import assert_python_twin, assert_same, case, refused, run, uses
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
from geron_lib.pretraining.tokenizer import SPECIAL_TOKENS, Tokenizer, WordTokenizer, split_words

DOCS = [["A cat sat.", "It slept."], ["Dogs ran.", "They barked.", "Then they ate."]]
PAIR = SentencePair("the cat", "sat", 0)
SENTENCE_PAIRS = {"nsp_pairs": nsp_pairs, "sop_pairs": sop_pairs}


def masking(ids, tokenizer, **kwargs) -> list[np.ndarray]:
    """The four arrays of bert_mask(ids, tokenizer, **kwargs)."""
    m = M.bert_mask(ids, tokenizer, **kwargs)
    return [m.input_ids, m.labels, m.decision, m.attention_mask]


def stored_maskings(*args, **kwargs) -> int:
    return len(M.MaskingSchedule(*args, **kwargs).stored)


def distinct_masks(ids, tokenizer, schedule, epochs, **kwargs) -> np.ndarray:
    return M.MaskingSchedule(ids, tokenizer, schedule, **kwargs).distinct_masks(epochs)


def copies_of(ids, tokenizer, copies) -> int:
    return M.MaskingSchedule(ids, tokenizer, "duplicated", copies=copies).copies


def decisions_at(ids, tokenizer, schedule, epoch) -> np.ndarray:
    return M.MaskingSchedule(ids, tokenizer, schedule).masks(epoch).decision


def masking_as(ids, tokenizer, dtype) -> list[np.ndarray]:
    return masking(ids.astype(dtype), tokenizer)


def built_vocabulary(tokenizer_class, *args) -> list[str]:
    return tokenizer_class(*args).vocabulary


def learned_vocabulary(tokenizer_class, *args) -> list[str]:
    return tokenizer_class.from_texts(*args).vocabulary


def encoded_by(words, text: str) -> list[int]:
    return WordTokenizer(words).encode(text)


def pieces_of(pieces, text: str) -> list[str]:
    return WordPieceTokenizer(pieces).tokenize(text)


def pair_count(pairs_of, documents) -> int:
    return len(pairs_of(documents))


def pair_ids(pairs, tokenizer, T: int) -> np.ndarray:
    return encode_pairs(pairs, tokenizer, T)[0]


def held_out_count(*args) -> int:
    return len(corpus.split(*args)[1])


def all_items(*args) -> list:
    return sorted(sum(corpus.split(*args), []))


# Probabilities ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "error"), [
    *(case("bert_mask", label, call(M.bert_mask, uses.word_ids, uses.tok, mask_prob=p), error)
      for label, p, error in (("mask_prob NaN", NAN, ValueError), ("mask_prob inf", INF, ValueError),
                              ("mask_prob 0", 0, ValueError), ("mask_prob 1", 1, ValueError),
                              ("mask_prob -0.1", -0.1, ValueError), ("mask_prob True", True, TypeError),
                              ("mask_prob '0.15'", "0.15", TypeError), ("mask_prob None", None, TypeError),
                              ("mask_prob 10**400", 10**400, ValueError))),
    case("MaskingSchedule", "mask_prob NaN", call(M.MaskingSchedule, uses.word_ids, uses.tok, mask_prob=NAN),
         ValueError),
    case("expected_distinct_masks", "mask_prob NaN", call(M.expected_distinct_masks, 10, NAN, 10, "dynamic"),
         ValueError),
    case("expected_distinct_masks", "mask_prob 1", call(M.expected_distinct_masks, 10, 1, 10, "dynamic"),
         ValueError),
])
def test_a_masking_probability_not_strictly_between_0_and_1_is_refused_naming_it(request, entry, error):
    with refused(error, "mask_prob"):
        run(request, entry)


# Token ids --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "error"), [
    *(case("bert_mask", label, call(M.bert_mask, ids, uses.tok), error)
      for label, ids, error in (("ids a str", "the cat", TypeError), ("ids None", None, TypeError),
                                ("ids empty", [], ValueError), ("ids -1", [[1, -1, 2]], ValueError),
                                ("ids above vocab", [[1, 99, 2]], ValueError),
                                ("ids 3-D", np.ones((1, 2, 3), int), ValueError),
                                ("ids ragged", [[1, 5], [1]], ValueError), ("ids bools", [[True, False]],
                                 TypeError),
                                ("ids 1.5", [[1, 5.5, 2]], ValueError), ("ids NaN", [[1.0, NAN]], ValueError),
                                ("ids only specials", [[1, 2, 0]], ValueError))),
    case("bert_mask", "ids of a huge broadcast batch",
         call(M.bert_mask, np.broadcast_to(np.array([[1, 5, 6, 7, 8, 5, 9, 2, 0]]), (10**8, 9)), uses.tok),
         ValueError),
    case("MaskingSchedule", "ids empty", call(M.MaskingSchedule, [], uses.tok), ValueError),
    case("Tokenizer.decode", "ids above vocab", call(Tokenizer.decode, uses.tok, [1, 99]), ValueError),
    case("Tokenizer.decode", "ids -1", call(Tokenizer.decode, uses.tok, [1, -1]), ValueError),
    case("Tokenizer.decode", "ids a str", call(Tokenizer.decode, uses.tok, "1 5"), TypeError),
    case("Tokenizer.decode", "ids empty", call(Tokenizer.decode, uses.tok, []), ValueError),
])
def test_ids_that_are_no_rows_of_the_vocabulary_are_refused_naming_ids(request, entry, error):
    with refused(error, "ids"):
        run(request, entry)


# Counts and sizes -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "error", "name"), [
    *(case("bert_mask", f"max_ngram {label}", call(M.bert_mask, uses.word_ids, uses.tok, max_ngram=n), error,
           "max_ngram")
      for label, n, error in (("0", 0, ValueError), ("2.0", 2.0, TypeError), ("True", True, TypeError),
                              ("10**12", 10**12, ValueError))),
    *(case("MaskingSchedule", f"copies {label}",
           call(M.MaskingSchedule, uses.word_ids, uses.tok, "duplicated", copies=c), error, "copies")
      for label, c, error in (("0", 0, ValueError), ("2.5", 2.5, TypeError), ("-3", -3, ValueError),
                              ("np.bool_", np.bool_(True), TypeError), ("10**400", 10**400, ValueError))),
    case("MaskingSchedule", "distinct_masks epochs 0",
         call(distinct_masks, uses.word_ids, uses.tok, "dynamic", 0),
         ValueError, "epochs"),
    case("MaskingSchedule", "distinct_masks epochs 10**12",
         call(distinct_masks, uses.word_ids, uses.tok, "dynamic", 10**12), ValueError, "epochs"),
    case("MaskingSchedule", "masks epoch -1", call(decisions_at, uses.word_ids, uses.tok, "dynamic", -1),
         ValueError,
         "epoch"),
    case("MaskingSchedule", "masks epoch 1.0", call(decisions_at, uses.word_ids, uses.tok, "dynamic", 1.0),
         TypeError,
         "epoch"),
    case("mask_index", "epoch -1", call(M.mask_index, -1, "static"), ValueError, "epoch"),
    case("mask_index", "copies 0", call(M.mask_index, 1, "duplicated", 0), ValueError, "copies"),
    case("draws_per_sequence", "epochs 0", call(M.draws_per_sequence, 0, "static"), ValueError, "epochs"),
    case("draws_per_sequence", "epochs 'forty'", call(M.draws_per_sequence, "forty", "static"), TypeError,
         "epochs"),
    case("expected_distinct_masks", "n_tokens 1001, past the plain sum",
         call(M.expected_distinct_masks, M.MAX_DISTINCT_TOKENS + 1, 0.15, 10, "dynamic"), ValueError,
         "n_tokens"),
    case("expected_distinct_masks", "n_tokens 10**12",
         call(M.expected_distinct_masks, 10**12, 0.15, 4, "dynamic"), ValueError, "n_tokens"),
    case("expected_distinct_masks", "n_tokens 2**53, p 1/2",
         call(M.expected_distinct_masks, 2**53, 0.5, 7, "dynamic"), ValueError, "n_tokens"),
    case("expected_distinct_masks", "n_tokens 10**30",
         call(M.expected_distinct_masks, 10**30, 0.15, 10, "dynamic"),
         ValueError, "n_tokens"),
    case("expected_distinct_masks", "epochs 10**400",
         call(M.expected_distinct_masks, 10, 0.15, 10**400, "dynamic"), ValueError, "epochs"),
    case("expected_distinct_masks", "n_tokens 0", call(M.expected_distinct_masks, 0, 0.15, 10, "dynamic"),
         ValueError, "n_tokens"),
    case("expected_distinct_masks", "n_tokens 10.0",
         call(M.expected_distinct_masks, 10.0, 0.15, 10, "dynamic"),
         TypeError, "n_tokens"),
    case("expected_distinct_masks", "n_tokens 10**400",
         call(M.expected_distinct_masks, 10**400, 0.15, 4, "dynamic"),
         ValueError, "n_tokens"),
    *(case("Tokenizer.encode_batch", label, call(Tokenizer.encode_batch, uses.tok, ["the cat"], T), error,
           "T")
      for label, T, error in (("T=10**9", 10**9, ValueError), ("T 2", 2, ValueError),
                              ("T 8.0", 8.0, TypeError),
                              ("T True", True, TypeError), ("T NaN", NAN, TypeError))),
    case("Tokenizer.pack_batch", "T=10**9", call(Tokenizer.pack_batch, uses.tok, ["the cat"], 10**9),
         ValueError, "T"),
    case("Tokenizer.pack_batch", "T 0", call(Tokenizer.pack_batch, uses.tok, ["the cat"], 0), ValueError,
         "T"),
    case("WordTokenizer.from_texts", "min_count 0", call(WordTokenizer.from_texts, ["a b"], min_count=0),
         ValueError,
         "min_count"),
    case("WordTokenizer.from_texts", "min_count 10**100",
         call(WordTokenizer.from_texts, ["a b"], min_count=10**100),
         ValueError, "min_count"),
    case("WordPieceTokenizer.from_texts", "vocab_size 5",
         call(WordPieceTokenizer.from_texts, ["the cat"], vocab_size=5),
         ValueError, "vocab_size"),
    case("WordPieceTokenizer.from_texts", "vocab_size too small for the characters",
         call(WordPieceTokenizer.from_texts, ["the cat"], 7), ValueError, "vocab_size"),
    case("WordPieceTokenizer.from_texts", "vocab_size 4000.0",
         call(WordPieceTokenizer.from_texts, ["the cat"], 4000.0),
         TypeError, "vocab_size"),
    case("learn_pieces", "word_counts count 0", call(learn_pieces, {"ab": 0}, 10), ValueError, "word_counts"),
    case("learn_pieces", "word_counts count 1.5", call(learn_pieces, {"ab": 1.5}, 10), TypeError,
         "word_counts"),
    case("learn_pieces", "n_pieces '10'", call(learn_pieces, {"ab": 1}, "10"), TypeError, "n_pieces"),
    case("learn_pieces", "n_pieces 0", call(learn_pieces, {"ab": 1}, 0), ValueError, "n_pieces"),
    case("encode_pairs", "T=10**9", call(encode_pairs, [PAIR], uses.tok, 10**9), ValueError, "T"),
    case("encode_pairs", "T 4", call(encode_pairs, [PAIR], uses.tok, 4), ValueError, "T"),
    case("corpus.generate", "n_sentences 0", call(corpus.generate, 0, 1), ValueError, "n_sentences"),
    case("corpus.generate", "n_sentences 10**9", call(corpus.generate, 10**9, 1), ValueError, "n_sentences"),
    case("corpus.split", "n_held_out all", call(corpus.split, ["a", "b"], 2), ValueError, "n_held_out"),
    case("corpus.split", "n_held_out 0", call(corpus.split, ["a", "b"], 0), ValueError, "n_held_out"),
])
def test_a_count_that_is_not_a_whole_number_in_its_range_is_refused_naming_it(request, entry, error, name):
    with refused(error, name):
        run(request, entry)


# Seeds and generators ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "error", "name"), [
    *(case("bert_mask", label, call(M.bert_mask, uses.word_ids, uses.tok, rng=r), error, "rng")
      for label, r, error in (("rng -1", -1, ValueError), ("rng 1.5", 1.5, TypeError),
                              ("rng True", True, TypeError),
                              ("rng 'seed'", "seed", TypeError),
                              ("rng the legacy RandomState", np.random.RandomState(0), TypeError))),
    case("MaskingSchedule", "rng -5", call(M.MaskingSchedule, uses.word_ids, uses.tok, rng=-5), ValueError,
         "rng"),
    *(case(entry, label, call(fn, DOCS, rng=r), error, "rng")
      for entry, fn in SENTENCE_PAIRS.items()
      for label, r, error in (("rng -1", -1, ValueError), ("rng 0.5", 0.5, TypeError))),
    case("corpus.generate", "seed -1", call(corpus.generate, 3, -1), ValueError, "seed"),
    case("corpus.generate", "seed 1.0", call(corpus.generate, 3, 1.0), TypeError, "seed"),
    case("corpus.split", "seed -2", call(corpus.split, ["a", "b"], 1, seed=-2), ValueError, "seed"),
])
def test_a_seed_that_is_no_natural_number_or_generator_is_refused_naming_it(request, entry, error, name):
    with refused(error, name):
        run(request, entry)


# Names not among the choices --------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "name"), [
    *(case("MaskingSchedule", label, call(M.MaskingSchedule, uses.word_ids, uses.tok, s), "schedule")
      for label, s in (("schedule 'Dynamic'", "Dynamic"), ("schedule None", None), ("schedule 0", 0))),
    case("mask_index", "schedule 'random'", call(M.mask_index, 1, "random"), "schedule"),
    case("expected_distinct_masks", "schedule 'STATIC'",
         call(M.expected_distinct_masks, 10, 0.15, 10, "STATIC"),
         "schedule"),
    case("corpus.load", "name 'Grammar'", call(corpus.load, "Grammar"), "name"),
    case("corpus.load", "name a Path", call(corpus.load, corpus.CORPUS_PATH), "name"),
])
def test_a_name_not_among_the_choices_is_refused_naming_it(request, entry, name):
    with refused(ValueError, name):
        run(request, entry)


# Words, texts and pieces ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "error", "name"), [
    *(case("WordTokenizer", label, call(WordTokenizer, words), error, "words")
      for label, words, error in (
          ("words a str", "cat", TypeError), ("words bytes", b"cat", TypeError), ("words an int", 5,
           TypeError),
          ("words None", None, TypeError), ("words a set", {"cat", "dog"}, TypeError), ("words empty", [],
           ValueError),
          ("words holding an int", ["cat", 3], TypeError), ("words holding None", ["cat", None], TypeError),
          ("words holding a list", [["cat"]], TypeError), ("words upper-case", ["Cat"], ValueError),
          ("words with a space", ["the cat"], ValueError), ("words an empty str", [""], ValueError),
          ("words repeated", ["cat", "cat"], ValueError), ("words a special token", ["[MASK]"], ValueError),
          ("words a 0-d array", np.array("cat"), TypeError))),
    *(case("WordTokenizer.from_texts", label, call(WordTokenizer.from_texts, texts), error, "texts")
      for label, texts, error in (
          ("texts a str", "the cat", TypeError), ("texts empty", [], ValueError),
          ("texts a set", {"the cat", "a dog"}, TypeError), ("texts holding bytes", [b"the cat"], TypeError),
          ("texts of spaces only", ["  ", ""], ValueError))),
    case("Tokenizer.encode", "text None", call(Tokenizer.encode, uses.tok, None), TypeError, "text"),
    case("Tokenizer.encode", "text a list", call(Tokenizer.encode, uses.tok, ["the", "cat"]), TypeError,
         "text"),
    *(case("Tokenizer.encode_batch", label, call(Tokenizer.encode_batch, uses.tok, texts, T), error, "texts")
      for label, texts, T, error in (
          ("texts a str", "the cat", 8, TypeError), ("texts empty", [], 8, ValueError),
          ("texts holding None", ["the", None], 8, TypeError), ("texts an int", 3, 8, TypeError),
          ("texts a 2-D array", np.array([["the"], ["cat"]]), 4, TypeError))),
    case("Tokenizer.pack_batch", "texts a str", call(Tokenizer.pack_batch, uses.tok, "the cat", 8),
         TypeError, "texts"),
    case("split_words", "text bytes", call(split_words, b"the cat"), TypeError, "text"),
    *(case("WordPieceTokenizer", label, call(WordPieceTokenizer, pieces), error, "pieces")
      for label, pieces, error in (
          ("pieces a str", "cat", TypeError), ("pieces an int", 7, TypeError), ("pieces empty", [],
           ValueError),
          ("pieces holding an int", ["c", 1], TypeError), ("pieces '##'", ["c", "##"], ValueError),
          ("pieces upper-case", ["C"], ValueError), ("pieces repeated", ["c", "c"], ValueError))),
    case("WordPieceTokenizer.from_texts", "texts a str", call(WordPieceTokenizer.from_texts, "the cat"),
         TypeError,
         "texts"),
    case("WordPieceTokenizer.from_texts", "texts of punctuation-free spaces",
         call(WordPieceTokenizer.from_texts, [" "]),
         ValueError, "texts"),
    case("WordPieceTokenizer.word_pieces", "word None",
         call(WordPieceTokenizer.word_pieces, uses.wordpiece, None),
         TypeError, "word"),
    case("WordPieceTokenizer.word_pieces", "word an int",
         call(WordPieceTokenizer.word_pieces, uses.wordpiece, 5),
         TypeError, "word"),
    case("learn_pieces", "word_counts a list", call(learn_pieces, ["ab"], 10), TypeError, "word_counts"),
    case("learn_pieces", "word_counts empty word", call(learn_pieces, {"": 1}, 10), ValueError,
         "word_counts"),
    case("learn_pieces", "word_counts key an int", call(learn_pieces, {3: 1}, 10), TypeError, "word_counts"),
])
def test_words_texts_or_pieces_that_are_no_strings_of_their_form_are_refused_naming_them(request, entry,
                                                                                         error,
                                                                                          name):
    with refused(error, name):
        run(request, entry)


# Documents and sentence pairs -------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "error", "name"), [
    *(case(entry, label, call(fn, documents), error, "documents")
      for entry, fn in SENTENCE_PAIRS.items()
      for label, documents, error in (
          ("documents a tuple", tuple(DOCS), TypeError), ("documents empty", [], ValueError),
          ("documents a str", "A cat sat. It slept.", TypeError),
          ("a document a str", ["A cat sat.", "It slept."], TypeError),
          ("a sentence an int", [["A cat.", 3], ["B."]], TypeError),
          ("no document of two sentences", [["A."], ["B."]], ValueError))),
    case("nsp_pairs", "the other document empty", call(nsp_pairs, [["A.", "B."], []]), ValueError,
         "documents"),
    case("nsp_pairs", "one document", call(nsp_pairs, [["A.", "B.", "C."]]), ValueError, "documents"),
    case("label_counts", "pairs a str", call(label_counts, "ab"), TypeError, "pairs"),
    case("label_counts", "pairs holding a tuple", call(label_counts, [("a", "b", 0)]), TypeError, "pairs"),
    case("label_counts", "label -1", call(label_counts, [SentencePair("a", "b", -1)]), ValueError, "pairs"),
    case("label_counts", "label 5", call(label_counts, [SentencePair("a", "b", 5)]), ValueError, "pairs"),
    case("encode_pairs", "pairs empty", call(encode_pairs, [], uses.tok, 8), ValueError, "pairs"),
    case("encode_pairs", "pairs a tuple of str", call(encode_pairs, [("a", "b", 0)], uses.tok, 8), TypeError,
         "pairs"),
    case("encode_pairs", "pair label 2", call(encode_pairs, [SentencePair("a", "b", 2)], uses.tok, 8),
         ValueError,
         "pairs"),
    case("encode_pairs", "pair label True", call(encode_pairs, [SentencePair("a", "b", True)], uses.tok, 8),
         TypeError,
         "pairs"),
    case("encode_pairs", "pair first None", call(encode_pairs, [SentencePair(None, "b", 0)], uses.tok, 8),
         TypeError,
         "pairs"),
    case("corpus.split", "sentences a str", call(corpus.split, "a b c", 1), TypeError, "sentences"),
])
def test_documents_or_pairs_not_of_their_form_are_refused_naming_them(request, entry, error, name):
    with refused(error, name):
        run(request, entry)


@pytest.mark.parametrize("entry", [
    case("bert_mask", "tokenizer a list", call(M.bert_mask, uses.word_ids, ["the"])),
    case("encode_pairs", "tokenizer a dict", call(encode_pairs, [PAIR], {"the": 5}, 8)),
])
def test_a_tokenizer_that_is_none_is_refused_naming_it(request, entry):
    with refused(TypeError, "tokenizer"):
        run(request, entry)


# Right answers ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "twin"), [
    case("bert_mask", "mask_prob a Fraction",
         call(masking, uses.word_ids, uses.tok, mask_prob=Fraction(1, 2)),
         call(masking, uses.word_ids, uses.tok, mask_prob=0.5)),
    case("bert_mask", "mask_prob np.float32",
         call(masking, uses.word_ids, uses.tok, mask_prob=np.float32(0.5)),
         call(masking, uses.word_ids, uses.tok, mask_prob=0.5)),
    case("bert_mask", "ids uint8 array", call(masking_as, uses.word_ids, uses.tok, np.uint8),
         call(masking, uses.word_ids, uses.tok)),
    case("bert_mask", "max_ngram np.int64(3)",
         call(masking, uses.word_ids, uses.tok, mask_prob=0.5, max_ngram=np.int64(3)),
         call(masking, uses.word_ids, uses.tok, mask_prob=0.5, max_ngram=3)),
    case("bert_mask", "rng np.uint64 seed", call(masking, uses.word_ids, uses.tok, rng=np.uint64(7)),
         call(masking, uses.word_ids, uses.tok, rng=7)),
    case("bert_mask", "rng 10**30", call(masking, uses.word_ids, uses.tok, rng=10**30),
         call(masking, uses.word_ids, uses.tok, rng=np.random.default_rng(10**30))),
    case("MaskingSchedule", "copies np.int32(3)", call(copies_of, uses.word_ids, uses.tok, np.int32(3)),
         call(copies_of, uses.word_ids, uses.tok, 3)),
    case("mask_index", "epoch np.int64", call(M.mask_index, np.int64(23), "duplicated", 10),
         call(M.mask_index, 23, "duplicated", 10)),
    case("expected_distinct_masks", "numpy integers",
         call(M.expected_distinct_masks, np.int64(10), np.float64(0.15), np.int32(40), "dynamic"),
         call(M.expected_distinct_masks, 10, 0.15, 40, "dynamic")),
    case("Tokenizer.decode", "ids np.int8 array",
         call(Tokenizer.decode, uses.tok, np.array([1, 5, 6, 2], np.int8)),
         call(Tokenizer.decode, uses.tok, [1, 5, 6, 2])),
    case("Tokenizer.decode", "ids whole floats", call(Tokenizer.decode, uses.tok, [5.0, 6.0]),
         call(Tokenizer.decode, uses.tok, [5, 6])),
    case("learn_pieces", "n_pieces np.int64", call(learn_pieces, {"ab": 2}, np.int64(3)),
         call(learn_pieces, {"ab": 2}, 3)),
    *(case(entry, "rng np.int64", call(fn, DOCS, rng=np.int64(3)), call(fn, DOCS, rng=3))
      for entry, fn in SENTENCE_PAIRS.items()),
    case("label_counts", "np.int64 labels", call(label_counts, [SentencePair("a", "b", np.int64(1))]),
         call(label_counts, [SentencePair("a", "b", 1)])),
    case("corpus.generate", "np.int64 arguments", call(corpus.generate, np.int64(3), np.int64(5)),
         call(corpus.generate, 3, 5)),
    case("corpus.split", "n_held_out np.int16", call(held_out_count, ["a", "b", "c"], np.int16(1)),
         call(held_out_count, ["a", "b", "c"], 1)),
])
def test_numbers_of_other_types_are_read_as_the_python_numbers_they_equal(request, entry, twin):
    assert_python_twin(run(request, entry), run(request, twin))


@pytest.mark.parametrize(("entry", "expected"), [
    case("bert_mask", "ids a 1-D list", call(masking, [1, 5, 6, 2], uses.tok),
         call(masking, [[1, 5, 6, 2]], uses.tok)),
    case("MaskingSchedule", "copies=10**7 builds at once",
         call(stored_maskings, uses.word_ids, uses.tok, "duplicated", copies=10**7), 10**7),
    case("MaskingSchedule", "copies=10**7 over 40 epochs",
         call(distinct_masks, uses.word_ids, uses.tok, "duplicated", 40, copies=10**7),
         call(distinct_masks, uses.word_ids, uses.tok, "dynamic", 40)),
    case("MaskingSchedule", "masks epoch 10**30 (static)",
         call(decisions_at, uses.word_ids, uses.tok, "static", 10**30),
         call(decisions_at, uses.word_ids, uses.tok, "static", 0)),
    case("draws_per_sequence", "epochs 10**20 duplicated",
         call(M.draws_per_sequence, 10**20, "duplicated", 10), 10),
    case("expected_distinct_masks", "n_tokens 1000 duplicated: 10 draws, all distinct",
         call(M.expected_distinct_masks, 1000, 0.15, 40, "duplicated", 10), 10),
    case("expected_distinct_masks", "n_tokens 1 dynamic: 2 sets at most",
         call(M.expected_distinct_masks, 1, 0.5, 1000, "dynamic"), 2),
    case("expected_distinct_masks", "n_tokens 10 static",
         call(M.expected_distinct_masks, 10, 0.15, 40, "static"), 1),
    case("WordTokenizer", "words a generator",
         call(built_vocabulary, WordTokenizer, (w for w in ["cat", "dog"])),
         [*SPECIAL_TOKENS, "cat", "dog"]),
    case("WordTokenizer", "words a tuple", call(encoded_by, ("cat", "dog"), "dog cat"), [1, 6, 5, 2]),
    case("WordTokenizer", "words numpy strings",
         call(built_vocabulary, WordTokenizer, np.array(["cat", "dog"])),
         [*SPECIAL_TOKENS, "cat", "dog"]),
    case("WordTokenizer.from_texts", "texts a generator",
         call(learned_vocabulary, WordTokenizer, (t for t in ["b a", "a"])), [*SPECIAL_TOKENS, "a", "b"]),
    case("Tokenizer.encode", "text empty", call(Tokenizer.encode, uses.tok, ""), [1, 2]),
    case("Tokenizer.encode", "unknown word", call(Tokenizer.encode, uses.tok, "the dog"), [1, 5, 4, 2]),
    case("Tokenizer.encode_batch", "T np.int64(4), cut",
         call(Tokenizer.encode_batch, uses.tok, ["the cat sat"],
                                                              np.int64(4)), [[1, 5, 6, 2]]),
    case("Tokenizer.encode_batch", "texts a generator",
         call(Tokenizer.encode_batch, uses.tok, (t for t in ["cat", "the"]), 3), [[1, 6, 2], [1, 5, 2]]),
    case("Tokenizer.encode_batch", "empty text", call(Tokenizer.encode_batch, uses.tok, [""], 4),
         [[1, 2, 0, 0]]),
    case("Tokenizer.pack_batch", "T=10**6 for 10**3 texts: one row",
         call(Tokenizer.pack_batch, uses.tok, ["the cat"] * 1000, 10**6),
         np.concatenate([[1], np.tile([5, 6, 2], 1000), np.zeros(10**6 - 3001, int)])[None]),
    case("Tokenizer.pack_batch", "two texts in one row",
         call(Tokenizer.pack_batch, uses.tok, ["the cat", "sat"], 8),
         [[1, 5, 6, 2, 7, 2, 0, 0]]),
    case("split_words", "text empty", call(split_words, ""), []),
    case("split_words", "non-ASCII letters are marks", call(split_words, "café"), ["caf", "é"]),
    case("WordPieceTokenizer", "pieces a generator", call(pieces_of, (p for p in ["c", "a", "##a"]), "ca"),
         ["c", "##a"]),
    case("WordPieceTokenizer.from_texts", "vocab_size 10**12 stops when pairs run out",
         call(learned_vocabulary, WordPieceTokenizer, ["ab ab"], 10**12), [*SPECIAL_TOKENS, "##b", "a",
              "ab"]),
    case("WordPieceTokenizer.word_pieces", "word too long",
         call(WordPieceTokenizer.word_pieces, uses.wordpiece, "a" * 101),
         ["[UNK]"]),
    case("WordPieceTokenizer.word_pieces", "word unseen letter",
         call(WordPieceTokenizer.word_pieces, uses.wordpiece, "zzz"), ["[UNK]"]),
    case("sop_pairs", "one document", call(pair_count, sop_pairs, [["A.", "B.", "C."]]), 2),
    case("label_counts", "no pairs", call(label_counts, []), [0, 0]),
    case("encode_pairs", "cut to fit T 6", call(pair_ids, [PAIR], uses.tok, 6), [[1, 5, 6, 2, 7, 2]]),
    case("corpus.split", "items paragraph indices", call(all_items, list(range(5)), 2), [0, 1, 2, 3, 4]),
])
def test_an_unusual_input_that_means_something_gets_its_value(request, entry, expected):
    assert_same(run(request, entry), run(request, expected) if isinstance(expected, call) else expected)
