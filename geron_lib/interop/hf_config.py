"""Hugging Face configs without torch, in both directions: ``config_from_hf`` reads an ALBERT, BERT or
RoBERTa ``config.json`` (or its dict) into an :class:`EncoderConfig`; ``config_to_hf`` writes the dict back.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from ..config import MODEL_TYPES, EncoderConfig
from ..validate import check_choice, check_int, check_type

#: transformers' defaults (``AlbertConfig``, ``BertConfig``, ``RobertaConfig``) for the fields we read.
HF_DEFAULTS: dict[str, dict] = {
    "bert": dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, hidden_act="gelu", max_position_embeddings=512, type_vocab_size=2,
                 initializer_range=0.02, layer_norm_eps=1e-12, pad_token_id=0),
    "albert": dict(vocab_size=30000, embedding_size=128, hidden_size=4096, num_hidden_layers=12,
                   num_hidden_groups=1, num_attention_heads=64, intermediate_size=16384, inner_group_num=1,
                   hidden_act="gelu_new", max_position_embeddings=512, type_vocab_size=2,
                   initializer_range=0.02, layer_norm_eps=1e-12, pad_token_id=0),
}
HF_DEFAULTS["roberta"] = HF_DEFAULTS["bert"] | dict(vocab_size=50265, pad_token_id=1)

_COMMON = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
           "hidden_act", "max_position_embeddings", "type_vocab_size", "initializer_range", "layer_norm_eps",
           "pad_token_id")


def _read(source) -> dict:
    """A config as a plain dict, from a mapping or a path to a config.json (or to its folder)."""
    if isinstance(source, Mapping):
        return dict(source)
    if not isinstance(source, str | os.PathLike):
        raise TypeError(f"config must be a dict or a path to a config.json, got {type(source).__name__}")
    path = Path(source)
    if path.is_dir():
        path = path / "config.json"
    if not path.is_file():
        raise ValueError(f"config: no such file {str(path)!r}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"config: {str(path)!r} is not a JSON file ({err})") from None
    if not isinstance(data, dict):
        raise ValueError(f"config: {str(path)!r} holds a {type(data).__name__}, not a JSON object")
    return data


def _refuse_unsupported(hf: dict) -> None:
    """Clear refusals for Hugging Face options the numpy encoder does not implement."""
    if hf.get("is_decoder") or hf.get("add_cross_attention"):
        raise ValueError("config: is_decoder/add_cross_attention are set; geron_lib's Encoder is a "
                         "bidirectional encoder (no causal mask, no cross-attention)")
    position = hf.get("position_embedding_type", "absolute")
    if position != "absolute":
        raise ValueError(f"config: position_embedding_type must be 'absolute', got {position!r}")
    if hf.get("tie_word_embeddings", True) is not True:
        raise ValueError("config: tie_word_embeddings must be true; geron_lib's MLM head reuses the token "
                         "embedding as its decoder (counted once)")


def _albert_sharing(hf: dict) -> str:
    """ALBERT's groups as a sharing mode: 1 group shares everything, one group per layer shares nothing."""
    L = check_int("num_hidden_layers", hf["num_hidden_layers"], minimum=1)
    groups = check_int("num_hidden_groups", hf["num_hidden_groups"], minimum=1)
    inner = check_int("inner_group_num", hf["inner_group_num"], minimum=1)
    if inner != 1:
        raise ValueError(f"inner_group_num must be 1 (one layer per group), got {inner}: with more, each of "
                         "the num_hidden_layers steps runs several layers, which geron_lib does not model")
    if groups not in (1, L):
        raise ValueError(f"num_hidden_groups must be 1 (every layer shared) or num_hidden_layers ({L}, "
                         f"nothing shared), got {groups}: geron_lib's sharing modes cannot express partial "
                         "groups")
    return "all" if groups == 1 else "none"


def config_from_hf(config) -> EncoderConfig:
    """An :class:`EncoderConfig` from a Hugging Face config dict or ``config.json`` path.

    Missing fields take transformers' defaults for that model type. An ALBERT config always has its E -> H
    map (transformers' ``AlbertModel`` keeps ``embedding_hidden_mapping_in`` also when E = H). Refused with
    a ValueError that says why: other model types, decoders, relative positions, untied embeddings, and
    ALBERT groups other than all-shared or none-shared.
    """
    raw = _read(config)
    model_type = check_choice("model_type", raw.get("model_type"), MODEL_TYPES)
    hf = HF_DEFAULTS[model_type] | raw
    _refuse_unsupported(hf)
    fields = {name: hf[name] for name in _COMMON} | {"model_type": model_type}
    if model_type == "albert":
        fields |= {"embedding_size": hf["embedding_size"], "sharing": _albert_sharing(hf),
                   "embedding_projection": True}
    config = EncoderConfig(**fields)
    if config.type_vocab_size < 1:
        raise ValueError("type_vocab_size must be at least 1 for a Hugging Face model (it always adds the "
                         "embedding of token type 0)")
    return config


def config_to_hf(config: EncoderConfig) -> dict:
    """The Hugging Face config dict of ``config``; ValueError for what transformers has no model of."""
    c = check_type("config", config, EncoderConfig)
    if c.attention != "concat":
        raise ValueError("attention must be 'concat' for a Hugging Face model (the summed form has no W_O "
                         "and no transformers class)")
    if c.type_vocab_size < 1:
        raise ValueError("type_vocab_size must be at least 1 for a Hugging Face model")
    hf = {"model_type": c.model_type} | {name: getattr(c, name) for name in _COMMON}
    if c.pad_token_id is None:
        if c.model_type == "roberta":
            raise ValueError("pad_token_id is None, but transformers' RoBERTa numbers positions after its "
                             "padding id: set pad_token_id (roberta-base uses 1)")
        del hf["pad_token_id"]  # transformers' default; it changes nothing for BERT and ALBERT
    if c.model_type == "albert":
        if not c.has_embedding_projection:
            raise ValueError("an ALBERT config for transformers needs its E -> H map: transformers' "
                             "AlbertModel always has one; set embedding_projection=True (or E < H)")
        if c.sharing not in ("all", "none"):
            raise ValueError(f"sharing must be 'all' or 'none' for transformers' ALBERT, got {c.sharing!r}")
        groups = 1 if c.sharing == "all" else c.num_hidden_layers
        return hf | {"embedding_size": c.E, "num_hidden_groups": groups, "inner_group_num": 1}
    if c.sharing != "none":
        raise ValueError(f"sharing must be 'none' for transformers' {c.model_type}, got {c.sharing!r}")
    if c.has_embedding_projection:
        raise ValueError(f"transformers' {c.model_type} has no E -> H map: embedding_size must be None (or "
                         "hidden_size) and embedding_projection not True; only ALBERT has one")
    return hf
