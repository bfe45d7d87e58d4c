"""count_parameters: formulas agree with the arrays actually allocated, and with published totals."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geron_lib import PRESETS, Encoder, EncoderConfig, count_parameters
from geron_lib.costs.params import ParameterCount, attention_params


@st.composite
def configs(draw):
    h = draw(st.integers(1, 4))
    H = h * draw(st.integers(1, 6))
    return EncoderConfig(
        vocab_size=draw(st.integers(1, 50)),
        embedding_size=draw(st.none() | st.integers(1, H)),
        hidden_size=H,
        num_hidden_layers=draw(st.integers(1, 4)),
        num_attention_heads=h,
        intermediate_size=draw(st.integers(1, 40)),
        max_position_embeddings=draw(st.integers(1, 20)),
        type_vocab_size=draw(st.integers(0, 3)),
        sharing=draw(st.sampled_from(["none", "all", "attention", "ffn"])),
        attention=draw(st.sampled_from(["concat", "sum"])),
    )


@settings(max_examples=150, deadline=None)
@given(config=configs(), pooler=st.booleans())
def test_formula_equals_allocated_arrays(config, pooler):
    assert count_parameters(config, pooler=pooler).total == Encoder(config, pooler=pooler).num_parameters()


@settings(max_examples=60, deadline=None)
@given(config=configs())
def test_items_add_up_and_sharing_saves_whole_blocks(config):
    c = count_parameters(config, pooler=True, mlm_head=True, nsp_head=True)
    assert sum(c.items().values()) == c.total
    shared = count_parameters(config.replace(sharing="all"))
    unshared = count_parameters(config.replace(sharing="none"))
    block = unshared.attention_per_layer + unshared.ffn_per_layer + unshared.layer_norms_per_layer
    assert unshared.total - shared.total == (config.num_hidden_layers - 1) * block


def test_items_are_the_additive_parts_by_name():
    # items() names its fields (ParameterCount.ADDITIVE), not the dataclass's first ones; each is stored
    config = PRESETS["tiny-albert"].replace(sharing="none")
    c = count_parameters(config, pooler=True)
    assert list(c.items()) == list(ParameterCount.ADDITIVE)
    assert not {"attention_per_layer", "ffn_per_layer", "layer_norms_per_layer", "attention_copies",
                "ffn_copies"} & set(c.items())
    stored = Encoder(config, pooler=True).parameters()

    def size(*names):
        return sum(stored[n].size for n in names)

    assert c.items()["token_embeddings"] == size("embeddings.word")
    assert c.items()["embedding_projection"] == size("embeddings.W_P", "embeddings.b_P")
    assert c.items()["pooler"] == size("pooler.W", "pooler.b")
    layer_norms = [v.size for k, v in stored.items() if k.startswith("layers.") and ".ln_" in k]
    assert c.items()["layer_norms"] == sum(layer_norms)


@pytest.mark.parametrize("sharing", ["all", "attention", "ffn"])
def test_shared_sublayers_do_not_grow_with_depth(sharing):
    base = PRESETS["tiny-bert"].replace(sharing=sharing)
    totals = [count_parameters(base.replace(num_hidden_layers=L)) for L in (1, 2, 6, 24)]
    if sharing == "all":
        assert len({c.total for c in totals}) == 1
    grows = {"attention": "ffn", "ffn": "attention"}.get(sharing)
    for L, c in zip((1, 2, 6, 24), totals, strict=True):
        if grows:
            per_layer = getattr(c, f"{grows}_per_layer")
            assert getattr(c, grows) == L * per_layer
            assert c.total - totals[0].total == (L - 1) * (per_layer + c.layer_norms_per_layer // 2)


def test_published_hugging_face_totals():
    # BertModel(bert-base-uncased).num_parameters() = 109,482,240 with its pooler;
    # AlbertModel(albert-base-v2).num_parameters() = 11,683,584 with its pooler.
    assert count_parameters(PRESETS["bert-base"], pooler=True).total == 109_482_240
    assert count_parameters(PRESETS["albert-base-v2"], pooler=True).total == 11_683_584


def test_attention_forms_from_the_discussion():
    # Without biases: concat form stores W_V and W_O, 2 d^2; the summed form h d^2 of value maps.
    d, h = 64, 8
    qk = 2 * d * d
    assert attention_params(d, h, "concat", bias=False) - qk == 2 * d * d
    assert attention_params(d, h, "sum", bias=False) - qk == h * d * d
    assert attention_params(d, h, "concat") == 4 * (d * d + d)
    assert attention_params(d, h, "sum") == 2 * (d * d + d) + h * d * d + d


def test_factorised_embedding_items():
    small = EncoderConfig(vocab_size=1000, embedding_size=16, hidden_size=64, num_attention_heads=4)
    c = count_parameters(small)
    assert c.token_embeddings == 1000 * 16
    assert c.embedding_projection == 16 * 64 + 64
    assert c.position_embeddings == 512 * 16 and c.token_type_embeddings == 2 * 16
    unfactorised = count_parameters(EncoderConfig(vocab_size=1000, hidden_size=64, num_attention_heads=4))
    assert unfactorised.embedding_projection == 0 and unfactorised.token_embeddings == 1000 * 64


def test_heads():
    cfg = PRESETS["tiny-albert"]
    H, E, V = cfg.hidden_size, cfg.E, cfg.vocab_size
    c = count_parameters(cfg, pooler=True, mlm_head=True, nsp_head=True)
    assert c.pooler == H * H + H
    assert c.mlm_head == H * E + E + 2 * E + V  # dense H -> E, LN over E, output bias; decoder tied
    assert c.nsp_head == 2 * H + 2
    assert c.heads == c.pooler + c.mlm_head + c.nsp_head
    assert "total" in str(c)


@pytest.mark.parametrize("kwargs, error", [
    (dict(config={"hidden_size": 8}), TypeError),
    (dict(config=PRESETS["tiny-bert"], pooler=1), TypeError),
    (dict(config=PRESETS["tiny-bert"], nsp_head="yes"), TypeError),
])
def test_bad_arguments(kwargs, error):
    config = kwargs.pop("config")
    with pytest.raises(error, match="config|pooler|nsp_head"):
        count_parameters(config, **kwargs)


def test_count_does_not_allocate():
    # xxlarge-sized with a huge vocabulary: counted instantly, never allocated
    c = count_parameters(PRESETS["albert-xxlarge-v2"].replace(vocab_size=10**9))
    assert c.token_embeddings == 10**9 * 128
