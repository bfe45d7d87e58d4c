"""Checkers for the cross-layer sharing chapter: call them with your answer, read the verdict."""

from __future__ import annotations

from ...config import SHARING, EncoderConfig
from ...costs.params import count_parameters
from ...validate import check_choice, check_int
from . import Feedback, grade_number, preset_config


def _config(preset: str, sharing: str, **sizes) -> EncoderConfig:
    """``preset`` under ``sharing``, with the sizes given (None: the preset's own)."""
    check_choice("sharing", sharing, SHARING)
    given = {name: check_int(name, size, minimum=1) for name, size in sizes.items() if size is not None}
    return preset_config(preset).replace(sharing=sharing, **given)


def check_shared_count(answer, preset: str, sharing: str, num_hidden_layers: int | None = None) -> Feedback:
    """Is ``answer`` the parameter count (encoder only, no pooler) of ``preset`` under ``sharing``, with
    ``num_hidden_layers`` layers (None: the preset's)?"""
    config = _config(preset, sharing, num_hidden_layers=num_hidden_layers)
    expected = count_parameters(config).total
    slips = {count_parameters(config.replace(sharing=other)).total:
             f"That is the count with sharing={other!r}: check which sublayer is stored once and which "
             "once per layer." for other in SHARING if other != sharing}
    layers = "" if num_hidden_layers is None else f" at L = {config.num_hidden_layers}"
    return grade_number(answer, expected, what=f"{preset}{layers} with sharing={sharing!r}", slips=slips,
                        hint="Embeddings once, then each shared sublayer once and each unshared one L "
                             "times; every sublayer carries its own layer norm (2 H).")


def check_added_per_layer(answer, preset: str, sharing: str, hidden_size: int | None = None) -> Feedback:
    """Is ``answer`` the number of parameters one more layer adds to ``preset`` under ``sharing``, at width
    ``hidden_size`` (None: the preset's; it must be a multiple of the preset's heads)?"""
    config = _config(preset, sharing, hidden_size=hidden_size)
    L = config.num_hidden_layers
    expected = (count_parameters(config.replace(num_hidden_layers=L + 1)).total
                - count_parameters(config).total)
    width = "" if hidden_size is None else f" at H = {config.hidden_size}"
    return grade_number(answer, expected, what=f"one more layer of {preset}{width} with sharing={sharing!r}",
                        hint="A shared sublayer adds nothing; an unshared one adds its weights, biases "
                             "and its layer norm (2 H).")
