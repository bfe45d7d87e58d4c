"""Checkers for the trade-offs chapter: what ALBERT's savings cost, in loss, memory and compute."""

from __future__ import annotations

import numpy as np

from ...model.config import SHARING, EncoderConfig
from ...model.flops import approximate_flops_per_token, flops_per_token
from ...model.training_memory import training_memory
from ...studies.tradeoffs import load_stored, loss_per_parameter_saved
from ...validate import check_choice, check_int
from . import Feedback, grade_number


def check_least_loss_per_parameter(answer, E: int = 64, result: dict | None = None) -> Feedback:
    """Is ``answer`` the sharing mode ("all", "attention" or "ffn") that gives up the least held-out loss
    per parameter saved against not sharing, at embedding size E in the stored grid (``result``, read from
    ``book/data/tradeoffs.json`` when None)?"""
    result = load_stored() if result is None else result
    per_million = loss_per_parameter_saved(result, check_int("E", E, minimum=1))
    expected = min(per_million, key=per_million.get)
    shown = ", ".join(f"{mode} {value:+.3f}" for mode, value in per_million.items())
    if not isinstance(answer, str) or answer not in per_million:
        return Feedback(False, f"the answer should be one of {sorted(per_million)} (a sharing mode); got "
                               f"{answer!r}.")
    if answer == expected:
        return Feedback(True, f"{expected!r} gives up the least: nats of held-out loss per million "
                              f"parameters saved, at E = {E}: {shown}.")
    return Feedback(False, f"{answer!r} is not the cheapest. Divide each mode's loss increase over "
                           "not sharing (mean over seeds) by the parameters it saves: a mode that saves "
                           "few parameters must also lose very little. "
                           f"Look at loss_per_parameter_saved(result, {E}).")


def _albert(preset: str, sharing: str) -> EncoderConfig:
    check_choice("sharing", sharing, SHARING)
    return EncoderConfig.preset(preset).replace(sharing=sharing)


def sharing_memory_saving(preset: str, batch: int, seq_len: int) -> float:
    """1 - M_all / M_none: the share of a training step's memory (float32, every position predicted as
    :func:`~geron_lib.model.training_memory.training_memory` counts it) that sharing all layers saves."""
    batch = check_int("batch", batch, minimum=1)
    shared, unshared = (training_memory(_albert(preset, s), batch, seq_len, dtype=np.float32).total
                        for s in ("all", "none"))
    return 1 - shared / unshared


def check_sharing_memory_saving(answer, batch: int, seq_len: int = 128,
                                preset: str = "albert-base-v2") -> Feedback:
    """Is ``answer`` the share of a training step's memory that sharing all layers saves (to 0.1 %), for
    ``preset`` at ``batch`` sequences of ``seq_len`` tokens in float32?"""
    expected = sharing_memory_saving(preset, batch, seq_len)
    hint = ("Sharing saves weights, gradients and both Adam moments (4 numbers per parameter saved); the "
            "activations the backward pass keeps are the same in both models and grow with the batch. "
            "Compare training_memory(...).total with sharing 'all' and 'none'.")
    for other in (32, 256):
        if other != batch and _close(answer, sharing_memory_saving(preset, other, seq_len)):
            hint = (f"That is the share at batch {other}: the bytes sharing saves do not change with the "
                    "batch, but the total they are a share of does.")
    return grade_number(answer, expected, rel_tol=1e-3, hint=hint,
                        what=f"the share of {preset}'s training memory that sharing all layers saves at "
                             f"batch {batch}, T = {seq_len}")


def rule_of_thumb_ratio(preset: str, seq_len: int = 512) -> float:
    """C_exact / C_rule: the exact training FLOPs per token of ``preset``'s encoder (no heads: three times
    the forward's matrix products) over the rule of thumb 6N + 12LTH."""
    config = EncoderConfig.preset(preset)
    return 3 * flops_per_token(config, seq_len) / approximate_flops_per_token(config, seq_len, training=True)


def check_rule_of_thumb_ratio(answer, preset: str, seq_len: int = 512) -> Feedback:
    """Is ``answer`` the exact training FLOPs per token of ``preset``'s encoder divided by the rule of thumb
    6N + 12LTH (to 0.1 %)?"""
    expected = rule_of_thumb_ratio(preset, seq_len)
    hint = ("Count N as the rule does, the stored encoder layers (count_parameters(config).encoder), and the "
            "exact FLOPs with 3 * flops_per_token(config, T) (forward, dX and dW products).")
    if _close(answer, 1 / expected):
        hint = "That is the inverse: divide the exact count by the rule of thumb."
    return grade_number(answer, expected, rel_tol=1e-3, hint=hint,
                        what=f"exact over rule-of-thumb training FLOPs per token of {preset} at "
                             f"T = {seq_len}")


def _close(answer, value: float) -> bool:
    return isinstance(answer, int | float) and not isinstance(answer, bool) and np.isclose(answer, value,
                                                                                          rtol=1e-3, atol=0)
