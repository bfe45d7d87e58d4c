"""The WordPiece tokenizer: BPE-style training with ## continuations, BERT's greedy longest-match encoding."""

from collections import Counter

import numpy as np
import pytest

from geron_lib.pretraining import corpus
from geron_lib.pretraining.masking import MaskingSchedule, bert_mask
from geron_lib.pretraining.subword import MAX_WORD_CHARS, WordPieceTokenizer, learn_pieces
from geron_lib.pretraining.tokenizer import SPECIAL_TOKENS, Tokenizer, WordTokenizer, split_words

TRAIN, HELD = corpus.split(corpus.load("english"), 500, seed=0)


@pytest.fixture(scope="module")
def tok():
    return WordPieceTokenizer.from_texts(TRAIN, 2000)


@pytest.fixture(scope="module")
def hf_wordpiece(tok):
    models = pytest.importorskip("tokenizers.models")
    vocab = {piece: i for i, piece in enumerate(tok.vocabulary)}
    return models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=MAX_WORD_CHARS)


def test_merges_of_a_hand_worked_example():
    # pairs: (##e,##s) 9 and (##s,##t) 9 tie -> "##e" < "##s": ##es; then (##es,##t) 9: ##est;
    # then (l,##o) 7 and (##o,##w) 7 tie -> "##o" < "l": ##ow; then (l,##ow) 7: low
    counts = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    alphabet = ["##d", "##e", "##i", "##o", "##r", "##s", "##t", "##w", "l", "n", "w"]
    assert learn_pieces(counts, 15) == alphabet + ["##es", "##est", "##ow", "low"]
    every = learn_pieces(counts, 100)  # runs out of pairs: every word is one piece
    assert set(counts) <= set(every) and len(every) < 100


def test_special_tokens_keep_word_tokenizer_ids(tok):
    words = WordTokenizer(["a"])
    assert tok.vocabulary[:5] == list(SPECIAL_TOKENS)
    for name in ("pad_id", "cls_id", "sep_id", "mask_id", "unk_id", "special_ids"):
        assert getattr(tok, name) == getattr(words, name)
    assert isinstance(tok, Tokenizer) and tok.vocab_size == 2000


@pytest.mark.slow
def test_training_is_deterministic_and_fills_the_vocabulary(tok):
    again = WordPieceTokenizer.from_texts(TRAIN, 2000)
    assert again.vocabulary == tok.vocabulary
    assert WordPieceTokenizer.from_texts(list(reversed(TRAIN)), 2000).vocabulary == tok.vocabulary
    assert WordPieceTokenizer.from_texts(TRAIN, 4000).vocab_size == 4000
    assert sum(p.startswith("##") for p in tok.vocabulary) > 100  # real subwords, not only words


def test_round_trip_on_every_training_text(tok):
    for text in TRAIN:
        ids = tok.encode(text)
        assert tok.unk_id not in ids
        assert tok.decode(ids) == " ".join(["[CLS]", *split_words(text), "[SEP]"])


def test_encoding_matches_transformers_wordpiece(tok, hf_wordpiece):
    words = sorted({w for t in TRAIN[:300] + HELD for w in split_words(t)}) + ["\u00e9t\u00e9", "x" * 101]
    for word in words:
        assert tok.word_pieces(word) == [t.value for t in hf_wordpiece.tokenize(word)], word


def test_unknown_characters_and_long_words_become_unk(tok):
    # split_words makes a character outside a-z, 0-9 and ' a word of its own
    long_word = "a" * (MAX_WORD_CHARS + 1)
    assert tok.tokenize(f"caf\u00e9 {long_word}") == [*tok.word_pieces("caf"), "[UNK]", "[UNK]"]
    assert tok.tokenize("a" * MAX_WORD_CHARS) != ["[UNK]"]
    assert tok.word_pieces("\u00e9t\u00e9") == ["[UNK]"]
    assert tok.encode("caf\u00e9")[-2] == tok.unk_id


def test_encode_batch_and_masking_work_with_subwords(tok):
    ids = tok.encode_batch(HELD[:64], 24)
    for row, text in zip(ids, HELD[:64], strict=True):  # each text's ids, cut to [CLS] 22 pieces [SEP]
        encoded = tok.encode(text)
        expected = encoded if len(encoded) <= 24 else encoded[:23] + [tok.sep_id]
        assert row.tolist() == expected + [tok.pad_id] * (24 - len(expected))
    m = bert_mask(ids, tok, mask_prob=0.5, rng=1)
    assert not m.selected[ids < len(SPECIAL_TOKENS)].any() and m.selected.any()
    schedule = MaskingSchedule(ids, tok, "dynamic", rng=0)
    assert (schedule.masks(1).decision != schedule.masks(0).decision).any()


def test_pack_batch_fills_rows_with_whole_texts_in_order(tok):
    texts = HELD[:200]
    T = 32
    ids = tok.pack_batch(texts, T)
    assert (ids[:, 0] == tok.cls_id).all()
    assert (ids != tok.pad_id).mean() > (tok.encode_batch(texts, T) != tok.pad_id).mean()
    # reading the rows in order gives back every text in order ([SEP] ends each), a long one cut at T - 2
    segments = [s for row in ids for s in tok.decode(row[row != tok.pad_id][1:]).split(" [SEP]") if s]
    expected = [tok.decode(tok.encode(t)[1:-1][: T - 2]) for t in texts]
    assert [s.strip() for s in segments] == expected
    counts = Counter(int(n) for n in (ids == tok.sep_id).sum(axis=1))
    assert sum(k * n for k, n in counts.items()) == len(texts) and max(counts) > 1


def test_refuses_bad_input():
    with pytest.raises(ValueError, match="only 3 places are left"):
        WordPieceTokenizer.from_texts(["abcd"], 8)
    with pytest.raises(ValueError, match="vocab_size must be at least 6"):
        WordPieceTokenizer.from_texts(["abcd"], 5)
    with pytest.raises(ValueError, match="texts is empty"):
        WordPieceTokenizer.from_texts([], 100)
    with pytest.raises(ValueError, match="texts hold no word"):
        WordPieceTokenizer.from_texts(["   "], 100)
    with pytest.raises(ValueError, match="pieces must be lower-case word starts"):
        WordPieceTokenizer(["##"])
    with pytest.raises(ValueError, match="pieces must be distinct"):
        WordPieceTokenizer(["a", "a"])
    with pytest.raises(ValueError, match="pieces is empty"):
        WordPieceTokenizer([])
    with pytest.raises(ValueError, match="T must be at least 3"):
        WordPieceTokenizer(["a"]).pack_batch(["a"], 2)
    with pytest.raises(ValueError, match="vocab_size"):
        WordPieceTokenizer(["a"]).decode(np.array([6]))
