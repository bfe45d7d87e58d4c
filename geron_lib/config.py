"""``EncoderConfig``: one frozen description of a BERT-family encoder, with Hugging Face field names; the
named presets; and :func:`max_length`, the longest input its position table covers.

It sits below the model and the cost counts, which both read it; so it names the attention forms and the
activations it accepts (:data:`ATTENTION`, :data:`HIDDEN_ACTS`) without importing the kernels that
implement them (``geron_lib.model.attention.ATTENTION_FORMS``, ``geron_lib.model.layers.ACTIVATIONS``;
``tests/test_config.py`` checks that both name the same ones)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from .validate import check_choice, check_heads, check_int, check_positive_number, check_type

#: Which sublayers every layer shares: nothing (BERT), everything (ALBERT), attention only, FFN only.
SHARING = ("none", "all", "attention", "ffn")
MODEL_TYPES = ("bert", "albert", "roberta")
#: The attention forms: heads concatenated then W_O, or full-width value maps summed over heads.
ATTENTION = ("concat", "sum")
#: The activations of the FFN (and of the MLM head's dense layer).
HIDDEN_ACTS = ("gelu", "gelu_new", "relu")


@dataclass(frozen=True)
class EncoderConfig:
    """A BERT / ALBERT / RoBERTa encoder as published, plus two teaching knobs.

    ``embedding_size`` is E: None (or equal to ``hidden_size``) means tokens are embedded straight at
    width H; a smaller E means ALBERT's factorisation V -> E -> H.
    ``embedding_projection`` says whether a linear E -> H map follows the embeddings' layer norm. None: only
    when E < H, as the original TensorFlow ALBERT builds it; True: also when E = H, as transformers'
    ``AlbertModel`` always does. It is stored as None whenever it says what the rule says.
    ``sharing`` says which sublayers all layers share: ``"none"`` (BERT), ``"all"`` (ALBERT),
    ``"attention"`` or ``"ffn"``.
    ``attention`` is ``"concat"`` (heads of width H/h concatenated, then W_O) or ``"sum"`` (every head's
    value map is H x H and the heads are summed, no W_O).
    ``pad_token_id`` matters only for RoBERTa: a real token's position id is pad_token_id + 1 + the number of
    real tokens before it, a padding token's is pad_token_id (None: positions 0, 1, 2, ... as in BERT).
    """

    vocab_size: int = 30000
    embedding_size: int | None = None
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    initializer_range: float = 0.02
    model_type: str = "bert"
    sharing: str = "none"
    attention: str = "concat"
    pad_token_id: int | None = None
    embedding_projection: bool | None = None

    def __post_init__(self):
        """Checks every field, storing numpy numbers as Python ones (exactly: counts must not overflow)."""
        for name in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                     "intermediate_size", "max_position_embeddings"):
            self._set(name, check_int(name, getattr(self, name), minimum=1))
        self._set("type_vocab_size", check_int("type_vocab_size", self.type_vocab_size, minimum=0))
        if self.embedding_size is not None:
            self._set("embedding_size", check_int("embedding_size", self.embedding_size, minimum=1))
            if self.embedding_size > self.hidden_size:
                raise ValueError(
                    f"embedding_size must be at most hidden_size ({self.hidden_size}), got "
                    f"{self.embedding_size}: factorising V -> E -> H only makes sense for E <= H"
                )
        check_heads(self.hidden_size, self.num_attention_heads)
        if self.pad_token_id is not None:
            self._set("pad_token_id", check_int("pad_token_id", self.pad_token_id, minimum=0))
            if self.pad_token_id >= self.vocab_size:
                raise ValueError(f"pad_token_id ({self.pad_token_id}) must be below vocab_size "
                                 f"({self.vocab_size})")
            if self.model_type == "roberta" and self.pad_token_id + 1 >= self.max_position_embeddings:
                raise ValueError(f"max_position_embeddings ({self.max_position_embeddings}) must exceed "
                                 f"pad_token_id + 1 ({self.pad_token_id + 1}): RoBERTa's positions start "
                                 "there")
        for name in ("layer_norm_eps", "initializer_range"):
            self._set(name, check_positive_number(name, getattr(self, name)))
        check_choice("hidden_act", self.hidden_act, HIDDEN_ACTS)
        check_choice("model_type", self.model_type, MODEL_TYPES)
        check_choice("sharing", self.sharing, SHARING)
        check_choice("attention", self.attention, ATTENTION)
        self._check_projection()

    def _set(self, name: str, value) -> None:
        object.__setattr__(self, name, value)  # the checked value, in place of the one given

    def _check_projection(self) -> None:
        """Refuse an impossible E -> H choice; store the choice as None when the rule makes it anyway."""
        projection = self.embedding_projection
        if projection is None:
            return
        if not isinstance(projection, bool | np.bool_):
            raise TypeError(f"embedding_projection must be True, False or None, got {projection!r}")
        projection = bool(projection)
        self._set("embedding_projection", projection)
        if not projection and self.E < self.hidden_size:
            raise ValueError(f"embedding_projection is False, but embedding_size ({self.E}) is below "
                             f"hidden_size ({self.hidden_size}): only an E -> H map can widen the embeddings")
        if projection == (self.E < self.hidden_size):
            self._set("embedding_projection", None)  # what the rule gives: one spelling

    @property
    def E(self) -> int:
        """The width tokens are embedded at: ``embedding_size``, or H when not factorised."""
        return self.hidden_size if self.embedding_size is None else self.embedding_size

    @property
    def factorised(self) -> bool:
        """True when tokens are embedded narrower than the hidden states (E < H)."""
        return self.E < self.hidden_size

    @property
    def has_embedding_projection(self) -> bool:
        """True when an E -> H linear map follows the embeddings: whenever E < H, and at E = H if asked."""
        return self.factorised or bool(self.embedding_projection)

    @property
    def d_head(self) -> int:
        return self.hidden_size // self.num_attention_heads

    def replace(self, **changes) -> EncoderConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def preset(cls, name: str) -> EncoderConfig:
        """A named configuration: see :data:`PRESETS`."""
        check_choice("name", name, tuple(PRESETS))
        return PRESETS[name]


def max_length(config: EncoderConfig) -> int:
    """The longest input the position table covers (RoBERTa's positions start after its pad id)."""
    check_type("config", config, EncoderConfig)
    if config.model_type != "roberta" or config.pad_token_id is None:
        return config.max_position_embeddings
    return config.max_position_embeddings - config.pad_token_id - 1


def _bert(hidden_size, num_hidden_layers, num_attention_heads, **kw) -> EncoderConfig:
    fields = dict(vocab_size=30522, hidden_size=hidden_size, num_hidden_layers=num_hidden_layers,
                  num_attention_heads=num_attention_heads, intermediate_size=4 * hidden_size, pad_token_id=0)
    return EncoderConfig(**(fields | kw))


def _roberta(hidden_size, num_hidden_layers, num_attention_heads) -> EncoderConfig:
    return _bert(hidden_size, num_hidden_layers, num_attention_heads, vocab_size=50265,
                 max_position_embeddings=514, type_vocab_size=1, layer_norm_eps=1e-5, model_type="roberta",
                 pad_token_id=1)


def _albert(hidden_size, num_hidden_layers, num_attention_heads, **kw) -> EncoderConfig:
    fields = dict(vocab_size=30000, embedding_size=128, hidden_act="gelu_new", model_type="albert",
                  sharing="all")
    return _bert(hidden_size, num_hidden_layers, num_attention_heads, **(fields | kw))


def _tiny(**kw) -> EncoderConfig:
    fields = dict(vocab_size=100, hidden_size=32, num_hidden_layers=4, num_attention_heads=4,
                  intermediate_size=64, max_position_embeddings=64)
    return EncoderConfig(**(fields | kw))


#: Published configurations (as in the models' ``config.json``) and tiny teaching sizes: read-only (a
#: mapping proxy of frozen configs), so what the checkers grade against cannot be reassigned.
PRESETS: Mapping[str, EncoderConfig] = MappingProxyType({
    "bert-base": _bert(768, 12, 12),
    "bert-large": _bert(1024, 24, 16),
    "roberta-base": _roberta(768, 12, 12),
    "roberta-large": _roberta(1024, 24, 16),
    "albert-base-v2": _albert(768, 12, 12),
    "albert-large-v2": _albert(1024, 24, 16),
    "albert-xlarge-v2": _albert(2048, 24, 16),
    "albert-xxlarge-v2": _albert(4096, 12, 64),
    "tiny-bert": _tiny(),
    "tiny-albert": _tiny(embedding_size=8, hidden_act="gelu_new", model_type="albert", sharing="all"),
    "tiny-roberta": _tiny(type_vocab_size=1, layer_norm_eps=1e-5, model_type="roberta"),
})
