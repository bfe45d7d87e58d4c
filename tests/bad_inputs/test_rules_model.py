"""The model's entries at bad and unusual inputs: the Encoder and what it is built from, MaskedLM with its
batches, attention, the classifier and checkpoints. Each rule refuses with a message naming the argument and
the rule; an unusual input that means something gets the right answer. Rows call the session's models through
``uses`` (conftest.py builds them)."""

from functools import partial as call

import numpy as np
import pytest

from bad_inputs.inputs import CFG, DECISION, IDS, INF, KEEP, NAN, TINY, X, cfg, edited, with_value
from bad_inputs.outcome import assert_python_twin, assert_same, case, refused, run, uses
from geron_lib.config import PRESETS
from geron_lib.model.attention import additive_mask, multi_head_attention, random_attention_weights
from geron_lib.model.checkpoint import array_shapes, encoder_arrays, encoder_from_arrays
from geron_lib.model.classifier import SequenceClassifier
from geron_lib.model.encoder import Encoder
from geron_lib.model.gradcheck import numeric_gradient, relative_error
from geron_lib.model.mlm import MASKED, MaskedBatch, MaskedLM, cross_entropy

BATCH = MaskedBatch(np.where(DECISION == MASKED, 4, IDS), IDS, DECISION, KEEP)
ONES_16 = np.ones(16, int)


def batch_with(**fields) -> MaskedBatch:
    """BATCH with ``fields`` replaced."""
    given = dict(input_ids=BATCH.input_ids, labels=BATCH.labels, decision=BATCH.decision,
                 attention_mask=BATCH.attention_mask) | fields
    return MaskedBatch(**given)


def batch_fields(batch: MaskedBatch) -> list[np.ndarray]:
    return [batch.input_ids, batch.labels, batch.decision, batch.attention_mask]


def fields_of_batch(*fields) -> list[np.ndarray]:
    return batch_fields(MaskedBatch(*fields))


def fields_of_rows(batch: MaskedBatch, rows) -> list[np.ndarray]:
    return batch_fields(batch[rows])


def word_table(**kwargs) -> np.ndarray:
    """The token table of a small encoder built with ``kwargs``."""
    return Encoder(CFG, **kwargs).embeddings["word"]


def dtype_of(**kwargs) -> np.dtype:
    return Encoder(CFG, **kwargs).dtype


def first_row(encoder: Encoder, ids, positions: int | None = None, **masks) -> np.ndarray:
    """The first row of ``encoder(ids, **masks)``, its first ``positions`` positions."""
    return encoder(ids, **masks)[0, :positions]


def last_state(encoder: Encoder, ids) -> np.ndarray:
    return encoder.forward(ids)[-1]


def typeless(ids, **masks):
    """A forward pass of a small encoder without a token-type table."""
    return Encoder(cfg(type_vocab_size=0))(ids, **masks)


def training_step_of_a_30000_word_model(batch: MaskedBatch):
    return MaskedLM(cfg(vocab_size=30000)).loss_and_grads(batch)


def loaded_into(config, built_from) -> Encoder:
    """The arrays of an encoder of ``built_from`` loaded as ``config``."""
    return encoder_from_arrays(config, encoder_arrays(Encoder(built_from)))


def round_trip(encoder: Encoder, ids) -> np.ndarray:
    return encoder_from_arrays(encoder.config, encoder_arrays(encoder))(ids)


def pooled_by_hand(encoder: Encoder, hidden) -> np.ndarray:
    return np.tanh(hidden[:, 0] @ encoder.pooler["W"] + encoder.pooler["b"])


def logits_by_hand(classifier: SequenceClassifier, ids, keep) -> np.ndarray:
    """tanh(h_[CLS] W_p + b_p) W + b on the classifier's encoder."""
    hidden = classifier.encoder(ids, attention_mask=keep)
    pooled = np.tanh(hidden[:, 0] @ classifier.pooler["W"] + classifier.pooler["b"])
    return pooled @ classifier.head["W"] + classifier.head["b"]


def loss_of(classifier: SequenceClassifier, ids, labels) -> float:
    return classifier.loss_and_grads(ids, labels)[0]


def attention_of_four_positions(x, w, num_attention_heads: int, *, masked_fifth: bool) -> np.ndarray:
    """The first four positions' attention: the fifth key masked with -inf, or cut away."""
    if masked_fifth:
        mask = np.where(np.arange(5) < 4, 0.0, -INF)[None, None, None, :]
        return multi_head_attention(x, w, num_attention_heads, additive_mask=mask)[:, :4]
    return multi_head_attention(x[:, :4], w, num_attention_heads)


def shapes_of_arrays(encoder: Encoder) -> dict[str, tuple]:
    return {k: v.shape for k, v in encoder_arrays(encoder).items()}


# Keyword-only arguments -------------------------------------------------------------------------------------
@pytest.mark.parametrize("entry", [
    case("Encoder", "seed positional", call(Encoder, CFG, 3)),
    case("Encoder()", "attention_mask second, positionally (transformers' order)",
         call(Encoder.__call__, uses.encoder, [5, 6, 7], [1, 1, 0])),
    case("Encoder.hidden_states", "token types positionally",
         call(Encoder.hidden_states, uses.encoder, IDS, np.zeros_like(IDS))),
    case("Encoder.attentions", "mask positionally", call(Encoder.attentions, uses.encoder, IDS, None, KEEP)),
    case("SequenceClassifier.logits", "token types positionally",
         call(SequenceClassifier.logits, uses.classifier, IDS, np.zeros_like(IDS))),
])
def test_an_argument_whose_place_differs_from_transformers_is_refused_by_position(request, entry):
    with refused(TypeError, "positional"):
        run(request, entry)


# Sizes past the memory limit --------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "names"), [
    case("Encoder", "vocab_size 10**9: refused from the arithmetic", call(Encoder, cfg(vocab_size=10**9)),
         ("GiB", "MEMORY_LIMIT_BYTES")),
    case("Encoder", "albert-xxlarge unshared: 2.6 billion weights",
         call(Encoder, PRESETS["albert-xxlarge-v2"].replace(sharing="none")), ("parameters", "GiB")),
    case("Encoder()", "10**6 sequences: refused before allocating",
         call(Encoder.__call__, uses.encoder, np.broadcast_to(np.int64(5), (10**6, 16))), ("forward pass",
              "GiB")),
    case("Encoder()", "10**6 float sequences: refused before allocating",
         call(Encoder.__call__, uses.encoder, np.broadcast_to(5.0, (10**6, 16))), ("forward pass", "GiB")),
    case("MaskedLM.loss_and_grads", "10**5 sequences: the training step's bytes refused first",
         call(training_step_of_a_30000_word_model,
              MaskedBatch(*(np.broadcast_to(np.int64(1), (10**5, 16)),) * 4)),
         ("training step", "GiB")),
    case("multi_head_attention", "x of 10**5 x 512 rows (a view): refused before allocating",
         call(multi_head_attention, np.broadcast_to(0.0, (10**5, 512, 8)), uses.w_cat, 2), ("GiB",)),
    case("random_attention_weights", "hidden_size 10**5 summed: refused from the arithmetic",
         call(random_attention_weights, 10**5, 8, "sum"), ("GiB",)),
    case("SequenceClassifier", "n_classes 10**12: refused from the arithmetic",
         call(SequenceClassifier, uses.encoder, 10**12), ("classes", "GiB")),
])
def test_a_size_whose_memory_passes_the_limit_is_refused_before_allocating(request, entry, names):
    with refused(ValueError, *names):
        run(request, entry)


# NaN and infinity -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "names"), [
    case("Encoder()", "id NaN", call(Encoder.__call__, uses.encoder, [5, NAN]), ("input_ids", "NaN")),
    case("multi_head_attention", "x holding NaN",
         call(multi_head_attention, with_value({"x": X}, "x", NAN)["x"], uses.w_cat, 2), ("x", "finite")),
    case("multi_head_attention", "a NaN mask",
         call(multi_head_attention, X, uses.w_cat, 2, additive_mask=np.full((2, 1, 1, 5), NAN)),
         ("mask", "additive")),
])
def test_an_input_holding_nan_is_refused_naming_it(request, entry, names):
    with refused(ValueError, *names):
        run(request, entry)


# Names and dtypes not among the choices ---------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "error", "names"), [
    case("Encoder", "dtype float16", call(Encoder, CFG, dtype=np.float16), ValueError,
         ("dtype", "float32 or float64")),
    case("Encoder", "dtype 'float'", call(Encoder, CFG, dtype="floaty"), TypeError, ("dtype",)),
    case("random_attention_weights", "form 'SUM'", call(random_attention_weights, 8, 2, "SUM"), ValueError,
         ("form", "one of")),
])
def test_a_name_or_dtype_not_among_the_choices_is_refused_naming_them(entry, error, names):
    with refused(error, *names):
        entry()


# Wrong types ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "names"), [
    case("Encoder", "seed 1.5", call(Encoder, CFG, seed=1.5), ("seed", "integer")),
    case("Encoder", "seed None", call(Encoder, CFG, seed=None), ("seed",)),
    case("Encoder", "config a preset name", call(Encoder, "tiny-bert"), ("config", "EncoderConfig")),
    case("Encoder", "config a dict", call(Encoder, TINY), ("config", "EncoderConfig")),
    case("Encoder", "pooler 'yes'", call(Encoder, CFG, pooler="yes"), ("pooler",)),
    case("Encoder()", "a string", call(Encoder.__call__, uses.encoder, "the cat"),
         ("input_ids", "token ids")),
    case("Encoder()", "None", call(Encoder.__call__, uses.encoder, None), ("input_ids",)),
    case("Encoder()", "booleans", call(Encoder.__call__, uses.encoder, [True, False]),
         ("input_ids", "booleans")),
    case("Encoder()", "complex ids", call(Encoder.__call__, uses.encoder, [1 + 2j]), ("input_ids",)),
    case("MaskedBatch", "float labels", call(batch_with, labels=IDS * 1.0), ("labels", "integer array")),
    case("MaskedBatch", "bool decision", call(batch_with, decision=DECISION > 0),
         ("decision", "integer array")),
    case("MaskedBatch", "strings", call(batch_with, labels=[["a"] * 5] * 2), ("labels",)),
    case("MaskedLM", "config None", call(MaskedLM, None), ("config", "EncoderConfig")),
    case("MaskedLM.loss", "not a MaskedBatch", call(MaskedLM.loss, uses.mlm, IDS), ("batch", "MaskedBatch")),
    case("multi_head_attention", "x of ints", call(multi_head_attention, X.astype(int), uses.w_cat, 2),
         ("x", "float")),
    case("multi_head_attention", "x a list", call(multi_head_attention, X.tolist(), uses.w_cat, 2), ("x",)),
    case("multi_head_attention", "w a list", call(multi_head_attention, X, [np.zeros((8, 8))] * 8, 2),
         ("w", "dict")),
    case("multi_head_attention", "per_head 1", call(multi_head_attention, X, uses.w_cat, 2, per_head=1),
         ("per_head",)),
    case("random_attention_weights", "bias None", call(random_attention_weights, 8, 2, bias=None), ("bias",)),
    case("SequenceClassifier", "n_classes 2.0", call(SequenceClassifier, uses.encoder, 2.0),
         ("n_classes", "integer")),
    case("SequenceClassifier", "encoder a config", call(SequenceClassifier, CFG, 2), ("encoder", "Encoder")),
    case("encoder_arrays", "a MaskedLM", call(encoder_arrays, uses.mlm), ("encoder", "Encoder")),
    case("encoder_from_arrays", "arrays an int", call(encoder_from_arrays, CFG, 5), ("arrays", "mapping")),
    case("encoder_from_arrays", "arrays a list of pairs",
         call(encoder_from_arrays, CFG, [("embeddings.word", np.zeros((20, 8)))]), ("arrays", "mapping")),
    case("array_shapes", "config a dict", call(array_shapes, TINY), ("config",)),
])
def test_an_argument_of_the_wrong_type_is_refused_naming_it(request, entry, names):
    with refused(TypeError, *names):
        run(request, entry)


# Token ids and labels outside their table -------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "names"), [
    case("Encoder()", "id -1", call(Encoder.__call__, uses.encoder, [5, -1, 7]), ("input_ids", "negative")),
    case("Encoder()", "id = vocab_size", call(Encoder.__call__, uses.encoder, [5, 20]),
         ("input_ids", "vocab_size")),
    case("Encoder()", "id 1.5", call(Encoder.__call__, uses.encoder, [5, 1.5]),
         ("input_ids", "whole number")),
    case("Encoder()", "uint64 2**64 - 1",
         call(Encoder.__call__, uses.encoder, np.array([2**64 - 1], np.uint64)),
         ("input_ids",)),
    case("Encoder()", "token_type_ids 2 (type_vocab_size 2)",
         call(Encoder.__call__, uses.encoder, IDS, token_type_ids=np.full(IDS.shape, 2)),
         ("token_type_ids", "type_vocab_size")),
    case("Encoder()", "token_type_ids -1",
         call(Encoder.__call__, uses.encoder, IDS, token_type_ids=np.full(IDS.shape, -1)),
         ("token_type_ids", "negative")),
    case("Encoder.forward_cached", "id -1", call(Encoder.forward_cached, uses.encoder, [[1, -1]]),
         ("input_ids", "negative")),
    case("MaskedBatch", "label -1 at a selected position",
         call(batch_with, labels=np.where(DECISION == 1, -1, IDS)),
         ("labels", "at least 0")),
    case("MaskedBatch", "labels -100 where not selected (transformers' ignore index)",
         call(batch_with, labels=np.where(DECISION == 0, -100, IDS)), ("labels", "-100")),
    case("MaskedBatch", "input id -1", call(batch_with, input_ids=-np.ones_like(IDS)),
         ("input_ids", "at least 0")),
    case("MaskedLM.loss", "label beyond vocab_size",
         call(MaskedLM.loss, uses.mlm, batch_with(labels=np.where(DECISION == 1, 25, IDS))), ("labels",
              "vocab_size")),
    case("MaskedLM.loss", "input id beyond vocab_size",
         call(MaskedLM.loss, uses.mlm, batch_with(input_ids=np.full(IDS.shape, 20))), ("input_ids",
              "vocab_size")),
    case("cross_entropy", "target -1 (numpy would read the last class)",
         call(cross_entropy, np.zeros((2, 5)), np.array([0, -1])), ("targets", "[0, 5)")),
    case("cross_entropy", "target = V", call(cross_entropy, np.zeros((2, 5)), np.array([0, 5])),
         ("targets",)),
    case("cross_entropy", "float targets", call(cross_entropy, np.zeros((2, 5)), np.array([0.0, 1.0])),
         ("targets",)),
    case("SequenceClassifier.loss_and_grads", "label -1",
         call(SequenceClassifier.loss_and_grads, uses.classifier, IDS, [0, -1]), ("labels", "negative")),
    case("SequenceClassifier.loss_and_grads", "label = n_classes",
         call(SequenceClassifier.loss_and_grads, uses.classifier, IDS, [0, 3]), ("labels", "n_classes")),
    case("SequenceClassifier.loss_and_grads", "float labels 0.5",
         call(SequenceClassifier.loss_and_grads, uses.classifier, IDS, [0.5, 1]), ("labels", "whole number")),
])
def test_ids_or_labels_outside_their_table_are_refused_naming_them(request, entry, names):
    with refused(ValueError, *names):
        run(request, entry)


# Wrong shapes -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "names"), [
    case("Encoder()", "3-D", call(Encoder.__call__, uses.encoder, np.zeros((1, 2, 3), int)),
         ("input_ids", "dimensions")),
    case("Encoder()", "empty", call(Encoder.__call__, uses.encoder, []), ("input_ids", "empty")),
    case("Encoder()", "ragged rows", call(Encoder.__call__, uses.encoder, [[1, 2], [3]]),
         ("input_ids", "ragged")),
    case("Encoder()", "attention_mask of another shape",
         call(Encoder.__call__, uses.encoder, IDS, attention_mask=KEEP[:, :3]), ("attention_mask",
              "shape of input_ids")),
    case("Encoder.pool", "hidden 2-D", call(Encoder.pool, uses.pooled_encoder, np.zeros((2, 8))),
         ("hidden", "(B, T, 8)")),
    case("Encoder.pool", "hidden a list", call(Encoder.pool, uses.pooled_encoder, [[[0.0] * 8]]),
         ("hidden",)),
    case("Encoder.pool", "hidden of another width",
         call(Encoder.pool, uses.pooled_encoder, np.zeros((1, 2, 4))),
         ("hidden",)),
    case("MaskedBatch", "labels of another shape", call(batch_with, labels=IDS[:, :3]), ("labels", "shape")),
    case("MaskedBatch", "1-D fields", call(MaskedBatch, IDS[0], IDS[0], DECISION[0], KEEP[0]),
         ("input_ids", "(B, T)")),
    case("MaskedBatch", "empty", call(MaskedBatch, *(np.zeros((0, 3), int),) * 4),
         ("input_ids", "non-empty")),
    case("cross_entropy", "one target for two rows", call(cross_entropy, np.zeros((2, 5)), np.array([0])),
         ("targets",)),
    case("cross_entropy", "1-D logits", call(cross_entropy, np.zeros(5), np.array([0])),
         ("logits", "(N, V)")),
    case("multi_head_attention", "x 2-D", call(multi_head_attention, X[0], uses.w_cat, 2),
         ("x", "(B, T, hidden_size)")),
    case("multi_head_attention", "a (B, T) mask",
         call(multi_head_attention, X, uses.w_cat, 2, additive_mask=np.zeros((2, 5))),
         ("mask", "(B, 1, 1, T)")),
    case("SequenceClassifier.loss_and_grads", "one label for two rows",
         call(SequenceClassifier.loss_and_grads, uses.classifier, IDS, [0]), ("labels", "one class per row")),
    case("SequenceClassifier.loss_and_grads", "labels a string",
         call(SequenceClassifier.loss_and_grads, uses.classifier, IDS, "01"), ("labels",)),
])
def test_an_array_of_the_wrong_shape_is_refused_naming_it(request, entry, names):
    with refused(ValueError, *names):
        run(request, entry)


# Numbers out of their range ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "names"), [
    case("Encoder", "seed -1", call(Encoder, CFG, seed=-1), ("seed", "at least 0")),
    case("Encoder()", "17 positions past 16", call(Encoder.__call__, uses.encoder, np.ones(17, int)),
         ("input_ids", "max_position_embeddings")),
    case("Encoder()", "attention_mask 2",
         call(Encoder.__call__, uses.encoder, IDS, attention_mask=np.full(IDS.shape, 2)),
         ("attention_mask", "1 for a token, 0 for padding")),
    case("Encoder()", "attention_mask 0.5",
         call(Encoder.__call__, uses.encoder, IDS, attention_mask=np.full(IDS.shape, 0.5)),
         ("attention_mask", "whole number")),
    case("Encoder()", "attention_mask -1", call(Encoder.__call__, uses.encoder, IDS, attention_mask=-KEEP),
         ("attention_mask", "negative")),
    case("MaskedBatch", "decision 4", call(batch_with, decision=np.full(IDS.shape, 4)), ("decision", "KEPT")),
    case("MaskedBatch", "attention_mask 2", call(batch_with, attention_mask=2 * KEEP),
         ("attention_mask", "[0, 1]")),
    case("MaskedLM", "seed -2", call(MaskedLM, CFG, seed=-2), ("seed", "at least 0")),
    case("MaskedLM.loss", "17 positions past 16",
         call(MaskedLM.loss, uses.mlm, MaskedBatch(*(np.ones((1, 17), int),) * 4)),
         ("input_ids", "max_position_embeddings")),
    case("multi_head_attention", "3 heads for width 8", call(multi_head_attention, X, uses.w_cat, 3),
         ("divisible",)),
    case("multi_head_attention", "heads 0", call(multi_head_attention, X, uses.w_cat, 0),
         ("num_attention_heads", "at least 1")),
    case("random_attention_weights", "seed -1", call(random_attention_weights, 8, 2, seed=-1),
         ("seed", "at least 0")),
    case("random_attention_weights", "hidden_size 0", call(random_attention_weights, 0, 1),
         ("hidden_size", "at least 1")),
    case("SequenceClassifier", "n_classes 1", call(SequenceClassifier, uses.encoder, 1),
         ("n_classes", "at least 2")),
    case("SequenceClassifier", "seed -1", call(SequenceClassifier, uses.encoder, 2, seed=-1), ("seed",)),
])
def test_a_number_out_of_its_range_is_refused_naming_it_and_the_range(request, entry, names):
    with refused(ValueError, *names):
        run(request, entry)


# Arguments that contradict each other or the config ---------------------------------------------------------
@pytest.mark.parametrize(("entry", "names"), [
    case("Encoder.from_weights", "one attention dict too few",
         call(Encoder.from_weights, CFG, uses.encoder.embeddings, [uses.encoder.layers[0][0]],
              [uses.encoder.layers[0][1], uses.encoder.layers[1][1]]), ("attention", "sharing")),
    case("Encoder()", "token_type_ids with type_vocab_size 0",
         call(typeless, IDS, token_type_ids=np.zeros_like(IDS)),
         ("token_type_ids", "type_vocab_size is 0")),
    case("Encoder.pool", "without a pooler", call(Encoder.pool, uses.encoder, X), ("pooler=False",)),
    case("MaskedLM.loss", "nothing selected",
         call(MaskedLM.loss, uses.mlm, batch_with(decision=np.zeros_like(IDS))),
         ("batch", "nothing to predict")),
    case("multi_head_attention", "sum weights as concat",
         call(multi_head_attention, X, uses.w_sum, 2, "concat"),
         ("W_O",)),
    case("multi_head_attention", "concat weights as sum", call(multi_head_attention, X, uses.w_cat, 2, "sum"),
         ("W_O", "sum form")),
    case("multi_head_attention", "a 0/1 mask",
         call(multi_head_attention, X, uses.w_cat, 2, additive_mask=np.ones((2, 1, 1, 5))),
         ("mask", "additive")),
    case("encoder_from_arrays", "config of other sharing",
         call(encoder_from_arrays, cfg(sharing="all"), uses.arrays),
         ("copies", "sharing")),
    case("encoder_from_arrays", "arrays of a wider config", call(loaded_into, CFG, cfg(hidden_size=16)),
         ("shape", "another config")),
    case("encoder_from_arrays", "arrays of another vocabulary",
         call(encoder_from_arrays, cfg(vocab_size=30), uses.arrays),
         ("embeddings.word", "shape")),
])
def test_arguments_that_contradict_each_other_or_the_config_are_refused_naming_them(request, entry, names):
    with refused(ValueError, *names):
        run(request, entry)


# Arrays edited one at a time: weights, checkpoints, gradients -----------------------------------------------
@pytest.mark.parametrize(("form", "edits", "error", "names"), [
    case("multi_head_attention", "W_V holding inf (it would hang an SVD)", "sum", {"W_V": INF}, ValueError,
         ("W_V", "finite")),
    case("multi_head_attention", "W_Q holding NaN", "concat", {"W_Q": NAN}, ValueError, ("W_Q", "finite")),
    case("multi_head_attention", "b_O holding -inf", "concat", {"b_O": -INF}, ValueError, ("b_O", "finite")),
    case("multi_head_attention", "W_Q a list", "concat", {"W_Q": np.zeros((8, 8)).tolist()}, TypeError,
         ("W_Q", "numpy array")),
    case("multi_head_attention", "W_K of another shape", "concat", {"W_K": np.zeros((8, 4))}, ValueError,
         ("W_K", "shape")),
    case("multi_head_attention", "finite weights of 1e308: the output overflows", "sum",
         {"W_V": np.full((2, 8, 8), 1e308)}, ValueError, ("overflowed",)),
])
def test_attention_weights_that_break_their_rule_are_refused_naming_them(w_sum, w_cat, form, edits, error,
                                                                         names):
    w = edited(w_sum if form == "sum" else w_cat, edits)
    with refused(error, *names):
        multi_head_attention(X, w, 2, form)


@pytest.mark.parametrize(("edits", "error", "names"), [
    case("encoder_from_arrays", "an unknown name", {"decoder.W": np.zeros(2)}, ValueError, ("decoder.W",)),
    case("encoder_from_arrays", "string arrays", {"embeddings.word": np.array(["a"])}, TypeError,
         ("arrays", "float")),
    case("encoder_from_arrays", "a weight missing", {"ffn.1.W_2": None}, ValueError, ("ffn.1.W_2",)),
    case("encoder_from_arrays", "float32 and float64 mixed", {"ffn.0.b_1": np.zeros(16, np.float32)},
         TypeError,
         ("dtype",)),
])
def test_stored_arrays_that_do_not_fit_the_config_are_refused_naming_them(arrays, edits, error, names):
    with refused(error, *names):
        encoder_from_arrays(CFG, edited(arrays, edits))


@pytest.mark.parametrize(("cache", "rows", "edits", "names"), [
    case("Encoder.backward", "an empty cache", "empty", None, {}, ("cache", "forward_cached")),
    case("Encoder.backward", "d_hidden of another batch", "forward", 1, {}, ("d_hidden", "shape")),
    case("Encoder.backward", "a gradient missing", "forward", None, {"embeddings.word": None},
         ("grads", "embeddings.word")),
    case("Encoder.backward", "a scalar gradient (numpy would broadcast)", "forward", None,
         {"embeddings.ln_bias": np.zeros(1)}, ("grads['embeddings.ln_bias']", "shape")),
])
def test_a_backward_pass_without_its_forwards_cache_or_gradients_is_refused_naming_them(
        encoder, forward_cache, cache, rows, edits, names):
    hidden, stored, zeros = forward_cache
    with refused(ValueError, *names):
        encoder.backward({} if cache == "empty" else stored, hidden[:rows], edited(zeros, edits))


# Right answers ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "twin"), [
    case("Encoder", "seed np.int64(3) draws seed 3's weights", call(word_table, seed=np.int64(3)),
         call(word_table, seed=3)),
    case("Encoder", "dtype 'float32'", call(dtype_of, dtype="float32"), call(dtype_of, dtype=np.float32)),
    case("Encoder()", "ids as whole floats", call(Encoder.__call__, uses.encoder, [5.0, 6.0]),
         call(Encoder.__call__, uses.encoder, [5, 6])),
    case("Encoder()", "ids as int8", call(Encoder.__call__, uses.encoder, np.array([5, 6], np.int8)),
         call(Encoder.__call__, uses.encoder, [5, 6])),
    case("Encoder()", "a boolean attention_mask, as torch takes it",
         call(Encoder.__call__, uses.encoder, IDS, attention_mask=KEEP == 1),
         call(Encoder.__call__, uses.encoder, IDS, attention_mask=KEEP)),
    case("random_attention_weights", "numpy sizes",
         call(random_attention_weights, np.int64(8), np.int32(2), "sum"),
         call(random_attention_weights, 8, 2, "sum")),
    case("SequenceClassifier.loss_and_grads", "numpy labels",
         call(loss_of, uses.classifier, IDS, np.array([0, 2], np.int8)),
         call(loss_of, uses.classifier, IDS, [0, 2])),
])
def test_numbers_of_other_types_are_read_as_the_python_numbers_they_equal(request, entry, twin):
    assert_python_twin(run(request, entry), run(request, twin))


@pytest.mark.parametrize(("entry", "expected"), [
    case("Encoder", "seed 2**70", call(word_table, seed=2**70),
         np.random.default_rng(2**70).normal(0, CFG.initializer_range, (20, 8))),
    case("Encoder()", "attention_mask by keyword (the fixed call)",
         call(first_row, uses.encoder, [5, 6, 7], 2, attention_mask=[1, 1, 0]), call(first_row, uses.encoder,
              [5, 6])),
    case("Encoder()", "padding changes no real position",
         call(first_row, uses.encoder, [5, 6, 7, 0], 3, attention_mask=[1, 1, 1, 0]),
         call(first_row, uses.encoder, [5, 6, 7])),
    case("Encoder()", "16 positions, the whole table", call(first_row, uses.encoder, ONES_16),
         call(first_row, uses.encoder, np.stack([ONES_16, np.arange(16)]))),
    case("Encoder.forward", "checked ids: as the call", call(last_state, uses.encoder, IDS),
         call(Encoder.__call__, uses.encoder, IDS)),
    case("Encoder.hidden_states", "L + 1 states",
         call(Encoder.hidden_states, uses.encoder, IDS, attention_mask=KEEP),
         call(Encoder.forward, uses.encoder, IDS, additive_mask=additive_mask(KEEP, np.float64),
              keep_all=True)),
    case("Encoder.pool", "pooled in (-1, 1)", call(Encoder.pool, uses.pooled_encoder, X),
         call(pooled_by_hand, uses.pooled_encoder, X)),
    case("MaskedBatch", "lists are converted",
         call(fields_of_batch, IDS.tolist(), IDS.tolist(), DECISION.tolist(), KEEP.tolist()),
         call(fields_of_batch, IDS, IDS, DECISION, KEEP)),
    case("MaskedBatch", "rows keep the rules", call(fields_of_rows, BATCH, slice(1, None)),
         call(fields_of_batch,
              *(field[1:] for field in (BATCH.input_ids, BATCH.labels, BATCH.decision, KEEP)))),
    case("cross_entropy", "uniform logits: log V", call(cross_entropy, np.zeros((3, 5)), np.array([0, 4, 2])),
         (np.log(5), np.full((3, 5), 0.2))),
    case("multi_head_attention", "per-head loop equals the batched form",
         call(multi_head_attention, X, uses.w_sum, 2, "sum", per_head=True),
         call(multi_head_attention, X, uses.w_sum, 2, "sum")),
    case("multi_head_attention", "a -inf mask on some keys",
         call(attention_of_four_positions, X, uses.w_cat, 2, masked_fifth=True),
         call(attention_of_four_positions, X, uses.w_cat, 2, masked_fifth=False)),
    case("SequenceClassifier.logits", "(B, C)",
         call(SequenceClassifier.logits, uses.classifier, IDS, attention_mask=KEEP),
         call(logits_by_hand, uses.classifier, IDS, KEEP)),
    case("encoder_from_arrays", "a round trip", call(round_trip, uses.encoder, IDS),
         call(Encoder.__call__, uses.encoder, IDS)),
    case("array_shapes", "the shapes encoder_arrays stores", call(array_shapes, CFG, pooler=True),
         call(shapes_of_arrays, uses.pooled_encoder)),
])
def test_an_unusual_input_that_means_something_gets_its_value(request, entry, expected):
    assert_same(run(request, entry), run(request, expected) if isinstance(expected, call) else expected)


@pytest.mark.parametrize("keep", [
    case("Encoder()", "a row all padding: finite output, every key weighed alike", np.zeros_like(IDS))])
def test_a_row_of_padding_only_weighs_every_key_alike(encoder, keep):
    assert np.isfinite(encoder(IDS, attention_mask=keep)).all()
    for A in encoder.attentions(IDS, attention_mask=keep):
        np.testing.assert_allclose(A, 1 / IDS.shape[1], rtol=1e-12)


@pytest.mark.parametrize("keep", [case("Encoder.attentions", "rows sum to one, no weight on padding", KEEP)])
def test_attention_rows_sum_to_one_and_give_padding_no_weight(encoder, keep):
    A = encoder.attentions(IDS, attention_mask=keep)[0]
    np.testing.assert_allclose(A.sum(-1), 1, rtol=1e-12)
    assert np.all(A[1, :, :, 4] < 1e-12)


@pytest.mark.parametrize("names", [
    case("Encoder.backward", "into zeroed grads: the central differences' gradients",
         ("embeddings.word", "layers.1.attention.W_Q", "layers.0.ffn.b_1"))])
def test_the_backward_pass_gives_the_gradient_of_central_differences(encoder, forward_cache, names):
    hidden, cache, zeros = forward_cache
    grads = {k: v.copy() for k, v in zeros.items()}
    d_hidden = np.random.default_rng(0).normal(size=hidden.shape)
    encoder.backward(cache, d_hidden, grads)  # the gradient of sum(d_hidden * hidden)
    for name in names:
        numeric = numeric_gradient(lambda: (encoder(IDS) * d_hidden).sum(), encoder.parameters()[name])
        assert relative_error(grads[name], numeric) < 1e-5, name


@pytest.mark.parametrize("names", [
    case("MaskedLM.loss_and_grads", "gradients for every parameter, as central differences give them",
         ("mlm_head.W", "mlm_head.b_out", "layers.0.attention.W_V", "embeddings.position"))])
def test_a_training_step_gives_the_gradient_of_central_differences(mlm, names):
    loss, grads = mlm.loss_and_grads(BATCH)
    assert grads.keys() == mlm.parameters().keys() and loss == pytest.approx(mlm.loss(BATCH), rel=1e-12)
    for name in names:
        numeric = numeric_gradient(lambda: mlm.loss(BATCH), mlm.parameters()[name])
        assert relative_error(grads[name], numeric) < 1e-5, name


@pytest.mark.parametrize("batch", [case("MaskedLM.loss", "a small batch", BATCH)])
def test_an_untrained_model_scores_about_log_v(mlm, batch):
    assert abs(mlm.loss(batch) - np.log(CFG.vocab_size)) < 1
