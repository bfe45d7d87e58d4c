"""geron_lib against transformers itself: parameter counts, defaults, position ids and the forward pass.

Needs torch and transformers (the hf extra): skipped without them, except in CI (see conftest.py).
Models are built from configs with seeded random weights; nothing is downloaded.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hf import hf_representable

from geron_lib import PRESETS, count_parameters
from geron_lib.interop.hf_config import HF_DEFAULTS, config_from_hf, config_to_hf
from geron_lib.interop.hf_weights import encoder_from_hf
from geron_lib.model.encoder import position_ids
from geron_lib.notebook.exercises.hugging_face import unfactorised_albert_count

PUBLISHED = ["bert-base", "bert-large", "roberta-base", "roberta-large", "albert-base-v2", "albert-large-v2",
             "albert-xlarge-v2", "albert-xxlarge-v2"]
HEADS = ["none", "pooler", "mlm"]
TOLERANCE = 1e-4  # float32, as the issue asks


@pytest.fixture(scope="module")
def hf():
    """geron_lib.interop.torch_models, once torch and transformers are importable."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from geron_lib.interop import torch_models as hf_torch

    return hf_torch


def ours(config, head):
    return count_parameters(config, pooler=head == "pooler", mlm_head=head == "mlm").total


@pytest.mark.parametrize("head", HEADS)
@pytest.mark.parametrize("name", PUBLISHED)
def test_published_counts_equal_num_parameters(hf, name, head):
    # built on the meta device: transformers counts xxlarge without allocating its 223M weights
    assert ours(PRESETS[name], head) == hf.hf_num_parameters(PRESETS[name], head)


def test_known_totals(hf):
    # the model cards' figures: bert-base-uncased 110M, roberta-base 125M, albert-base-v2 12M parameters
    assert hf.hf_num_parameters(PRESETS["bert-base"], "pooler") == 109_482_240
    assert hf.hf_num_parameters(PRESETS["roberta-base"], "mlm") == 124_697_433
    assert hf.hf_num_parameters(PRESETS["albert-base-v2"], "pooler") == 11_683_584


@settings(max_examples=40, deadline=None)
@given(config=hf_representable(), head=st.sampled_from(HEADS))
def test_random_small_counts_equal_num_parameters(hf, config, head):
    model = hf.hf_model(config, head=head)  # really allocated: counts what exists
    assert ours(config, head) == model.num_parameters()


@pytest.mark.parametrize("model_type", ["albert", "bert", "roberta"])
def test_defaults_are_transformers_defaults(hf, model_type):
    import transformers

    hf_config = getattr(transformers, f"{model_type.capitalize()}Config")()
    for field, value in HF_DEFAULTS[model_type].items():
        assert getattr(hf_config, field) == value, field
    # and a full to_dict(), with every key transformers writes, reads back as the same model
    assert config_from_hf(hf_config.to_dict()) == config_from_hf({"model_type": model_type})


def test_roberta_position_ids_match_transformers(hf):
    import torch
    from transformers.models.roberta.modeling_roberta import RobertaEmbeddings

    config = PRESETS["roberta-base"]
    ids, _, _ = hf.random_batch(config, batch=5, seq_len=12, seed=4)
    ids[2, 3] = config.pad_token_id  # a pad in the middle too
    theirs = RobertaEmbeddings.create_position_ids_from_input_ids(torch.from_numpy(ids), config.pad_token_id)
    np.testing.assert_array_equal(position_ids(ids, config), theirs.numpy())


SMALL = dict(vocab_size=60, hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=40,
             max_position_embeddings=40, initializer_range=0.2)


@pytest.mark.parametrize("act", ["gelu", "gelu_new", "relu"])
@pytest.mark.parametrize("model_type", ["albert", "bert", "roberta"])
def test_forward_matches_transformers(hf, model_type, act):
    # initializer_range 0.2 gives peaked attention, so that a wrong mask or position would show
    extra = {"embedding_size": 8, "num_hidden_groups": 3} if model_type == "albert" else {}
    for eps, pad, groups in ((1e-12, 0, 1), (1e-5, 3, 3)):
        fields = SMALL | extra | dict(model_type=model_type, hidden_act=act, layer_norm_eps=eps,
                                      pad_token_id=pad, type_vocab_size=3)
        if model_type == "albert":
            fields["num_hidden_groups"] = groups
        config = config_from_hf(fields)
        diff = hf.compare_forward(config, seed=11, batch=4, seq_len=15, perturb=0.2)
        assert diff["last_hidden_state"] < TOLERANCE and diff["pooler_output"] < TOLERANCE, (config, diff)


@pytest.mark.parametrize("name", ["albert-base-v2", "bert-base", "roberta-base"])
def test_forward_matches_transformers_at_published_width(hf, name):
    # the published width and heads, two layers (the ALBERT stack is shared anyway) and a small vocabulary
    config = PRESETS[name].replace(vocab_size=500)
    if not name.startswith("albert"):
        config = config.replace(num_hidden_layers=2)
    diff = hf.compare_forward(config, seed=5, batch=3, seq_len=24, perturb=0.1)
    assert max(diff.values()) < TOLERANCE, diff


def test_comparison_can_fail(hf):
    # the check is sharp: one layer-norm epsilon off, or a shifted position table, is caught
    config = config_from_hf(SMALL | dict(model_type="roberta", pad_token_id=1, layer_norm_eps=1e-5))
    model = hf.hf_model(config, seed=1, perturb=0.2)
    sd = hf.numpy_state_dict(model)
    ids, types, mask = hf.random_batch(config, 3, 10, seed=1)
    import torch

    with torch.inference_mode():
        out = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
    def gap(cfg):
        return np.abs(encoder_from_hf(cfg, sd)(ids, attention_mask=mask)
                      - out.last_hidden_state.numpy()).max()

    assert gap(config) < TOLERANCE
    assert gap(config.replace(model_type="bert")) > 100 * TOLERANCE  # positions 0, 1, ... not 2, 3, ...
    assert gap(config.replace(pad_token_id=5)) > 100 * TOLERANCE  # positions 6, 7, ...
    assert gap(config.replace(layer_norm_eps=1.0)) > 100 * TOLERANCE


@pytest.mark.parametrize("name", ["albert-base-v2", "bert-base", "roberta-base"])
def test_the_wrong_gelu_fails_the_appendix_check(hf, name):
    # Appendix A1's claim: a model run with the other GELU fails the 1e-4 check at the check's own sizes
    config = PRESETS[name].replace(vocab_size=1000)
    if config.model_type != "albert":
        config = config.replace(num_hidden_layers=2)
    other = {"gelu": "gelu_new", "gelu_new": "gelu"}[config.hidden_act]
    right = hf.compare_forward(config, seed=0, batch=3, seq_len=32)
    wrong = hf.compare_forward(config, seed=0, batch=3, seq_len=32, read_as=config.replace(hidden_act=other))
    assert max(right.values()) < TOLERANCE < wrong["last_hidden_state"], (right, wrong)


def test_compare_forward_refuses_a_read_as_that_is_no_config(hf):
    with pytest.raises(TypeError, match="read_as must be an EncoderConfig"):
        hf.compare_forward(PRESETS["tiny-albert"], read_as={"hidden_act": "gelu"})


def test_head_model_state_dict_gives_the_base_models_hidden_states(hf):
    import torch

    config = PRESETS["tiny-albert"]
    mlm = hf.hf_model(config, head="mlm", seed=2, perturb=0.1)
    ids, types, mask = hf.random_batch(config, 2, 9, seed=2)
    with torch.inference_mode():
        theirs = mlm.albert(input_ids=torch.from_numpy(ids), token_type_ids=torch.from_numpy(types),
                            attention_mask=torch.from_numpy(mask)).last_hidden_state.numpy()
    encoder = encoder_from_hf(config, hf.numpy_state_dict(mlm))
    assert encoder.pooler is None
    assert np.abs(encoder(ids, token_type_ids=types, attention_mask=mask) - theirs).max() < TOLERANCE


def test_hf_model_refuses_bad_arguments(hf):
    with pytest.raises(ValueError, match="head must be one of"):
        hf.hf_model(PRESETS["tiny-bert"], head="classifier")
    with pytest.raises(ValueError, match="set pad_token_id"):
        hf.hf_model(PRESETS["tiny-roberta"])
    with pytest.raises(ValueError, match="seq_len"):
        hf.random_batch(PRESETS["tiny-bert"], 2, 65)
    assert hf.hf_available()


def test_albert_with_e_equal_h_keeps_its_projection_in_transformers(hf):
    # the appendix exercise's answer: AlbertModel at albert-base-v2 size with embedding_size = 768
    import torch
    import transformers

    published = config_to_hf(PRESETS["albert-base-v2"])
    with torch.device("meta"):
        model = transformers.AlbertModel(transformers.AlbertConfig(**(published | {"embedding_size": 768})))
    assert model.num_parameters() == unfactorised_albert_count()
    assert tuple(model.encoder.embedding_hidden_mapping_in.weight.shape) == (768, 768)


@pytest.mark.parametrize("groups", [1, 2])
def test_every_albert_config_with_e_equal_h_loads_counts_and_runs(hf, groups):
    # every AlbertConfig loads: E = H counts exactly (base model with and without pooler, and the MLM model)
    # and reproduces transformers' hidden states
    config = config_from_hf(SMALL | dict(model_type="albert", embedding_size=32, num_hidden_layers=2,
                                         num_hidden_groups=groups))
    assert config.E == config.hidden_size and config.has_embedding_projection
    for head in HEADS:
        allocated = hf.hf_model(config, head=head).num_parameters()
        assert ours(config, head) == hf.hf_num_parameters(config, head) == allocated
    diff = hf.compare_forward(config, seed=3, batch=3, seq_len=12, perturb=0.2)
    assert max(diff.values()) < TOLERANCE, diff


def test_table_3_albert_rows_at_e_768_count_both_ways(hf):
    # the E = 768 rows of the ALBERT paper's Table 3, as the original TensorFlow ALBERT builds them (no map)
    # and as transformers' AlbertModel does (with the 768 x 768 map): both exact
    from geron_lib.studies.paper import TABLE_3

    for row in (r for r in TABLE_3 if r.config.E == 768):
        as_built, as_hf = row.config, row.config.replace(embedding_projection=True)
        assert not as_built.has_embedding_projection
        assert ours(as_hf, "none") - ours(as_built, "none") == 768 * 768 + 768
        assert ours(as_hf, "pooler") == hf.hf_num_parameters(as_hf, "pooler")


@pytest.mark.parametrize("model_type", ["albert", "bert", "roberta"])
def test_attentions_match_transformers_output_attentions(hf, model_type):
    import torch

    extra = {"embedding_size": 8} if model_type == "albert" else {}
    pad = 1 if model_type == "roberta" else 0
    config = config_from_hf(SMALL | extra | dict(model_type=model_type, pad_token_id=pad))
    model = hf.hf_model(config, seed=4, perturb=0.2)
    model.set_attn_implementation("eager")  # the fused kernels return no attention weights
    ids, types, mask = hf.random_batch(config, 3, 11, seed=4)
    with torch.inference_mode():
        theirs = model(input_ids=torch.from_numpy(ids), token_type_ids=torch.from_numpy(types),
                       attention_mask=torch.from_numpy(mask), output_attentions=True).attentions
    ours = encoder_from_hf(config, hf.numpy_state_dict(model)).attentions(ids, token_type_ids=types,
                                                                          attention_mask=mask)
    assert len(ours) == len(theirs) == config.num_hidden_layers
    for a, b in zip(ours, theirs, strict=True):
        real = mask.astype(bool)[:, None, :, None]  # rows of real positions (padded rows are not compared)
        assert np.abs(np.where(real, a - b.numpy(), 0)).max() < TOLERANCE
