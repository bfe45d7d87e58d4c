"""Hypothesis over configs and batches at the model's entries (test_rules_model.py and test_rules_config.py
hold the rules' tables)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geron_lib.config import EncoderConfig
from geron_lib.costs.flops import count_flops
from geron_lib.costs.params import count_parameters
from geron_lib.model.encoder import Encoder
from geron_lib.model.mlm import KEPT, NOT_SELECTED, MaskedBatch, MaskedLM

MODEST = settings(max_examples=50, deadline=None)


# Configs ----------------------------------------------------------------------------------------------------
@st.composite
def configs(draw, *, max_width: int = 4):
    """Valid EncoderConfigs, small enough to build: H = h d_head, E <= H, any sharing, form and type."""
    h = draw(st.integers(1, 4))
    H = h * draw(st.integers(1, max_width))
    model_type = draw(st.sampled_from(("bert", "albert", "roberta")))
    P = draw(st.integers(4, 20))
    V = draw(st.integers(3, 40))
    pad = draw(st.none() | st.integers(0, min(V, P - 1) - 1))
    return EncoderConfig(
        vocab_size=V, hidden_size=H, num_attention_heads=h, num_hidden_layers=draw(st.integers(1, 3)),
        intermediate_size=draw(st.integers(1, 12)), max_position_embeddings=P,
        embedding_size=draw(st.none() | st.integers(1, H)), type_vocab_size=draw(st.integers(0, 3)),
        model_type=model_type, pad_token_id=pad,
        sharing=draw(st.sampled_from(("none", "all", "attention", "ffn"))),
        attention=draw(st.sampled_from(("concat", "sum"))),
        hidden_act=draw(st.sampled_from(("gelu", "relu"))),
        embedding_projection=draw(st.sampled_from((None, True))))


INT_FIELDS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
              "max_position_embeddings", "type_vocab_size")


def numpy_twin(config: EncoderConfig, dtype) -> EncoderConfig:
    """The same config with every integer field given as a numpy integer of ``dtype``."""
    fields = {k: dtype(getattr(config, k)) for k in INT_FIELDS}
    if config.embedding_size is not None:
        fields["embedding_size"] = dtype(config.embedding_size)
    return config.replace(**fields)


@MODEST
@given(configs(), st.booleans(), st.booleans())
def test_built_encoder_holds_what_the_count_says(config, pooler, mlm_head):
    count = count_parameters(config, pooler=pooler, mlm_head=mlm_head)
    assert count.total == sum(count.items().values())
    built = (MaskedLM(config) if mlm_head else Encoder(config, pooler=pooler)).num_parameters()
    assert built == count.total - count.pooler * mlm_head  # MaskedLM has no pooler


@MODEST
@given(configs(max_width=64), st.sampled_from((np.int16, np.int32, np.int64, np.uint16)),
       st.integers(1, 10**9))
def test_numpy_ints_count_as_python_ints(config, dtype, batch):
    twin = numpy_twin(config, dtype)
    assert twin == config and all(type(getattr(twin, k)) is int for k in INT_FIELDS)
    T = config.max_position_embeddings - (config.pad_token_id + 1 if config.model_type == "roberta"
                                          and config.pad_token_id is not None else 0)
    ours = count_flops(twin, dtype(T), batch=np.int64(batch), mlm_head=True, training=True).total
    python = count_flops(config, T, batch=batch, mlm_head=True, training=True).total
    assert type(ours) is int and ours == python


BAD_INTS = st.sampled_from([True, False, 2.0, "8", None, float("nan"), np.float64(4.0), 1 + 0j, [8]])


@MODEST
@given(configs(), st.sampled_from(INT_FIELDS), BAD_INTS | st.integers(-10**30, -1))
def test_a_bad_integer_field_is_refused_by_name(config, field, value):
    with pytest.raises((TypeError, ValueError), match=field):
        config.replace(**{field: value})


@MODEST
@given(configs(), st.sampled_from(("layer_norm_eps", "initializer_range")),
       st.sampled_from([float("nan"), float("inf"), -1e-3, 0.0, "1e-5", None, True, 10**400]))
def test_a_bad_float_field_is_refused_by_name(config, field, value):
    with pytest.raises((TypeError, ValueError), match=field):
        config.replace(**{field: value})


# Batches ----------------------------------------------------------------------------------------------------
#: The model the batches are for: 12 words, 8 positions
MODEL_CONFIG = EncoderConfig(vocab_size=12, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                             intermediate_size=8, max_position_embeddings=8)


@pytest.fixture(scope="module")
def model():
    return MaskedLM(MODEL_CONFIG, seed=1)


@st.composite
def batches(draw):
    """Valid MaskedBatches for the model: ids and labels below 12, at least one position selected."""
    B, T = draw(st.integers(1, 4)), draw(st.integers(1, 8))
    cells = st.lists(st.integers(0, 11), min_size=B * T, max_size=B * T)
    ids, labels = (np.array(draw(cells)).reshape(B, T) for _ in range(2))
    decision = np.array(draw(st.lists(st.integers(NOT_SELECTED, KEPT), min_size=B * T, max_size=B * T)))
    decision = decision.reshape(B, T)
    decision.flat[draw(st.integers(0, B * T - 1))] = draw(st.integers(1, KEPT))
    return MaskedBatch(ids, labels, decision, np.ones((B, T), np.int64))


@MODEST
@given(batches())
def test_the_loss_of_a_batch_is_the_selection_weighted_mean_of_its_rows(model, batch):
    selected = batch.selected.sum(axis=1)
    rows = [(k, model.loss(batch[i:i + 1])) for i, k in enumerate(selected) if k]
    assert model.loss(batch) == pytest.approx(sum(k * loss for k, loss in rows) / selected.sum(), rel=1e-10)


@MODEST
@given(batches(), st.sampled_from(("input_ids", "labels", "decision", "attention_mask")),
       st.sampled_from([-1, -100, 4, 2**40]), st.data())
def test_one_bad_value_in_a_batch_is_refused_by_field(model, batch, field, value, data):
    arr = getattr(batch, field).copy()
    if field in ("input_ids", "labels") and value >= 0:
        value = value if value > 12 else 12  # ids: only beyond the vocabulary is bad
    elif field == "attention_mask" and value == 4:
        value = 2
    arr.flat[data.draw(st.integers(0, arr.size - 1))] = value
    fields = dict(input_ids=batch.input_ids, labels=batch.labels, decision=batch.decision,
                  attention_mask=batch.attention_mask) | {field: arr}
    with pytest.raises(ValueError, match=field):
        model.loss(MaskedBatch(**fields))


@MODEST
@given(st.lists(st.integers(0, 11), min_size=1, max_size=8), st.integers(-10**6, -1) | st.integers(12, 10**6),
       st.data())
def test_an_id_outside_the_vocabulary_is_refused(model, ids, bad, data):
    ids[data.draw(st.integers(0, len(ids) - 1))] = bad
    with pytest.raises(ValueError, match="input_ids"):
        model.encoder(ids)
    with pytest.raises(ValueError, match="ids"):
        model.encoder(np.array([ids]))
