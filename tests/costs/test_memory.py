"""training_memory and the forward bound: the parameter-sized items equal the arrays MaskedLM and AdamW
allocate, the activations equal the arrays a real cache holds (part by part), the whole step is within 10 %
of the peak tracemalloc measures, and the forward check's bound is never below a measured forward pass."""

import tracemalloc

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from geron_lib import PRESETS, Encoder
from geron_lib.costs.memory import ACTIVATION_GRAD_TEMPORARIES, forward_activation_bytes
from geron_lib.costs.training_memory import training_memory
from geron_lib.model.attention import multi_head_attention, random_attention_weights
from geron_lib.model.layers import ACTIVATIONS
from geron_lib.model.mlm import MASKED, NOT_SELECTED, MaskedBatch, MaskedLM
from geron_lib.pretraining.train import AdamW

TINY, ALBERT = PRESETS["tiny-bert"], PRESETS["tiny-albert"]
#: (config, B, T, masked positions per sequence, dtype): sharing modes, E < H, E = H with its map, both
#: attention forms, every activation, RoBERTa's position ids, a wide vocabulary, float32 and float64.
CASES = {
    "bert": (TINY, 8, 64, 10, np.float64),
    "bert-float32": (TINY, 8, 64, 10, np.float32),
    "albert-shared": (ALBERT, 8, 64, 10, np.float32),
    "albert-E=H": (ALBERT.replace(embedding_size=None, embedding_projection=True), 4, 32, 5, np.float64),
    "roberta": (PRESETS["tiny-roberta"].replace(pad_token_id=1), 4, 32, 5, np.float64),
    "sum": (TINY.replace(attention="sum"), 4, 32, 5, np.float64),
    "sum-albert-float32": (ALBERT.replace(attention="sum"), 4, 48, 6, np.float32),
    "share-attention-E<H": (TINY.replace(sharing="attention", embedding_size=16), 4, 32, 5, np.float64),
    "share-ffn-relu": (TINY.replace(sharing="ffn", hidden_act="relu"), 4, 32, 5, np.float32),
    "gelu_new-wide-F": (TINY.replace(hidden_act="gelu_new", intermediate_size=256), 4, 32, 5, np.float64),
    "wide-vocab": (TINY.replace(vocab_size=5000, embedding_size=16), 4, 32, 5, np.float32),
    "wide-H-short-T": (TINY.replace(hidden_size=128, intermediate_size=512), 4, 16, 3, np.float64),
}

#: Which part of training_memory each cache entry of a block belongs to ((sublayer, key) -> part).
BLOCK_PARTS = {("attention", "x"): "attention", ("attention", "q"): "attention",
               ("attention", "k"): "attention", ("attention", "v"): "attention",
               ("attention", "heads"): "attention",
               ("attention", "A"): "attention_probs",
               ("ln_attention", "x_hat"): "layer_norms", ("ln_attention", "std"): "layer_norms",
               ("ffn", "x"): "layer_norms",  # the first layer norm's output
               ("ln_ffn", "x_hat"): "layer_norms", ("ln_ffn", "std"): "layer_norms",
               ("ffn", "u"): "ffn", ("ffn", "a"): "ffn"}


@pytest.fixture(scope="module", autouse=True)
def one_blas_thread():
    """Tiny products: on a busy machine, handing them between BLAS threads costs seconds (it changes no
    allocation tracemalloc sees: BLAS buffers are not numpy arrays)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def masked_batch(config, B, T, masked, seed=0) -> MaskedBatch:
    """Random ids (never the pad id), exactly ``masked`` selected positions in every row."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, config.vocab_size - 1, (B, T))
    if config.pad_token_id is not None:
        ids += ids >= config.pad_token_id
    decision = np.full((B, T), NOT_SELECTED)
    for row in decision:
        row[rng.choice(T, masked, replace=False)] = MASKED
    return MaskedBatch(ids, rng.integers(0, config.vocab_size, (B, T)), decision, np.ones((B, T), np.int64))


def owner(a: np.ndarray) -> np.ndarray:
    """The array that owns ``a``'s memory (``a`` itself unless it is a view)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def cache_bytes_by_part(model: MaskedLM, cache: dict) -> dict[str, int]:
    """Bytes of the distinct arrays a training step's cache holds (weights excluded), by part.

    An array held twice (without an E -> H map, the embeddings' output is the first block's input) counts
    once, for the first part that holds it: the blocks are read first.
    """
    seen = {id(owner(p)) for p in model.parameters().values()}
    parts = dict.fromkeys(["embeddings", "attention", "attention_probs", "layer_norms", "ffn", "mlm_head"], 0)

    def add(part, a):
        if isinstance(a, np.ndarray) and id(owner(a)) not in seen:
            seen.add(id(owner(a)))
            parts[part] += owner(a).nbytes

    encoder = cache["encoder"]
    for layer in range(model.config.num_hidden_layers):
        for sublayer, entries in encoder[layer].items():
            for key, a in entries.items():
                if key != "gain":
                    add(BLOCK_PARTS[sublayer, key], a)
    for part, entries in (("embeddings", encoder["embed"]), ("mlm_head", cache["head"])):
        for key, a in entries.items():
            for array in (a.values() if key == "ln" else [a]):  # the layer norm's x_hat and std
                add(part, array)
    return parts


@pytest.fixture(scope="module", params=CASES)
def step(request):
    """(estimate, model, batch) for one case, the model's first training step already taken."""
    config, B, T, masked, dtype = CASES[request.param]
    model, batch = MaskedLM(config, dtype=dtype), masked_batch(config, B, T, masked)
    model.loss_and_grads(batch)  # imports and one-off allocations happen outside the measurement
    return training_memory(config, B, T, dtype=dtype, masked=masked), model, batch


def test_parameter_sized_items_are_the_allocated_arrays(step):
    estimate, model, batch = step
    weights = sum(p.nbytes for p in model.parameters().values())
    _, grads = model.loss_and_grads(batch)
    optimizer = AdamW(model.parameters())
    assert estimate.weights == weights
    assert estimate.gradients == sum(g.nbytes for g in grads.values())
    assert estimate.adam_moments == sum(a.nbytes for moments in (optimizer.m, optimizer.v)
                                        for a in moments.values())
    assert estimate.parameters == 4 * weights


def test_activations_are_the_arrays_the_cache_holds(step):
    estimate, model, batch = step
    cache = {}
    logits, targets = model._logits(batch, cache)  # the forward pass of loss_and_grads, with its cache
    expected = cache_bytes_by_part(model, cache)
    assert {part: getattr(estimate, part) for part in expected} == expected
    # loss_and_grads holds the logits, the probabilities (as large) and the targets through its backward
    assert estimate.loss == 2 * logits.nbytes + targets.nbytes


def test_training_step_is_within_ten_percent_of_tracemalloc(step):
    estimate, model, batch = step
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        _, grads = model.loss_and_grads(batch)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    gradients = sum(g.nbytes for g in grads.values())
    assert estimate.gradients == gradients
    # activations and workspace against what the step allocated beside the gradients
    assert estimate.activations + estimate.workspace == pytest.approx(peak - gradients, rel=0.10)
    assert estimate.step == pytest.approx(peak, rel=0.10)


def test_every_activation_has_its_temporaries_counted():
    assert ACTIVATION_GRAD_TEMPORARIES.keys() == ACTIVATIONS.keys()


def test_sharing_changes_the_parameter_items_only():
    modes = {s: training_memory(TINY.replace(sharing=s), 4, 32) for s in ("none", "all", "attention", "ffn")}
    activations = {name: getattr(modes["none"], name) for name in modes["none"].ADDITIVE
                   if name not in ("weights", "gradients", "adam_moments")}
    for memory in modes.values():
        assert {name: getattr(memory, name) for name in activations} == activations
        assert sum(memory.items().values()) == memory.total
    assert modes["all"].weights < modes["attention"].weights < modes["none"].weights


def measured_peak(run) -> int:
    run()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("case", CASES)
def test_forward_bound_is_never_below_a_forward_pass(case):
    config, B, T, _, dtype = CASES[case]
    encoder, ids = Encoder(config, dtype=dtype), masked_batch(config, B, T, 1).input_ids
    itemsize = np.dtype(dtype).itemsize
    H, h, F = config.hidden_size, config.num_attention_heads, config.intermediate_size
    bound = forward_activation_bytes(B, T, H, h, F, config.attention, itemsize)
    assert measured_peak(lambda: encoder(ids)) <= bound
    # the attention entry bounds one sublayer by a block with F = H
    w = random_attention_weights(H, h, config.attention)
    x = np.random.default_rng(0).normal(size=(B, T, H))
    attention_bound = forward_activation_bytes(B, T, H, h, H, config.attention, x.itemsize)
    assert measured_peak(lambda: multi_head_attention(x, w, h, config.attention)) <= attention_bound


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(config={"hidden_size": 32}), TypeError, "config must be an EncoderConfig"),
    (dict(batch=0), ValueError, "batch must be at least 1"),
    (dict(seq_len=65), ValueError, r"seq_len \(65\) must be at most 64"),
    (dict(masked=0), ValueError, "masked must be at least 1"),
    (dict(masked=33), ValueError, r"masked \(33\) must be at most seq_len \(32\)"),
    (dict(dtype=np.int32), ValueError, "dtype must be float32 or float64"),
])
def test_bad_arguments_are_refused_at_the_entry(kwargs, error, match):
    kw = dict(config=TINY, batch=4, seq_len=32) | kwargs
    with pytest.raises(error, match=match):
        training_memory(kw.pop("config"), kw.pop("batch"), kw.pop("seq_len"), **kw)
