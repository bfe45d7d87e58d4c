"""The config and the cost counts (parameters, FLOPs, memory) at bad and unusual inputs: each rule refuses
with a message naming the argument and the rule, and numbers of any type count as the Python numbers they
equal, exactly at any size. Each row is ``call(entry, *arguments)``."""

from fractions import Fraction
from functools import partial as call

import numpy as np
import pytest

from bad_inputs.inputs import BIG, CFG, INF, NAN, TINY, cfg
from bad_inputs.outcome import assert_python_twin, case, refused
from geron_lib.config import PRESETS, EncoderConfig, max_length
from geron_lib.costs import flops, memory, params, training_memory

SIZES = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
         "max_position_embeddings")
NUMPY_TINY = {k: np.int64(v) for k, v in TINY.items()}
NUMPY_CFG = EncoderConfig(**NUMPY_TINY)
NUMPY_BIG = EncoderConfig(**{k: np.int64(v) for k, v in BIG.items()})


def total(count, *args, **kwargs) -> int:
    """The total of the count ``count(*args, **kwargs)``."""
    return count(*args, **kwargs).total


def config_field(name: str, **changes):
    """Field ``name`` of the small config with ``changes``."""
    return getattr(cfg(**changes), name)


#: The small MaskedLM's parameters (the encoder's and the MLM head's)
N_MLM = params.count_parameters(CFG, mlm_head=True).total


def weight_bytes_in_both_dtypes() -> tuple[int, int]:
    """The weights' bytes of a training step of the small MaskedLM, in float32 and in float64 (by name)."""
    return tuple(training_memory.training_memory(CFG, 2, 8, dtype=d).weights for d in (np.float32, "float64"))


def flops_of_every_sharing_mode() -> set[int]:
    return {flops.count_flops(cfg(sharing=s), 8).total for s in ("none", "all", "attention", "ffn")}


@pytest.mark.parametrize(("entry", "error", "names"), [
    *(case("EncoderConfig", f"{field} {label}", call(cfg, **{field: value}), error, (field, rule))
      for field in SIZES
      for label, value, error, rule in (("True", True, TypeError, "integer"),
                                        ("0", 0, ValueError, "at least 1"),
                                        ("8.0", 8.0, TypeError, "integer"))),
    case("EncoderConfig", "embedding_size np.bool_", call(cfg, embedding_size=np.bool_(True)), TypeError,
         ("embedding_size",)),
    case("count_flops", "seq_len 0", call(flops.count_flops, CFG, 0), ValueError, ("seq_len", "at least 1")),
    case("count_flops", "seq_len -5", call(flops.count_flops, CFG, -5), ValueError,
         ("seq_len", "at least 1")),
    case("count_flops", "seq_len 8.0", call(flops.count_flops, CFG, 8.0), TypeError, ("seq_len", "integer")),
    case("count_flops", "seq_len True", call(flops.count_flops, CFG, True), TypeError,
         ("seq_len", "integer")),
    case("count_flops", "batch 0", call(flops.count_flops, CFG, 8, batch=0), ValueError,
         ("batch", "at least 1")),
    case("count_flops", "batch NaN", call(flops.count_flops, CFG, 8, batch=NAN), TypeError,
         ("batch", "integer")),
    case("count_flops", "masked 0", call(flops.count_flops, CFG, 8, mlm_head=True, masked=0), ValueError,
         ("masked",)),
    case("flops_per_token", "masked -1", call(flops.flops_per_token, CFG, 8, mlm_head=True, masked=-1),
         ValueError,
         ("masked",)),
    case("approximate_flops_per_token", "seq_len None", call(flops.approximate_flops_per_token, CFG, None),
         TypeError, ("seq_len",)),
    case("linear_params", "n_in -3", call(params.linear_params, -3, 5), ValueError, ("n_in", "at least 1")),
    case("linear_params", "n_out 2.5", call(params.linear_params, 2, 2.5), TypeError, ("n_out", "integer")),
    case("layer_norm_params", "width 0", call(params.layer_norm_params, 0), ValueError,
         ("width", "at least 1")),
    case("ffn_params", "intermediate_size None", call(params.ffn_params, 8, None), TypeError,
         ("intermediate_size",)),
    case("attention_params", "hidden_size NaN", call(params.attention_params, NAN, 2), TypeError,
         ("hidden_size", "integer")),
    case("training_memory", "batch -1", call(training_memory.training_memory, CFG, -1, 8), ValueError,
         ("batch", "at least 1")),
    case("forward_activation_bytes", "seq_len 0",
         call(memory.forward_activation_bytes, 2, 0, 8, 2, 16, "concat", 8), ValueError, ("seq_len",)),
    case("forward_activation_bytes", "itemsize 0",
         call(memory.forward_activation_bytes, 2, 8, 8, 2, 16, "concat", 0), ValueError, ("itemsize",)),
    case("block_cache_elements", "batch -1", call(memory.block_cache_elements, -1, 8, 8, 2, 16, "sum"),
         ValueError,
         ("batch",)),
    case("block_cache_elements", "hidden_size 8.0",
         call(memory.block_cache_elements, 1, 8, 8.0, 2, 16, "sum"),
         TypeError, ("hidden_size",)),
    case("block_forward_workspace", "num_attention_heads None",
         call(memory.block_forward_workspace, 1, 8, None, 16), TypeError, ("num_attention_heads",)),
])
def test_a_size_that_is_not_a_positive_integer_is_refused_naming_it(entry, error, names):
    with refused(error, *names):
        entry()


@pytest.mark.parametrize(("field", "value", "error", "rule"), [
    case("EncoderConfig", f"{field} {label}", field, value, error, rule)
    for field in ("layer_norm_eps", "initializer_range")
    for label, value, error, rule in (("NaN", NAN, ValueError, "finite"), ("inf", INF, ValueError, "finite"),
                                      ("-0.1", -0.1, ValueError, "positive"),
                                      ("a string", "1e-12", TypeError, "real number"),
                                      ("10**400", 10**400, ValueError, "finite"),
                                      ("1/10**400", Fraction(1, 10**400), ValueError, "positive float"))])
def test_a_config_scale_that_is_not_a_finite_positive_number_is_refused_naming_it(field, value, error, rule):
    with refused(error, field, rule):
        cfg(**{field: value})


@pytest.mark.parametrize(("entry", "error", "names"), [
    case("EncoderConfig", "hidden_act None", call(cfg, hidden_act=None), ValueError,
         ("hidden_act", "one of")),
    case("EncoderConfig", "hidden_act 'GELU'", call(cfg, hidden_act="GELU"), ValueError,
         ("hidden_act", "one of")),
    case("EncoderConfig", "sharing 'layers'", call(cfg, sharing="layers"), ValueError, ("sharing", "one of")),
    case("EncoderConfig", "attention 'mean'", call(cfg, attention="mean"), ValueError,
         ("attention", "one of")),
    case("EncoderConfig", "model_type 'gpt2'", call(cfg, model_type="gpt2"), ValueError,
         ("model_type", "one of")),
    case("EncoderConfig.replace", "an unknown field", call(CFG.replace, hiden_size=8), TypeError,
         ("hiden_size",)),
    case("EncoderConfig.preset", "an unknown name", call(EncoderConfig.preset, "bert-tiny"), ValueError,
         ("name", "one of")),
    case("EncoderConfig.preset", "None", call(EncoderConfig.preset, None), ValueError, ("name", "one of")),
    case("attention_params", "form 'Concat'", call(params.attention_params, 8, 2, "Concat"), ValueError,
         ("form", "one of")),
    case("model_attention_params", "form 'mean'", call(params.model_attention_params, CFG, form="mean"),
         ValueError, ("form",)),
    case("forward_activation_bytes", "attention 'mean'",
         call(memory.forward_activation_bytes, 2, 8, 8, 2, 16, "mean", 8), ValueError, ("attention",
              "one of")),
    case("block_backward_workspace", "hidden_act 'swish'",
         call(memory.block_backward_workspace, 1, 8, 8, 2, 16, "concat", "swish"), ValueError, ("hidden_act",
              )),
    case("training_memory", "dtype float16",
         call(training_memory.training_memory, CFG, 2, 8, dtype=np.float16),
         ValueError, ("dtype", "float32 or float64")),
    case("training_memory", "dtype 'garbage'",
         call(training_memory.training_memory, CFG, 2, 8, dtype="garbage"),
         TypeError, ("dtype", "float32 or float64")),
    case("training_memory", "dtype None", call(training_memory.training_memory, CFG, 2, 8, dtype=None),
         TypeError,
         ("dtype",)),
    case("training_memory", "dtype int", call(training_memory.training_memory, CFG, 2, 8, dtype=int),
         ValueError,
         ("dtype",)),
    case("training_memory", "dtype a numpy float (numpy reads float32 off it)",
         call(training_memory.training_memory, CFG, 2, 8, dtype=np.float32(0.5)), TypeError, ("dtype",)),
])
def test_a_name_or_dtype_not_among_the_choices_is_refused_naming_them(entry, error, names):
    with refused(error, *names):
        entry()


@pytest.mark.parametrize(("entry", "error", "names"), [
    case("EncoderConfig", "embedding_projection 'yes'", call(cfg, embedding_projection="yes"), TypeError,
         ("embedding_projection",)),
    case("count_parameters", "pooler 1", call(params.count_parameters, CFG, pooler=1), TypeError,
         ("pooler", "True or False")),
    case("count_parameters", "mlm_head 'yes'", call(params.count_parameters, CFG, mlm_head="yes"), TypeError,
         ("mlm_head",)),
    case("linear_params", "bias 'no'", call(params.linear_params, 2, 3, "no"), TypeError, ("bias",)),
    case("count_flops", "training 'yes'", call(flops.count_flops, CFG, 8, training="yes"), TypeError,
         ("training",)),
    case("approximate_flops_per_token", "training 1",
         call(flops.approximate_flops_per_token, CFG, 8, training=1),
         TypeError, ("training",)),
])
def test_a_flag_that_is_not_true_or_false_is_refused_naming_it(entry, error, names):
    with refused(error, *names):
        entry()


@pytest.mark.parametrize(("entry", "names"), [
    case("max_length", "a dict", call(max_length, TINY), ("config", "EncoderConfig")),
    case("count_parameters", "config a preset name", call(params.count_parameters, "bert-base"),
         ("config", "EncoderConfig")),
    case("count_parameters", "config None", call(params.count_parameters, None), ("config",)),
    case("stored_copies", "a dict", call(params.stored_copies, TINY), ("config",)),
    case("count_flops", "config a dict", call(flops.count_flops, TINY, 8), ("config", "EncoderConfig")),
])
def test_a_config_that_is_not_an_encoder_config_is_refused_naming_it(entry, names):
    with refused(TypeError, *names):
        entry()


@pytest.mark.parametrize(("entry", "names"), [
    case("EncoderConfig", "type_vocab_size -1", call(cfg, type_vocab_size=-1),
         ("type_vocab_size", "at least 0")),
    case("EncoderConfig", "embedding_size above hidden_size", call(cfg, embedding_size=16),
         ("embedding_size", "at most hidden_size")),
    case("EncoderConfig", "pad_token_id = vocab_size", call(cfg, pad_token_id=20),
         ("pad_token_id", "below vocab_size")),
    case("EncoderConfig", "pad_token_id -1", call(cfg, pad_token_id=-1), ("pad_token_id", "at least 0")),
    case("EncoderConfig.replace", "hidden_size -8", call(CFG.replace, hidden_size=-8),
         ("hidden_size", "at least 1")),
    case("count_flops", "seq_len past the positions", call(flops.count_flops, CFG, 17),
         ("seq_len", "max_position_embeddings")),
    case("count_flops", "masked above seq_len", call(flops.count_flops, CFG, 8, mlm_head=True, masked=9),
         ("masked", "at most seq_len")),
    case("training_memory", "seq_len 100 past 16 positions",
         call(training_memory.training_memory, CFG, 2, 100),
         ("seq_len",)),
])
def test_a_number_out_of_its_range_is_refused_naming_it_and_the_range(entry, names):
    with refused(ValueError, *names):
        entry()


@pytest.mark.parametrize(("entry", "names"), [
    case("EncoderConfig", "hidden_size 10, 3 heads", call(cfg, hidden_size=10, num_attention_heads=3),
         ("hidden_size", "divisible by num_attention_heads")),
    case("EncoderConfig", "roberta pad id past the positions",
         call(cfg, model_type="roberta", pad_token_id=15),
         ("max_position_embeddings", "pad_token_id + 1")),
    case("EncoderConfig", "embedding_projection False with E < H",
         call(cfg, embedding_size=4, embedding_projection=False), ("embedding_projection", "embedding_size")),
    case("attention_params", "heads not dividing", call(params.attention_params, 8, 3), ("divisible",)),
    case("count_flops", "masked without the MLM head", call(flops.count_flops, CFG, 8, masked=2),
         ("masked", "mlm_head")),
    case("count_flops", "training through nsp_head without its pooler",
         call(flops.count_flops, CFG, 8, nsp_head=True, training=True), ("nsp_head", "pooler=True")),
    case("count_flops", "training without a head", call(flops.count_flops, CFG, 8, training=True),
         ("training",)),
])
def test_arguments_that_contradict_each_other_are_refused_naming_both(entry, names):
    with refused(ValueError, *names):
        entry()


@pytest.mark.parametrize("entry", [
    case("count_parameters", "positional pooler", call(params.count_parameters, CFG, True)),
])
def test_a_flag_passed_by_position_is_refused_as_keyword_only(entry):
    with refused(TypeError, "positional"):
        entry()


@pytest.mark.parametrize(("entry", "expected"), [
    case("EncoderConfig", "numpy integers stored as Python ints", call(EncoderConfig, **NUMPY_TINY), CFG),
    case("EncoderConfig", "np.float32 layer_norm_eps stored as a float",
         call(cfg, layer_norm_eps=np.float32(1e-5)),
         cfg(layer_norm_eps=float(np.float32(1e-5)))),
    case("EncoderConfig", "Fraction initializer_range", call(cfg, initializer_range=Fraction(1, 50)),
         cfg(initializer_range=0.02)),
    case("EncoderConfig", "embedding_projection np.bool_(True) at E = H",
         call(cfg, embedding_projection=np.bool_(True)), cfg(embedding_projection=True)),
    case("count_parameters", "numpy-int config counts as the Python-int one",
         call(params.count_parameters, NUMPY_CFG, mlm_head=True), params.count_parameters(CFG,
              mlm_head=True)),
    case("count_parameters", "nsp_head np.bool_(True)",
         call(params.count_parameters, CFG, pooler=True, nsp_head=np.bool_(True)),
         params.count_parameters(CFG, pooler=True, nsp_head=True)),
    case("linear_params", "numpy ints", call(params.linear_params, np.int32(3), np.int64(4)), 3 * 4 + 4),
    case("count_flops", "numpy-int config at xxlarge sizes: no overflow",
         call(flops.count_flops, NUMPY_BIG, 512, batch=10**6),
         flops.count_flops(EncoderConfig(**BIG), 512, batch=10**6)),
    case("count_flops", "seq_len np.int64(8)", call(flops.count_flops, CFG, np.int64(8)),
         flops.count_flops(CFG, 8)),
    case("count_flops", "masked np.int64 at 10**6 sequences: no overflow",
         call(flops.count_flops, EncoderConfig(**BIG), 512, batch=10**6, mlm_head=True, masked=np.int64(512)),
         flops.count_flops(EncoderConfig(**BIG), 512, batch=10**6, mlm_head=True)),
    case("forward_activation_bytes", "numpy sizes at 10**6 x 512 x 4096: no overflow",
         call(memory.forward_activation_bytes, np.int64(10**6), np.int64(512), np.int64(4096), np.int64(64),
              np.int64(16384), "sum", 8),
         memory.forward_activation_bytes(10**6, 512, 4096, 64, 16384, "sum", 8)),
])
def test_numbers_of_other_types_are_read_as_the_python_numbers_they_equal(entry, expected):
    assert_python_twin(entry(), expected)


@pytest.mark.parametrize(("entry", "expected"), [
    case("EncoderConfig", "vocab_size 10**30 (a description, never built)",
         call(config_field, "vocab_size", vocab_size=10**30), 10**30),
    case("count_parameters", "vocab_size 10**30: exact Python-int count",
         call(total, params.count_parameters, cfg(vocab_size=10**30)),
         params.count_parameters(CFG).total + (10**30 - 20) * 8),
    case("count_flops", "batch 10**20: an exact count", call(total, flops.count_flops, CFG, 8, batch=10**20),
         10**20 * flops.count_flops(CFG, 8).total),
])
def test_sizes_past_any_machine_count_exactly(entry, expected):
    got = entry()
    assert type(got) is int and got == expected


@pytest.mark.parametrize(("entry", "expected"), [
    case("EncoderConfig.preset", "albert-base-v2", call(EncoderConfig.preset, "albert-base-v2"),
         PRESETS["albert-base-v2"]),
    case("max_length", "tiny roberta", call(max_length, PRESETS["roberta-base"]), 512),
    case("count_parameters", "BERT base with pooler: 109,482,240 (transformers' BertModel)",
         call(total, params.count_parameters, PRESETS["bert-base"], pooler=True), 109_482_240),
    case("count_parameters", "ALBERT base with pooler: 11,683,584 (transformers' AlbertModel)",
         call(total, params.count_parameters, PRESETS["albert-base-v2"], pooler=True), 11_683_584),
    case("attention_params", "sum form at BERT base: 2(H^2 + H) + hH^2 + H",
         call(params.attention_params, 768, 12, "sum"), 2 * (768**2 + 768) + 12 * 768**2 + 768),
    case("training_memory", "weights in float32 are half of float64's bytes", weight_bytes_in_both_dtypes,
         (4 * N_MLM, 8 * N_MLM)),
    case("count_flops", "every sharing mode the same FLOPs", flops_of_every_sharing_mode,
         {flops.count_flops(CFG, 8).total}),
])
def test_published_and_closed_form_counts(entry, expected):
    assert entry() == expected
