"""Bad and unusual inputs at the model's entries: the config, the cost counts, the Encoder and MaskedLM with
their batches, attention, the classifier, checkpoints, the optimizer and training. Each case is a clear error
(its message names the argument and the rule) or a right answer.

Large sizes are given as broadcast views (``np.broadcast_to``): they cost no memory, so a case that allocates
shows the library allocating, not the case.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from bad_inputs.case import Case
from geron_lib.config import PRESETS, EncoderConfig, max_length
from geron_lib.costs import flops, memory, params, training_memory
from geron_lib.model.attention import multi_head_attention, random_attention_weights
from geron_lib.model.checkpoint import array_shapes, encoder_arrays, encoder_from_arrays
from geron_lib.model.classifier import SequenceClassifier
from geron_lib.model.encoder import Encoder
from geron_lib.model.mlm import MASKED, MaskedBatch, MaskedLM, cross_entropy
from geron_lib.pretraining.masking import MaskingSchedule
from geron_lib.pretraining.tokenizer import WordTokenizer
from geron_lib.pretraining.train import (
    AdamW,
    TrainingConfig,
    clip_grad_norm,
    evaluate,
    learning_rate,
    train_mlm,
)

NAN, INF = float("nan"), float("inf")
TINY = dict(vocab_size=20, hidden_size=8, num_hidden_layers=2, num_attention_heads=2, intermediate_size=16,
            max_position_embeddings=16)
CFG = EncoderConfig(**TINY)
NUMPY_CFG = EncoderConfig(**{k: np.int64(v) for k, v in TINY.items()})
BIG = dict(vocab_size=30000, hidden_size=4096, num_hidden_layers=12, num_attention_heads=64,
           intermediate_size=16384, max_position_embeddings=512)
ENC = Encoder(CFG, seed=0)
POOLED = Encoder(CFG, seed=0, pooler=True)
MLM = MaskedLM(CFG, seed=0)
IDS = np.array([[2, 5, 6, 7, 3], [2, 8, 9, 3, 0]])
KEEP = (IDS != 0).astype(np.int64)
DECISION = np.array([[0, 1, 0, 1, 0], [0, 0, 1, 0, 0]])
BATCH = MaskedBatch(np.where(DECISION == MASKED, 4, IDS), IDS, DECISION, KEEP)
W_SUM = random_attention_weights(8, 2, "sum", seed=0)
W_CAT = random_attention_weights(8, 2, "concat", seed=0)
X = np.random.default_rng(0).normal(size=(2, 5, 8))
PARAMS = {"W": np.ones((2, 2)), "b": np.zeros(2)}
GRADS = {"W": np.full((2, 2), 0.5), "b": np.full(2, 0.5)}
TOK = WordTokenizer(["the", "cat", "sat", "on", "mat"])
SCHEDULE = MaskingSchedule(TOK.encode_batch(["the cat sat on the mat", "the mat sat"], 8), TOK, "static")
SMALL_MLM = MaskedLM(EncoderConfig(**TINY | dict(vocab_size=TOK.vocab_size)), seed=0)

CASES: list[Case] = []


def err(entry, label, call, raises, *names):
    CASES.append(Case(entry, label, call, raises=raises, names=names))


def ok(entry, label, call, expect):
    CASES.append(Case(entry, label, call, expect=expect))


def with_value(w: dict, key: str, value) -> dict:
    w = {k: v.copy() for k, v in w.items()}
    w[key].flat[0] = value
    return w


def batch_with(**fields) -> MaskedBatch:
    given = dict(input_ids=BATCH.input_ids, labels=BATCH.labels, decision=BATCH.decision,
                 attention_mask=BATCH.attention_mask) | fields
    return MaskedBatch(**given)


def cfg(**changes) -> EncoderConfig:
    return EncoderConfig(**TINY | changes)


def fresh_adamw(**kw) -> AdamW:
    return AdamW({k: v.copy() for k, v in PARAMS.items()}, **kw)


def stepped(lr) -> AdamW:
    opt = fresh_adamw()
    opt.step(GRADS, lr)
    return opt


# EncoderConfig ---------------------------------------------------------------------------------------------
E = "EncoderConfig"
for field in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
              "max_position_embeddings"):
    err(E, f"{field} True", lambda f=field: cfg(**{f: True}), TypeError, field, "integer")
    err(E, f"{field} 0", lambda f=field: cfg(**{f: 0}), ValueError, field, "at least 1")
    err(E, f"{field} 8.0", lambda f=field: cfg(**{f: 8.0}), TypeError, field, "integer")
for field in ("layer_norm_eps", "initializer_range"):
    err(E, f"{field} NaN", lambda f=field: cfg(**{f: NAN}), ValueError, field, "finite")
    err(E, f"{field} inf", lambda f=field: cfg(**{f: INF}), ValueError, field, "finite")
    err(E, f"{field} -0.1", lambda f=field: cfg(**{f: -0.1}), ValueError, field, "positive")
    err(E, f"{field} a string", lambda f=field: cfg(**{f: "1e-12"}), TypeError, field, "real number")
    err(E, f"{field} 10**400", lambda f=field: cfg(**{f: 10**400}), ValueError, field, "finite")
err(E, "hidden_size 10, 3 heads", lambda: cfg(hidden_size=10, num_attention_heads=3), ValueError,
    "hidden_size", "divisible by num_attention_heads")
err(E, "type_vocab_size -1", lambda: cfg(type_vocab_size=-1), ValueError, "type_vocab_size", "at least 0")
err(E, "embedding_size above hidden_size", lambda: cfg(embedding_size=16), ValueError, "embedding_size",
    "at most hidden_size")
err(E, "embedding_size np.bool_", lambda: cfg(embedding_size=np.bool_(True)), TypeError, "embedding_size")
err(E, "pad_token_id = vocab_size", lambda: cfg(pad_token_id=20), ValueError, "pad_token_id",
    "below vocab_size")
err(E, "pad_token_id -1", lambda: cfg(pad_token_id=-1), ValueError, "pad_token_id", "at least 0")
err(E, "roberta pad id past the positions", lambda: cfg(model_type="roberta", pad_token_id=15), ValueError,
    "max_position_embeddings", "pad_token_id + 1")
err(E, "hidden_act None", lambda: cfg(hidden_act=None), ValueError, "hidden_act", "one of")
err(E, "hidden_act 'GELU'", lambda: cfg(hidden_act="GELU"), ValueError, "hidden_act", "one of")
err(E, "sharing 'layers'", lambda: cfg(sharing="layers"), ValueError, "sharing", "one of")
err(E, "attention 'mean'", lambda: cfg(attention="mean"), ValueError, "attention", "one of")
err(E, "model_type 'gpt2'", lambda: cfg(model_type="gpt2"), ValueError, "model_type", "one of")
err(E, "embedding_projection 'yes'", lambda: cfg(embedding_projection="yes"), TypeError,
    "embedding_projection")
err(E, "embedding_projection False with E < H", lambda: cfg(embedding_size=4, embedding_projection=False),
    ValueError, "embedding_projection", "embedding_size")
ok(E, "numpy integers stored as Python ints", lambda: NUMPY_CFG,
   lambda c: all(type(getattr(c, k)) is int for k in TINY) and c == CFG)
ok(E, "np.float32 layer_norm_eps stored as a float", lambda: cfg(layer_norm_eps=np.float32(1e-5)),
   lambda c: type(c.layer_norm_eps) is float)
ok(E, "Fraction initializer_range", lambda: cfg(initializer_range=Fraction(1, 50)),
   lambda c: c.initializer_range == 0.02)
ok(E, "embedding_projection np.bool_(True) at E = H", lambda: cfg(embedding_projection=np.bool_(True)),
   lambda c: c.embedding_projection is True and c.has_embedding_projection)
ok(E, "vocab_size 10**30 (a description, never built)", lambda: cfg(vocab_size=10**30),
   lambda c: c.vocab_size == 10**30)
E = "EncoderConfig.replace"
err(E, "hidden_size -8", lambda: CFG.replace(hidden_size=-8), ValueError, "hidden_size", "at least 1")
err(E, "an unknown field", lambda: CFG.replace(hiden_size=8), TypeError, "hiden_size")
E = "EncoderConfig.preset"
err(E, "an unknown name", lambda: EncoderConfig.preset("bert-tiny"), ValueError, "name", "one of")
err(E, "None", lambda: EncoderConfig.preset(None), ValueError, "name", "one of")
ok(E, "albert-base-v2", lambda: EncoderConfig.preset("albert-base-v2"), lambda c: c.sharing == "all")
E = "max_length"
err(E, "a dict", lambda: max_length(TINY), TypeError, "config", "EncoderConfig")
ok(E, "tiny roberta", lambda: max_length(PRESETS["roberta-base"]), lambda n: n == 512)

# Parameter counts -------------------------------------------------------------------------------------------
E = "count_parameters"
err(E, "config a preset name", lambda: params.count_parameters("bert-base"), TypeError, "config",
    "EncoderConfig")
err(E, "config None", lambda: params.count_parameters(None), TypeError, "config")
err(E, "pooler 1", lambda: params.count_parameters(CFG, pooler=1), TypeError, "pooler", "True or False")
err(E, "mlm_head 'yes'", lambda: params.count_parameters(CFG, mlm_head="yes"), TypeError, "mlm_head")
err(E, "positional pooler", lambda: params.count_parameters(CFG, True), TypeError, "positional")
ok(E, "BERT base with pooler: 109,482,240 (transformers' BertModel)",
   lambda: params.count_parameters(PRESETS["bert-base"], pooler=True).total, lambda n: n == 109_482_240)
ok(E, "ALBERT base with pooler: 11,683,584 (transformers' AlbertModel)",
   lambda: params.count_parameters(PRESETS["albert-base-v2"], pooler=True).total, lambda n: n == 11_683_584)
ok(E, "numpy-int config counts as the Python-int one",
   lambda: params.count_parameters(NUMPY_CFG, mlm_head=True).total,
   lambda n: type(n) is int and n == params.count_parameters(CFG, mlm_head=True).total)
ok(E, "nsp_head np.bool_(True)", lambda: params.count_parameters(CFG, pooler=True, nsp_head=np.bool_(True)),
   lambda c: c.nsp_head == 8 * 2 + 2)
ok(E, "vocab_size 10**30: exact Python-int count",
    lambda: params.count_parameters(cfg(vocab_size=10**30)).total,
   lambda n: n == params.count_parameters(CFG).total + (10**30 - 20) * 8)
E = "linear_params"
err(E, "n_in -3", lambda: params.linear_params(-3, 5), ValueError, "n_in", "at least 1")
err(E, "n_out 2.5", lambda: params.linear_params(2, 2.5), TypeError, "n_out", "integer")
err(E, "bias 'no'", lambda: params.linear_params(2, 3, "no"), TypeError, "bias")
ok(E, "numpy ints", lambda: params.linear_params(np.int32(3), np.int64(4)),
    lambda n: n == 16 and type(n) is int)
E = "layer_norm_params"
err(E, "width 0", lambda: params.layer_norm_params(0), ValueError, "width", "at least 1")
E = "ffn_params"
err(E, "intermediate_size None", lambda: params.ffn_params(8, None), TypeError, "intermediate_size")
E = "attention_params"
err(E, "form 'Concat'", lambda: params.attention_params(8, 2, "Concat"), ValueError, "form", "one of")
err(E, "heads not dividing", lambda: params.attention_params(8, 3), ValueError, "divisible")
err(E, "hidden_size NaN", lambda: params.attention_params(NAN, 2), TypeError, "hidden_size", "integer")
ok(E, "sum form at BERT base: 2(H^2 + H) + hH^2 + H", lambda: params.attention_params(768, 12, "sum"),
   lambda n: n == 2 * (768**2 + 768) + 12 * 768**2 + 768)
E = "stored_copies"
err(E, "a dict", lambda: params.stored_copies(TINY), TypeError, "config")
E = "model_attention_params"
err(E, "form 'mean'", lambda: params.model_attention_params(CFG, form="mean"), ValueError, "form")

# FLOP counts ------------------------------------------------------------------------------------------------
E = "count_flops"
err(E, "seq_len 0", lambda: flops.count_flops(CFG, 0), ValueError, "seq_len", "at least 1")
err(E, "seq_len -5", lambda: flops.count_flops(CFG, -5), ValueError, "seq_len", "at least 1")
err(E, "seq_len 8.0", lambda: flops.count_flops(CFG, 8.0), TypeError, "seq_len", "integer")
err(E, "seq_len True", lambda: flops.count_flops(CFG, True), TypeError, "seq_len", "integer")
err(E, "seq_len past the positions", lambda: flops.count_flops(CFG, 17), ValueError, "seq_len",
    "max_position_embeddings")
err(E, "batch 0", lambda: flops.count_flops(CFG, 8, batch=0), ValueError, "batch", "at least 1")
err(E, "batch NaN", lambda: flops.count_flops(CFG, 8, batch=NAN), TypeError, "batch", "integer")
err(E, "masked without the MLM head", lambda: flops.count_flops(CFG, 8, masked=2), ValueError, "masked",
    "mlm_head")
err(E, "masked above seq_len", lambda: flops.count_flops(CFG, 8, mlm_head=True, masked=9), ValueError,
    "masked", "at most seq_len")
err(E, "masked 0", lambda: flops.count_flops(CFG, 8, mlm_head=True, masked=0), ValueError, "masked")
err(E, "nsp_head without pooler", lambda: flops.count_flops(CFG, 8, nsp_head=True), ValueError, "nsp_head",
    "pooler")
err(E, "training without a head", lambda: flops.count_flops(CFG, 8, training=True), ValueError, "training")
err(E, "training 'yes'", lambda: flops.count_flops(CFG, 8, training="yes"), TypeError, "training")
err(E, "config a dict", lambda: flops.count_flops(TINY, 8), TypeError, "config", "EncoderConfig")
ok(E, "numpy-int config at xxlarge sizes: no overflow",
   lambda: flops.count_flops(EncoderConfig(**{k: np.int64(v) for k, v in BIG.items()}), 512,
       batch=10**6).total,
   lambda n: type(n) is int and n == flops.count_flops(EncoderConfig(**BIG), 512, batch=10**6).total)
ok(E, "seq_len np.int64(8)", lambda: flops.count_flops(CFG, np.int64(8)).total,
   lambda n: type(n) is int and n == flops.count_flops(CFG, 8).total)
ok(E, "batch 10**20: an exact count", lambda: flops.count_flops(CFG, 8, batch=10**20).total,
   lambda n: n == 10**20 * flops.count_flops(CFG, 8).total)
ok(E, "every sharing mode the same FLOPs",
   lambda: {flops.count_flops(cfg(sharing=s), 8).total for s in ("none", "all", "attention", "ffn")},
   lambda totals: len(totals) == 1)
ok(E, "masked np.int64 at 10**6 sequences: no overflow",
   lambda: flops.count_flops(EncoderConfig(**BIG), 512, batch=10**6, mlm_head=True, masked=np.int64(512)),
   lambda c: type(c.mlm_decoder) is int
   and c.total == flops.count_flops(EncoderConfig(**BIG), 512, batch=10**6, mlm_head=True).total)
E = "flops_per_token"
err(E, "masked -1", lambda: flops.flops_per_token(CFG, 8, mlm_head=True, masked=-1), ValueError, "masked")
E = "approximate_flops_per_token"
err(E, "training 1", lambda: flops.approximate_flops_per_token(CFG, 8, training=1), TypeError, "training")
err(E, "seq_len None", lambda: flops.approximate_flops_per_token(CFG, None), TypeError, "seq_len")

# Training memory --------------------------------------------------------------------------------------------
E = "training_memory"
err(E, "dtype float16", lambda: training_memory.training_memory(CFG, 2, 8, dtype=np.float16), ValueError,
    "dtype", "float32 or float64")
err(E, "dtype 'garbage'", lambda: training_memory.training_memory(CFG, 2, 8, dtype="garbage"), TypeError,
    "dtype", "float32 or float64")
err(E, "dtype None", lambda: training_memory.training_memory(CFG, 2, 8, dtype=None), TypeError, "dtype")
err(E, "dtype int", lambda: training_memory.training_memory(CFG, 2, 8, dtype=int), ValueError, "dtype")
err(E, "dtype a numpy float (numpy reads float32 off it)",
    lambda: training_memory.training_memory(CFG, 2, 8, dtype=np.float32(0.5)), TypeError, "dtype")
err(E, "batch -1", lambda: training_memory.training_memory(CFG, -1, 8), ValueError, "batch", "at least 1")
err(E, "seq_len 100 past 16 positions", lambda: training_memory.training_memory(CFG, 2, 100), ValueError,
    "seq_len")
ok(E, "weights in float32 are half of float64's bytes",
   lambda: (training_memory.training_memory(CFG, 2, 8, dtype=np.float32).weights,
            training_memory.training_memory(CFG, 2, 8, dtype="float64").weights),
   lambda t: 2 * t[0] == t[1] == 8 * MLM.num_parameters())

# One block's memory -----------------------------------------------------------------------------------------
E = "forward_activation_bytes"
err(E, "attention 'mean'", lambda: memory.forward_activation_bytes(2, 8, 8, 2, 16, "mean", 8), ValueError,
    "attention", "one of")
err(E, "seq_len 0", lambda: memory.forward_activation_bytes(2, 0, 8, 2, 16, "concat", 8), ValueError,
    "seq_len")
err(E, "itemsize 0", lambda: memory.forward_activation_bytes(2, 8, 8, 2, 16, "concat", 0), ValueError,
    "itemsize")
ok(E, "numpy sizes at 10**6 x 512 x 4096: no overflow",
   lambda: memory.forward_activation_bytes(np.int64(10**6), np.int64(512), np.int64(4096), np.int64(64),
                                           np.int64(16384), "sum", 8),
   lambda n: type(n) is int and n == memory.forward_activation_bytes(10**6, 512, 4096, 64, 16384, "sum", 8))
E = "block_cache_elements"
err(E, "batch -1", lambda: memory.block_cache_elements(-1, 8, 8, 2, 16, "sum"), ValueError, "batch")
err(E, "hidden_size 8.0", lambda: memory.block_cache_elements(1, 8, 8.0, 2, 16, "sum"), TypeError,
    "hidden_size")
E = "block_backward_workspace"
err(E, "hidden_act 'swish'", lambda: memory.block_backward_workspace(1, 8, 8, 2, 16, "concat", "swish"),
    ValueError, "hidden_act")
E = "block_forward_workspace"
err(E, "num_attention_heads None", lambda: memory.block_forward_workspace(1, 8, None, 16), TypeError,
    "num_attention_heads")

# Encoder construction ---------------------------------------------------------------------------------------
E = "Encoder"
err(E, "seed -1", lambda: Encoder(CFG, seed=-1), ValueError, "seed", "at least 0")
err(E, "seed 1.5", lambda: Encoder(CFG, seed=1.5), TypeError, "seed", "integer")
err(E, "seed None", lambda: Encoder(CFG, seed=None), TypeError, "seed")
err(E, "seed positional", lambda: Encoder(CFG, 3), TypeError, "positional")
err(E, "config a preset name", lambda: Encoder("tiny-bert"), TypeError, "config", "EncoderConfig")
err(E, "config a dict", lambda: Encoder(TINY), TypeError, "config", "EncoderConfig")
err(E, "dtype float16", lambda: Encoder(CFG, dtype=np.float16), ValueError, "dtype", "float32 or float64")
err(E, "dtype 'float'", lambda: Encoder(CFG, dtype="floaty"), TypeError, "dtype")
err(E, "pooler 'yes'", lambda: Encoder(CFG, pooler="yes"), TypeError, "pooler")
err(E, "vocab_size 10**9: refused from the arithmetic", lambda: Encoder(cfg(vocab_size=10**9)), ValueError,
    "GiB", "MEMORY_LIMIT_BYTES")
err(E, "albert-xxlarge unshared: 2.6 billion weights", lambda: Encoder(PRESETS["albert-xxlarge-v2"].replace(
    sharing="none")), ValueError, "parameters", "GiB")
ok(E, "seed np.int64(3) draws seed 3's weights", lambda: Encoder(CFG, seed=np.int64(3)),
   lambda e: np.array_equal(e.embeddings["word"], Encoder(CFG, seed=3).embeddings["word"]))
ok(E, "seed 2**70", lambda: Encoder(CFG, seed=2**70), lambda e: e.num_parameters() == ENC.num_parameters())
ok(E, "dtype 'float32'", lambda: Encoder(CFG, dtype="float32"), lambda e: e.dtype == np.float32)
E = "Encoder.from_weights"
err(E, "one attention dict too few", lambda: Encoder.from_weights(CFG, ENC.embeddings, [ENC.layers[0][0]],
                                                                  [f for _, f in ENC.layers]),
    ValueError, "attention", "sharing")

# Encoder calls ----------------------------------------------------------------------------------------------
E = "Encoder()"
err(E, "attention_mask second, positionally (transformers' order)", lambda: ENC([5, 6, 7], [1, 1, 0]),
    TypeError, "positional")
err(E, "id -1", lambda: ENC([5, -1, 7]), ValueError, "input_ids", "negative")
err(E, "id = vocab_size", lambda: ENC([5, 20]), ValueError, "input_ids", "vocab_size")
err(E, "id 1.5", lambda: ENC([5, 1.5]), ValueError, "input_ids", "whole number")
err(E, "id NaN", lambda: ENC([5, NAN]), ValueError, "input_ids", "NaN")
err(E, "a string", lambda: ENC("the cat"), TypeError, "input_ids", "token ids")
err(E, "None", lambda: ENC(None), TypeError, "input_ids")
err(E, "booleans", lambda: ENC([True, False]), TypeError, "input_ids", "booleans")
err(E, "3-D", lambda: ENC(np.zeros((1, 2, 3), int)), ValueError, "input_ids", "dimensions")
err(E, "empty", lambda: ENC([]), ValueError, "input_ids", "empty")
err(E, "ragged rows", lambda: ENC([[1, 2], [3]]), ValueError, "input_ids", "ragged")
err(E, "complex ids", lambda: ENC([1 + 2j]), TypeError, "input_ids")
err(E, "uint64 2**64 - 1", lambda: ENC(np.array([2**64 - 1], np.uint64)), ValueError, "input_ids")
err(E, "17 positions past 16", lambda: ENC(np.ones(17, int)), ValueError, "input_ids",
    "max_position_embeddings")
err(E, "10**6 sequences: refused before allocating", lambda: ENC(np.broadcast_to(np.int64(5), (10**6, 16))),
    ValueError, "forward pass", "GiB")
err(E, "10**6 float sequences: refused before allocating",
    lambda: ENC(np.broadcast_to(5.0, (10**6, 16))), ValueError, "forward pass", "GiB")
err(E, "attention_mask 2", lambda: ENC(IDS, attention_mask=np.full(IDS.shape, 2)), ValueError,
    "attention_mask",
    "1 for a token, 0 for padding")
err(E, "attention_mask 0.5", lambda: ENC(IDS, attention_mask=np.full(IDS.shape, 0.5)), ValueError,
    "attention_mask", "whole number")
err(E, "attention_mask -1", lambda: ENC(IDS, attention_mask=-KEEP), ValueError, "attention_mask", "negative")
err(E, "attention_mask of another shape", lambda: ENC(IDS, attention_mask=KEEP[:, :3]), ValueError,
    "attention_mask", "shape of input_ids")
err(E, "token_type_ids 2 (type_vocab_size 2)", lambda: ENC(IDS, token_type_ids=np.full(IDS.shape, 2)),
    ValueError, "token_type_ids", "type_vocab_size")
err(E, "token_type_ids -1", lambda: ENC(IDS, token_type_ids=np.full(IDS.shape, -1)), ValueError,
    "token_type_ids", "negative")
err(E, "token_type_ids with type_vocab_size 0",
    lambda: Encoder(cfg(type_vocab_size=0))(IDS, token_type_ids=np.zeros_like(IDS)), ValueError,
    "token_type_ids", "type_vocab_size is 0")
ok(E, "attention_mask by keyword (the fixed call)", lambda: ENC([5, 6, 7], attention_mask=[1, 1, 0]),
   lambda h: h.shape == (1, 3, 8) and np.isfinite(h).all())
ok(E, "padding changes no real position", lambda: ENC([5, 6, 7, 0], attention_mask=[1, 1, 1, 0])[0, :3],
   lambda h: np.allclose(h, ENC([5, 6, 7])[0]))
ok(E, "a boolean attention_mask, as torch takes it", lambda: ENC(IDS, attention_mask=KEEP == 1),
   lambda h: np.array_equal(h, ENC(IDS, attention_mask=KEEP)))
ok(E, "ids as whole floats", lambda: ENC([5.0, 6.0]), lambda h: np.array_equal(h, ENC([5, 6])))
ok(E, "ids as int8", lambda: ENC(np.array([5, 6], np.int8)), lambda h: np.array_equal(h, ENC([5, 6])))
ok(E, "a row all padding: finite output", lambda: ENC(IDS, attention_mask=np.zeros_like(IDS)),
   lambda h: np.isfinite(h).all())
ok(E, "16 positions, the whole table", lambda: ENC(np.ones(16, int)), lambda h: h.shape == (1, 16, 8))
E = "Encoder.forward"
err(E, "id -1 (numpy reads it as the last row)", lambda: ENC.forward(np.array([[5, -1, 7]])), ValueError,
    "ids",
    "vocab_size")
err(E, "id = vocab_size", lambda: ENC.forward(np.array([[5, 20]])), ValueError, "ids", "vocab_size")
err(E, "a list", lambda: ENC.forward([[5, 6]]), TypeError, "ids", "integer array")
err(E, "1-D ids", lambda: ENC.forward(np.array([5, 6])), TypeError, "ids", "(B, T)")
err(E, "float ids", lambda: ENC.forward(np.array([[5.0, 6.0]])), TypeError, "ids", "integer array")
err(E, "token type -1", lambda: ENC.forward(IDS, np.full(IDS.shape, -1)), ValueError, "token_type_ids",
    "type_vocab_size")
err(E, "a 0/1 attention mask as the additive mask", lambda: ENC.forward(IDS, None, KEEP[:, None, None,
    :] * 1.0),
    ValueError, "mask", "additive")
err(E, "a (B, T) mask", lambda: ENC.forward(IDS, None, KEEP * -1e9), ValueError, "mask", "(B, 1, 1, T)")
err(E, "cache a list", lambda: ENC.forward(IDS, cache=[]), TypeError, "cache", "dict")
err(E, "keep_all 'yes'", lambda: ENC.forward(IDS, keep_all="yes"), TypeError, "keep_all")
ok(E, "checked ids: as the call", lambda: ENC.forward(IDS)[-1], lambda h: np.array_equal(h, ENC(IDS)))
E = "Encoder.hidden_states"
err(E, "token types positionally", lambda: ENC.hidden_states(IDS, np.zeros_like(IDS)), TypeError,
    "positional")
ok(E, "L + 1 states", lambda: ENC.hidden_states(IDS, attention_mask=KEEP), lambda s: len(s) == 3)
E = "Encoder.attentions"
err(E, "mask positionally", lambda: ENC.attentions(IDS, None, KEEP), TypeError, "positional")
ok(E, "rows sum to one, no weight on padding", lambda: ENC.attentions(IDS, attention_mask=KEEP)[0],
   lambda A: np.allclose(A.sum(-1), 1) and np.all(A[1, :, :, 4] < 1e-12))
E = "Encoder.forward_cached"
err(E, "id -1", lambda: ENC.forward_cached([[1, -1]]), ValueError, "input_ids", "negative")
E = "Encoder.backward"
HIDDEN, CACHE = ENC.forward_cached(IDS)
ZEROS = {k: np.zeros_like(v) for k, v in ENC.parameters().items()}
err(E, "an empty cache", lambda: ENC.backward({}, HIDDEN, ZEROS), ValueError, "cache", "forward_cached")
err(E, "d_hidden of another batch", lambda: ENC.backward(CACHE, HIDDEN[:1], ZEROS), ValueError, "d_hidden",
    "shape")
err(E, "a gradient missing", lambda: ENC.backward(CACHE, HIDDEN, {k: v for k, v in ZEROS.items()
                                                                 if k != "embeddings.word"}),
    ValueError, "grads", "embeddings.word")
err(E, "a scalar gradient (numpy would broadcast)", lambda: ENC.backward(CACHE, HIDDEN, ZEROS | {
    "embeddings.ln_bias": np.zeros(1)}), ValueError, "grads['embeddings.ln_bias']", "shape")
ok(E, "into zeroed grads: every gradient finite",
   lambda: (ENC.backward(CACHE, np.ones_like(HIDDEN), g := {k: v.copy() for k, v in ZEROS.items()}), g)[1],
   lambda g: all(np.isfinite(v).all() for v in g.values()) and g["embeddings.word"].any())
E = "Encoder.pool"
err(E, "without a pooler", lambda: ENC.pool(ENC(IDS)), ValueError, "pooler=False")
err(E, "hidden 2-D", lambda: POOLED.pool(np.zeros((2, 8))), ValueError, "hidden", "(B, T, 8)")
err(E, "hidden a list", lambda: POOLED.pool([[[0.0] * 8]]), ValueError, "hidden")
err(E, "hidden of another width", lambda: POOLED.pool(np.zeros((1, 2, 4))), ValueError, "hidden")
ok(E, "pooled in (-1, 1)", lambda: POOLED.pool(POOLED(IDS)), lambda p: p.shape == (2,
    8) and np.all(abs(p) < 1))

# MaskedBatch ------------------------------------------------------------------------------------------------
E = "MaskedBatch"
err(E, "label -1 at a selected position", lambda: batch_with(labels=np.where(DECISION == 1, -1, IDS)),
    ValueError, "labels", "at least 0")
err(E, "labels -100 where not selected (transformers' ignore index)",
    lambda: batch_with(labels=np.where(DECISION == 0, -100, IDS)), ValueError, "labels", "-100")
err(E, "input id -1", lambda: batch_with(input_ids=-np.ones_like(IDS)), ValueError, "input_ids", "at least 0")
err(E, "decision 4", lambda: batch_with(decision=np.full(IDS.shape, 4)), ValueError, "decision", "KEPT")
err(E, "attention_mask 2", lambda: batch_with(attention_mask=2 * KEEP), ValueError, "attention_mask",
    "[0, 1]")
err(E, "labels of another shape", lambda: batch_with(labels=IDS[:, :3]), ValueError, "labels", "shape")
err(E, "float labels", lambda: batch_with(labels=IDS * 1.0), TypeError, "labels", "integer array")
err(E, "bool decision", lambda: batch_with(decision=DECISION > 0), TypeError, "decision", "integer array")
err(E, "1-D fields", lambda: MaskedBatch(IDS[0], IDS[0], DECISION[0], KEEP[0]), ValueError, "input_ids",
    "(B, T)")
err(E, "empty", lambda: MaskedBatch(*(np.zeros((0, 3), int),) * 4), ValueError, "input_ids", "non-empty")
err(E, "strings", lambda: batch_with(labels=[["a"] * 5] * 2), TypeError, "labels")
ok(E, "lists are converted", lambda: MaskedBatch(IDS.tolist(), IDS.tolist(), DECISION.tolist(),
    KEEP.tolist()),
   lambda b: isinstance(b.labels, np.ndarray) and b.selected.sum() == 3)
ok(E, "rows keep the rules", lambda: BATCH[1:], lambda b: len(b) == 1 and b.selected.sum() == 1)
E = "cross_entropy"
err(E, "target -1 (numpy would read the last class)",
    lambda: cross_entropy(np.zeros((2, 5)), np.array([0, -1])),
    ValueError, "targets", "[0, 5)")
err(E, "target = V", lambda: cross_entropy(np.zeros((2, 5)), np.array([0, 5])), ValueError, "targets")
err(E, "float targets", lambda: cross_entropy(np.zeros((2, 5)), np.array([0.0, 1.0])), ValueError, "targets")
err(E, "one target for two rows", lambda: cross_entropy(np.zeros((2, 5)), np.array([0])), ValueError,
    "targets")
err(E, "1-D logits", lambda: cross_entropy(np.zeros(5), np.array([0])), ValueError, "logits", "(N, V)")
ok(E, "uniform logits: log V", lambda: cross_entropy(np.zeros((3, 5)), np.array([0, 4, 2]))[0],
   lambda v: abs(v - np.log(5)) < 1e-12)
E = "MaskedLM"
err(E, "seed -2", lambda: MaskedLM(CFG, seed=-2), ValueError, "seed", "at least 0")
err(E, "config None", lambda: MaskedLM(None), TypeError, "config", "EncoderConfig")
E = "MaskedLM.loss"
err(E, "not a MaskedBatch", lambda: MLM.loss(IDS), TypeError, "batch", "MaskedBatch")
err(E, "nothing selected", lambda: MLM.loss(batch_with(decision=np.zeros_like(IDS))), ValueError, "batch",
    "nothing to predict")
err(E, "label beyond vocab_size", lambda: MLM.loss(batch_with(labels=np.where(DECISION == 1, 25, IDS))),
    ValueError, "labels", "vocab_size")
err(E, "input id beyond vocab_size", lambda: MLM.loss(batch_with(input_ids=np.full(IDS.shape, 20))),
    ValueError, "input_ids", "vocab_size")
err(E, "17 positions past 16", lambda: MLM.loss(MaskedBatch(*(np.ones((1, 17), int),) * 4)), ValueError,
    "input_ids", "max_position_embeddings")
ok(E, "a small batch", lambda: MLM.loss(BATCH), lambda v: np.isfinite(v) and abs(v - np.log(20)) < 1)
E = "MaskedLM.loss_and_grads"
err(E, "10**5 sequences: the training step's bytes refused first",
    lambda: MaskedLM(cfg(vocab_size=30000))
    .loss_and_grads(MaskedBatch(*(np.broadcast_to(np.int64(1), (10**5, 16)),) * 4)), ValueError,
    "training step", "GiB")
ok(E, "gradients for every parameter", lambda: MLM.loss_and_grads(BATCH)[1],
   lambda g: g.keys() == MLM.parameters().keys() and all(np.isfinite(v).all() for v in g.values()))

# Attention --------------------------------------------------------------------------------------------------
E = "multi_head_attention"
err(E, "W_V holding inf (it would hang an SVD)",
    lambda: multi_head_attention(X, with_value(W_SUM, "W_V", INF), 2, "sum"), ValueError, "W_V", "finite")
err(E, "W_Q holding NaN", lambda: multi_head_attention(X, with_value(W_CAT, "W_Q", NAN), 2), ValueError,
    "W_Q", "finite")
err(E, "b_O holding -inf", lambda: multi_head_attention(X, with_value(W_CAT, "b_O", -INF), 2), ValueError,
    "b_O", "finite")
err(E, "x holding NaN", lambda: multi_head_attention(with_value({"x": X}, "x", NAN)["x"], W_CAT, 2),
    ValueError,
    "x", "finite")
err(E, "x of ints", lambda: multi_head_attention(X.astype(int), W_CAT, 2), TypeError, "x", "float")
err(E, "x 2-D", lambda: multi_head_attention(X[0], W_CAT, 2), ValueError, "x", "(B, T, hidden_size)")
err(E, "x a list", lambda: multi_head_attention(X.tolist(), W_CAT, 2), TypeError, "x")
err(E, "sum weights as concat", lambda: multi_head_attention(X, W_SUM, 2, "concat"), ValueError, "W_O")
err(E, "concat weights as sum", lambda: multi_head_attention(X, W_CAT, 2, "sum"), ValueError, "W_O",
    "sum form")
err(E, "3 heads for width 8", lambda: multi_head_attention(X, W_CAT, 3), ValueError, "divisible")
err(E, "heads 0", lambda: multi_head_attention(X, W_CAT, 0), ValueError, "num_attention_heads", "at least 1")
err(E, "w a list", lambda: multi_head_attention(X, list(W_CAT.values()), 2), TypeError, "w", "dict")
err(E, "W_Q a list", lambda: multi_head_attention(X, W_CAT | {"W_Q": W_CAT["W_Q"].tolist()}, 2), TypeError,
    "W_Q", "numpy array")
err(E, "W_K of another shape", lambda: multi_head_attention(X, W_CAT | {"W_K": np.zeros((8, 4))}, 2),
    ValueError,
    "W_K", "shape")
err(E, "a 0/1 mask", lambda: multi_head_attention(X, W_CAT, 2, mask=np.ones((2, 1, 1, 5))), ValueError,
    "mask",
    "additive")
err(E, "a NaN mask", lambda: multi_head_attention(X, W_CAT, 2, mask=np.full((2, 1, 1, 5), NAN)), ValueError,
    "mask", "additive")
err(E, "a (B, T) mask", lambda: multi_head_attention(X, W_CAT, 2, mask=np.zeros((2, 5))), ValueError, "mask",
    "(B, 1, 1, T)")
err(E, "per_head 1", lambda: multi_head_attention(X, W_CAT, 2, per_head=1), TypeError, "per_head")
err(E, "x of 10**5 x 512 rows (a view): refused before allocating",
    lambda: multi_head_attention(np.broadcast_to(0.0, (10**5, 512, 8)), W_CAT, 2), ValueError, "GiB")
ok(E, "per-head loop equals the batched form", lambda: multi_head_attention(X, W_SUM, 2, "sum",
    per_head=True),
   lambda y: np.allclose(y, multi_head_attention(X, W_SUM, 2, "sum")))
ok(E, "a -inf mask on some keys", lambda: multi_head_attention(X, W_CAT, 2, mask=np.where(
    np.arange(5) < 4, 0.0, -INF)[None, None, None, :]), lambda y: np.isfinite(y).all())
err(E, "finite weights of 1e308: the output overflows", lambda: multi_head_attention(
    X, W_SUM | {"W_V": np.full((2, 8, 8), 1e308)}, 2, "sum"), ValueError, "overflowed")
E = "random_attention_weights"
err(E, "seed -1", lambda: random_attention_weights(8, 2, seed=-1), ValueError, "seed", "at least 0")
err(E, "hidden_size 0", lambda: random_attention_weights(0, 1), ValueError, "hidden_size", "at least 1")
err(E, "form 'SUM'", lambda: random_attention_weights(8, 2, "SUM"), ValueError, "form", "one of")
err(E, "bias None", lambda: random_attention_weights(8, 2, bias=None), TypeError, "bias")
err(E, "hidden_size 10**5 summed: refused from the arithmetic", lambda: random_attention_weights(10**5, 8,
    "sum"),
    ValueError, "GiB")
ok(E, "numpy sizes", lambda: random_attention_weights(np.int64(8), np.int32(2), "sum"),
   lambda w: w["W_V"].shape == (2, 8, 8))

# Classifier -------------------------------------------------------------------------------------------------
CLS = SequenceClassifier(Encoder(CFG), 3)
E = "SequenceClassifier"
err(E, "n_classes 1", lambda: SequenceClassifier(ENC, 1), ValueError, "n_classes", "at least 2")
err(E, "n_classes 2.0", lambda: SequenceClassifier(ENC, 2.0), TypeError, "n_classes", "integer")
err(E, "n_classes 10**12: refused from the arithmetic", lambda: SequenceClassifier(ENC, 10**12), ValueError,
    "classes", "GiB")
err(E, "encoder a config", lambda: SequenceClassifier(CFG, 2), TypeError, "encoder", "Encoder")
err(E, "seed -1", lambda: SequenceClassifier(ENC, 2, seed=-1), ValueError, "seed")
E = "SequenceClassifier.logits"
err(E, "token types positionally", lambda: CLS.logits(IDS, np.zeros_like(IDS)), TypeError, "positional")
ok(E, "(B, C)", lambda: CLS.logits(IDS, attention_mask=KEEP), lambda z: z.shape == (2, 3))
E = "SequenceClassifier.loss_and_grads"
err(E, "label -1", lambda: CLS.loss_and_grads(IDS, [0, -1]), ValueError, "labels", "negative")
err(E, "label = n_classes", lambda: CLS.loss_and_grads(IDS, [0, 3]), ValueError, "labels", "n_classes")
err(E, "one label for two rows", lambda: CLS.loss_and_grads(IDS, [0]), ValueError, "labels",
    "one class per row")
err(E, "labels a string", lambda: CLS.loss_and_grads(IDS, "01"), ValueError, "labels")
err(E, "float labels 0.5", lambda: CLS.loss_and_grads(IDS, [0.5, 1]), ValueError, "labels", "whole number")
ok(E, "numpy labels", lambda: CLS.loss_and_grads(IDS, np.array([0, 2], np.int8))[0], lambda v: np.isfinite(v))

# Checkpoints ------------------------------------------------------------------------------------------------
E = "encoder_arrays"
err(E, "a MaskedLM", lambda: encoder_arrays(MLM), TypeError, "encoder", "Encoder")
E = "encoder_from_arrays"
err(E, "arrays an int", lambda: encoder_from_arrays(CFG, 5), TypeError, "arrays", "mapping")
err(E, "arrays a list of pairs", lambda: encoder_from_arrays(CFG, list(encoder_arrays(ENC).items())),
    TypeError,
    "arrays", "mapping")
err(E, "an unknown name", lambda: encoder_from_arrays(CFG, encoder_arrays(ENC) | {"decoder.W": np.zeros(2)}),
    ValueError, "decoder.W")
err(E, "string arrays", lambda: encoder_from_arrays(CFG,
    encoder_arrays(ENC) | {"embeddings.word": np.array(["a"])}),
    TypeError, "arrays", "float")
err(E, "config of other sharing", lambda: encoder_from_arrays(cfg(sharing="all"), encoder_arrays(ENC)),
    ValueError, "copies", "sharing")
err(E, "arrays of a wider config",
    lambda: encoder_from_arrays(CFG, encoder_arrays(Encoder(cfg(hidden_size=16)))),
    ValueError, "shape", "another config")
err(E, "arrays of another vocabulary", lambda: encoder_from_arrays(cfg(vocab_size=30), encoder_arrays(ENC)),
    ValueError, "embeddings.word", "shape")
err(E, "a weight missing", lambda: encoder_from_arrays(CFG, {k: v for k, v in encoder_arrays(ENC).items()
                                                          if k != "ffn.1.W_2"}), ValueError, "ffn.1.W_2")
err(E, "float32 and float64 mixed", lambda: encoder_from_arrays(CFG, encoder_arrays(ENC) | {
    "ffn.0.b_1": np.zeros(16, np.float32)}), TypeError, "dtype")
ok(E, "a round trip", lambda: encoder_from_arrays(CFG, encoder_arrays(ENC))(IDS),
   lambda h: np.array_equal(h, ENC(IDS)))

E = "array_shapes"
err(E, "config a dict", lambda: array_shapes(TINY), TypeError, "config")
ok(E, "the shapes encoder_arrays stores", lambda: array_shapes(CFG, pooler=True),
   lambda s: s == {k: v.shape for k, v in encoder_arrays(POOLED).items()})

# Optimizer and schedule -------------------------------------------------------------------------------------
E = "AdamW"
err(E, "betas (1.0, 0.999): 1 - beta^t = 0", lambda: fresh_adamw(betas=(1.0, 0.999)), ValueError, "betas[0]",
    "[0, 1)")
err(E, "betas (0.9, 1.5)", lambda: fresh_adamw(betas=(0.9, 1.5)), ValueError, "betas[1]", "[0, 1)")
err(E, "betas (-0.1, 0.9)", lambda: fresh_adamw(betas=(-0.1, 0.9)), ValueError, "betas[0]")
err(E, "betas (NaN, 0.9)", lambda: fresh_adamw(betas=(NAN, 0.9)), ValueError, "betas[0]", "finite")
err(E, "betas one number", lambda: fresh_adamw(betas=0.9), TypeError, "betas", "pair")
err(E, "betas three numbers", lambda: fresh_adamw(betas=(0.9, 0.99, 0.999)), TypeError, "betas", "pair")
err(E, "eps 0", lambda: fresh_adamw(eps=0), ValueError, "eps", "positive")
err(E, "weight_decay -0.01", lambda: fresh_adamw(weight_decay=-0.01), ValueError, "weight_decay", "[0, 1)")
err(E, "weight_decay 5", lambda: fresh_adamw(weight_decay=5), ValueError, "weight_decay", "[0, 1)")
err(E, "params a list", lambda: AdamW([np.zeros(2)]), TypeError, "params", "dict")
err(E, "params of ints", lambda: AdamW({"W": np.zeros(2, int)}), TypeError, "params['W']", "float")
ok(E, "betas as a list of numpy floats", lambda: fresh_adamw(betas=[np.float32(0.5), np.float64(0.9)]),
   lambda o: (o.beta1, o.beta2) == (0.5, 0.9))
E = "AdamW.step"
err(E, "lr NaN (it would poison the weights)", lambda: stepped(NAN), ValueError, "lr", "finite")
err(E, "lr inf", lambda: stepped(INF), ValueError, "lr", "finite")
err(E, "lr -1e-3", lambda: stepped(-1e-3), ValueError, "lr", "at least 0")
err(E, "lr a string", lambda: stepped("1e-3"), TypeError, "lr")
err(E, "a NaN gradient", lambda: fresh_adamw().step(GRADS | {"b": np.array([NAN, 0.0])}, 1e-3), ValueError,
    "grads['b']", "finite")
err(E, "a gradient missing", lambda: fresh_adamw().step({"W": GRADS["W"]}, 1e-3), ValueError, "grads",
    "missing")
err(E, "a gradient of another shape", lambda: fresh_adamw().step(GRADS | {"b": np.zeros(3)}, 1e-3),
    ValueError,
    "grads['b']", "shape")
ok(E, "lr 0 leaves the weights", lambda: stepped(0.0).params["W"], lambda W: np.array_equal(W, PARAMS["W"]))
ok(E, "lr np.float32(1e-3): one Adam step moves each weight by about lr",
   lambda: stepped(np.float32(1e-3)).params["b"], lambda b: np.allclose(b, -1e-3, rtol=1e-3))
E = "clip_grad_norm"
err(E, "max_norm NaN (no clipping, silently)", lambda: clip_grad_norm(dict(GRADS), NAN), ValueError,
    "max_norm",
    "finite")
err(E, "max_norm 0", lambda: clip_grad_norm(dict(GRADS), 0), ValueError, "max_norm", "positive")
err(E, "grads a list", lambda: clip_grad_norm([np.ones(2)], 1.0), TypeError, "grads", "dict")
err(E, "an inf gradient", lambda: clip_grad_norm({"W": np.array([INF])}, 1.0), ValueError, "grads", "NaN")
ok(E, "norm 1 clipped to 0.5", lambda: clip_grad_norm({"W": np.array([0.6, 0.8])}, 0.5), lambda n: n == 1.0)
E = "learning_rate"
err(E, "warmup 0 at step 0", lambda: learning_rate(0, 10, 1e-3, 0), ValueError, "step", "at least 1")
err(E, "warmup past total", lambda: learning_rate(5, 10, 1e-3, 11), ValueError, "warmup", "at most 10")
err(E, "step past total + 1", lambda: learning_rate(12, 10, 1e-3, 2), ValueError, "step", "at most 11")
ok(E, "step total + 1 (torch's LambdaLR asks for it): zero", lambda: learning_rate(11, 10, 1e-3, 2),
   lambda lr: lr == 0)
err(E, "peak NaN", lambda: learning_rate(1, 10, NAN, 2), ValueError, "peak", "finite")
err(E, "total 0", lambda: learning_rate(1, 0, 1e-3, 0), ValueError, "total", "at least 1")
ok(E, "no warm-up: decaying from step 1, peak T / (T + 1)", lambda: learning_rate(1, 10, 1.0, 0),
   lambda lr: lr == 10 / 11)
ok(E, "warmup = total: linear to the peak", lambda: learning_rate(10, 10, 1.0, 10), lambda lr: lr == 1.0)

# Training ---------------------------------------------------------------------------------------------------
E = "TrainingConfig"
err(E, "weight_decay 5", lambda: TrainingConfig(weight_decay=5), ValueError, "weight_decay", "[0, 1)")
err(E, "weight_decay -0.01", lambda: TrainingConfig(weight_decay=-0.01), ValueError, "weight_decay")
err(E, "weight_decay NaN", lambda: TrainingConfig(weight_decay=NAN), ValueError, "weight_decay", "finite")
err(E, "lr NaN", lambda: TrainingConfig(lr=NAN), ValueError, "lr", "finite")
err(E, "lr 0", lambda: TrainingConfig(lr=0), ValueError, "lr", "positive")
err(E, "epochs 10**9 (a list of 10**9 evaluation steps, days of training)",
    lambda: TrainingConfig(epochs=10**9), ValueError, "epochs", "at most 10000")
err(E, "evaluations 10**9", lambda: TrainingConfig(evaluations=10**9), ValueError, "evaluations", "at most")
err(E, "lr 10**400", lambda: TrainingConfig(lr=10**400), ValueError, "lr", "finite")
err(E, "warmup 1", lambda: TrainingConfig(warmup=1), ValueError, "warmup", "[0, 1)")
err(E, "epochs 0", lambda: TrainingConfig(epochs=0), ValueError, "epochs", "at least 1")
err(E, "batch_size 3.0", lambda: TrainingConfig(batch_size=3.0), TypeError, "batch_size", "integer")
err(E, "seed -1", lambda: TrainingConfig(seed=-1), ValueError, "seed", "at least 0")
err(E, "evaluations 0", lambda: TrainingConfig(evaluations=0), ValueError, "evaluations")
err(E, "blas_threads True", lambda: TrainingConfig(blas_threads=True), TypeError, "blas_threads")
err(E, "max_grad_norm inf", lambda: TrainingConfig(max_grad_norm=INF), ValueError, "max_grad_norm", "finite")
ok(E, "numpy numbers stored as Python ones",
   lambda: TrainingConfig(epochs=np.int64(2), batch_size=np.int32(4), lr=np.float32(0.5), seed=np.uint8(3)),
   lambda c: (type(c.epochs), type(c.batch_size), type(c.lr), type(c.seed)) == (int, int, float, int))
ok(E, "weight_decay 0", lambda: TrainingConfig(weight_decay=0), lambda c: c.weight_decay == 0.0)
E = "TrainingConfig.total_steps"
err(E, "n_sequences 0", lambda: TrainingConfig().total_steps(0), ValueError, "n_sequences", "at least 1")
err(E, "n_sequences 2.5", lambda: TrainingConfig().total_steps(2.5), TypeError, "n_sequences")
E = "TrainingConfig.evaluation_steps"
err(E, "more evaluations than steps", lambda: TrainingConfig(evaluations=5).evaluation_steps(3), ValueError,
    "evaluations", "at most")
E = "evaluate"
err(E, "model an Encoder", lambda: evaluate(ENC, BATCH), TypeError, "model", "MaskedLM")
err(E, "batch_size 0", lambda: evaluate(MLM, BATCH, 0), ValueError, "batch_size", "at least 1")
err(E, "nothing selected", lambda: evaluate(MLM, batch_with(decision=np.zeros_like(IDS))), ValueError,
    "nothing to predict")
ok(E, "in chunks of one row: the whole batch's loss", lambda: evaluate(MLM, BATCH, 1),
   lambda v: abs(v - MLM.loss(BATCH)) < 1e-12)
E = "train_mlm"
err(E, "model an Encoder", lambda: train_mlm(ENC, SCHEDULE), TypeError, "model", "MaskedLM")
err(E, "schedule a batch", lambda: train_mlm(SMALL_MLM, BATCH), TypeError, "schedule", "MaskingSchedule")
err(E, "config a dict", lambda: train_mlm(SMALL_MLM, SCHEDULE, {"epochs": 1}), TypeError, "config",
    "TrainingConfig")
err(E, "a schedule beyond the model's vocabulary", lambda: train_mlm(MLM, MaskingSchedule(
    WordTokenizer([f"w{i}" for i in range(30)]).encode_batch(["w29 w28"], 4),
    WordTokenizer([f"w{i}" for i in range(30)]))), ValueError, "vocab_size")
err(E, "held_out with nothing selected",
    lambda: train_mlm(SMALL_MLM, SCHEDULE, held_out=MaskedBatch(*(np.ones((1, 4), int),) * 2,
                                                                 np.zeros((1, 4), int), np.ones((1, 4),
                                                                     int))),
    ValueError, "held_out", "nothing to predict")
err(E, "progress a string", lambda: train_mlm(SMALL_MLM, SCHEDULE, progress="print"), TypeError, "progress")
ok(E, "one epoch: one finite loss, the weights left finite",
   lambda: (train_mlm(m := MaskedLM(SMALL_MLM.config, seed=1), SCHEDULE, TrainingConfig(batch_size=2)), m),
   lambda r: len(r[0].train_loss) == 1 and np.isfinite(r[0].train_loss[0])
   and all(np.isfinite(p).all() for p in r[1].parameters().values()))
