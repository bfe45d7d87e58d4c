"""What XLA makes of the JAX attention forms (:mod:`.jax_attention`): each form jitted, and its program as
lowered and after optimisation, as text (``geron_lib.studies.compiled_heads`` reads its matrix products;
``geron_lib.studies.jax_timing`` times the jitted forms). Every figure comes with :func:`versions`, since
another jax, jaxlib or backend may compile otherwise. Needs the optional jax extra.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import partial

import jax
import jax.extend
import jaxlib
import numpy as np

from ..model.attention import check_attention, random_attention_weights
from ..validate import check_choice, check_float_dtype, check_head_grid, check_heads, check_int
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



#: A line of XLA's log (hlo_pass_pipeline.cc at verbosity 1): a pipeline starts on a module, or a pass runs
_PIPELINE = re.compile(r"hlo_pass_pipeline\.cc:\d+\] Running HLO pass pipeline on module (\S+): ")
_PASS = re.compile(r"hlo_pass_pipeline\.cc:\d+\]\s+HLO pass (\S+)$")

_COMPILE_ONE = """
import sys
import numpy as np
from geron_lib.interop.jax_programs import example_inputs, program_texts
form, style, h, T, H = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
program_texts(form, style, *example_inputs(form, T, h, H, 1, np.float32, 0), h)
"""


def optimisation_passes(form: str = "concat", style: str = "loop", num_attention_heads: int = 4,
                        seq_len: int = 16, hidden_size: int = 128) -> list[str]:
    """Every HLO pass XLA ran, in order (a pass that runs again is listed again), while it optimised
    ``form`` written ``style`` (float32, one sequence): compiled in a fresh Python process whose XLA
    logs each pass it runs (TF_CPP_VMODULE hlo_pass_pipeline=1), on the backend that process finds
    (JAX_PLATFORMS=cpu unless set). RuntimeError when the log names no pass at all."""
    check_choice("form", form, tuple(JAX_FORMS))
    check_choice("style", style, STYLES)
    h = check_int("num_attention_heads", num_attention_heads, minimum=1)
    T = check_int("seq_len", seq_len, minimum=1)
    H = check_int("hidden_size", hidden_size, minimum=1, maximum=4096)
    check_heads(H, h)
    env = os.environ | {"TF_CPP_MIN_LOG_LEVEL": "0", "TF_CPP_VMODULE": "hlo_pass_pipeline=1"}
    env.setdefault("JAX_PLATFORMS", "cpu")
    run = subprocess.run([sys.executable, "-c", _COMPILE_ONE, form, style, str(h), str(T), str(H)],
                         env=env, capture_output=True, text=True, timeout=300, check=True)
    ours = f"jit_{JAX_FORMS[form][style].__name__}"  # the module jax.jit makes of the function
    module, passes = None, []
    for line in run.stderr.splitlines():
        if started := _PIPELINE.search(line):
            module = started.group(1)
        elif (ran := _PASS.search(line)) and module == ours:
            passes.append(ran.group(1))
    if not passes:
        raise RuntimeError(f"XLA's log named no pass run on {ours}: this jaxlib logs passes otherwise, so "
                           "the passes cannot be read from it")
    return passes
