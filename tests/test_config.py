"""EncoderConfig: Hugging Face field names, presets, and clear refusals."""

import dataclasses

import pytest

from geron_lib import PRESETS, EncoderConfig
from geron_lib.config import ATTENTION, HIDDEN_ACTS, max_length
from geron_lib.model.attention import ATTENTION_FORMS
from geron_lib.model.layers import ACTIVATIONS


def test_defaults_are_bert_base_geometry():
    c = EncoderConfig()
    geometry = (c.hidden_size, c.num_hidden_layers, c.num_attention_heads, c.intermediate_size)
    assert geometry == (768, 12, 12, 3072)
    assert c.E == 768 and not c.factorised and c.d_head == 64


def test_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        EncoderConfig().hidden_size = 10


def test_factorisation_flags():
    assert EncoderConfig(embedding_size=128).factorised
    assert not EncoderConfig(embedding_size=768).factorised
    assert EncoderConfig(embedding_size=768).E == 768


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_are_valid_and_named(name):
    c = EncoderConfig.preset(name)
    assert c is PRESETS[name]
    assert c.hidden_size % c.num_attention_heads == 0
    if name.startswith("albert"):
        assert c.sharing == "all" and c.embedding_size == 128 and c.hidden_act == "gelu_new"


def test_published_geometries():
    xx = PRESETS["albert-xxlarge-v2"]
    geometry = (xx.hidden_size, xx.num_hidden_layers, xx.num_attention_heads, xx.intermediate_size)
    assert geometry == (4096, 12, 64, 16384)
    rb = PRESETS["roberta-base"]
    assert (rb.vocab_size, rb.max_position_embeddings, rb.type_vocab_size) == (50265, 514, 1)


@pytest.mark.parametrize("fields, field", [
    (dict(hidden_size=10, num_attention_heads=3), "hidden_size"),
    (dict(embedding_size=1000), "embedding_size"),
    (dict(embedding_size=0), "embedding_size"),
    (dict(vocab_size=0), "vocab_size"),
    (dict(num_hidden_layers=-2), "num_hidden_layers"),
    (dict(intermediate_size=0), "intermediate_size"),
    (dict(type_vocab_size=-1), "type_vocab_size"),
    (dict(layer_norm_eps=0.0), "layer_norm_eps"),
    (dict(sharing="some"), "sharing"),
    (dict(attention="mean"), "attention"),
    (dict(hidden_act="swish"), "hidden_act"),
    (dict(model_type="gpt2"), "model_type"),
])
def test_invalid_values_name_the_field(fields, field):
    with pytest.raises(ValueError, match=field):
        EncoderConfig(**fields)


@pytest.mark.parametrize("fields, field", [
    (dict(hidden_size=7.5), "hidden_size"),
    (dict(num_hidden_layers=True), "num_hidden_layers"),
    (dict(vocab_size="30000"), "vocab_size"),
    (dict(embedding_size=12.0), "embedding_size"),
])
def test_wrong_types_name_the_field(fields, field):
    with pytest.raises(TypeError, match=field):
        EncoderConfig(**fields)


def test_unknown_preset():
    with pytest.raises(ValueError, match="name must be one of"):
        EncoderConfig.preset("gpt-2")


def test_replace_validates_again():
    c = PRESETS["tiny-bert"].replace(sharing="all")
    assert c.sharing == "all"
    with pytest.raises(ValueError, match="num_attention_heads"):
        c.replace(num_attention_heads=5)


def test_it_accepts_exactly_the_forms_and_activations_the_model_implements():
    # the config sits below the model, so it names them itself: the names must be the kernels' keys
    assert tuple(ATTENTION_FORMS) == ATTENTION
    assert tuple(ACTIVATIONS) == HIDDEN_ACTS


def test_roberta_reads_two_fewer_tokens_than_its_position_table():
    c = PRESETS["roberta-base"]
    assert (c.max_position_embeddings, max_length(c)) == (514, 512)
    assert max_length(PRESETS["bert-base"]) == 512
