"""What XLA makes of the JAX attention forms (:mod:`.jax_attention`): the program of each, as lowered and
after optimisation, as text (``geron_lib.studies.compiled_heads`` reads its matrix products), and their
running times jitted, side by side with the numpy kernels in interleaved rounds. Every figure comes with
:func:`versions`, since another jax, jaxlib or backend may compile otherwise. Needs the optional jax extra.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial

import jax
import jax.extend
import jaxlib
import numpy as np

from ..model.attention import ATTENTION_FORMS, check_attention, random_attention_weights
from ..timing import median_seconds
from ..validate import check_choice, check_float_dtype, check_head_grid, check_int
from .jax_attention import JAX_FORMS

#: The three ways every form is written in :mod:`.jax_attention`
STYLES = ("loop", "vmap", "batched")


def versions() -> dict[str, str]:
    """What compiled the programs: jax, jaxlib (which carries its XLA), the backend's platform, version and
    runtime, and the XLA_FLAGS the process started with (threads, passes)."""
    backend = jax.extend.backend.get_backend()
    return {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "backend": backend.platform,
            "platform_version": backend.platform_version, "runtime": backend.runtime_type,
            "XLA_FLAGS": os.environ.get("XLA_FLAGS", "")}


def _jitted(form: str, style: str, num_attention_heads: int):
    return jax.jit(partial(JAX_FORMS[form][style], num_attention_heads=num_attention_heads))


def _inputs(form: str, T: int, h: int, H: int, B: int, dtype, seed: int) -> tuple[np.ndarray, dict]:
    """x (B, T, H) ~ N(0, 1) and the weights of ``random_attention_weights``, in ``dtype``, checked."""
    w = {k: v.astype(dtype) for k, v in random_attention_weights(H, h, form, seed=seed).items()}
    x = np.random.default_rng(seed).normal(size=(B, T, H)).astype(dtype)  # (B, T, H)
    check_attention(x, w, h, form)
    return x, w


def program_texts(form: str, style: str, x: np.ndarray, w: dict, num_attention_heads: int) -> tuple[str, str]:
    """(StableHLO as lowered, HLO after XLA's optimisation) of ``form`` written ``style``, jitted, on ``x``
    and ``w`` (numpy, checked as :func:`geron_lib.model.attention.multi_head_attention` checks them)."""
    check_choice("form", form, tuple(JAX_FORMS))
    check_choice("style", style, STYLES)
    check_attention(x, w, num_attention_heads, form)
    lowered = _jitted(form, style, num_attention_heads).lower(x, w)
    return lowered.as_text(), lowered.compile().as_text()


def compiled_programs(T_values, h_values, *, hidden_size: int = 128, batch: int = 1, dtype="float32",
                      seed: int = 0) -> dict[tuple[str, str, int, int], tuple[str, str]]:
    """{(form, style, h, T): (StableHLO as lowered, HLO after optimisation)} for both forms, every style
    and every size, in ``dtype`` (float64 under ``jax.enable_x64``)."""
    T_values, h_values, H, B = check_head_grid(T_values, h_values, hidden_size, batch)
    dtype = check_float_dtype("dtype", dtype)
    with jax.enable_x64(dtype == np.float64):
        return {(form, style, h, T): program_texts(form, style, *_inputs(form, T, h, H, B, dtype, seed), h)
                for form in JAX_FORMS for style in STYLES for h in h_values for T in T_values}


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
                x, w = _inputs(form, T, h, H, B, dtype, seed)
                batched, _, loop = ATTENTION_FORMS[form]
                fns = {"numpy loop": partial(loop, x, w, h), "numpy batched": partial(batched, x, w, h)}
                x_device, w_device = jax.device_put((x, w))
                for style in STYLES:
                    fns[f"jax {style}"] = _ready(_jitted(form, style, h), x_device, w_device)
                    fns[f"jax {style}"]()  # compiles: the rounds time only calls
                seconds = median_seconds(fns, repeat=repeat, clock=clock)
                rows.append({"form": form, "T": T, "h": h, **seconds,
                             "loop / batched": seconds["jax loop"] / seconds["jax batched"],
                             "vmap / batched": seconds["jax vmap"] / seconds["jax batched"]})
    return rows
