"""Checkers for the cross-layer sharing chapter: call them with your answer, read the verdict."""

from __future__ import annotations

from ...config import SHARING, EncoderConfig
from ...costs.params import count_parameters
from ...validate import check_choice
from . import Feedback, grade_number, preset_config


def _config(preset: str, sharing: str) -> EncoderConfig:
    check_choice("sharing", sharing, SHARING)
    return preset_config(preset).replace(sharing=sharing)


def check_shared_count(answer, preset: str, sharing: str) -> Feedback:
    """Is ``answer`` the parameter count (encoder only, no pooler) of ``preset`` under ``sharing``?"""
    config = _config(preset, sharing)
    expected = count_parameters(config).total
    slips = {count_parameters(config.replace(sharing=other)).total:
             f"That is the count with sharing={other!r}: check which sublayer is stored once and which "
             "once per layer." for other in SHARING if other != sharing}
    return grade_number(answer, expected, what=f"{preset} with sharing={sharing!r}", slips=slips,
                        hint="Embeddings once, then each shared sublayer once and each unshared one L "
                             "times; every sublayer carries its own layer norm (2 H).")


def check_added_per_layer(answer, preset: str, sharing: str) -> Feedback:
    """Is ``answer`` the number of parameters one more layer adds to ``preset`` under ``sharing``?"""
    config = _config(preset, sharing)
    L = config.num_hidden_layers
    expected = (count_parameters(config.replace(num_hidden_layers=L + 1)).total
                - count_parameters(config).total)
    return grade_number(answer, expected, what=f"one more layer of {preset} with sharing={sharing!r}",
                        hint="A shared sublayer adds nothing; an unshared one adds its weights, biases "
                             "and its layer norm (2 H).")
