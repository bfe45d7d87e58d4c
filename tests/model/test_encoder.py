"""Encoder: its output against its equations, dtypes, sharing, factorisation, masks, and refusals."""

import numpy as np
import pytest

from geron_lib import PRESETS, Encoder, EncoderConfig
from geron_lib.model.attention import additive_mask, attention_probs
from geron_lib.model.attention_loops import concat_attention_loop, sum_attention_loop
from geron_lib.model.encoder import position_ids
from geron_lib.model.layers import ACTIVATIONS

TINY = PRESETS["tiny-bert"]
IDS = np.array([[5, 17, 3, 99, 0, 42], [1, 2, 3, 4, 5, 6]])


def forward_by_hand(encoder: Encoder, ids: np.ndarray) -> np.ndarray:
    """The encoder's output from its equations, in float64: the embeddings' sum and layer norm (then W_P),
    and per layer the attention one head at a time and the feed-forward, each added back and layer-normed."""
    c, w = encoder.config, {k: v.astype(np.float64) for k, v in encoder.embeddings.items()}

    def ln(x, gain, bias):
        x_hat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + c.layer_norm_eps)
        return x_hat * gain + bias

    x = w["word"][ids] + w["position"][position_ids(ids, c)] + w["token_type"][0]
    x = ln(x, w["ln_gain"], w["ln_bias"])
    if "W_P" in w:
        x = x @ w["W_P"] + w["b_P"]
    attend = {"concat": concat_attention_loop, "sum": sum_attention_loop}[c.attention]
    act = ACTIVATIONS[c.hidden_act][0]
    for attention, ffn in encoder.layers:
        a, f = ({k: v.astype(np.float64) for k, v in d.items()} for d in (attention, ffn))
        x = ln(x + attend(x, a, c.num_attention_heads), a["ln_gain"], a["ln_bias"])
        x = ln(x + act(x @ f["W_1"] + f["b_1"]) @ f["W_2"] + f["b_2"], f["ln_gain"], f["ln_bias"])
    return x


@pytest.mark.parametrize(("dtype", "tolerance"), [(np.float32, 1e-4), (np.float64, 1e-12)])
@pytest.mark.parametrize("name", ["tiny-bert", "tiny-albert", "tiny-roberta"])
def test_the_output_is_the_equations_in_the_encoders_dtype(name, dtype, tolerance):
    enc = Encoder(PRESETS[name], seed=1, dtype=dtype)
    rng = np.random.default_rng(0)
    for p in enc.parameters().values():  # gains and biases away from 1 and 0, so that they count
        p += rng.normal(0, 0.1, p.shape).astype(dtype)
    out = enc(IDS)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, forward_by_hand(enc, IDS), rtol=0, atol=tolerance)


def test_float32_tracks_float64():
    a = Encoder(TINY, seed=3, dtype=np.float64)(IDS)
    b = Encoder(TINY, seed=3, dtype=np.float32)(IDS)
    np.testing.assert_allclose(a, b, atol=1e-4)


def test_one_dimensional_input_is_one_row():
    enc = Encoder(TINY)
    np.testing.assert_array_equal(enc(IDS[1]), enc(IDS[1:]))


def test_rows_are_independent():
    enc = Encoder(TINY)
    np.testing.assert_allclose(enc(IDS)[0], enc(IDS[:1])[0], atol=1e-12)


@pytest.mark.parametrize("sharing, attention_copies, ffn_copies", [
    ("none", 4, 4), ("all", 1, 1), ("attention", 1, 4), ("ffn", 4, 1)])
def test_sharing_reuses_the_same_arrays(sharing, attention_copies, ffn_copies):
    enc = Encoder(TINY.replace(sharing=sharing))
    assert len({id(a) for a, _ in enc.layers}) == attention_copies
    assert len({id(f) for _, f in enc.layers}) == ffn_copies
    assert len(enc.layers) == TINY.num_hidden_layers


def test_shared_block_applied_repeatedly():
    # with every layer shared, running L layers equals running the one block L times
    enc = Encoder(TINY.replace(sharing="all"))
    states = enc.hidden_states(IDS)
    assert len(states) == TINY.num_hidden_layers + 1
    short = Encoder(TINY.replace(sharing="all", num_hidden_layers=2))
    np.testing.assert_allclose(short(IDS), states[2], atol=1e-12)


def test_post_ln_outputs_are_normalised():
    out = Encoder(TINY)(IDS)  # gains 1 and biases 0 at initialisation
    np.testing.assert_allclose(out.mean(axis=-1), 0, atol=1e-12)


def test_factorised_embedding_has_projection():
    enc = Encoder(PRESETS["tiny-albert"])
    p = enc.parameters()
    assert p["embeddings.word"].shape == (100, 8) and p["embeddings.W_P"].shape == (8, 32)
    assert "embeddings.W_P" not in Encoder(TINY).parameters()


def test_sum_form_has_full_width_value_maps_and_no_W_O():
    p = Encoder(TINY.replace(attention="sum")).parameters()
    assert p["layers.0.attention.W_V"].shape == (4, 32, 32)
    assert not any(k.endswith("W_O") for k in p)


def test_padding_does_not_change_real_tokens():
    enc = Encoder(TINY, seed=2)
    short = enc(IDS[:, :4])
    padded = enc(IDS, attention_mask=[[1, 1, 1, 1, 0, 0]] * 2)
    np.testing.assert_allclose(padded[:, :4], short, atol=1e-10)


def test_token_types_change_output():
    enc = Encoder(TINY, seed=2)
    assert not np.allclose(enc(IDS), enc(IDS, token_type_ids=np.ones_like(IDS)))


def test_pooler():
    enc = Encoder(TINY, pooler=True)
    hidden = enc(IDS)
    p = enc.parameters()
    np.testing.assert_allclose(enc.pool(hidden), np.tanh(hidden[:, 0] @ p["pooler.W"] + p["pooler.b"]),
                               rtol=1e-13, atol=1e-15)  # pooled = tanh(h_[CLS] W + b)
    with pytest.raises(ValueError, match="pooler=False"):
        Encoder(TINY).pool(enc(IDS))


def test_seeded():
    np.testing.assert_array_equal(Encoder(TINY, seed=4)(IDS), Encoder(TINY, seed=4)(IDS))
    assert not np.allclose(Encoder(TINY, seed=4)(IDS), Encoder(TINY, seed=5)(IDS))


def test_repr_names_the_geometry():
    assert "sharing='all'" in repr(Encoder(PRESETS["tiny-albert"]))


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(input_ids=[[1, 2], [3]]), ValueError, "ragged"),
    (dict(input_ids=[100]), ValueError, "vocab_size"),
    (dict(input_ids=np.zeros((1, 65), int)), ValueError, "max_position_embeddings"),
    (dict(input_ids=[1, 2], token_type_ids=[0, 2]), ValueError, "token_type_ids"),
    (dict(input_ids=[1, 2], token_type_ids=[0, 1, 1]), ValueError, "shape"),
    (dict(input_ids=[1, 2], attention_mask=[1, 3]), ValueError, "attention_mask"),
    (dict(input_ids="hello"), TypeError, "input_ids"),
    (dict(input_ids=np.zeros((1, 2, 3), int)), ValueError, "input_ids"),
])
def test_bad_inputs(kwargs, error, match):
    with pytest.raises(error, match=match):
        Encoder(TINY)(**kwargs)


@pytest.mark.parametrize("args, error, match", [
    ((TINY,), None, None),
    (({"hidden_size": 8},), TypeError, "config"),
])
def test_constructor_checks(args, error, match):
    if error is None:
        Encoder(*args)
        return
    with pytest.raises(error, match=match):
        Encoder(*args)


def test_constructor_refusals():
    with pytest.raises(ValueError, match="dtype"):
        Encoder(TINY, dtype=np.int32)
    with pytest.raises(TypeError, match="seed"):
        Encoder(TINY, seed=0.5)
    with pytest.raises(ValueError, match="GiB"):
        Encoder(EncoderConfig(vocab_size=10**9))


@pytest.mark.parametrize("form", ["concat", "sum"])
def test_attentions_are_every_layers_weights_rows_summing_to_one(form):
    config = PRESETS["tiny-albert"].replace(attention=form, sharing="none")
    encoder = Encoder(config, seed=3)
    ids = np.array([[2, 5, 6, 7, 0, 0], [2, 8, 9, 0, 0, 0]])
    mask = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 0, 0, 0]])
    weights = encoder.attentions(ids, attention_mask=mask)
    assert len(weights) == config.num_hidden_layers
    for A in weights:
        assert A.shape == (2, config.num_attention_heads, 6, 6)
        np.testing.assert_allclose(A.sum(axis=-1), 1)
        assert np.all(A[0, :, :, 4:] == 0) and np.all(A[1, :, :, 3:] == 0)  # no weight on padding
    # layer 1's weights are the softmax of its scores on the embeddings, as attention_probs computes them
    x0 = encoder.hidden_states(ids, attention_mask=mask)[0]
    first = attention_probs(x0, encoder.layers[0][0], config.num_attention_heads,
                            additive_mask(mask, x0.dtype))
    np.testing.assert_allclose(weights[0], first, atol=1e-12)
