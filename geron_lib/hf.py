"""Hugging Face interop without torch: configs in both directions, and transformers' weight names.

``config_from_hf`` reads an ALBERT, BERT or RoBERTa ``config.json`` (or its dict) into an
:class:`EncoderConfig`; ``config_to_hf`` writes the dict back. ``hf_names`` pairs every array of an
:class:`~geron_lib.encoder.Encoder` with the name transformers gives it, and ``hf_weights`` reads a
state dict of numpy arrays by those names (``Encoder.from_hf_state_dict`` is built on it);
``hf_state_dict`` writes an encoder's weights the other way.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .config import MODEL_TYPES, EncoderConfig
from .params import count_parameters
from .validate import check_choice, check_int, check_memory

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

    Missing fields take transformers' defaults for that model type. Refused with a ValueError that says
    why: other model types, decoders, relative positions, untied embeddings, ALBERT groups other than
    all-shared or none-shared, and ALBERT with E = H (transformers keeps an E -> H projection there, which
    geron_lib only has for E < H).
    """
    raw = _read(config)
    model_type = check_choice("model_type", raw.get("model_type"), MODEL_TYPES)
    hf = HF_DEFAULTS[model_type] | raw
    _refuse_unsupported(hf)
    fields = {name: hf[name] for name in _COMMON} | {"model_type": model_type}
    if model_type == "albert":
        E, H = hf["embedding_size"], hf["hidden_size"]
        if E == H:
            raise ValueError(f"embedding_size equals hidden_size ({H}): transformers' ALBERT still applies "
                             "an E -> H linear map (embedding_hidden_mapping_in) there, which geron_lib's "
                             "encoder has only when embedding_size < hidden_size")
        fields |= {"embedding_size": E, "sharing": _albert_sharing(hf)}
    config = EncoderConfig(**fields)
    if config.type_vocab_size < 1:
        raise ValueError("type_vocab_size must be at least 1 for a Hugging Face model (it always adds the "
                         "embedding of token type 0)")
    return config


def config_to_hf(config: EncoderConfig) -> dict:
    """The Hugging Face config dict of ``config``; ValueError for what transformers has no model of."""
    if not isinstance(config, EncoderConfig):
        raise TypeError(f"config must be an EncoderConfig, got {type(config).__name__}")
    c = config
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
        if not c.factorised:
            raise ValueError("an ALBERT config for transformers needs embedding_size < hidden_size: "
                             "transformers always adds the E -> H projection")
        if c.sharing not in ("all", "none"):
            raise ValueError(f"sharing must be 'all' or 'none' for transformers' ALBERT, got {c.sharing!r}")
        groups = 1 if c.sharing == "all" else c.num_hidden_layers
        return hf | {"embedding_size": c.E, "num_hidden_groups": groups, "inner_group_num": 1}
    if c.sharing != "none":
        raise ValueError(f"sharing must be 'none' for transformers' {c.model_type}, got {c.sharing!r}")
    if c.factorised:
        raise ValueError(f"embedding_size must be None (or hidden_size) for transformers' {c.model_type}: "
                         "only ALBERT factorises the embedding")
    return hf


# transformers' names inside one layer; nn.Linear stores W as (out, in), so every W_* is transposed
_BERT_LAYER = {
    "attention": {"W_Q": "attention.self.query.weight", "b_Q": "attention.self.query.bias",
                  "W_K": "attention.self.key.weight", "b_K": "attention.self.key.bias",
                  "W_V": "attention.self.value.weight", "b_V": "attention.self.value.bias",
                  "W_O": "attention.output.dense.weight", "b_O": "attention.output.dense.bias",
                  "ln_gain": "attention.output.LayerNorm.weight",
                  "ln_bias": "attention.output.LayerNorm.bias"},
    "ffn": {"W_1": "intermediate.dense.weight", "b_1": "intermediate.dense.bias",
            "W_2": "output.dense.weight", "b_2": "output.dense.bias",
            "ln_gain": "output.LayerNorm.weight", "ln_bias": "output.LayerNorm.bias"},
}
_ALBERT_LAYER = {
    "attention": {"W_Q": "attention.query.weight", "b_Q": "attention.query.bias",
                  "W_K": "attention.key.weight", "b_K": "attention.key.bias",
                  "W_V": "attention.value.weight", "b_V": "attention.value.bias",
                  "W_O": "attention.dense.weight", "b_O": "attention.dense.bias",
                  "ln_gain": "attention.LayerNorm.weight", "ln_bias": "attention.LayerNorm.bias"},
    "ffn": {"W_1": "ffn.weight", "b_1": "ffn.bias", "W_2": "ffn_output.weight", "b_2": "ffn_output.bias",
            "ln_gain": "full_layer_layer_norm.weight", "ln_bias": "full_layer_layer_norm.bias"},
}
_EMBEDDINGS = {"word": "embeddings.word_embeddings.weight",
               "position": "embeddings.position_embeddings.weight",
               "token_type": "embeddings.token_type_embeddings.weight",
               "ln_gain": "embeddings.LayerNorm.weight", "ln_bias": "embeddings.LayerNorm.bias"}
#: Buffers that older checkpoints store next to the weights; not parameters.
_BUFFERS = ("embeddings.position_ids", "embeddings.token_type_ids")


def hf_names(config: EncoderConfig, *, pooler: bool = False) -> dict[str, str]:
    """``Encoder.parameters()`` name -> the name transformers gives that array in its base model."""
    config_to_hf(config)  # refuses what transformers cannot hold
    names = {f"embeddings.{k}": v for k, v in _EMBEDDINGS.items()}
    if config.model_type == "albert":
        names |= {"embeddings.W_P": "encoder.embedding_hidden_mapping_in.weight",
                  "embeddings.b_P": "encoder.embedding_hidden_mapping_in.bias"}
        layer, prefix = _ALBERT_LAYER, "encoder.albert_layer_groups.{}.albert_layers.0."
    else:
        layer, prefix = _BERT_LAYER, "encoder.layer.{}."
    stored = 1 if config.sharing == "all" else config.num_hidden_layers
    for i in range(stored):
        for part, table in layer.items():
            names |= {f"layers.{i}.{part}.{k}": prefix.format(i) + v for k, v in table.items()}
    if pooler:
        dense = "pooler." if config.model_type == "albert" else "pooler.dense."
        names |= {"pooler.W": dense + "weight", "pooler.b": dense + "bias"}
    return names


def _is_matrix(name: str) -> bool:
    """W_Q ... W_2, W_P and the pooler's W: nn.Linear weights, which transformers stores as (out, in)."""
    return name.rsplit(".", 1)[-1].startswith("W")


def hf_state_dict(encoder) -> dict[str, np.ndarray]:
    """An :class:`~geron_lib.encoder.Encoder`'s weights under transformers' names and layouts (numpy arrays;
    ``torch.from_numpy`` each one for ``model.load_state_dict``)."""
    params = encoder.parameters()
    names = hf_names(encoder.config, pooler=encoder.pooler is not None)
    return {theirs: (params[ours].T if _is_matrix(ours) else params[ours]) for ours, theirs in names.items()}


def _shape(name: str, config: EncoderConfig) -> tuple[int, ...]:
    """The shape geron_lib stores the array ``name`` in."""
    c, key = config, name.rsplit(".", 1)[-1]
    V, E, H, F = c.vocab_size, c.E, c.hidden_size, c.intermediate_size
    if name.startswith("embeddings."):
        return {"word": (V, E), "position": (c.max_position_embeddings, E),
                "token_type": (c.type_vocab_size, E), "ln_gain": (E,), "ln_bias": (E,),
                "W_P": (E, H), "b_P": (H,)}[key]
    return {"W_1": (H, F), "b_1": (F,), "W_2": (F, H)}.get(key, (H, H) if key.startswith("W") else (H,))


def _base_model_keys(state_dict: Mapping, model_type: str) -> dict:
    """The base model's entries: a head model's ``albert.``/``bert.``/``roberta.`` prefix is dropped and its
    head weights are left out."""
    prefix = f"{model_type}."
    if any(k.startswith(prefix) for k in state_dict):
        return {k[len(prefix):]: v for k, v in state_dict.items() if k.startswith(prefix)}
    return dict(state_dict)


def hf_weights(config: EncoderConfig, state_dict, dtype=np.float32):
    """Read a transformers state dict (numpy arrays) into geron_lib's sublayer dicts.

    Returns ``(embeddings, attention_copies, ffn_copies, pooler)`` with pooler None when the state dict
    has no pooler. Every W is transposed to (in, out); arrays are copied in ``dtype``.
    """
    if not isinstance(config, EncoderConfig):
        raise TypeError(f"config must be an EncoderConfig, got {type(config).__name__}")
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"state_dict must be a dict of numpy arrays, got {type(state_dict).__name__}")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    sd = _base_model_keys(state_dict, config.model_type)
    pooler = any(k.startswith("pooler.") for k in sd)
    names = hf_names(config, pooler=pooler)
    missing = [hf for hf in names.values() if hf not in sd]
    unexpected = sorted(set(sd) - set(names.values()) - set(_BUFFERS))
    if missing or unexpected:
        raise ValueError(f"state_dict does not match the config ({config.model_type}, "
                         f"{config.num_hidden_layers} layers, sharing={config.sharing!r}): "
                         f"missing {missing[:4]}{' ...' if len(missing) > 4 else ''}, "
                         f"unexpected {unexpected[:4]}{' ...' if len(unexpected) > 4 else ''}")
    n = count_parameters(config, pooler=pooler).total
    check_memory(n * dtype.itemsize, f"Encoder weights ({n:,} parameters, {dtype})")
    arrays = {}
    for ours, theirs in names.items():
        value = np.asarray(sd[theirs])
        if value.dtype.kind != "f":
            raise TypeError(f"state_dict[{theirs!r}] must hold floats, got {value.dtype}")
        W = _is_matrix(ours)
        expected = _shape(ours, config)
        if (value.T if W else value).shape != expected:
            stored = expected[::-1] if W else expected
            raise ValueError(f"state_dict[{theirs!r}] has shape {value.shape}, expected {stored}")
        arrays[ours] = np.ascontiguousarray(value.T if W else value, dtype=dtype)
    return _group(arrays, config, pooler)


def _group(arrays: dict, config: EncoderConfig, pooler: bool):
    """Flat ``Encoder.parameters()`` names -> (embeddings, attention copies, ffn copies, pooler)."""
    def part(prefix):
        return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}

    stored = 1 if config.sharing == "all" else config.num_hidden_layers
    attention = [part(f"layers.{i}.attention.") for i in range(stored)]
    ffn = [part(f"layers.{i}.ffn.") for i in range(stored)]
    return part("embeddings."), attention, ffn, (part("pooler.") if pooler else None)
