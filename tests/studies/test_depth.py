"""Depth: parameters against depth per sharing mode, layer movement, and the shape of forward timings."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from geron_lib import PRESETS, Encoder, count_parameters
from geron_lib.model.encoder import block_forward
from geron_lib.studies.depth import (
    MOVEMENT_CONFIG,
    forward_time_by_depth,
    layer_movement,
    movement_by_sharing,
    params_by_depth,
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


def test_forward_time_by_depth_shape_and_growth():
    # structure only, with a generous margin: 16 layers of work against 1 layer
    seconds = forward_time_by_depth(TINY, [1, 16], seq_len=16, repeats=3)
    assert seconds.shape == (2,) and np.all(seconds > 0)
    assert seconds[1] > seconds[0]


@pytest.mark.parametrize("call, error, match", [
    (lambda: params_by_depth({"hidden_size": 8}, [1]), TypeError, "config"),
    (lambda: params_by_depth(TINY, 3), TypeError, "depths"),
    (lambda: params_by_depth(TINY, []), ValueError, "depths"),
    (lambda: params_by_depth(TINY, [0]), ValueError, "depths"),
    (lambda: layer_movement(np.ones((2, 1, 2, 3))), TypeError, "states"),
    (lambda: layer_movement([np.ones((1, 2, 3)), np.ones((1, 2, 4))]), ValueError, "one shape"),
    (lambda: forward_time_by_depth(TINY, [1], seq_len=65), ValueError, "seq_len"),
    (lambda: forward_time_by_depth(TINY, [1], repeats=0), ValueError, "repeats"),
])
def test_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()
