"""Depth: parameters against depth per sharing mode, layer movement, the shape of forward timings, the
weight bytes a forward pass reads per mode, and the cache sizes read from sysfs."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from geron_lib import PRESETS, Encoder, count_parameters
from geron_lib.config import SHARING
from geron_lib.model.encoder import block_forward
from geron_lib.studies.depth import (
    MOVEMENT_CONFIG,
    cache_sizes,
    forward_time_by_sharing,
    layer_movement,
    movement_by_sharing,
    params_by_depth,
    weight_bytes_per_forward,
)

TINY = PRESETS["tiny-bert"]


def test_params_by_depth_grow_by_the_unshared_sublayers():
    depths = [1, 2, 5, 12]
    counts = params_by_depth(TINY, depths)
    c = count_parameters(TINY)
    ln = c.layer_norms_per_layer // 2  # each sublayer carries one layer norm
    grows = {"all": 0, "attention": c.ffn_per_layer + ln, "ffn": c.attention_per_layer + ln,
             "none": c.attention_per_layer + c.ffn_per_layer + 2 * ln}
    for mode, per_layer in grows.items():
        assert np.diff(counts[mode]).tolist() == [per_layer * d for d in np.diff(depths)]
    assert counts["all"][0] == counts["none"][0]  # one layer: nothing to share


def test_layer_movement_on_known_states():
    x = np.ones((1, 2, 4))
    d, c = layer_movement([x, x, 2 * x, -2 * x])
    np.testing.assert_allclose(d, [0, 2, 8])  # ||x|| = 2, ||2x - x|| = 2, ||-4x|| = 8
    np.testing.assert_allclose(c, [1, 1, -1])
    e0, e1 = np.eye(4)[None, :2], np.eye(4)[None, 2:]  # orthogonal rows
    assert layer_movement([e0, e1])[1].tolist() == [0.0]


def test_shared_layers_apply_one_function():
    # all-shared: each layer's output is the same block applied to the previous output
    c = TINY.replace(sharing="all", num_hidden_layers=5)
    enc = Encoder(c, seed=4)
    ids = np.random.default_rng(0).integers(0, c.vocab_size, (2, 7))
    states = enc.hidden_states(ids)
    attention, ffn = enc.layers[0]
    for before, after in zip(states[:-1], states[1:], strict=True):
        again = block_forward(before, attention, ffn, c)
        np.testing.assert_allclose(after, again, atol=1e-12)
    d, cos = layer_movement(states)
    assert d.shape == cos.shape == (5,) and np.all(d > 0) and np.all(np.abs(cos) <= 1 + 1e-12)


def test_random_shared_stack_settles_and_unshared_does_not():
    # the chapter's claim, for its experiment: random (untrained) weights, seed 0
    with threadpool_limits(1, "blas"):
        moves = movement_by_sharing(MOVEMENT_CONFIG, batch=2, seq_len=64, seed=0)
    shared, unshared = moves["all"][0], moves["none"][0]
    assert np.all(np.diff(shared) < 0) and shared[-1] < 0.5 * shared[0]  # each step moves less
    assert unshared.max() / unshared.min() < 1.25  # about the same step at every layer
    assert np.all(np.diff(moves["all"][1]) > 0)  # and the shared steps turn the states less and less
    assert abs(shared[0] - unshared[0]) < 0.1 * unshared[0]  # the first layers start alike


def test_forward_time_by_sharing_times_a_forward_through_every_layer(monkeypatch):
    # the clock counts blocks run, not seconds: a forward pass at depth L costs L blocks in every mode
    blocks = []

    def counted_block(*args, **kwargs):
        blocks.append(1)
        return block_forward(*args, **kwargs)

    monkeypatch.setattr("geron_lib.model.encoder.block_forward", counted_block)
    seconds = forward_time_by_sharing(TINY, [1, 3, 16], seq_len=16, repeats=3, clock=lambda: len(blocks))
    assert set(seconds) == set(SHARING)
    for s in seconds.values():
        np.testing.assert_array_equal(s, [1, 3, 16])
    assert forward_time_by_sharing(TINY, [2], seq_len=16, repeats=1)["all"][0] > 0  # seconds by default


@pytest.mark.parametrize("sharing", SHARING)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weight_bytes_are_the_arrays_the_layers_read(sharing, dtype):
    config = TINY.replace(sharing=sharing, num_hidden_layers=5)
    encoder = Encoder(config, seed=0, dtype=dtype)
    arrays = [a for attention, ffn in encoder.layers for w in (attention, ffn) for a in w.values()]
    distinct, read = weight_bytes_per_forward(config, dtype)
    assert distinct == sum({id(a): a.nbytes for a in arrays}.values())  # each stored array once
    assert read == sum(a.nbytes for a in arrays)  # every time a layer reads it: the same in every mode


def test_weight_bytes_by_mode():
    # ALBERT base at 12 layers, float32: the FFN is twice the attention (F = 4H), so sharing it saves more
    base = PRESETS["albert-base-v2"]
    c = count_parameters(base)
    att, ffn = 4 * (c.attention_per_layer + 2 * 768), 4 * (c.ffn_per_layer + 2 * 768)
    by_mode = {mode: weight_bytes_per_forward(base.replace(sharing=mode)) for mode in SHARING}
    assert by_mode["all"] == (att + ffn, 12 * (att + ffn))
    assert by_mode["none"] == (12 * (att + ffn), 12 * (att + ffn))
    assert by_mode["attention"][0] == att + 12 * ffn and by_mode["ffn"][0] == 12 * att + ffn
    assert by_mode["none"][0] > by_mode["attention"][0] > by_mode["ffn"][0] > by_mode["all"][0]


def _fake_cache(root, caches):
    for i, (level, kind, size) in enumerate(caches):
        index = root / f"index{i}"
        index.mkdir()
        for name, text in (("level", level), ("type", kind), ("size", size)):
            (index / name).write_text(f"{text}\n")


def test_cache_sizes_read_from_sysfs(tmp_path):
    _fake_cache(tmp_path, [("1", "Data", "48K"), ("1", "Instruction", "32K"), ("2", "Unified", "2048K"),
                           ("3", "Unified", "96M")])
    assert cache_sizes(tmp_path) == {"L1d": 48 * 1024, "L1i": 32 * 1024, "L2": 2 * 1024**2,
                                     "L3": 96 * 1024**2}


def test_cache_sizes_fall_back_to_nothing(tmp_path):
    assert cache_sizes(tmp_path / "absent") == {}  # no listing: another OS, or a container without sysfs
    _fake_cache(tmp_path, [("2", "Unified", "lots"), ("x", "Data", "32K")])
    (tmp_path / "index9").mkdir()  # a cache folder without its files
    assert cache_sizes(tmp_path) == {}


@pytest.mark.parametrize("call, error, match", [
    (lambda: params_by_depth({"hidden_size": 8}, [1]), TypeError, "config"),
    (lambda: params_by_depth(TINY, 3), TypeError, "depths"),
    (lambda: params_by_depth(TINY, []), ValueError, "depths"),
    (lambda: params_by_depth(TINY, [0]), ValueError, "depths"),
    (lambda: layer_movement(np.ones((2, 1, 2, 3))), TypeError, "states"),
    (lambda: layer_movement([np.ones((1, 2, 3)), np.ones((1, 2, 4))]), ValueError, "one shape"),
    (lambda: forward_time_by_sharing(TINY, [1], seq_len=65), ValueError, "seq_len"),
    (lambda: forward_time_by_sharing(TINY, [1], repeats=0), ValueError, "repeats"),
    (lambda: weight_bytes_per_forward(TINY, np.int32), ValueError, "dtype"),
    (lambda: weight_bytes_per_forward("albert"), TypeError, "config"),
    (lambda: cache_sizes(3), TypeError, "root"),
])
def test_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()
