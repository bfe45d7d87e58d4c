"""count_flops: equal to torch's FlopCounterMode on the transformers model of the same config, exactly;
sharing changes nothing; the items add up; the rule of thumb differs from the exact count as documented.

Needs torch and transformers for the FlopCounterMode comparisons (skipped without them, except in CI). The
models run with transformers' eager attention: with "sdpa" on the CPU, torch 2.13 runs the fused
``aten._scaled_dot_product_flash_attention_for_cpu`` (and its backward), for which FlopCounterMode has no
formula, so it counts no Q K^T or A V product at all (test_sdpa_attention_is_invisible_to_flop_counter).
"""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geron_lib import PRESETS, EncoderConfig, count_parameters
from geron_lib.costs.flops import approximate_flops_per_token, count_flops, flops_per_token

TINY = PRESETS["tiny-bert"]
#: Small configs transformers has a model of: BERT, RoBERTa, ALBERT factorised and shared, unshared,
#: E = H with its E -> H map, and sizes that catch a swapped dimension (no two alike).
HF_CONFIGS = {
    "bert": TINY,
    "bert-odd": TINY.replace(vocab_size=57, hidden_size=48, num_hidden_layers=2, num_attention_heads=6,
                             intermediate_size=72),
    "roberta": PRESETS["tiny-roberta"].replace(pad_token_id=1),
    "albert-shared": PRESETS["tiny-albert"],
    "albert-unshared": PRESETS["tiny-albert"].replace(sharing="none", embedding_size=16, num_hidden_layers=3),
    "albert-E=H": PRESETS["tiny-albert"].replace(embedding_size=None, embedding_projection=True),
}
B, T = 2, 12


@pytest.fixture(scope="module")
def torch_hf():
    """(torch, transformers, FlopCounterMode, hf_model), once torch and transformers are importable."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from torch.utils.flop_counter import FlopCounterMode

    from geron_lib.interop.torch_models import hf_model

    return torch, transformers, FlopCounterMode, hf_model


def counted(FlopCounterMode, run) -> int:
    counter = FlopCounterMode(display=False)
    with counter:
        run()
    return counter.get_total_flops()


def eager(model):
    model.set_attn_implementation("eager")
    return model


def token_ids(torch, config):
    generator = torch.Generator().manual_seed(0)
    return torch.randint(2, config.vocab_size, (B, T), generator=generator)  # never RoBERTa's pad id 1


@pytest.mark.parametrize("head", ["none", "pooler", "mlm"])
@pytest.mark.parametrize("name", HF_CONFIGS)
def test_forward_equals_flop_counter(torch_hf, name, head):
    torch, _, FlopCounterMode, hf_model = torch_hf
    config = HF_CONFIGS[name]
    model, ids = eager(hf_model(config, head=head)), token_ids(torch, config)
    with torch.no_grad():
        theirs = counted(FlopCounterMode, lambda: model(input_ids=ids))
    ours = count_flops(config, T, batch=B, pooler=head == "pooler", mlm_head=head == "mlm")
    assert ours.total == theirs


@pytest.mark.parametrize("name", HF_CONFIGS)
def test_mlm_training_step_equals_flop_counter(torch_hf, name):
    torch, _, FlopCounterMode, hf_model = torch_hf
    config = HF_CONFIGS[name]
    model, ids = eager(hf_model(config, head="mlm")), token_ids(torch, config)
    theirs = counted(FlopCounterMode, lambda: model(input_ids=ids, labels=ids).loss.backward())
    ours = count_flops(config, T, batch=B, mlm_head=True, training=True)
    assert ours.total == theirs
    assert ours.total == 3 * count_flops(config, T, batch=B, mlm_head=True).total


@pytest.mark.parametrize("name", ["bert", "bert-odd", "albert-shared", "albert-unshared"])
def test_pretraining_with_pooler_equals_flop_counter(torch_hf, name):
    # hf_model builds no *ForPreTraining (MLM + next-sentence or sentence-order head on the pooled output),
    # so it is built here from the same config dict
    torch, transformers, FlopCounterMode, _ = torch_hf
    from geron_lib.interop.hf_config import config_to_hf

    config = HF_CONFIGS[name]
    prefix = "Albert" if config.model_type == "albert" else "Bert"
    torch.manual_seed(0)
    model = eager(getattr(transformers, f"{prefix}ForPreTraining")(
        getattr(transformers, f"{prefix}Config")(**config_to_hf(config))).eval())
    ids = token_ids(torch, config)
    label = "sentence_order_label" if prefix == "Albert" else "next_sentence_label"
    targets = {"labels": ids, label: torch.zeros(B, dtype=torch.long)}
    heads = dict(pooler=True, nsp_head=True, mlm_head=True)
    with torch.no_grad():
        assert count_flops(config, T, batch=B, **heads).total == counted(FlopCounterMode,
                                                                         lambda: model(input_ids=ids))
    theirs = counted(FlopCounterMode, lambda: model(input_ids=ids, **targets).loss.backward())
    assert count_flops(config, T, batch=B, training=True, **heads).total == theirs


def test_sdpa_attention_is_invisible_to_flop_counter(torch_hf):
    torch, _, FlopCounterMode, hf_model = torch_hf
    config = HF_CONFIGS["bert"]
    model, ids = hf_model(config, head="none"), token_ids(torch, config)
    model.set_attn_implementation("sdpa")
    with torch.no_grad():
        theirs = counted(FlopCounterMode, lambda: model(input_ids=ids))
    ours = count_flops(config, T, batch=B)
    assert theirs == ours.total - ours.scores - ours.weighted_values


def torch_sum_attention(torch, x, w, h):
    """MultiHead(X) = sum_i A_i X W'_V,i + b_O in torch, as geron_lib's sum_attention computes it."""
    Bx, Tx, H = x.shape
    q = (x @ w["W_Q"] + w["b_Q"]).view(Bx, Tx, h, H // h).transpose(1, 2)  # (B, h, T, d_head)
    k = (x @ w["W_K"] + w["b_K"]).view(Bx, Tx, h, H // h).transpose(1, 2)
    A = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(H // h), dim=-1)  # (B, h, T, T)
    v = x[:, None] @ w["W_V"]                                                # (B, h, T, H)
    return (A @ v).sum(dim=1) + w["b_O"]


@pytest.mark.parametrize("H, h", [(32, 4), (24, 3)])
def test_summed_attention_equals_flop_counter(torch_hf, H, h):
    # transformers has no summed form: its attention sublayer, written in torch, against one layer's items
    torch, _, FlopCounterMode, _ = torch_hf
    config = TINY.replace(hidden_size=H, num_attention_heads=h, attention="sum", num_hidden_layers=3)
    shapes = {"W_Q": (H, H), "b_Q": (H,), "W_K": (H, H), "b_K": (H,), "W_V": (h, H, H), "b_O": (H,)}
    w = {name: torch.randn(shape, requires_grad=True) for name, shape in shapes.items()}
    x = torch.randn(B, T, H, requires_grad=True)  # a layer's input depends on trained weights
    forward = counted(FlopCounterMode, lambda: torch_sum_attention(torch, x, w, h))
    step = counted(FlopCounterMode, lambda: torch_sum_attention(torch, x, w, h).sum().backward())
    L = config.num_hidden_layers
    assert count_flops(config, T, batch=B).attention == L * forward
    trained = count_flops(config, T, batch=B, mlm_head=True, training=True)
    assert trained.attention == L * step == 3 * L * forward


@st.composite
def configs(draw):
    h = draw(st.integers(1, 4))
    H = h * draw(st.integers(1, 6))
    return EncoderConfig(
        vocab_size=draw(st.integers(2, 50)), embedding_size=draw(st.none() | st.integers(1, H)),
        hidden_size=H, num_hidden_layers=draw(st.integers(1, 6)), num_attention_heads=h,
        intermediate_size=draw(st.integers(1, 40)), max_position_embeddings=draw(st.integers(1, 20)),
        attention=draw(st.sampled_from(["concat", "sum"])), embedding_projection=draw(st.booleans()) or None,
    )


@settings(max_examples=100, deadline=None)
@given(config=configs(), data=st.data())
def test_sharing_changes_no_flops_and_items_add_up(config, data):
    T_ = data.draw(st.integers(1, config.max_position_embeddings))
    masked = data.draw(st.none() | st.integers(1, T_))
    training = data.draw(st.booleans())
    kw = dict(batch=data.draw(st.integers(1, 4)), pooler=True, nsp_head=True, mlm_head=True, masked=masked,
              training=training)
    counts = {s: count_flops(config.replace(sharing=s), T_, **kw)
              for s in ("none", "all", "attention", "ffn")}
    assert len(set(counts.values())) == 1
    count = counts["none"]
    assert sum(count.items().values()) == count.total == count.encoder + count.heads
    attention = ("query_key", "value", "scores", "weighted_values", "output")
    assert count.attention == sum(count.items()[k] for k in attention)
    single = count_flops(config, T_, **(kw | {"batch": 1}))
    assert count.total == count.batch * single.total
    assert flops_per_token(config, T_, pooler=True, nsp_head=True, mlm_head=True, masked=masked,
                           training=training) == single.total / T_


def test_training_triples_what_a_loss_reads():
    forward, step = (count_flops(TINY, 16, pooler=True, mlm_head=True, masked=3, training=t)
                     for t in (False, True))
    assert step.pooler == forward.pooler > 0  # no loss reads the pooled output: no backward
    for name in set(forward.ADDITIVE) - {"pooler"}:
        assert getattr(step, name) == 3 * getattr(forward, name)
    nsp = count_flops(TINY, 16, pooler=True, nsp_head=True, training=True)
    assert (nsp.pooler, nsp.nsp_head, nsp.mlm_decoder) == (3 * forward.pooler, 3 * 2 * 32 * 2, 0)


def test_the_nsp_head_without_its_pooler_is_counted_alone_as_count_parameters_counts_it():
    alone, both = count_flops(TINY, 16, nsp_head=True), count_flops(TINY, 16, pooler=True, nsp_head=True)
    assert (alone.pooler, alone.nsp_head) == (0, both.nsp_head) and alone.total == both.total - both.pooler
    params_alone = count_parameters(TINY, nsp_head=True)
    assert (params_alone.pooler, params_alone.nsp_head) == (0, count_parameters(TINY, pooler=True,
                                                                                nsp_head=True).nsp_head)


def test_forms_differ_in_values_and_output_only():
    T_, H, h, L = 16, TINY.hidden_size, TINY.num_attention_heads, TINY.num_hidden_layers
    concat, summed = count_flops(TINY, T_), count_flops(TINY.replace(attention="sum"), T_)
    assert (summed.value, summed.weighted_values, summed.output) == (h * concat.value,
                                                                     h * concat.weighted_values, 0)
    assert concat.output == concat.value == L * 2 * T_ * H * H
    assert concat.scores == concat.weighted_values == L * 2 * T_ * T_ * H
    assert (summed.query_key, summed.scores, summed.ffn) == (concat.query_key, concat.scores, concat.ffn)


def test_masked_positions_scale_the_mlm_head_only():
    config = PRESETS["tiny-albert"]
    every, some = count_flops(config, 20, mlm_head=True), count_flops(config, 20, mlm_head=True, masked=3)
    E, H, V = config.E, config.hidden_size, config.vocab_size
    assert (some.mlm_dense, some.mlm_decoder) == (2 * 3 * H * E, 2 * 3 * E * V)
    assert (every.mlm_dense, every.mlm_decoder) == (2 * 20 * H * E, 2 * 20 * E * V)
    assert every.encoder == some.encoder and (every.masked, some.masked) == (20, 3)


@pytest.mark.parametrize("name", ["bert-base", "bert-large", "roberta-base"])
def test_rule_of_thumb_counts_biases_and_layer_norms_as_products(name):
    # unshared, concat, no E -> H map, no heads: 2 N + 4 L T H overcounts by 2 L (9H + F) exactly
    config, T_ = PRESETS[name], 128
    L, H, F = config.num_hidden_layers, config.hidden_size, config.intermediate_size
    rule = approximate_flops_per_token(config, T_)
    assert T_ * rule - count_flops(config, T_).total == T_ * 2 * L * (9 * H + F)
    assert approximate_flops_per_token(config, T_, training=True) == 3 * rule


def test_rule_of_thumb_misses_the_summed_values_and_the_reuse_of_shared_layers():
    config, T_ = PRESETS["bert-base"].replace(attention="sum"), 128
    L, H, h = config.num_hidden_layers, config.hidden_size, config.num_attention_heads
    F = config.intermediate_size
    # the sum form stores h H^2 value weights and one bias b_O: 2 L (8H + F) too many, 2 (h - 1) L T H missed
    assert (count_flops(config, T_).total - T_ * approximate_flops_per_token(config, T_)
            == T_ * (2 * (h - 1) * L * T_ * H - 2 * L * (8 * H + F)))
    # ALBERT stores one layer and runs it L times: the rule counts it once, 2 (L - 1) N_layer too few
    albert = PRESETS["albert-base-v2"]
    unshared, stored = albert.replace(sharing="none"), count_parameters(albert).encoder
    assert flops_per_token(albert, T_) == flops_per_token(unshared, T_)
    assert (approximate_flops_per_token(unshared, T_) - approximate_flops_per_token(albert, T_)
            == 2 * (albert.num_hidden_layers - 1) * stored)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(seq_len=0), ValueError, "seq_len must be at least 1"),
    (dict(seq_len=65), ValueError, "seq_len .65. must be at most 64"),
    (dict(seq_len=2.0), TypeError, "seq_len must be an integer"),
    (dict(batch=0), ValueError, "batch must be at least 1"),
    (dict(masked=3), ValueError, "set mlm_head=True"),
    (dict(masked=17, mlm_head=True), ValueError, r"masked \(17\) must be at most seq_len \(16\)"),
    (dict(nsp_head=True, mlm_head=True, training=True), ValueError, "nsp_head needs the pooler it reads"),
    (dict(training=True, pooler=True), ValueError, "training needs a loss"),
    (dict(training=1, mlm_head=True), TypeError, "training must be True or False"),
])
def test_bad_arguments_are_refused_at_the_entry(kwargs, error, match):
    kw = {"seq_len": 16} | kwargs
    with pytest.raises(error, match=match):
        count_flops(TINY, kw.pop("seq_len"), **kw)


def test_config_must_be_an_encoder_config():
    for call in (count_flops, flops_per_token, approximate_flops_per_token):
        with pytest.raises(TypeError, match="config must be an EncoderConfig"):
            call({"hidden_size": 32}, 16)
