"""How the entries read what they are given, at inputs that read as something else: masked arrays, weights,
logits and gradients holding NaN or infinity, the presets, numbers whose methods lie, that are no number (a
timedelta64, a Decimal of a billion digits) or that no float holds (1/10**400), counts given with a fraction,
dtypes that disagree, files that cannot be read, torch tensors, and inputs whose refusal must name the real
cause, not a nearby one. Each rule refuses at the public entry with a message naming the argument and the
rule, or, for a checker, answers with feedback that names them; beside each refusal, an input that means
something gets the right value."""

import dataclasses
import time
from decimal import Decimal
from fractions import Fraction
from functools import partial as call

import numpy as np
import pytest

from bad_inputs.inputs import CFG, IDS, INF, KEEP, NAN, X, cfg, edited
from bad_inputs.outcome import assert_python_twin, assert_same, case, refused, run, uses
from geron_lib.config import PRESETS, EncoderConfig
from geron_lib.costs.flops import count_flops
from geron_lib.costs.params import count_parameters
from geron_lib.interop.hf_weights import encoder_from_hf, hf_state_dict
from geron_lib.model.attention import multi_head_attention
from geron_lib.model.checkpoint import encoder_arrays, encoder_from_arrays
from geron_lib.model.classifier import SequenceClassifier
from geron_lib.model.encoder import Encoder
from geron_lib.model.mlm import MaskedBatch, MaskedLM, cross_entropy
from geron_lib.notebook.exercises import Feedback
from geron_lib.notebook.exercises.attention import check_sum_weights
from geron_lib.notebook.exercises.embeddings import check_largest_saving_width, check_token_embedding_count
from geron_lib.notebook.exercises.hugging_face import POSITION_IDS_EXERCISE, check_roberta_positions
from geron_lib.notebook.exercises.masking import check_empty_mask_probability
from geron_lib.notebook.exercises.sharing import check_shared_count
from geron_lib.pretraining.subword import WordPieceTokenizer
from geron_lib.pretraining.tokenizer import SPECIAL_TOKENS
from geron_lib.pretraining.train import AdamW
from geron_lib.reference.masks import masked_count
from geron_lib.studies import stored
from geron_lib.studies import tradeoffs as tx
from geron_lib.studies import trained_attention as ta
from geron_lib.studies.conversions import concat_to_sum
from geron_lib.studies.depth import layer_movement
from geron_lib.studies.factorised import best_rank_factors
from geron_lib.studies.paired import paired_interval
from geron_lib.validate import check_number

#: the largest saving E for V = 50,265, H = 768, and the factorised count at V 30,000, H 4,096, E 128
WIDTH, COUNT = 756, 30000 * 128 + 128 * 4096 + 4096
#: albert-large-v2 as published (its config.json), attention shared
ALBERT_LARGE_ATTENTION = EncoderConfig(vocab_size=30000, embedding_size=128, hidden_size=1024,
                                       num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096,
                                       hidden_act="gelu_new", model_type="albert", sharing="attention",
                                       pad_token_id=0)


class LyingInt(int):
    """An int whose __int__ and __index__ say ``told``, whatever its value."""

    told = 0

    def __int__(self):
        return self.told

    __index__ = __int__


def lying_int(value: int, told: int) -> LyingInt:
    number = LyingInt(value)
    number.told = told
    return number


class LyingFloat(float):
    """A float whose __float__ says 0.0, whatever its value."""

    def __float__(self):
        return 0.0


def masked(values, mask) -> np.ma.MaskedArray:
    return np.ma.array(values, mask=mask)


def right(feedback) -> bool:
    return isinstance(feedback, Feedback) and bool(feedback)


def wrong(feedback, *phrases: str) -> bool:
    return isinstance(feedback, Feedback) and not feedback and all(p in feedback.message for p in phrases)


# Masked arrays ----------------------------------------------------------------------------------------------
def loaded_with(arrays: dict, edits: dict) -> Encoder:
    """encoder_from_arrays of the small config's checkpoint ``arrays`` with ``edits`` (inputs.edited)."""
    return encoder_from_arrays(CFG, edited(arrays, edits))


def loss_of(classifier: SequenceClassifier, ids, labels) -> float:
    return classifier.loss_and_grads(ids, labels)[0]


@pytest.mark.parametrize(("entry", "names"), [
    case("Encoder()", "a masked id -1 (min() skips it, the lookup reads it)",
         call(Encoder.__call__, uses.encoder, masked([5, -1, 7], [0, 1, 0])), ("input_ids", "masked array")),
    case("Encoder()", "a masked attention_mask",
         call(Encoder.__call__, uses.encoder, IDS, attention_mask=masked(KEEP, KEEP == 0)),
         ("attention_mask", "masked array")),
    case("MaskedBatch", "a masked label -1",
         call(MaskedBatch, IDS, masked(np.where(IDS == 0, -1, IDS), IDS == 0), (IDS == 5).astype(int), KEEP),
         ("labels", "masked array")),
    case("cross_entropy", "a masked target -1 (read as the last class)",
         call(cross_entropy, np.zeros((2, 5)), masked([0, -1], [0, 1])), ("targets", "masked array")),
    case("multi_head_attention", "x masked where it holds NaN",
         call(multi_head_attention, masked(np.full_like(X, NAN), True), uses.w_cat, 2),
         ("x", "masked array")),
    case("multi_head_attention", "a masked additive mask",
         call(multi_head_attention, X, uses.w_cat, 2, additive_mask=masked(np.zeros((2, 1, 1, 5)), False)),
         ("additive_mask", "masked array")),
    case("SequenceClassifier.loss_and_grads", "a masked label -1",
         call(loss_of, uses.classifier, IDS, masked([0, -1], [0, 1])), ("labels", "masked array")),
    case("encoder_from_arrays", "a masked weight",
         call(loaded_with, uses.arrays, {"embeddings.ln_bias": masked(np.zeros(8), True)}),
         ("arrays['embeddings.ln_bias']", "masked array")),
    case("Encoder.pool", "masked hidden states", call(Encoder.pool, uses.pooled_encoder, masked(X, False)),
         ("hidden", "masked array")),
    case("best_rank_factors", "a masked table", call(best_rank_factors, masked(X[0], X[0] > 1), 2),
         ("table", "masked array")),
    case("layer_movement", "masked states", call(layer_movement, [X, masked(X, X > 1)]),
         ("states[1]", "masked array")),
    case("token_table_rank", "a masked table (the SVD reads what the mask hides)",
         call(tx.token_table_rank, masked(X[0], X[0] > 1)), ("table", "masked array")),
    case("moved_rows", "a masked trained table",
         call(tx.moved_rows, X[0] + 1, masked(X[0], X[0] > 1)), ("trained", "masked array")),
    case("rank_in_text", "masked ids", call(tx.rank_in_text, X[0], masked([0, 1, 2], [0, 1, 0]), 0),
         ("ids", "masked array")),
    case("paired_interval", "masked seeds",
         call(paired_interval, masked([0.1, 0.2, 0.3], [0, 0, 1]), [0.1, 0.2, 0.3]), ("masked array",)),
])
def test_a_masked_array_is_refused_naming_it(request, entry, names):
    with refused(TypeError, *names):
        run(request, entry)


@pytest.mark.parametrize(("entry", "twin"), [
    case("Encoder()", "its data, filled where masked: the ids it holds",
         call(Encoder.__call__, uses.encoder, np.ma.filled(masked([5, -1, 7], [0, 1, 0]), 0)),
         call(Encoder.__call__, uses.encoder, [5, 0, 7])),
    case("cross_entropy", "the unmasked targets, compressed", call(cross_entropy, np.zeros((1, 5)),
                                                                   masked([3, -1], [0, 1]).compressed()),
         call(cross_entropy, np.zeros((1, 5)), np.array([3]))),
])
def test_a_masked_arrays_values_filled_or_compressed_are_read_as_plain_values(request, entry, twin):
    assert_same(run(request, entry), run(request, twin))


# NaN and infinity in weights, logits and upstream gradients -------------------------------------------------
def from_weights(encoder: Encoder, *, edit: tuple | None = None, dtype=np.float64) -> Encoder:
    """Encoder.from_weights of copies of ``encoder``'s weights, one entry set by ``edit``: (part, copy,
    name, value), the part "embeddings", "attention" or "ffn"."""
    embeddings = {k: v.copy() for k, v in encoder.embeddings.items()}
    attention = [{k: v.copy() for k, v in a.items()} for a, _ in encoder.layers]
    ffn = [{k: v.copy() for k, v in f.items()} for _, f in encoder.layers]
    if edit is not None:
        part, j, name, value = edit
        target = embeddings if part == "embeddings" else {"attention": attention, "ffn": ffn}[part][j]
        target[name].flat[0] = value
    return Encoder.from_weights(encoder.config, embeddings, attention, ffn, dtype=dtype)


def backward_with(encoder: Encoder, forward_cache, *, d_hidden=None, grad: tuple | None = None) -> dict:
    """Encoder.backward on the session's cached forward, with ``d_hidden`` (default ones) and one gradient
    array's first entry set by ``grad`` (name, value); the gradients it gives."""
    hidden, cache, zeros = forward_cache
    grads = {k: v.copy() for k, v in zeros.items()}
    if grad is not None:
        grads[grad[0]].flat[0] = grad[1]
    encoder.backward(cache, np.ones_like(hidden) if d_hidden is None else d_hidden, grads)
    return grads


def from_hf_with(encoder: Encoder, name: str | None = None, value=None, dtype=np.float64) -> Encoder:
    """encoder_from_hf of ``encoder``'s state dict (copied) whose array ``name`` has ``value`` first."""
    sd = {k: v.copy() for k, v in hf_state_dict(encoder).items()}
    if name is not None:
        sd[name].flat[0] = value
    return encoder_from_hf(encoder.config, sd, dtype=dtype)


@pytest.mark.parametrize(("entry", "names"), [
    case("Encoder.from_weights", "a token embedding NaN",
         call(from_weights, uses.encoder, edit=("embeddings", 0, "word", NAN)),
         ("embeddings['word']", "finite")),
    case("Encoder.from_weights", "layer 2's W_O infinite",
         call(from_weights, uses.encoder, edit=("attention", 1, "W_O", INF)),
         ("attention[1]['W_O']", "finite")),
    case("encoder_from_arrays", "a checkpoint's W_1 NaN", call(loaded_with, uses.arrays, {"ffn.0.W_1": NAN}),
         ("arrays['ffn.0.W_1']", "finite")),
    case("encoder_from_hf", "a state dict's query weight -inf",
         call(from_hf_with, uses.encoder, "encoder.layer.0.attention.self.query.weight", -INF),
         ("state_dict['encoder.layer.0.attention.self.query.weight']", "finite")),
    case("cross_entropy", "an infinite logit", call(cross_entropy, np.array([[INF, 0.0]]), np.array([0])),
         ("logits", "finite")),
    case("cross_entropy", "a NaN logit", call(cross_entropy, np.array([[0.0, NAN]]), np.array([0])),
         ("logits", "finite")),
    case("Encoder.backward", "a NaN upstream gradient",
         call(backward_with, uses.encoder, uses.forward_cache, d_hidden=np.full((2, 5, 8), NAN)),
         ("d_hidden", "finite")),
    case("Encoder.backward", "an infinite entry in a gradient it adds into",
         call(backward_with, uses.encoder, uses.forward_cache, grad=("layers.0.ffn.b_1", INF)),
         ("grads['layers.0.ffn.b_1']", "finite")),
])
def test_weights_logits_or_gradients_holding_nan_or_infinity_are_refused_naming_them(request, entry, names):
    with refused(ValueError, *names):
        run(request, entry)


def outputs_of(build, encoder: Encoder, ids, **kwargs) -> np.ndarray:
    """The outputs on ``ids`` of the encoder ``build(encoder, **kwargs)`` makes of ``encoder``'s weights."""
    return build(encoder, **kwargs)(ids)


@pytest.mark.parametrize(("entry", "expected"), [
    case("Encoder.from_weights", "finite weights: the encoder's outputs",
         call(outputs_of, from_weights, uses.encoder, IDS), call(Encoder.__call__, uses.encoder, IDS)),
    case("encoder_from_hf", "a finite state dict: the encoder's outputs",
         call(outputs_of, from_hf_with, uses.encoder, IDS), call(Encoder.__call__, uses.encoder, IDS)),
    case("cross_entropy", "finite logits of 1e300: no overflow (z - max z)",
         call(cross_entropy, np.array([[1e300, 0.0], [0.0, 1e300]]), np.array([0, 0])),
         (5e299, np.array([[1.0, 0.0], [0.0, 1.0]]))),
])
def test_finite_weights_and_logits_of_any_size_give_their_value(request, entry, expected):
    got = run(request, entry)
    assert_same(got, run(request, expected) if isinstance(expected, call) else expected)


# The presets are read-only ----------------------------------------------------------------------------------
def reassign_preset(name: str, value):
    PRESETS[name] = value


def delete_preset(name: str):
    del PRESETS[name]


def set_field(config: EncoderConfig, field: str, value):
    setattr(config, field, value)


@pytest.mark.parametrize(("entry", "error", "names"), [
    case("PRESETS", "an entry reassigned", call(reassign_preset, "bert-base", PRESETS["tiny-bert"]),
         TypeError,
         ("mappingproxy", "item assignment")),
    case("PRESETS", "a new entry planted", call(reassign_preset, "my-bert", PRESETS["tiny-bert"]), TypeError,
         ("item assignment",)),
    case("PRESETS", "an entry deleted", call(delete_preset, "bert-base"), TypeError, ("mappingproxy",)),
    case("EncoderConfig", "a preset's field reassigned",
         call(set_field, PRESETS["bert-base"], "hidden_size", 8),
         dataclasses.FrozenInstanceError, ("hidden_size",)),
])
def test_the_presets_and_their_configs_are_read_only(entry, error, names):
    with refused(error, *names):
        entry()


def sizes_of_preset(name: str) -> tuple[int, int, int, int]:
    c = EncoderConfig.preset(name)
    return c.vocab_size, c.hidden_size, c.num_hidden_layers, c.num_attention_heads


def graded_after_a_planting_attempt(answer) -> bool:
    """check_shared_count's verdict on ``answer`` after an attempt to plant another albert-large-v2."""
    try:
        PRESETS["albert-large-v2"] = PRESETS["tiny-albert"]
    except TypeError:
        pass
    return bool(check_shared_count(answer, "albert-large-v2", "attention"))


@pytest.mark.parametrize(("entry", "expected"), [
    case("EncoderConfig.preset", "bert-base as published (30,522 ids, H 768, L 12, h 12)",
         call(sizes_of_preset, "bert-base"), (30522, 768, 12, 12)),
    case("check_shared_count", "still graded against the published albert-large-v2",
         call(graded_after_a_planting_attempt, count_parameters(ALBERT_LARGE_ATTENTION).total), True),
])
def test_a_preset_reads_as_published(entry, expected):
    assert entry() == expected


# Numbers read through their exact value ---------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "names"), [
    case("EncoderConfig", "hidden_size a numpy.timedelta64", call(cfg, hidden_size=np.timedelta64(8)),
         ("hidden_size", "timedelta64", "duration")),
    case("EncoderConfig", "layer_norm_eps a numpy.timedelta64", call(cfg, layer_norm_eps=np.timedelta64(1)),
         ("layer_norm_eps", "duration")),
    case("Encoder", "seed a numpy.timedelta64", call(Encoder, CFG, seed=np.timedelta64(3)),
         ("seed", "duration")),
    case("Encoder()", "an id an int subclass whose __index__ lies",
         call(Encoder.__call__, uses.encoder, [5, lying_int(6, 19)]), ("input_ids", "LyingInt", "__index__")),
    case("Encoder()", "ids numpy.timedelta64s", call(Encoder.__call__, uses.encoder, [np.timedelta64(5)]),
         ("input_ids", "timedelta64")),
])
def test_a_number_that_is_no_plain_number_is_refused_naming_it(request, entry, names):
    with refused(TypeError, *names):
        run(request, entry)


def word_table(seed) -> np.ndarray:
    return Encoder(CFG, seed=seed).embeddings["word"]


@pytest.mark.parametrize(("entry", "twin"), [
    case("EncoderConfig", "hidden_size an int subclass whose __int__ says 16: its value, 8",
         call(cfg, hidden_size=lying_int(8, 16)), call(cfg, hidden_size=8)),
    case("EncoderConfig", "layer_norm_eps a float subclass whose __float__ says 0: its value",
         call(cfg, layer_norm_eps=LyingFloat(1e-6)), call(cfg, layer_norm_eps=1e-6)),
    case("check_number", "a Fraction of lying ints: its value", call(check_number, "lr", Fraction(
        lying_int(1, 7), lying_int(4, 9))), call(check_number, "lr", 0.25)),
    case("Encoder", "seed a lying int: the weights of its value", call(word_table, lying_int(3, 0)),
         call(word_table, 3)),
    case("check_number", "a Fraction of 1/10**320: the subnormal float it rounds to",
         call(check_number, "lr", Fraction(1, 10**320)), call(check_number, "lr", 1e-320)),
    case("check_number", "a numpy.longdouble 0.25: its value",
         call(check_number, "lr", np.longdouble("0.25")), call(check_number, "lr", 0.25)),
])
def test_a_number_is_read_through_its_own_value_never_its_methods(entry, twin):
    assert_python_twin(entry(), twin())


@pytest.mark.parametrize(("entry", "names"), [
    case("EncoderConfig", "layer_norm_eps 1/10**400 (0 as a float, not a non-positive number)",
         call(cfg, layer_norm_eps=Fraction(1, 10**400)),
         ("layer_norm_eps", "smallest positive float", "round to 0")),
    case("EncoderConfig", "initializer_range a numpy.longdouble 1e-400",
         call(cfg, initializer_range=np.longdouble("1e-400")),
         ("initializer_range", "smallest positive float")),
    case("AdamW", "eps 1/10**400", call(AdamW, {"w": np.zeros(2)}, eps=Fraction(1, 10**400)),
         ("eps", "round to 0")),
    case("masked_count", "mask_prob 1/10**400 (0 as a float, not outside (0, 1))",
         call(masked_count, 10, Fraction(1, 10**400)),
         ("mask_prob", "smallest positive float", "round to 0")),
    case("check_number", "-1/10**400", call(check_number, "lr", Fraction(-1, 10**400)),
         ("lr", "largest float below 0", "round to 0")),
    case("check_number", "a numpy.longdouble 1e400", call(check_number, "lr", np.longdouble("1e400")),
         ("lr", "beyond the largest float")),
])
def test_a_number_no_float_holds_is_refused_naming_it_not_rounded_to_0_or_infinity(request, entry, names):
    with refused(ValueError, *names):
        run(request, entry)


def graded_within(checker, answer, *args, seconds: float = 1.0) -> Feedback:
    """The checker's feedback, which must come within ``seconds``."""
    start = time.perf_counter()
    feedback = checker(answer, *args)
    assert time.perf_counter() - start < seconds, "the checker took too long"
    return feedback


@pytest.mark.parametrize(("checker", "answer", "args", "phrases"), [
    case("check_largest_saving_width", "the answer as an int whose __int__ says 5",
         check_largest_saving_width, lying_int(WIDTH, 5), (50265, 768), None),
    case("check_largest_saving_width", "5 as an int whose __int__ says the answer",
         check_largest_saving_width, lying_int(5, WIDTH), (50265, 768), ("5 is too small",)),
    case("check_empty_mask_probability", "the answer as a float whose __float__ says 0",
         check_empty_mask_probability, LyingFloat(0.85**8), (), None),
    case("check_largest_saving_width", "the answer as a numpy.timedelta64",
         check_largest_saving_width, np.timedelta64(WIDTH), (50265, 768), ("finite number", "duration")),
    case("check_largest_saving_width", "Decimal 1e999999999 (a billion digits): at once",
         check_largest_saving_width, Decimal("1e999999999"), (50265, 768), ("too large",)),
    case("check_largest_saving_width", "Decimal -1e999999999: at once",
         check_largest_saving_width, Decimal("-1e999999999"), (50265, 768), ("too small",)),
    case("check_empty_mask_probability", "Decimal 1e-999999999: at once",
         check_empty_mask_probability, Decimal("1e-999999999"), (), ("too small",)),
    case("check_largest_saving_width", "a Decimal of 20,001 digits",
         check_largest_saving_width, Decimal("9" * 20001), (50265, 768), ("finite number", "10,000 digits")),
    case("check_largest_saving_width", "the answer as Decimal('7.56E+2')",
         check_largest_saving_width, Decimal("7.56E+2"), (50265, 768), None),
])
def test_a_checker_reads_an_answer_by_its_own_value_and_at_once(checker, answer, args, phrases):
    feedback = graded_within(checker, answer, *args)
    assert right(feedback) if phrases is None else wrong(feedback, *phrases), feedback


# Counts are exact -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("checker", "answer", "args", "phrases"), [
    case("check_largest_saving_width", "1e-13 for a count of 0", check_largest_saving_width, 1e-13, (2, 1),
         ("too large", "whole number")),
    case("check_largest_saving_width", "0 for a count of 0", check_largest_saving_width, 0, (2, 1), None),
    case("check_largest_saving_width", "0.0 for a count of 0", check_largest_saving_width, 0.0, (2, 1), None),
    case("check_largest_saving_width", "756.0000001 for a count of 756", check_largest_saving_width,
         756.0000001, (50265, 768), ("too large", "whole number")),
    case("check_token_embedding_count", "the count plus a millionth", check_token_embedding_count,
         Fraction(COUNT) + Fraction(1, 10**6), (30000, 4096, 128), ("too large", "whole number")),
    case("check_token_embedding_count", "the count as a float", check_token_embedding_count, float(COUNT),
         (30000, 4096, 128), None),
    case("check_empty_mask_probability", "a probability within its tolerance", check_empty_mask_probability,
         0.85**8 * (1 + 1e-7), (), None),
])
def test_a_count_is_matched_exactly_and_a_probability_within_its_tolerance(checker, answer, args, phrases):
    feedback = checker(answer, *args)
    assert right(feedback) if phrases is None else wrong(feedback, *phrases), feedback


# Dtypes kept consistent -------------------------------------------------------------------------------------
def weights_as(encoder: Encoder, config: EncoderConfig, dtype) -> Encoder:
    """Encoder.from_weights of ``encoder``'s own arrays, read with ``config`` and ``dtype``."""
    return Encoder.from_weights(config, encoder.embeddings, [a for a, _ in encoder.layers],
                                [f for _, f in encoder.layers], dtype=dtype)


@pytest.mark.parametrize(("entry", "error", "names"), [
    case("Encoder", "layer_norm_eps 1e-300 in float32 (it would be 0)",
         call(Encoder, cfg(layer_norm_eps=1e-300), dtype=np.float32), ValueError,
         ("layer_norm_eps", "float32", "smallest normal")),
    case("MaskedLM", "layer_norm_eps 1e-40 in float32 (subnormal)",
         call(MaskedLM, cfg(layer_norm_eps=1e-40), dtype="float32"), ValueError,
         ("layer_norm_eps", "float32")),
    case("Encoder", "layer_norm_eps 1e-320 in float64 (subnormal)",
         call(Encoder, cfg(layer_norm_eps=1e-320)), ValueError, ("layer_norm_eps", "float64")),
    case("Encoder.from_weights", "float64 weights, dtype float32 (it would report float32)",
         call(from_weights, uses.encoder, dtype=np.float32), TypeError, ("float64", "dtype is float32")),
    case("Encoder.from_weights", "layer_norm_eps 1e-300 in float32",
         call(weights_as, uses.encoder, cfg(layer_norm_eps=1e-300), np.float32), ValueError,
         ("layer_norm_eps",)),
])
def test_a_dtype_that_cannot_hold_a_value_or_disagrees_with_the_arrays_is_refused_naming_both(
        request, entry, error, names):
    with refused(error, *names):
        run(request, entry)


def dtypes_of(build, encoder: Encoder, ids, **kwargs) -> tuple[str, str, str]:
    """(what the encoder ``build(encoder, **kwargs)`` reports, its token table's dtype, its output's)."""
    built = build(encoder, **kwargs)
    return str(built.dtype), str(built.embeddings["word"].dtype), str(built(ids).dtype)


def float32_gap(layer_norm_eps: float) -> float:
    """The largest difference between the outputs of one encoder built in float32 and in float64 (the same
    seed) whose layer norms take ``layer_norm_eps``."""
    config = cfg(layer_norm_eps=layer_norm_eps)
    single, double = (Encoder(config, dtype=dtype)(IDS) for dtype in (np.float32, np.float64))
    return float(np.abs(single.astype(np.float64) - double).max()) if single.dtype == np.float32 else INF


@pytest.mark.parametrize(("entry", "expected"), [
    case("Encoder.from_weights", "float64 weights as float64: reports and computes float64",
         call(dtypes_of, from_weights, uses.encoder, IDS), ("float64", "float64", "float64")),
    case("encoder_from_hf", "float64 arrays read as float32: reports and computes float32",
         call(dtypes_of, from_hf_with, uses.encoder, IDS, dtype=np.float32),
         ("float32", "float32", "float32")),
])
def test_an_encoder_reports_the_dtype_it_computes_in(request, entry, expected):
    assert run(request, entry) == expected


@pytest.mark.parametrize("eps", [
    case("Encoder", "layer_norm_eps 1e-30 in float32: float64's outputs", 1e-30)])
def test_an_epsilon_float32_holds_gives_float64s_outputs_to_float32_precision(eps):
    assert float32_gap(eps) < 1e-5


def sum_weights_in(concat_weights, dtype) -> Feedback:
    return check_sum_weights({k: v.astype(dtype) for k, v in concat_to_sum(concat_weights, 4).items()},
                             concat_weights, 4)


@pytest.mark.parametrize(("dtype", "phrases"), [
    *(case("check_sum_weights", f"the right weights in {dtype.__name__}", dtype,
           (dtype.__name__, "Compute them in float64")) for dtype in (np.float32, np.float16)),
    case("check_sum_weights", "the right weights in float64", np.float64, None),
])
def test_sum_weights_in_another_dtype_are_told_the_dtype(concat_weights, dtype, phrases):
    feedback = sum_weights_in(concat_weights, dtype)
    assert right(feedback) if phrases is None else wrong(feedback, *phrases), feedback


# Files named when they cannot be read -----------------------------------------------------------------------
@pytest.fixture(scope="session")
def files(tmp_path_factory) -> dict:
    """Paths to weights and pieces files, the shipped ones and broken ones, in a folder of this session."""
    folder = tmp_path_factory.mktemp("files")
    weights, pieces = ta.WEIGHTS.read_bytes(), ta.PIECES.read_bytes()
    written = {"weights truncated": weights[: len(weights) // 2], "weights empty": b"",
               "weights of text": b"not an archive\n", "pieces with a byte 0xff": pieces[:200] + b"\xff\n",
               "pieces of 7 tokens": "\n".join([*SPECIAL_TOKENS, "a", "b"]).encode(),
               "pieces without the special tokens": pieces.split(b"\n", 5)[5],
               "weights copied": weights, "pieces copied": pieces}
    out = {}
    for label, data in written.items():
        out[label] = folder / label.replace(" ", "_")
        out[label].write_bytes(data)
    out["weights of one array (.npy)"] = folder / "one.npy"
    np.save(out["weights of one array (.npy)"], np.zeros(3))
    out["no such file"] = folder / "missing.npz"
    return out


@pytest.mark.parametrize(("label", "error", "kind", "names"), [
    *(case("load_miniature", label, label, ValueError, "weights",
           (label.replace(" ", "_"), "not a readable .npz"))
      for label in ("weights truncated", "weights empty", "weights of text")),
    case("load_miniature", "weights of one array (.npy)", "weights of one array (.npy)", ValueError,
         "weights",
         ("one.npy", "one array")),
    case("load_miniature", "no such weights file", "no such file", FileNotFoundError, "weights",
         ("missing.npz", "ship_miniature.py")),
    case("load_miniature", "pieces with a byte 0xff", "pieces with a byte 0xff", ValueError, "pieces",
         ("pieces_with_a_byte_0xff", "UTF-8", "0xff")),
    case("load_miniature", "pieces of 7 tokens for a table of 4,000 rows", "pieces of 7 tokens", ValueError,
         "pieces", ("pieces_of_7_tokens", "7 tokens", "4,000 rows")),
    case("load_miniature", "pieces without the special tokens", "pieces without the special tokens",
         ValueError, "pieces", ("pieces_without_the_special_tokens", "special tokens")),
])
def test_a_file_that_cannot_be_read_is_refused_naming_it(files, label, error, kind, names):
    with refused(error, *names):
        ta.load_miniature(**{kind: files[label]})


@pytest.mark.parametrize("labels", [
    case("load_miniature", "copies of the shipped files: the shipped encoder and tokenizer",
         ("weights copied", "pieces copied"))])
def test_copies_of_the_shipped_files_load_as_the_shipped_ones(files, labels):
    encoder, tokenizer = ta.load_miniature(files[labels[0]], files[labels[1]])
    shipped, shipped_tokenizer = ta.load_miniature()
    assert tokenizer.vocabulary == shipped_tokenizer.vocabulary
    assert tokenizer.vocab_size == encoder.config.vocab_size == 4000
    assert_same(encoder_arrays(encoder), encoder_arrays(shipped), rtol=0)


def patterns_with_pieces(pieces: list[str]):
    """head_patterns of the shipped encoder read by a WordPiece tokenizer of ``pieces``."""
    return ta.head_patterns(ta.load_miniature()[0], WordPieceTokenizer(pieces))


@pytest.mark.parametrize("pieces", [
    case("head_patterns", "a tokenizer of 7 tokens on a table of 4,000 rows", ["a", "b"])])
def test_a_tokenizer_and_an_encoder_of_other_vocabularies_are_refused(pieces):
    with refused(ValueError, "tokenizer", "4,000 rows"):
        patterns_with_pieces(pieces)


@pytest.mark.parametrize(("entry", "error", "names"), [
    case("stored.load_lines", "path None", call(stored.load_lines, None, "scripts/x.py"), TypeError,
         ("path",)),
    case("stored.load_arrays", "a folder", call(stored.load_arrays, stored.DATA, "scripts/x.py"),
         FileNotFoundError, ("scripts/x.py",)),
])
def test_the_stored_file_readers_refuse_what_is_no_file_naming_it(entry, error, names):
    with refused(error, *names):
        entry()


# Messages that name the real cause --------------------------------------------------------------------------
#: An additive mask of shape (2, 1, 1, 5): the first row attends to every key, the second to none
NOTHING_ATTENDED = np.stack([np.zeros(5), np.full(5, -INF)])[:, None, None, :]


@pytest.mark.parametrize(("entry", "error", "names"), [
    case("multi_head_attention", "a row of -inf for every key (not an overflow)",
         call(multi_head_attention, X, uses.w_cat, 2, additive_mask=NOTHING_ATTENDED),
         ValueError, ("additive_mask", "every key", "attends to nothing")),
    case("cross_entropy", "targets a list (not a range)", call(cross_entropy, np.zeros((2, 5)), [0, 1]),
         TypeError, ("targets", "numpy integer array", "list")),
    case("cross_entropy", "a target -1: named", call(cross_entropy, np.zeros((2, 5)), np.array([0, -1])),
         ValueError, ("targets", "found -1")),
    case("count_flops", "training through nsp_head without its pooler",
         call(count_flops, CFG, 8, nsp_head=True, mlm_head=True, training=True), ValueError,
         ("nsp_head", "pooler=True")),
])
def test_a_refusal_names_the_real_cause(request, entry, error, names):
    with refused(error, *names):
        run(request, entry)


def head_counts(nsp_pooler: bool) -> tuple[int, int, int, int]:
    """(params pooler, params nsp_head, flops pooler, flops nsp_head) with nsp_head and ``nsp_pooler``."""
    p = count_parameters(CFG, nsp_head=True, pooler=nsp_pooler)
    f = count_flops(CFG, 8, nsp_head=True, pooler=nsp_pooler)
    return p.pooler, p.nsp_head, f.pooler, f.nsp_head


@pytest.mark.parametrize(("entry", "expected"), [
    case("count_flops", "nsp_head without the pooler: the head alone, as count_parameters counts it",
         call(head_counts, False), (0, 8 * 2 + 2, 0, 2 * 8 * 2)),
    case("count_flops", "nsp_head with the pooler: both", call(head_counts, True),
         (8 * 8 + 8, 8 * 2 + 2, 2 * 8 * 8, 2 * 8 * 2)),
])
def test_count_parameters_and_count_flops_count_the_same_heads(entry, expected):
    assert entry() == expected


@pytest.fixture(scope="session")
def position_answers(torch_hf) -> dict:
    """Answers to the positions exercise made of what transformers' RoBERTa computes for its ids (a (1, T)
    integer tensor), built once: importing transformers' model code takes seconds."""
    torch, transformers = torch_hf
    roberta = transformers.models.roberta.modeling_roberta
    ids = torch.tensor([POSITION_IDS_EXERCISE])
    theirs = roberta.RobertaEmbeddings.create_position_ids_from_input_ids(ids, padding_idx=1)
    return {"tensor 2-D": theirs, "tensor 1-D": theirs[0], "list of tensors": list(theirs[0]),
            "tolist": theirs[0].tolist(), "masked": masked(theirs[0].tolist(), [0] * 6 + [1])}


@pytest.mark.parametrize(("answer", "phrases"), [
    case("check_roberta_positions", "transformers' own position ids, a (1, T) integer tensor",
         "tensor 2-D", ("torch tensor", "(1, 7)", "tolist")),
    case("check_roberta_positions", "a 1-D integer tensor", "tensor 1-D", ("torch tensor", "tolist")),
    case("check_roberta_positions", "a list of 0-d tensors", "list of tensors", ("torch tensors", "tolist")),
    case("check_roberta_positions", "transformers' own, tolist(): right", "tolist", None),
    case("check_roberta_positions", "a masked array", "masked", ("masked array",)),
])
def test_the_positions_checker_names_a_tensor_or_a_mask(position_answers, answer, phrases):
    feedback = check_roberta_positions(position_answers[answer])
    assert right(feedback) if phrases is None else wrong(feedback, *phrases), feedback


# torch values: detached, or refused by name -----------------------------------------------------------------
@pytest.fixture(scope="session")
def tiny_bert_hf(torch_hf):
    """transformers' BertModel of tiny-bert with seeded random weights (its parameters require grad)."""
    from geron_lib.interop.torch_models import hf_model

    return hf_model(PRESETS["tiny-bert"])


def hf_model_on(device):
    from geron_lib.interop.torch_models import hf_model

    return hf_model(PRESETS["tiny-bert"], device=device)


def read_state(model, how: str, name: str = "embeddings.word_embeddings.weight"):
    """encoder_from_hf of tiny-bert from ``model``'s tensors: ``how`` is "parameters" (they require grad),
    "state dict" (torch tensors), "numpy", or "meta" / "bfloat16" (``name`` moved there)."""
    import torch

    from geron_lib.interop.torch_models import numpy_state_dict

    tensors = {"parameters": dict(model.named_parameters()), "numpy": numpy_state_dict(model)}.get(
        how, model.state_dict())
    if how in ("meta", "bfloat16"):
        tensors = tensors | {name: tensors[name].to("meta" if how == "meta" else torch.bfloat16)}
    return encoder_from_hf(PRESETS["tiny-bert"], tensors)


WORD_TENSOR = "state_dict['embeddings.word_embeddings.weight']"


def outputs_read_from(model, how: str) -> np.ndarray:
    return read_state(model, how)(IDS)


@pytest.mark.parametrize(("entry", "error", "names"), [
    case("hf_model", "device 'gpu' (no torch device)", call(hf_model_on, "gpu"), ValueError,
         ("device", "'gpu'")),
    case("hf_model", "device 'cuda' on a build without CUDA", call(hf_model_on, "cuda"), ValueError,
         ("'cuda'", "torch.cuda.is_available() is False")),
    case("hf_model", "device 7", call(hf_model_on, 7), TypeError, ("device",)),
    case("encoder_from_hf", "a tensor on the meta device (no values)",
         call(read_state, uses.tiny_bert_hf, "meta"), TypeError, (WORD_TENSOR, "torch tensor", "meta")),
    case("encoder_from_hf", "a bfloat16 tensor (no numpy dtype)",
         call(read_state, uses.tiny_bert_hf, "bfloat16"), TypeError, (WORD_TENSOR, "BFloat16")),
])
def test_a_torch_value_numpy_cannot_read_or_a_device_torch_lacks_is_refused_naming_it(
        torch_hf, request, entry, error, names):
    if "cuda" in request.node.callspec.id and torch_hf[0].cuda.is_available():
        pytest.skip("this build of torch has CUDA")
    with refused(error, *names):
        run(request, entry)


@pytest.mark.parametrize(("entry", "twin"), [
    case("encoder_from_hf", "parameters that require grad: detached, the numpy state dict's encoder",
         call(outputs_read_from, uses.tiny_bert_hf, "parameters"), call(outputs_read_from, uses.tiny_bert_hf,
                                                                        "numpy")),
    case("encoder_from_hf", "a state dict of tensors: the numpy state dict's encoder",
         call(outputs_read_from, uses.tiny_bert_hf, "state dict"), call(outputs_read_from, uses.tiny_bert_hf,
                                                                        "numpy")),
])
def test_a_torch_tensor_is_read_by_its_values(torch_hf, request, entry, twin):
    assert_same(run(request, entry), run(request, twin), rtol=0)


@pytest.mark.parametrize(("answer", "phrases"), [
    case("check_largest_saving_width", "a 0-d integer tensor", "tensor", ("torch tensor", ".item()")),
    case("check_largest_saving_width", "its .item()", "item", None),
])
def test_a_numeric_checker_names_a_tensor_and_takes_its_item(torch_hf, answer, phrases):
    tensor = torch_hf[0].tensor(WIDTH)
    feedback = check_largest_saving_width(tensor if answer == "tensor" else tensor.item(), 50265, 768)
    assert right(feedback) if phrases is None else wrong(feedback, *phrases), feedback


# The assignments' stored record of the book ----------------------------------------------------------------
def eval_values_of(text: str, tmp_path):
    """built_eval_values of chapter 01 read from a record holding ``text``."""
    from assignments.myst import built_eval_values

    path = tmp_path / "eval_values.json"
    path.write_text(text, encoding="utf-8")
    return built_eval_values("01_factorised_embeddings", path)


@pytest.mark.parametrize(("text", "names"), [
    case("built_eval_values", "JSON cut short", '{"book/01_factorised_embeddings": {', ("eval_values.json",
                                                                                       "not valid JSON")),
    case("built_eval_values", "a JSON list", "[1, 2]", ("eval_values.json", "JSON object")),
])
def test_the_books_record_that_cannot_be_read_is_refused_naming_the_file(tmp_path, text, names):
    with refused(ValueError, *names):
        eval_values_of(text, tmp_path)


@pytest.mark.parametrize("text", [
    case("built_eval_values", "a record of one page", '{"book/01_factorised_embeddings": {"E": ["128"]}}')])
def test_the_books_record_is_read(tmp_path, text):
    assert eval_values_of(text, tmp_path) == {"E": ["128"]}
