"""Hugging Face interop without torch: configs both ways, weight names (the MLM head's too), RoBERTa
positions, clear refusals.

tests/interop/hf_configs/ holds the config.json files published with albert-base-v2, albert-xxlarge-v2,
bert-base-uncased and roberta-base on the Hugging Face Hub.
"""

import json
from pathlib import Path

import mlm_cases
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geron_lib import PRESETS, Encoder, EncoderConfig, count_parameters
from geron_lib.interop.hf_config import HF_DEFAULTS, config_from_hf, config_to_hf
from geron_lib.interop.hf_weights import encoder_from_hf, hf_mlm_names, hf_mlm_state_dict, hf_state_dict
from geron_lib.model.encoder import position_ids
from geron_lib.model.layers import gelu, gelu_new
from geron_lib.model.mlm import MaskedLM

CONFIGS = Path(__file__).parent / "hf_configs"
PUBLISHED = {"albert-base-v2": "albert-base-v2", "albert-xxlarge-v2": "albert-xxlarge-v2",
             "bert-base-uncased": "bert-base", "roberta-base": "roberta-base"}
SMALL = dict(vocab_size=40, hidden_size=16, num_hidden_layers=3, num_attention_heads=2, intermediate_size=24,
             max_position_embeddings=20)


def published(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


@pytest.mark.parametrize("name, preset", PUBLISHED.items())
def test_published_config_json_gives_the_preset(name, preset):
    assert config_from_hf(CONFIGS / f"{name}.json") == PRESETS[preset]
    assert config_from_hf(str(CONFIGS / f"{name}.json")) == PRESETS[preset]
    assert config_from_hf(published(name)) == PRESETS[preset]


def test_folder_holding_config_json(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(published("roberta-base")))
    assert config_from_hf(tmp_path) == PRESETS["roberta-base"]


def test_published_fields_are_read_not_defaulted():
    c = config_from_hf(published("roberta-base"))
    assert (c.vocab_size, c.max_position_embeddings, c.type_vocab_size, c.layer_norm_eps,
            c.pad_token_id) == (50265, 514, 1, 1e-5, 1)
    xx = config_from_hf(published("albert-xxlarge-v2"))
    assert (xx.E, xx.hidden_size, xx.num_attention_heads, xx.sharing) == (128, 4096, 64, "all")


@pytest.mark.parametrize("model_type", ["albert", "bert", "roberta"])
def test_missing_fields_take_transformers_defaults(model_type):
    c = config_from_hf({"model_type": model_type})
    for field, value in HF_DEFAULTS[model_type].items():
        if hasattr(c, field):
            assert getattr(c, field) == value, field


def test_albert_with_embedding_size_equal_to_hidden_size_loads_with_its_projection():
    config = config_from_hf(dict(model_type="albert", embedding_size=16, **SMALL))  # E = H = 16
    assert config.E == config.hidden_size == 16
    assert config.embedding_projection is True and config.has_embedding_projection and not config.factorised
    counts = count_parameters(config)
    assert counts.embedding_projection == 16 * 16 + 16
    assert config_to_hf(config)["embedding_size"] == 16
    encoder = Encoder(config)
    assert encoder.embeddings["W_P"].shape == (16, 16)
    loaded = encoder_from_hf(config, hf_state_dict(encoder), dtype=np.float64)
    np.testing.assert_array_equal(loaded([[1, 2, 3]]), encoder([[1, 2, 3]]))


def test_embedding_projection_is_stored_once_for_each_model():
    base = PRESETS["tiny-albert"]  # E = 8 < H = 32: the map is there by the rule
    assert base.replace(embedding_projection=True) == base and base.embedding_projection is None
    full = base.replace(embedding_size=None)
    assert not full.has_embedding_projection
    assert full.replace(embedding_projection=False) == full
    assert full.replace(embedding_projection=True).has_embedding_projection
    with pytest.raises(ValueError, match="only an E -> H map can widen"):
        base.replace(embedding_projection=False)
    with pytest.raises(TypeError, match="embedding_projection must be True, False or None"):
        base.replace(embedding_projection="yes")


def test_albert_groups_become_sharing_modes():
    one = config_from_hf(dict(model_type="albert", embedding_size=8, **SMALL))
    every = config_from_hf(dict(model_type="albert", embedding_size=8, num_hidden_groups=3, **SMALL))
    assert (one.sharing, every.sharing) == ("all", "none")
    assert config_to_hf(every)["num_hidden_groups"] == 3 and config_to_hf(one)["num_hidden_groups"] == 1


@pytest.mark.parametrize("changes, match", [
    (dict(num_hidden_groups=2), "num_hidden_groups must be 1"),
    (dict(inner_group_num=2), "inner_group_num must be 1"),
    (dict(embedding_size=32), "embedding_size must be at most hidden_size"),
    (dict(hidden_act="gelu_fast"), "hidden_act must be one of"),
    (dict(is_decoder=True), "bidirectional"),
    (dict(position_embedding_type="relative_key"), "position_embedding_type"),
    (dict(tie_word_embeddings=False), "tie_word_embeddings"),
    (dict(type_vocab_size=0), "type_vocab_size"),
    (dict(hidden_size=15), "divisible"),
    (dict(num_hidden_layers=2.5), "num_hidden_layers"),
])
def test_unsupported_albert_configs_are_refused_with_the_reason(changes, match):
    with pytest.raises((ValueError, TypeError), match=match):
        config_from_hf(dict(model_type="albert", embedding_size=8, **SMALL) | changes)


@pytest.mark.parametrize("source, error, match", [
    ({"model_type": "gpt2"}, ValueError, "model_type must be one of"),
    ({"hidden_size": 8}, ValueError, "model_type"),
    (42, TypeError, "config must be a dict or a path"),
    ("/no/such/config.json", ValueError, "no such file"),
])
def test_bad_sources(source, error, match):
    with pytest.raises(error, match=match):
        config_from_hf(source)


def test_bad_json_file(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a JSON file"):
        config_from_hf(tmp_path / "config.json")
    (tmp_path / "config.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="JSON object"):
        config_from_hf(tmp_path)


@st.composite
def hf_representable(draw):
    """Random small configs that transformers has a model of."""
    model_type = draw(st.sampled_from(["albert", "bert", "roberta"]))
    h = draw(st.integers(1, 3))
    H = h * draw(st.integers(1, 5))
    V = draw(st.integers(2, 30))
    fields = dict(vocab_size=V, hidden_size=H, num_hidden_layers=draw(st.integers(1, 3)),
                  num_attention_heads=h, intermediate_size=draw(st.integers(1, 20)),
                  type_vocab_size=draw(st.integers(1, 3)), model_type=model_type,
                  hidden_act=draw(st.sampled_from(["gelu", "gelu_new", "relu"])),
                  layer_norm_eps=draw(st.sampled_from([1e-12, 1e-5])),
                  pad_token_id=draw(st.integers(0, V - 1)))
    fields["max_position_embeddings"] = fields["pad_token_id"] + 2 + draw(st.integers(0, 10))
    if model_type == "albert":
        E = draw(st.integers(1, H))  # E = H too: transformers' ALBERT keeps its E -> H map there
        # with one layer, sharing nothing and sharing everything are the same model: one group
        sharing = draw(st.sampled_from(["all", "none"])) if fields["num_hidden_layers"] > 1 else "all"
        return EncoderConfig(**fields, embedding_size=E, sharing=sharing, embedding_projection=True)
    return EncoderConfig(**fields)


@settings(max_examples=80, deadline=None)
@given(config=hf_representable())
def test_to_hf_and_back_is_the_identity(config):
    hf = config_to_hf(config)
    assert json.loads(json.dumps(hf)) == hf  # plain JSON
    assert config_from_hf(hf) == config


@pytest.mark.parametrize("config, match", [
    (PRESETS["tiny-bert"].replace(attention="sum"), "attention must be 'concat'"),
    (PRESETS["tiny-bert"].replace(sharing="all"), "sharing must be 'none'"),
    (PRESETS["tiny-bert"].replace(embedding_size=8), "only ALBERT has one"),
    (PRESETS["tiny-bert"].replace(embedding_projection=True), "only ALBERT has one"),
    (PRESETS["tiny-albert"].replace(sharing="ffn"), "sharing must be 'all' or 'none'"),
    (PRESETS["tiny-albert"].replace(embedding_size=None), "needs its E -> H map"),
    (PRESETS["tiny-roberta"], "set pad_token_id"),
    (PRESETS["tiny-bert"].replace(type_vocab_size=0), "type_vocab_size"),
])
def test_to_hf_refuses_what_transformers_has_no_model_of(config, match):
    with pytest.raises(ValueError, match=match):
        config_to_hf(config)


def test_to_hf_type_check():
    with pytest.raises(TypeError, match="EncoderConfig"):
        config_to_hf({"model_type": "bert"})


def test_roberta_positions_count_real_tokens_after_the_pad_id():
    c = PRESETS["roberta-base"]  # pad_token_id = 1
    ids = np.array([[0, 5, 6, 2, 1, 1], [0, 7, 1, 8, 2, 1]])
    np.testing.assert_array_equal(position_ids(ids, c), [[2, 3, 4, 5, 1, 1], [2, 3, 1, 4, 5, 1]])
    bert = position_ids(ids, PRESETS["bert-base"])
    np.testing.assert_array_equal(bert, [[0, 1, 2, 3, 4, 5]] * 2)
    np.testing.assert_array_equal(position_ids(ids, PRESETS["tiny-roberta"]), bert)  # no pad id: no offset


def test_roberta_positions_cap_the_length():
    c = PRESETS["tiny-roberta"].replace(pad_token_id=1, max_position_embeddings=10)  # positions 2 .. 9
    enc = Encoder(c)
    assert enc(np.full((1, 8), 5)).shape == (1, 8, 32)
    with pytest.raises(ValueError, match="above the 8 that max_position_embeddings"):
        enc(np.full((1, 9), 5))
    with pytest.raises(ValueError, match="RoBERTa's positions start there"):
        c.replace(max_position_embeddings=2)


def test_padding_token_positions_change_roberta_outputs_only_where_they_should():
    c = PRESETS["tiny-roberta"].replace(pad_token_id=1)
    enc = Encoder(c, seed=3)
    short = enc([[0, 5, 6, 2]])
    padded = enc([[0, 5, 6, 2, 1, 1]], attention_mask=[[1, 1, 1, 1, 0, 0]])
    np.testing.assert_allclose(padded[:, :4], short, atol=1e-10)


def test_pad_token_id_checks():
    with pytest.raises(ValueError, match="pad_token_id"):
        PRESETS["tiny-bert"].replace(pad_token_id=100)
    with pytest.raises(TypeError, match="pad_token_id"):
        PRESETS["tiny-bert"].replace(pad_token_id=1.5)


@pytest.mark.parametrize("name, sharing", [("tiny-albert", "all"), ("tiny-albert", "none"),
                                           ("tiny-bert", "none"), ("tiny-roberta", "none")])
def test_state_dict_round_trip_reproduces_the_encoder(name, sharing):
    config = PRESETS[name].replace(sharing=sharing, pad_token_id=1)
    original = Encoder(config, seed=7, pooler=True)
    loaded = encoder_from_hf(config, hf_state_dict(original), dtype=np.float64)
    ids = np.array([[3, 9, 27, 4, 1], [8, 1, 2, 5, 6]])
    mask = np.array([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    expected = original(ids, attention_mask=mask)
    np.testing.assert_array_equal(loaded(ids, attention_mask=mask), expected)
    np.testing.assert_array_equal(loaded.pool(expected), original.pool(expected))
    assert loaded.num_parameters() == count_parameters(config, pooler=True).total
    assert len({id(a) for a, _ in loaded.layers}) == (1 if sharing == "all" else config.num_hidden_layers)


def test_state_dict_of_a_head_model_and_old_buffers():
    config = PRESETS["tiny-bert"]
    original = Encoder(config, seed=2)
    sd = {f"bert.{k}": v for k, v in hf_state_dict(original).items()}
    sd |= {"cls.predictions.bias": np.zeros(100), "bert.embeddings.position_ids": np.arange(64)[None]}
    loaded = encoder_from_hf(config, sd)
    assert loaded.pooler is None and loaded.dtype == np.float32
    np.testing.assert_allclose(loaded([[1, 2, 3]]), original([[1, 2, 3]]), atol=1e-5)


def test_state_dict_refusals():
    config = PRESETS["tiny-albert"]
    sd = hf_state_dict(Encoder(config))
    key = "encoder.albert_layer_groups.0.albert_layers.0.ffn.weight"
    with pytest.raises(ValueError, match="missing.*ffn.weight"):
        encoder_from_hf(config, {k: v for k, v in sd.items() if k != key})
    with pytest.raises(ValueError, match="unexpected.*groups.1"):
        encoder_from_hf(config, sd | {key.replace("groups.0", "groups.1"): sd[key]})
    with pytest.raises(ValueError, match=r"has shape \(32, 64\), expected \(64, 32\)"):
        encoder_from_hf(config, sd | {key: sd[key].T})
    with pytest.raises(TypeError, match="must hold floats"):
        encoder_from_hf(config, sd | {key: sd[key].astype(int)})
    with pytest.raises(TypeError, match="state_dict must be a dict"):
        encoder_from_hf(config, list(sd.items()))
    with pytest.raises(TypeError, match="config must be an EncoderConfig"):
        encoder_from_hf(config_to_hf(config), sd)
    with pytest.raises(ValueError, match="dtype"):
        encoder_from_hf(config, sd, dtype=np.float16)
    with pytest.raises(ValueError, match="sharing must be 'all' or 'none'"):
        encoder_from_hf(config.replace(sharing="attention"), sd)


def test_gelu_variants_differ_by_more_than_the_comparison_tolerance():
    # the appendix's point: naming the wrong GELU would fail a 1e-4 check
    x = np.linspace(-6, 6, 12001)
    gap = np.abs(gelu(x) - gelu_new(x))
    assert 1e-4 < gap.max() < 1e-3
    assert abs(x[gap.argmax()]) > 1  # largest away from 0


@pytest.mark.parametrize("name", mlm_cases.CONFIGS)
def test_every_parameter_has_one_transformers_name(name):
    model = MaskedLM(mlm_cases.config(name))
    names = hf_mlm_names(model.config)
    assert set(names) == set(model.parameters())
    assert len(set(names.values())) == len(names)
    heads = {"bert": "cls.predictions.", "albert": "predictions.", "roberta": "lm_head."}
    prefix = heads[model.config.model_type]
    assert all(v.startswith(prefix) for k, v in names.items() if k.startswith("mlm_head."))
    assert all(v.startswith(model.config.model_type + ".") for k, v in names.items()
               if not k.startswith("mlm_head."))


def test_state_dict_ties_the_decoder_and_transposes_matrices():
    model = MaskedLM(mlm_cases.config("albert-shared"))
    sd = hf_mlm_state_dict(model)
    assert sd["predictions.decoder.weight"] is model.encoder.embeddings["word"]
    assert sd["predictions.decoder.bias"] is model.head["b_out"]
    assert sd["predictions.dense.weight"].shape == (8, 16)  # nn.Linear(H, E) stores (E, H)
    np.testing.assert_array_equal(sd["predictions.dense.weight"], model.head["W"].T)
    assert sd["predictions.bias"] is model.head["b_out"]


def test_refusals_name_the_reason():
    roberta = mlm_cases.config("roberta")
    with pytest.raises(ValueError, match="RobertaLMHead applies the exact GELU"):
        hf_mlm_names(roberta.replace(hidden_act="gelu_new"))
    with pytest.raises(ValueError, match="pad_token_id is None"):
        hf_mlm_names(roberta.replace(pad_token_id=None))
    with pytest.raises(TypeError, match="model must be"):
        hf_mlm_state_dict(roberta)
