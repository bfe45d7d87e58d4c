"""Every hand-written backward pass against central finite differences, in float64."""

import itertools

import numpy as np
import pytest
from randomised import randomised

from geron_lib import EncoderConfig, count_parameters
from geron_lib.model.gradcheck import check_gradients, numeric_gradient, relative_error
from geron_lib.model.layers import ACTIVATIONS
from geron_lib.model.mlm import MaskedLM, mlm_head
from geron_lib.pretraining.masking import bert_mask
from geron_lib.pretraining.tokenizer import WordTokenizer

TOK = WordTokenizer([f"w{i}" for i in range(9)])
# three rows of different lengths, so [PAD] and the attention mask are part of every check
BATCH = bert_mask(TOK.encode_batch(["w1 w2 w3 w4", "w5 w6 w0", "w7 w8 w1 w2 w3"], 7), TOK, mask_prob=0.5,
                  rng=3)
H_STEP = 1e-6
TOLERANCE = 1e-6


def tiny_config(**kw) -> EncoderConfig:
    fields = dict(vocab_size=TOK.vocab_size, hidden_size=6, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=8, max_position_embeddings=8, initializer_range=0.5)
    return EncoderConfig(**(fields | kw))



def preactivations(model, batch) -> np.ndarray:
    """Every input of an activation function (FFN and MLM head) on ``batch``."""
    hidden, cache = model.encoder.forward_cached(batch.input_ids, attention_mask=batch.attention_mask)
    head = {}
    mlm_head(hidden[batch.selected], model.head, model.encoder.embeddings["word"], model.config.hidden_act,
             model.config.layer_norm_eps, head)
    return np.concatenate([cache[i]["ffn"]["u"].ravel() for i in range(len(model.encoder.layers))]
                          + [head["u"].ravel()])


ACTS = ("gelu", "gelu_new", "relu")
CASES = [(sharing, E, form, ACTS[i % 3]) for i, (sharing, E, form) in
         enumerate(itertools.product(("none", "all", "attention", "ffn"), (None, 4), ("concat", "sum")))]


@pytest.mark.parametrize("sharing, E, form, act", CASES)
def test_every_parameter_gradient_matches_finite_differences(sharing, E, form, act):
    model = randomised(MaskedLM(tiny_config(embedding_size=E, attention=form, hidden_act=act,
                                            sharing=sharing), seed=1), seed=2)
    if act == "relu":  # central differences are exact for ReLU only if no step crosses its kink
        assert np.abs(preactivations(model, BATCH)).min() > 100 * H_STEP
    loss, grads = model.loss_and_grads(BATCH)
    assert loss == pytest.approx(model.loss(BATCH), abs=1e-13)
    params = model.parameters()
    assert set(grads) == set(params)
    errors = check_gradients(model, BATCH, H_STEP)
    assert set(errors) == set(params)
    for name, p in params.items():
        if name.endswith(".b_K"):
            # q . b_K shifts every score of a query's row alike; the softmax ignores it: b_K gets no gradient
            numeric = numeric_gradient(lambda: model.loss(BATCH), p, H_STEP)
            assert np.abs(grads[name]).max() < 1e-12 and np.abs(numeric).max() < 1e-8, name
        else:
            assert np.abs(grads[name]).max() > 0, name
            assert errors[name] <= TOLERANCE, name


def test_token_types_and_positions_get_their_gradients():
    # the embedding's backward with explicit token types, on the plain encoder and a loss sum(R * hidden)
    config = tiny_config(type_vocab_size=3, embedding_size=4)
    model = randomised(MaskedLM(config, seed=4), seed=5)
    enc = model.encoder
    ids, types = BATCH.labels, np.array([[0, 1, 2, 1, 0, 0, 0]] * 3)
    R = np.random.default_rng(6).normal(size=ids.shape + (config.hidden_size,))

    def loss():
        return float((R * enc(ids, token_type_ids=types, attention_mask=BATCH.attention_mask)).sum())

    hidden, cache = enc.forward_cached(ids, token_type_ids=types, attention_mask=BATCH.attention_mask)
    grads = {name: np.zeros_like(p) for name, p in enc.parameters().items()}
    enc.backward(cache, R, grads)
    for name in ("embeddings.token_type", "embeddings.position", "embeddings.word", "embeddings.W_P"):
        numeric = numeric_gradient(loss, enc.parameters()[name], H_STEP)
        assert relative_error(grads[name], numeric) <= TOLERANCE, name


def test_a_shared_block_gets_the_sum_of_its_uses():
    shared = randomised(MaskedLM(tiny_config(sharing="all"), seed=7), seed=8)
    unshared = MaskedLM(tiny_config(sharing="none"), seed=7)
    targets = unshared.parameters()
    for name, p in shared.parameters().items():
        if not name.startswith("layers."):  # embeddings and head: the same values
            targets[name][...] = p
    for attention, ffn in unshared.encoder.layers:  # every layer a separate copy of the shared block
        for copy, original in ((attention, shared.encoder.layers[0][0]), (ffn, shared.encoder.layers[0][1])):
            for k in copy:
                copy[k][...] = original[k]
    assert unshared.loss(BATCH) == pytest.approx(shared.loss(BATCH), abs=1e-12)
    _, g_shared = shared.loss_and_grads(BATCH)
    _, g_unshared = unshared.loss_and_grads(BATCH)
    for name, g in g_shared.items():
        if name.startswith("layers.0."):
            per_use = sum(g_unshared[name.replace("layers.0.", f"layers.{i}.")] for i in range(2))
            np.testing.assert_allclose(g, per_use, rtol=1e-10, atol=1e-14)


def test_relative_error_and_numeric_gradient():
    p = np.array([1.0, -2.0])
    assert numeric_gradient(lambda: float((p**3).sum()), p) == pytest.approx(3 * p**2, rel=1e-9)
    assert relative_error(np.array([1.0, 0.0]), np.array([1.0, 0.0])) == 0.0
    assert relative_error(np.zeros(2), np.zeros(2)) == 0.0
    assert relative_error(np.array([1.0]), np.array([-1.0])) == 1.0


@pytest.mark.parametrize("act", ACTS)
def test_activation_derivatives(act):
    x = np.linspace(-4, 4, 81) + 0.05  # never exactly on ReLU's kink
    f, f_grad = ACTIVATIONS[act]
    numeric = (f(x + 1e-6) - f(x - 1e-6)) / 2e-6
    np.testing.assert_allclose(f_grad(x), numeric, atol=1e-8)


@pytest.mark.parametrize("sharing, E, form", [("none", None, "concat"), ("all", 4, "concat"),
                                              ("attention", 4, "sum"), ("ffn", None, "sum")])
def test_masked_lm_stores_what_count_parameters_counts(sharing, E, form):
    config = tiny_config(sharing=sharing, embedding_size=E, attention=form)
    assert MaskedLM(config).num_parameters() == count_parameters(config, mlm_head=True).total


def test_roberta_position_offset_gradients():
    # RoBERTa's positions start after its pad id and pads sit at the pad row: the table's gradient must follow
    config = tiny_config(model_type="roberta", pad_token_id=TOK.pad_id, max_position_embeddings=9,
                         type_vocab_size=1)
    model = randomised(MaskedLM(config, seed=6), seed=7)
    _, grads = model.loss_and_grads(BATCH)
    errors = check_gradients(model, BATCH, H_STEP)
    assert errors["embeddings.position"] <= TOLERANCE
    # real tokens read rows pad+1 .. pad+length; the pad row only feeds padding, which never reaches the loss
    real = BATCH.input_ids != TOK.pad_id
    used = np.unique((np.cumsum(real, axis=1) + TOK.pad_id)[real])
    others = np.setdiff1d(np.arange(9), used)
    g = grads["embeddings.position"]
    assert np.abs(g[used]).min(axis=1).min() > 0 and np.abs(g[others]).max() == 0
    assert TOK.pad_id in others and used.min() == TOK.pad_id + 1
