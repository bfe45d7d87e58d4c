"""The word-level tokenizer and the generated corpus."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from geron_lib.pretraining import corpus
from geron_lib.pretraining.tokenizer import SPECIAL_TOKENS, WordTokenizer, split_words

ROOT = Path(__file__).resolve().parents[2]


def test_special_tokens_come_first_and_round_trip():
    tok = WordTokenizer.from_texts(["the cat sleeps .", "the dog sleeps ."])
    assert tok.vocabulary[:5] == list(SPECIAL_TOKENS)
    assert (tok.pad_id, tok.cls_id, tok.sep_id, tok.mask_id, tok.unk_id) == (0, 1, 2, 3, 4)
    assert tok.vocabulary[5:] == [".", "sleeps", "the", "cat", "dog"]  # most frequent first, ties by name
    ids = tok.encode("The cat sleeps.")
    assert ids[0] == tok.cls_id and ids[-1] == tok.sep_id
    assert tok.decode(ids) == "[CLS] the cat sleeps . [SEP]"
    assert tok.encode("the owl")[2] == tok.unk_id


def test_encode_batch_pads_and_cuts():
    tok = WordTokenizer(["a", "b", "c"])
    ids = tok.encode_batch(["a b", "a b c a b c"], 5)
    assert ids.tolist() == [[1, 5, 6, 2, 0], [1, 5, 6, 7, 2]]


def test_split_words_separates_punctuation():
    assert split_words("Every day, the cat's ball.") == ["every", "day", ",", "the", "cat's", "ball", "."]


def test_tokenizer_refuses_bad_input():
    with pytest.raises(ValueError, match="texts is empty"):
        WordTokenizer.from_texts([])
    with pytest.raises(TypeError, match="texts must be a list of strings"):
        WordTokenizer.from_texts("the cat")
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str"):
        WordTokenizer.from_texts(["a", 3])
    with pytest.raises(ValueError, match="words is empty"):
        WordTokenizer([])
    with pytest.raises(ValueError, match="must not repeat the special tokens"):
        WordTokenizer(["a", "a"])
    with pytest.raises(ValueError, match="T must be at least 3"):
        WordTokenizer(["a"]).encode_batch(["a"], 2)
    with pytest.raises(ValueError, match="vocab_size"):
        WordTokenizer(["a"]).decode([9])


def test_committed_corpus_is_exactly_the_script_output_and_small():
    sentences = corpus.load()
    assert sentences == corpus.generate(corpus.CORPUS_SENTENCES, corpus.CORPUS_SEED)
    assert corpus.CORPUS_PATH.stat().st_size <= 1_000_000
    assert len(set(sentences)) == len(sentences) == corpus.CORPUS_SENTENCES


@pytest.mark.slow
def test_make_corpus_script_writes_the_committed_bytes(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_corpus.py"), str(tmp_path / "c.txt")],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    assert "wrote 6,000 sentences" in out.stdout
    assert (tmp_path / "c.txt").read_bytes() == corpus.CORPUS_PATH.read_bytes()


def test_grammar_regularities_hold():
    sentences = corpus.load()
    for s in sentences:
        words = split_words(s)
        assert words[-1] == "."
        if words[0] in ("yesterday", "last"):
            assert "will" not in words  # past tense
        if words[0] in ("tomorrow", "soon"):
            assert "will" in words
    # number agreement: a plural determiner is never followed by a singular present verb
    start = r"^(?:every day , |often )?"
    plural_subject = re.compile(start + r"(two|three|many|some) (?:\w+ )?(\w+) (sleeps|runs|eats)\b")
    assert not any(plural_subject.match(s) for s in sentences)
    singular = re.compile(start + r"(a|the) (\w+ )?(cat|dog|baker) (sleep|run|eat)\b")
    assert not any(singular.match(s) for s in sentences)
    # ... while the agreeing forms are there (the patterns can match)
    assert any(re.match(start + r"(two|three|many|some) (\w+ )?\w+ (sleep|run|eat)\b", s) for s in sentences)
    assert any(re.match(start + r"(a|the) (\w+ )?(cat|dog|baker) (sleeps|runs|eats)\b", s) for s in sentences)


def test_split_and_generate_refuse_bad_input():
    train, held = corpus.split(corpus.load()[:100], 10, seed=1)
    assert len(train) == 90 and len(held) == 10 and not set(train) & set(held)
    with pytest.raises(ValueError, match="sentences is empty"):
        corpus.split([], 1)
    for not_a_list in (("a", "b", "c"), "abc", None):  # the project's convention: a wrong type is a TypeError
        with pytest.raises(TypeError, match="sentences must be a list"):
            corpus.split(not_a_list, 1)
    with pytest.raises(ValueError, match="n_held_out"):
        corpus.split(["a", "b"], 2)
    with pytest.raises(ValueError, match="n_sentences must be at least 1"):
        corpus.generate(0, 1)
    assert np.unique(corpus.generate(50, 3)).size == 50
