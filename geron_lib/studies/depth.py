"""Depth under cross-layer sharing: parameters against depth for every sharing mode, how far each layer
moves its input, and the measured forward time against depth."""

from __future__ import annotations

import time

import numpy as np
from threadpoolctl import threadpool_limits

from ..model.config import SHARING, EncoderConfig
from ..model.encoder import Encoder
from ..model.params import count_parameters
from ..timing import median_seconds
from ..validate import check_int, check_type

#: The hidden-state experiment of the sharing chapter: 24 layers like ALBERT large, at a width that runs fast.
MOVEMENT_CONFIG = EncoderConfig(vocab_size=1000, hidden_size=256, num_hidden_layers=24, num_attention_heads=4,
                                intermediate_size=1024, max_position_embeddings=128)


def _check_depths(depths) -> list[int]:
    if isinstance(depths, str | bytes) or not hasattr(depths, "__iter__"):
        raise TypeError(f"depths must be a sequence of layer counts, got {type(depths).__name__}")
    depths = [check_int("depths[i]", L, minimum=1) for L in depths]
    if not depths:
        raise ValueError("depths is empty; give at least one layer count")
    return depths


def params_by_depth(config: EncoderConfig, depths) -> dict[str, list[int]]:
    """For every sharing mode, the total parameter count (no pooler or heads) at each depth."""
    config, depths = check_type("config", config, EncoderConfig), _check_depths(depths)
    return {mode: [count_parameters(config.replace(sharing=mode, num_hidden_layers=L)).total for L in depths]
            for mode in SHARING}


def layer_movement(states) -> tuple[np.ndarray, np.ndarray]:
    """d_l = mean_t ||x_l - x_{l-1}||_2,  c_l = mean_t x_l . x_{l-1} / (||x_l|| ||x_{l-1}||),  l = 1 .. L.

    How far each layer moves its input: (L2 distances, cosine similarities), one per layer.
    """
    if isinstance(states, np.ndarray) or not isinstance(states, list | tuple) or len(states) < 2:
        raise TypeError("states must be a list of at least two arrays (B, T, H), "
                        "as Encoder.hidden_states returns")
    if not all(isinstance(s, np.ndarray) and s.ndim == 3 and s.shape == states[0].shape for s in states):
        raise ValueError("states must all be arrays of one shape (B, T, H)")
    x = np.stack(states)  # (L + 1, B, T, H)
    before, after = x[:-1], x[1:]
    distances = np.linalg.norm(after - before, axis=-1)  # (L, B, T)
    norms = np.linalg.norm(after, axis=-1) * np.linalg.norm(before, axis=-1)
    cosines = (after * before).sum(axis=-1) / np.where(norms > 0, norms, 1.0)
    return distances.mean(axis=(1, 2)), cosines.mean(axis=(1, 2))


def movement_by_sharing(config: EncoderConfig, *, batch: int = 4, seq_len: int = 64,
                        seed: int = 0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """:func:`layer_movement` of ``config`` built unshared (``"none"``) and all-shared (``"all"``), with
    weights drawn at random from ``seed`` (untrained), on one batch of random token ids."""
    config = check_type("config", config, EncoderConfig)
    B = check_int("batch", batch, minimum=1)
    T = check_int("seq_len", seq_len, minimum=1)
    seed = check_int("seed", seed)
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, (B, T))
    return {mode: layer_movement(Encoder(config.replace(sharing=mode), seed=seed).hidden_states(ids))
            for mode in ("none", "all")}


def forward_time_by_depth(config: EncoderConfig, depths, *, batch: int = 1, seq_len: int = 32,
                          repeats: int = 5, seed: int = 0) -> np.ndarray:
    """Median wall-clock seconds of one forward pass of ``config`` at each depth (float32 weights).

    BLAS runs on one thread while timing: on a shared machine, threads waiting for each other would
    otherwise swamp the cost of the layers themselves.
    """
    config, depths = check_type("config", config, EncoderConfig), _check_depths(depths)
    B = check_int("batch", batch, minimum=1)
    T = check_int("seq_len", seq_len, minimum=1)
    repeats = check_int("repeats", repeats, minimum=1)
    seed = check_int("seed", seed)
    if T > config.max_position_embeddings:
        raise ValueError(f"seq_len must be at most max_position_embeddings "
                         f"({config.max_position_embeddings}), got {T}")
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, (B, T))
    medians = []
    with threadpool_limits(limits=1, user_api="blas"):
        for L in depths:
            medians.append(_median_forward_seconds(config.replace(num_hidden_layers=L), ids, repeats, seed))
    return np.array(medians)


def _median_forward_seconds(config: EncoderConfig, ids: np.ndarray, repeats: int, seed: int) -> float:
    encoder = Encoder(config, seed=seed, dtype=np.float32)
    return median_seconds({"forward": lambda: encoder(ids)}, repeat=repeats, min_seconds=1e-9,
                           clock=time.perf_counter)["forward"]
