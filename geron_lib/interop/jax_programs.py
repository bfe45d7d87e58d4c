"""What XLA makes of the JAX attention forms (:mod:`.jax_attention`): each form jitted, and its program as
lowered and after optimisation, as text (``geron_lib.studies.compiled_heads`` reads its matrix products;
``geron_lib.studies.jax_timing`` times the jitted forms). Every figure comes with :func:`versions`, since
another jax, jaxlib or backend may compile otherwise. Needs the optional jax extra.
"""

from __future__ import annotations

import os
from functools import partial

import jax
import jax.extend
import jaxlib
import numpy as np

from ..model.attention import check_attention, random_attention_weights
from ..validate import check_choice, check_float_dtype, check_head_grid
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


def jitted(form: str, style: str, num_attention_heads: int):
    """``form`` written ``style`` (:mod:`.jax_attention`) at ``num_attention_heads`` heads, under jax.jit:
    a function of (x, w), compiled on its first call."""
    return jax.jit(partial(JAX_FORMS[form][style], num_attention_heads=num_attention_heads))


def example_inputs(form: str, T: int, h: int, H: int, B: int, dtype, seed: int) -> tuple[np.ndarray, dict]:
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
    lowered = jitted(form, style, num_attention_heads).lower(x, w)
    return lowered.as_text(), lowered.compile().as_text()


def compiled_programs(T_values, h_values, *, hidden_size: int = 128, batch: int = 1, dtype="float32",
                      seed: int = 0) -> dict[tuple[str, str, int, int], tuple[str, str]]:
    """{(form, style, h, T): (StableHLO as lowered, HLO after optimisation)} for both forms, every style
    and every size, in ``dtype`` (float64 under ``jax.enable_x64``)."""
    T_values, h_values, H, B = check_head_grid(T_values, h_values, hidden_size, batch)
    dtype = check_float_dtype("dtype", dtype)
    with jax.enable_x64(dtype == np.float64):
        inputs = {(form, h, T): example_inputs(form, T, h, H, B, dtype, seed)
                  for form in JAX_FORMS for h in h_values for T in T_values}
        return {(form, style, h, T): program_texts(form, style, *inputs[form, h, T], h)
                for form in JAX_FORMS for style in STYLES for h in h_values for T in T_values}

