"""Depth under cross-layer sharing: parameters against depth for every sharing mode, how far each layer
moves its input, the forward time against depth measured side by side for every mode, the weight bytes a
forward pass reads under each mode, and this machine's cache sizes to compare them with; and the base
Universal Transformer's recurrence on an all-shared encoder's block, the relative the chapter compares."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from ..config import SHARING, EncoderConfig, max_length
from ..costs.memory import forward_activation_bytes
from ..costs.params import count_parameters
from ..model.encoder import Encoder, block_forward, embed
from ..timing import check_timing, median_seconds
from ..validate import (
    check_finite_array,
    check_float_dtype,
    check_int,
    check_memory,
    check_sequence,
    check_token_ids,
    check_type,
)

#: Where Linux lists CPU 0's caches (one index* folder per cache, with its level, type and size).
CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")

#: The hidden-state experiment of the sharing chapter: 24 layers like ALBERT large, at a width that runs fast.
MOVEMENT_CONFIG = EncoderConfig(vocab_size=1000, hidden_size=256, num_hidden_layers=24, num_attention_heads=4,
                                intermediate_size=1024, max_position_embeddings=128)


def _check_depths(depths) -> list[int]:
    depths = [check_int("depths[i]", L, minimum=1) for L in check_sequence("depths", depths, "layer counts")]
    if not depths:
        raise ValueError("depths is empty; give at least one layer count")
    return depths


def _check_run(config: EncoderConfig, batch, seq_len, seed, *, states: int) -> tuple[int, int, int]:
    """(B, T, seed) for random ids of ``config``: T within the position table, seed a non-negative int,
    and memory for the ids, one forward's arrays and ``states`` more (B, T, H) float64 arrays."""
    B = check_int("batch", batch, minimum=1)
    T = check_int("seq_len", seq_len, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    if T > max_length(config):
        raise ValueError(f"seq_len must be at most {max_length(config)}, the positions that "
                         f"max_position_embeddings ({config.max_position_embeddings}) covers, got {T}")
    c = config
    check_memory(8 * B * T + forward_activation_bytes(B, T, c.hidden_size, c.num_attention_heads,
                                                      c.intermediate_size, c.attention, 8)
                 + 8 * states * B * T * c.hidden_size, f"a forward pass on batch={B} x seq_len={T}")
    return B, T, seed


def params_by_depth(config: EncoderConfig, depths) -> dict[str, list[int]]:
    """For every sharing mode, the total parameter count (no pooler or heads) at each depth."""
    config, depths = check_type("config", config, EncoderConfig), _check_depths(depths)
    return {mode: [count_parameters(config.replace(sharing=mode, num_hidden_layers=L)).total for L in depths]
            for mode in SHARING}


def _check_states(states) -> None:
    """:func:`layer_movement`'s states: at least two finite (B, T, H) arrays of one shape."""
    if isinstance(states, np.ndarray) or not isinstance(states, list | tuple) or len(states) < 2:
        raise TypeError("states must be a list of at least two arrays (B, T, H), as Encoder.hidden_states "
                        "returns")
    if not all(isinstance(s, np.ndarray) and s.ndim == 3 and s.shape == states[0].shape for s in states):
        raise ValueError("states must all be arrays of one shape (B, T, H)")
    for i, s in enumerate(states):
        check_finite_array(f"states[{i}]", s)


def layer_movement(states) -> tuple[np.ndarray, np.ndarray]:
    """dist_l = mean_t ||X_l[t] - X_{l-1}[t]||,  cos_l = mean_t cos(X_l[t], .).

    How far each layer l = 1 .. L moves its input: (L2 distances, cosine
    similarities between X_l[t] and X_{l-1}[t]), one per layer, averaged over
    the batch and the positions t.
    """
    _check_states(states)
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
    # the L + 1 hidden states and what layer_movement makes of them
    B, T, seed = _check_run(config, batch, seq_len, seed, states=6 * (config.num_hidden_layers + 1))
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, (B, T))
    return {mode: layer_movement(Encoder(config.replace(sharing=mode), seed=seed).hidden_states(ids))
            for mode in ("none", "all")}


#: At most this many steps of :func:`universal_transformer_states` (each one block's forward in numpy).
MAX_UNIVERSAL_STEPS = 1000


def coordinate_signal(seq_len: int, step: int, hidden_size: int) -> np.ndarray:
    """P^t[i, 2k] = sin(i / 10000^(2k/H)) + sin(t / 10000^(2k/H)), P^t[i, 2k+1] the same with cos: (T, H).

    The Universal Transformer's coordinate embedding (Dehghani et al. 2019, section 2.1): the sinusoids of
    the position i = 1 .. T plus those of the step t. Fixed: it has no parameters.
    """
    T = check_int("seq_len", seq_len, minimum=1, maximum=2**20)
    t = check_int("step", step, minimum=1)
    H = check_int("hidden_size", hidden_size, minimum=1, maximum=2**20)
    check_memory(8 * T * H * 3, f"a coordinate signal of seq_len={T:,} x hidden_size={H:,}")
    rate = 10000.0 ** (-2 * (np.arange(H) // 2) / H)   # (H,): 1 / 10000^(2k/H) in columns 2k and 2k + 1
    even = np.arange(H) % 2 == 0
    i = np.arange(1, T + 1)[:, None] * rate            # (T, H)
    position = np.where(even, np.sin(i), np.cos(i))
    timestep = np.where(even, np.sin(t * rate), np.cos(t * rate))
    return position + timestep                         # (T, H)


def universal_transformer_states(encoder: Encoder, input_ids, steps: int, *,
                                 timestep_signal: bool = True) -> list[np.ndarray]:
    """X_t = Block(X_{t-1} + 1 P^t), t = 1 .. steps: the base Universal Transformer on one shared block.

    A fixed number of steps, every position revised at every one (no halting), from ``encoder``'s
    embeddings X_0 through its one block (``encoder`` all-shared); P^t is :func:`coordinate_signal`.
    Without ``timestep_signal`` (P^t = 0) it is the all-shared encoder itself, run for ``steps`` layers.
    Returns X_0 .. X_steps, each (B, T, H).
    """
    check_type("encoder", encoder, Encoder)
    c = encoder.config
    if c.sharing != "all":
        raise ValueError(f"encoder must share one block across its layers (sharing='all'), got {c.sharing!r}")
    ids, _ = check_token_ids("input_ids", input_ids, vocab_size=c.vocab_size)
    steps = check_int("steps", steps, minimum=1, maximum=MAX_UNIVERSAL_STEPS)
    if not isinstance(timestep_signal, bool):
        raise TypeError(f"timestep_signal must be True or False, got {type(timestep_signal).__name__}")
    B, T = ids.shape
    if T > max_length(c):
        raise ValueError(f"input_ids has {T} positions; the position table covers at most {max_length(c)}")
    _check_run(c, B, T, 0, states=steps + 2)
    attention, ffn = encoder.layers[0]
    x = embed(ids, encoder.embeddings, c)                      # (B, T, H)
    states = [x]
    for t in range(1, steps + 1):
        if timestep_signal:
            x = x + coordinate_signal(T, t, c.hidden_size)
        x = block_forward(x, attention, ffn, c)
        states.append(x)
    return states


def forward_time_by_sharing(config: EncoderConfig, depths, *, batch: int = 1, seq_len: int = 32,
                            repeats: int = 7, seed: int = 0,
                            clock: Callable[[], float] = time.process_time) -> dict[str, np.ndarray]:
    """Median seconds of one forward pass of ``config`` (float32 weights) at each depth, for every
    sharing mode: {mode: array of one median per depth}.

    At each depth the four encoders are timed side by side: in turn within every round, odd rounds in
    reverse order, so that whatever else the machine does hits all four alike. The clock is this
    process's CPU time and BLAS runs on one thread: on a shared machine, time other jobs hold the core
    does not count, and threads waiting for each other do not swamp the cost of the layers themselves.
    ``clock`` replaces it (``time.perf_counter`` for wall time; a test passes a counter of the work done).
    """
    config, depths = check_type("config", config, EncoderConfig), _check_depths(depths)
    B, T, seed = _check_run(config, batch, seq_len, seed, states=0)
    repeats = check_timing(repeats, clock, name="repeats")
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, (B, T))
    seconds = {mode: [] for mode in SHARING}
    with threadpool_limits(limits=1, user_api="blas"):
        for L in depths:
            encoders = {mode: Encoder(config.replace(num_hidden_layers=L, sharing=mode), seed=seed,
                                      dtype=np.float32) for mode in SHARING}
            medians = median_seconds({mode: (lambda e=e: e(ids)) for mode, e in encoders.items()},
                                     repeat=repeats, min_seconds=5e-3, clock=clock,
                                     alternate=True)
            for mode in SHARING:
                seconds[mode].append(medians[mode])
    return {mode: np.array(s) for mode, s in seconds.items()}


def weight_bytes_per_forward(config: EncoderConfig,
                             dtype=np.float32) -> tuple[int, int]:
    """distinct = 4 (c_A N_A + c_F N_F),  read = 4 L (N_A + N_F)   (float32).

    The bytes of layer weights one forward pass reads (8 per weight in
    float64): ``distinct``, each stored array once (a shared sublayer is one
    array, read by all L layers), and ``read``, counted every time a layer
    reads it: the same in every sharing mode. N_A and N_F are one attention
    and one FFN sublayer, each with its layer norm; c_A and c_F their stored
    copies. Embeddings are left out: a forward reads only the rows of its
    tokens, positions and types, and the E -> H map, in every mode alike.
    """
    check_type("config", config, EncoderConfig)
    dtype = check_float_dtype("dtype", dtype)
    c = count_parameters(config)
    per_layer = (c.attention_per_layer + c.ffn_per_layer
                 + c.layer_norms_per_layer)
    size, L = dtype.itemsize, config.num_hidden_layers
    return size * c.encoder, size * L * per_layer


_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def cache_sizes(root=CACHE_DIR) -> dict[str, int]:
    """Bytes of each cache of one CPU as Linux lists it under ``root``: {"L1d": .., "L1i": .., "L2": ..,
    "L3": ..} (data and instruction caches are told apart; unified ones are named by level alone).

    Empty where the listing is absent or unreadable (another operating system, some containers): a
    reader's machine may not say, and the caller shows that instead of a number.
    """
    if not isinstance(root, str | Path):
        raise TypeError(f"root must be a folder path (str or pathlib.Path), got {type(root).__name__}")
    root = Path(root)
    sizes = {}
    for index in sorted(root.glob("index*")) if root.is_dir() else []:
        try:
            level, kind, size = ((index / name).read_text().strip() for name in ("level", "type", "size"))
        except OSError:
            continue
        match = re.fullmatch(r"(\d+)\s*([KMG]?)", size)
        if not match or not level.isdigit():
            continue
        suffix = {"Data": "d", "Instruction": "i"}.get(kind, "")
        sizes[f"L{level}{suffix}"] = int(match[1]) * _UNITS[match[2]]
    return sizes
