"""NSP against SOP: sentences cut from paragraphs, and what topic alone can tell apart."""

import pytest

from geron_lib.pretraining import corpus
from geron_lib.pretraining.sentence_pairs import IN_ORDER, SWAPPED, SentencePair, nsp_pairs, sop_pairs
from geron_lib.studies.sentence_tasks import documents, split_sentences, topic_only_accuracy, word_overlap


def test_split_sentences_cuts_before_capitals_only():
    text = "The list grows. It holds e.g. numbers and names! Does it end? Yes."
    assert split_sentences(text) == ["The list grows.", "It holds e.g. numbers and names!", "Does it end?",
                                     "Yes."]
    assert split_sentences("  One sentence only.  ") == ["One sentence only."]
    with pytest.raises(TypeError, match="paragraph"):
        split_sentences(3)


def test_documents_keep_paragraphs_of_enough_sentences():
    docs = documents(["One. Two.", "Alone.", "A. B. C."])
    assert docs == [["One.", "Two."], ["A.", "B.", "C."]]
    assert documents(["One. Two.", "Alone."], min_sentences=1)[1] == ["Alone."]
    with pytest.raises(ValueError, match="min_sentences"):
        documents(["One."], min_sentences=0)


def test_word_overlap_is_symmetric_and_ignores_case_and_marks():
    assert word_overlap("The cat sat.", "the CAT sat!") == 1.0
    assert word_overlap("a b", "c d") == 0.0
    assert word_overlap("a b c", "b c d") == pytest.approx(2 / 4)
    assert word_overlap("a b c", "b c d") == word_overlap("b c d", "a b c")
    assert word_overlap(".", "!") == 0.0


def test_a_swap_leaves_topic_blind_so_only_nsp_is_solved_by_topic():
    # two documents on different topics: NSP's random B shares no word with A; SOP's swap changes nothing
    fruit = ["Apples grow on apple trees.", "Apple trees like sun.", "Sun ripens apples on trees."]
    ships = ["Ships sail the sea.", "The sea carries ships far.", "Far ships cross the sea."]
    pairs = [SentencePair(fruit[0], fruit[1], 0), SentencePair(fruit[0], ships[1], 1),
             SentencePair(ships[0], ships[1], 0), SentencePair(ships[2], fruit[2], 1)]
    assert topic_only_accuracy(pairs) == 1.0
    sop = [SentencePair(fruit[0], fruit[1], IN_ORDER), SentencePair(fruit[1], fruit[0], SWAPPED),
           SentencePair(ships[0], ships[1], IN_ORDER), SentencePair(ships[1], ships[0], SWAPPED)]
    assert topic_only_accuracy(sop) == 0.5  # each pair and its swap look the same
    with pytest.raises(ValueError, match="pairs"):
        topic_only_accuracy([])


def test_on_the_english_corpus_topic_solves_nsp_far_better_than_sop():
    docs = documents(corpus.load("english"))
    assert len(docs) > 500 and all(len(d) >= 2 for d in docs)
    nsp, sop = topic_only_accuracy(nsp_pairs(docs, rng=0)), topic_only_accuracy(sop_pairs(docs, rng=0))
    assert nsp > 0.65 and sop < 0.56  # sop: chance, plus the optimism of a threshold fit on the pairs
