"""The JAX attention forms timed: each form written three ways and jitted as
:mod:`geron_lib.interop.jax_programs` compiles it, side by side with the numpy loop and batched kernels in
interleaved rounds (chapter 3 and ``benchmarks/bench_jax_heads.py``). Times go out with
``jax_programs.versions()``, since another jax, jaxlib or backend may compile otherwise. Needs the optional
jax extra.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

import jax
import numpy as np

from ..interop.jax_attention import JAX_FORMS
from ..interop.jax_programs import STYLES, example_inputs, jitted
from ..model.attention import ATTENTION_FORMS
from ..timing import median_seconds
from ..validate import check_choice, check_float_dtype, check_head_grid, check_int


def _ready(fn: Callable, *args) -> Callable[[], object]:
    """``fn(*args)``, returning once the result is computed (jax dispatches asynchronously)."""
    return lambda: jax.block_until_ready(fn(*args))


def time_styles(form: str, T_values, h_values, *, hidden_size: int = 128, batch: int = 1, dtype="float64",
                repeat: int = 7, seed: int = 0, clock: Callable[[], float] = time.process_time) -> list[dict]:
    """One row per (T, h): median seconds (by ``clock``, see :func:`geron_lib.timing.sample_seconds`) of the
    numpy loop and batched kernels and of the jitted JAX loop, vmap and batched ``form``, all five timed in
    turn within every round, each JAX function compiled and its inputs on the device before the rounds;
    with the ratios of the JAX loop and vmap to the JAX batched form. ``dtype`` float64 (the numpy
    chapter's) runs JAX under ``jax.enable_x64``."""
    check_choice("form", form, tuple(JAX_FORMS))
    T_values, h_values, H, B = check_head_grid(T_values, h_values, hidden_size, batch)
    dtype = check_float_dtype("dtype", dtype)
    repeat = check_int("repeat", repeat, minimum=1)
    rows = []
    with jax.enable_x64(dtype == np.float64):
        for h in h_values:
            for T in T_values:
                x, w = example_inputs(form, T, h, H, B, dtype, seed)
                batched, _, loop = ATTENTION_FORMS[form]
                fns = {"numpy loop": partial(loop, x, w, h), "numpy batched": partial(batched, x, w, h)}
                x_device, w_device = jax.device_put((x, w))
                for style in STYLES:
                    fns[f"jax {style}"] = _ready(jitted(form, style, h), x_device, w_device)
                    fns[f"jax {style}"]()  # compiles: the rounds time only calls
                seconds = median_seconds(fns, repeat=repeat, clock=clock)
                rows.append({"form": form, "T": T, "h": h, **seconds,
                             "loop / batched": seconds["jax loop"] / seconds["jax batched"],
                             "vmap / batched": seconds["jax vmap"] / seconds["jax batched"]})
    return rows
