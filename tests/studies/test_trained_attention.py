"""The shipped miniature is the first grid's run, trained on the context grid's data, the sentence it reads
is held out, and the summaries of its heads say what their equations say."""

import numpy as np
import pytest

from geron_lib.model.attention_loops import head_probs
from geron_lib.model.encoder import Encoder
from geron_lib.pretraining import corpus
from geron_lib.studies import context_grid as cg
from geron_lib.studies import tradeoffs as tx
from geron_lib.studies import trained_attention as ta


@pytest.fixture(scope="module")
def miniature():
    return ta.load_miniature()


#: What the first grid stored of the shipped run, (64, "none") seed 0, before it was retired: its token
#: table's centred effective rank and singular values, 4 digits.
FIRST_GRID_RUN = {"effective_rank_centred": 57.71, "singular_values_centred": [
    23.95, 10.99, 9.384, 7.629, 7.411, 6.982, 6.904, 6.7, 6.589, 6.537, 6.446, 6.381, 6.312, 6.284,
    6.225, 6.097, 6.051, 5.985, 5.967, 5.921, 5.874, 5.812, 5.77, 5.685, 5.639, 5.567, 5.523, 5.488,
    5.417, 5.334, 5.286, 5.253, 5.138, 5.089, 5.003, 4.963, 4.93, 4.834, 4.577, 4.558, 4.442, 4.382,
    4.232, 4.159, 4.071, 3.924, 3.858, 3.764, 3.642, 3.558, 3.415, 3.337, 3.197, 3.141, 3.003, 2.919,
    2.863, 2.786, 2.73, 2.694, 2.633, 2.561, 2.496, 2.41]}


def test_shipped_weights_are_the_stored_run(miniature):
    encoder, _ = miniature
    assert (*ta.CELL, ta.SEED) == (64, "none", 0)
    run = FIRST_GRID_RUN
    rank = tx.token_table_rank(encoder.embeddings["word"], centred=True)
    assert tx.rounded(float(rank["effective_rank"])) == run["effective_rank_centred"]   # as stored: 4 digits
    assert tx.rounded(rank["singular_values"].tolist()) == run["singular_values_centred"]


@pytest.mark.slow
def test_shipped_pieces_are_the_grid_tokenizer(miniature):
    _, tokenizer = miniature
    assert tokenizer.vocabulary == tx.data(cg.Grid().base).tokenizer.vocabulary


def test_the_sentence_is_from_a_held_out_paragraph():
    base = cg.Grid().base
    paragraphs = corpus.load(base.corpus)
    train, mlm, tasks = tx.split(base, len(paragraphs))
    assert ta.SENTENCE in paragraphs[ta.PARAGRAPH]
    assert ta.PARAGRAPH in mlm and ta.PARAGRAPH not in train and ta.PARAGRAPH not in tasks
    assert not any(ta.SENTENCE in paragraphs[i] for i in train)  # nor repeated in a training paragraph


def test_head_patterns_are_every_layers_softmax_rows(miniature):
    tokens, A = ta.head_patterns(*miniature)
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and "buffer" in tokens
    encoder, tokenizer = miniature
    config = encoder.config
    assert A.shape == (config.num_hidden_layers, config.num_attention_heads, len(tokens), len(tokens))
    np.testing.assert_allclose(A.sum(-1), 1, atol=1e-5)
    # each layer's heads, one at a time, from softmax(Q_i K_i^T / sqrt(d_head)) on that layer's input
    states = encoder.hidden_states(np.array([tokenizer.encode(ta.SENTENCE)]))
    d_head = config.hidden_size // config.num_attention_heads
    for layer, ((attention, _), x) in enumerate(zip(encoder.layers, states, strict=False)):
        for i in range(config.num_attention_heads):
            np.testing.assert_allclose(A[layer, i], head_probs(x, attention, i, d_head)[0], atol=1e-6)


def test_pattern_shares_of_known_patterns():
    T = 5
    eye = np.eye(T)[None, None]
    even = np.full((1, 1, T, T), 1 / T)
    first = np.zeros((1, 1, T, T))
    first[..., 0] = 1
    s = ta.pattern_shares(eye)
    assert (s["near"], s["peak"], s["first"], s["last"]) == (1, 1, 1 / T, 1 / T)
    s = ta.pattern_shares(even)
    assert s["near"][0, 0] == pytest.approx((3 * T - 2) / T**2) and s["peak"][0, 0] == pytest.approx(1 / T)
    s = ta.pattern_shares(first)
    assert s["first"][0, 0] == 1 and s["near"][0, 0] == pytest.approx(2 / T)   # rows 0 and 1 are near 0


def test_bad_inputs_are_refused_by_name(miniature):
    with pytest.raises(ValueError, match="A must be"):
        ta.pattern_shares(np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="sentence is"):
        ta.head_patterns(*miniature, " ".join(["the"] * 100))
    with pytest.raises(TypeError, match="sentence"):
        ta.head_patterns(*miniature, ["the buffer"])


def test_chapter_3_claims_about_the_trained_heads(miniature):
    """Chapter 3: at initialisation every head spreads evenly; trained, no first-layer head keeps more than
    about the even share near the token, while some last-layer heads keep over twice it, and one last-layer
    head gives the largest share to [CLS]."""
    tokens, A = ta.head_patterns(*miniature)
    T = len(tokens)
    even_near = (3 * T - 2) / T**2
    untrained = Encoder(tx.Setup().model_config(*ta.CELL), seed=ta.SEED)
    init_A = ta.head_patterns(untrained, miniature[1])[1]
    assert init_A.max() < 1.5 / T                                   # "no weight exceeds"
    s = ta.pattern_shares(A)
    assert s["near"][0].max() < 1.3 * even_near
    assert (s["near"][-1] > 2 * even_near).sum() >= 2
    assert s["first"][-1].max() > 4 / T
