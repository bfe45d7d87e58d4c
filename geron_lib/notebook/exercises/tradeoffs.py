"""Checkers for the trade-offs chapter: what ALBERT's savings cost, in loss, memory and compute."""

from __future__ import annotations

import numpy as np

from ...config import SHARING, EncoderConfig
from ...costs.flops import approximate_flops_per_token, flops_per_token
from ...costs.training_memory import training_memory
from ...studies import context_grid as cg
from ...validate import check_choice, check_int
from . import PERCENT, Feedback, close, exact_number, grade_number, preset_config, shown


def saving_costs(result: dict) -> dict[str, float]:
    """cost = L_saving - L_none: what each saving gave up in held-out loss, at the narrow width H.

    From a stored context grid (the mean over seeds of each run's final held-out loss): "factorising",
    the smallest E against E = H, not shared; "sharing", all shared against not shared at E = H;
    "spread", the median over those three cells of the lowest-to-highest seed range, the yardstick for
    both.
    """
    if not (isinstance(result, dict) and isinstance(result.get("grid"), dict)
            and isinstance(result["grid"].get("embedding_sizes"), list)
            and isinstance(result.get("runs"), list)):
        raise TypeError("result must be a grid stored by scripts/context_grid.py (a dict with 'grid' and "
                        f"'runs'), got {shown(result)}")
    grid = cg.Grid(embedding_sizes=tuple(result["grid"]["embedding_sizes"]))
    H, E_small = grid.narrow, min(grid.embedding_sizes)
    cells = {"none": cg.Cell(H, "none", H), "factorising": cg.Cell(E_small, "none", H),
             "sharing": cg.Cell(H, "all", H)}
    loss = {k: cg.per_seed(result, c, "held_out_loss") for k, c in cells.items()}
    return {"factorising": float(loss["factorising"].mean() - loss["none"].mean()),
            "sharing": float(loss["sharing"].mean() - loss["none"].mean()),
            "spread": float(np.median([v.max() - v.min() for v in loss.values()]))}


def check_costlier_saving(answer, result: dict | None = None) -> Feedback:
    """Is ``answer`` the saving ("factorising" or "sharing") that cost the miniatures more held-out loss
    in the stored context grid (``result``; the one shipped with the library when None)?"""
    costs = saving_costs(cg.load_stored() if result is None else result)
    choices = ("factorising", "sharing")
    if not isinstance(answer, str) or answer not in choices:
        return Feedback(False, f"the answer should be one of {list(choices)}; got {shown(answer)}.")
    expected = max(choices, key=costs.get)
    other = min(choices, key=costs.get)
    measured = (f"factorising (the smallest E against E = H, not shared) {costs['factorising']:+.3f} nats, "
                f"sharing all layers at E = H {costs['sharing']:+.3f} nats; the typical seed spread of one "
                f"cell is {costs['spread']:.3f}")
    within = abs(costs[other]) <= costs["spread"]
    if answer == expected:
        verdict = (f" {other.capitalize()} cost no more than the seed spread: not a measurable cost."
                   if within else "")
        return Feedback(True, f"{expected!r} cost more: {measured}.{verdict}")
    return Feedback(False, f"{answer!r} cost less here: {measured}. Compare each difference with the seed "
                           "spread before you compare them with each other: look at each cell's final "
                           "held-out loss, seed by seed (context_grid.per_seed).")


def _albert(preset: str, sharing: str) -> EncoderConfig:
    check_choice("sharing", sharing, SHARING)
    return preset_config(preset).replace(sharing=sharing)


def sharing_memory_saving(preset: str, batch: int, seq_len: int) -> float:
    """1 - M_all / M_none: the share of a training step's memory (float32, every position predicted as
    :func:`~geron_lib.costs.training_memory.training_memory` counts it) that sharing all layers saves."""
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
    return grade_number(answer, expected, rel_tol=1e-3, hint=hint, factors=PERCENT,
                        what=f"the share of {preset}'s training memory that sharing all layers saves at "
                             f"batch {batch}, T = {seq_len}")


def rule_of_thumb_ratio(preset: str, seq_len: int = 512) -> float:
    """C_exact / C_rule: the exact training FLOPs per token of ``preset``'s encoder (no heads: three times
    the forward's matrix products) over the rule of thumb 6N + 12LTH."""
    config = preset_config(preset)
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
    number = exact_number(answer)
    return number is not None and close(number, value, 1e-3)
