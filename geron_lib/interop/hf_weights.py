"""transformers' weight names and layouts, without torch: ``hf_names`` pairs every array of an
:class:`~geron_lib.model.encoder.Encoder` with the name transformers gives it, ``encoder_from_hf`` reads a
state dict of numpy arrays by those names into an Encoder, and ``hf_state_dict`` writes an encoder's
weights the other way; ``hf_mlm_names`` and ``hf_mlm_state_dict`` do the same for a
:class:`~geron_lib.model.mlm.MaskedLM` and transformers' ``*ForMaskedLM``, MLM head included.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..config import EncoderConfig
from ..costs.params import count_parameters
from ..model.encoder import Encoder
from ..model.mlm import MaskedLM
from ..validate import check_finite_array, check_float_dtype, check_memory, check_type, plain_array
from .hf_config import config_to_hf

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
#: The MLM head's arrays in transformers' ``*ForMaskedLM``: the dense map H -> E, its activation's layer norm
#: over E, and the output bias. Its decoder is tied: ``decoder.weight`` is the token embedding and
#: ``decoder.bias`` is the output bias, so neither is a parameter of its own (``named_parameters()`` lists
#: each tied tensor once, under its first name); the state dict holds them under both names.
_MLM_HEAD = {
    "bert": {"W": "cls.predictions.transform.dense.weight", "b": "cls.predictions.transform.dense.bias",
             "ln_gain": "cls.predictions.transform.LayerNorm.weight",
             "ln_bias": "cls.predictions.transform.LayerNorm.bias", "b_out": "cls.predictions.bias"},
    "albert": {"W": "predictions.dense.weight", "b": "predictions.dense.bias",
               "ln_gain": "predictions.LayerNorm.weight", "ln_bias": "predictions.LayerNorm.bias",
               "b_out": "predictions.bias"},
    "roberta": {"W": "lm_head.dense.weight", "b": "lm_head.dense.bias",
                "ln_gain": "lm_head.layer_norm.weight", "ln_bias": "lm_head.layer_norm.bias",
                "b_out": "lm_head.bias"},
}
_MLM_DECODER = {"bert": "cls.predictions.decoder", "albert": "predictions.decoder",
                "roberta": "lm_head.decoder"}
#: Buffers that older checkpoints store next to the weights; not parameters.
_BUFFERS = ("embeddings.position_ids", "embeddings.token_type_ids")


def hf_names(config: EncoderConfig, *, pooler: bool = False) -> dict[str, str]:
    """``Encoder.parameters()`` name -> the name transformers gives that array in its base model."""
    config_to_hf(config)  # refuses what transformers cannot hold
    names = {f"embeddings.{k}": v for k, v in _EMBEDDINGS.items()}
    if config.model_type == "albert":  # config_to_hf made sure it has its E -> H map
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


def _check_mlm_export(config: EncoderConfig) -> str:
    """The model type of a config whose MLM head transformers can hold."""
    if config.model_type == "roberta" and config.hidden_act != "gelu":
        raise ValueError(f"hidden_act must be 'gelu' to export a RoBERTa MaskedLM, got "
                         f"{config.hidden_act!r}: transformers' RobertaLMHead applies the exact GELU "
                         "whatever hidden_act says, while geron_lib's head applies hidden_act")
    return config.model_type


def hf_mlm_names(config: EncoderConfig) -> dict[str, str]:
    """name_transformers = model_type.name_base (encoder),  prefix.name (head).

    Maps each ``MaskedLM.parameters()`` name to the name of that parameter
    in transformers' ``*ForMaskedLM``, ``name_base`` being its name in the
    base model (:func:`hf_names`). The encoder's arrays sit under the model
    type's prefix (``bert.``, ``albert.``, ``roberta.``), the head's under
    ``cls.predictions.`` (BERT), ``predictions.`` (ALBERT) or ``lm_head.``
    (RoBERTa). The activation between the head's dense map and its layer
    norm is ``hidden_act`` for BERT and ALBERT, as in geron_lib;
    transformers' ``RobertaLMHead`` always applies the exact GELU, so a
    RoBERTa config with another ``hidden_act`` is refused.
    """
    names = hf_names(config)  # refuses what transformers cannot hold
    model_type = _check_mlm_export(config)
    names = {ours: f"{model_type}.{theirs}" for ours, theirs in names.items()}
    head = _MLM_HEAD[model_type]
    return names | {f"mlm_head.{k}": v for k, v in head.items()}


def hf_mlm_state_dict(model: MaskedLM) -> dict[str, np.ndarray]:
    """theta_transformers = W^T (weight matrices), theta (the rest).

    A :class:`~geron_lib.model.mlm.MaskedLM`'s weights under the names and
    layouts of transformers' ``*ForMaskedLM`` state dict (numpy arrays, views
    where no transpose is needed), the tied decoder's weight and bias
    included (decoder = (Emb, b_out)), so that
    ``load_state_dict(..., strict=True)`` takes it.
    """
    check_type("model", model, MaskedLM)
    params = model.parameters()
    names = hf_mlm_names(model.config)
    out = {theirs: params[ours].T if is_transposed(ours) else params[ours]
           for ours, theirs in names.items()}
    decoder = _MLM_DECODER[model.config.model_type]
    return out | {f"{decoder}.weight": params["embeddings.word"],
                  f"{decoder}.bias": params["mlm_head.b_out"]}


def is_transposed(name: str) -> bool:
    """True for W_Q ... W_2, W_P, the pooler's and the MLM head's W: nn.Linear weights, which transformers
    stores as (out, in)."""
    return name.rsplit(".", 1)[-1].startswith("W")


def hf_state_dict(encoder) -> dict[str, np.ndarray]:
    """An :class:`~geron_lib.encoder.Encoder`'s weights under transformers' names and layouts (numpy arrays;
    ``torch.from_numpy`` each one for ``model.load_state_dict``)."""
    params = encoder.parameters()
    names = hf_names(encoder.config, pooler=encoder.pooler is not None)
    return {theirs: params[ours].T if is_transposed(ours) else params[ours] for ours, theirs in names.items()}


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


def _check_state_dict(config, state_dict, dtype) -> tuple[dict, dict, bool, np.dtype]:
    """:func:`encoder_from_hf`'s arguments, checked: the base model's arrays by transformers' name (every
    one the config needs, float, of its shape, and nothing else), our names for them, whether a pooler is
    there, the dtype; with memory for the encoder's weights."""
    check_type("config", config, EncoderConfig)
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"state_dict must be a dict of numpy arrays, got {type(state_dict).__name__}")
    dtype = check_float_dtype("dtype", dtype)
    sd = _base_model_keys(state_dict, config.model_type)
    pooler = any(k.startswith("pooler.") for k in sd)
    names = hf_names(config, pooler=pooler)
    missing = [hf for hf in names.values() if hf not in sd]
    unexpected = sorted(set(sd) - set(names.values()) - set(_BUFFERS))
    if missing or unexpected:
        more_missing = " ..." if len(missing) > 4 else ""
        more_unexpected = " ..." if len(unexpected) > 4 else ""
        raise ValueError(f"state_dict does not match the config ({config.model_type}, "
                         f"{config.num_hidden_layers} layers, sharing={config.sharing!r}): missing "
                         f"{missing[:4]}{more_missing}, unexpected {unexpected[:4]}{more_unexpected}")
    n = count_parameters(config, pooler=pooler).total
    check_memory(n * dtype.itemsize, f"Encoder weights ({n:,} parameters, {dtype})")
    arrays = {}
    for ours, theirs in names.items():
        value = plain_array(f"state_dict[{theirs!r}]", sd[theirs])  # a tensor that requires grad: detached
        if value.dtype.kind != "f":
            raise TypeError(f"state_dict[{theirs!r}] must hold floats, got {value.dtype}")
        W, expected = is_transposed(ours), _shape(ours, config)
        if (value.T if W else value).shape != expected:
            stored = expected[::-1] if W else expected
            raise ValueError(f"state_dict[{theirs!r}] has shape {value.shape}, expected {stored}")
        arrays[theirs] = check_finite_array(f"state_dict[{theirs!r}]", value)
    return arrays, names, pooler, dtype


def encoder_from_hf(config: EncoderConfig, state_dict, *,
                    dtype=np.float32) -> Encoder:
    """W_ours = W_theirs^T for every nn.Linear weight, other arrays as stored.

    ``state_dict`` maps transformers' names to numpy arrays or torch
    tensors (``AlbertModel``/``BertModel``/``RobertaModel``, or a model with
    a head on top, whose head is left out); the pooler is read when present.
    Arrays are copied in ``dtype``.
    """
    sd, names, pooler, dtype = _check_state_dict(config, state_dict, dtype)
    arrays = {ours: np.ascontiguousarray(sd[theirs].T if is_transposed(ours)
                                         else sd[theirs], dtype=dtype)
              for ours, theirs in names.items()}

    def part(prefix):
        return {k[len(prefix):]: v for k, v in arrays.items()
                if k.startswith(prefix)}

    stored = 1 if config.sharing == "all" else config.num_hidden_layers
    attention = [part(f"layers.{i}.attention.") for i in range(stored)]
    ffn = [part(f"layers.{i}.ffn.") for i in range(stored)]
    return Encoder.from_weights(config, part("embeddings."), attention, ffn,
                                part("pooler.") if pooler else None,
                                dtype=dtype)
