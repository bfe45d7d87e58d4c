"""Closed-form parameter counts: itemised, from formulas, without allocating a single weight."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import ATTENTION, EncoderConfig
from ..validate import check_bool, check_choice, check_heads, check_int, check_type
from .itemised import Itemised


def linear_params(n_in: int, n_out: int, bias: bool = True) -> int:
    """n_in n_out + n_out   (y = x W + b,  W: (n_in, n_out),  b: (n_out,))."""
    n_in, n_out = check_int("n_in", n_in, minimum=1), check_int("n_out", n_out, minimum=1)
    return n_in * n_out + (n_out if check_bool("bias", bias) else 0)


def layer_norm_params(width: int) -> int:
    """2 width   (LN(x) = gain * (x - mean) / sqrt(var + eps) + bias)."""
    return 2 * check_int("width", width, minimum=1)


def _check_attention_sizes(hidden_size, num_attention_heads, form, bias) -> tuple[int, int]:
    """:func:`attention_param_items`'s arguments, checked: (H, h), H divisible by h."""
    H = check_int("hidden_size", hidden_size, minimum=1)
    h = check_int("num_attention_heads", num_attention_heads, minimum=1)
    check_choice("form", form, ATTENTION)
    check_bool("bias", bias)
    check_heads(H, h)
    return H, h


def attention_param_items(hidden_size: int, num_attention_heads: int,
                          form: str = "concat",
                          bias: bool = True) -> dict[str, int]:
    """N_concat = 4 (H^2 + H),  N_sum = 2 (H^2 + H) + h H^2 + H.

    Biases included; the sum form has no b_V and no W_O. One attention
    sublayer's parameters by role: query_key (W_Q, W_K), value (W_V or the h
    full-width maps W'_V,i) and output (W_O and b_O, or b_O alone); they add
    up.
    """
    H, h = _check_attention_sizes(hidden_size, num_attention_heads, form, bias)
    query_key = 2 * linear_params(H, H, bias)
    if form == "concat":
        return {"query_key": query_key, "value": linear_params(H, H, bias),
                "output": linear_params(H, H, bias)}
    # The per-head value biases are redundant (every row of A_i sums to 1):
    # one output bias b_O.
    return {"query_key": query_key, "value": h * H * H,
            "output": H if bias else 0}


def attention_params(hidden_size: int, num_attention_heads: int, form: str = "concat",
                     bias: bool = True) -> int:
    """Weights (and biases) of one multi-head attention sublayer, without its layer norm."""
    return sum(attention_param_items(hidden_size, num_attention_heads, form, bias).values())


def redundant_attention_params(hidden_size: int, num_attention_heads: int, form: str = "concat",
                               bias: bool = True) -> int:
    """R_concat = 2 H^2/h + 2H,  R_sum = H^2/h + H   (without biases: 2 H^2/h and H^2/h).

    The numbers of one attention sublayer that its outputs cannot pin
    down. Every head absorbs an invertible d_head x d_head matrix between
    W_Q,i and W_K,i (both forms) and one between W_V,i and W_O,i (concat):
    h d_head^2 = H^2/h each. The softmax ignores a constant added to a row
    of scores, so b_K changes nothing (H), and b_V reaches the output only
    as the constant row b_V W_O, which b_O holds (H, concat).
    """
    H, h = _check_attention_sizes(hidden_size, num_attention_heads, form, bias)
    per_freedom = H * H // h + (H if bias else 0)
    return 2 * per_freedom if form == "concat" else per_freedom


def model_attention_params(config: EncoderConfig, *, form: str | None = None, bias: bool = True) -> int:
    """Every attention sublayer the encoder stores (shared ones once), without layer norms; ``form``
    overrides ``config.attention``."""
    check_type("config", config, EncoderConfig)
    form = config.attention if form is None else form
    per_layer = attention_params(config.hidden_size, config.num_attention_heads, form, bias)
    return stored_copies(config)[0] * per_layer


def ffn_params(hidden_size: int, intermediate_size: int, bias: bool = True) -> int:
    """H F + F + F H + H   (FFN(x) = act(x W_1 + b_1) W_2 + b_2,  W_1: (H, F),  W_2: (F, H))."""
    hidden_size = check_int("hidden_size", hidden_size, minimum=1)
    intermediate_size = check_int("intermediate_size", intermediate_size, minimum=1)
    return linear_params(hidden_size, intermediate_size, bias) + linear_params(
        intermediate_size, hidden_size, bias
    )


def stored_copies(config: EncoderConfig) -> tuple[int, int]:
    """(c_A, c_F) = (L, L) none, (1, 1) all, (1, L) attention, (L, 1) ffn.

    The attention and FFN copies: how many distinct sublayers of each kind
    the encoder stores under its sharing mode.
    """
    L = check_type("config", config, EncoderConfig).num_hidden_layers
    copies = {"none": (L, L), "all": (1, 1), "attention": (1, L), "ffn": (L, 1)}
    return copies[config.sharing]


@dataclass(frozen=True)
class ParameterCount(Itemised):
    """An itemised parameter count; ``total`` adds the additive items up (see :meth:`items`)."""

    token_embeddings: int
    position_embeddings: int
    token_type_embeddings: int
    embedding_layer_norm: int
    embedding_projection: int
    attention: int
    ffn: int
    layer_norms: int
    pooler: int
    mlm_head: int
    nsp_head: int
    # what the items above are made of (not added again)
    attention_per_layer: int
    ffn_per_layer: int
    layer_norms_per_layer: int
    attention_copies: int
    ffn_copies: int

    #: The fields that add up to ``total``; the rest describe them.
    ADDITIVE = ("token_embeddings", "position_embeddings", "token_type_embeddings", "embedding_layer_norm",
                "embedding_projection", "attention", "ffn", "layer_norms", "pooler", "mlm_head", "nsp_head")

    @property
    def embeddings(self) -> int:
        return (self.token_embeddings + self.position_embeddings + self.token_type_embeddings
                + self.embedding_layer_norm + self.embedding_projection)

    @property
    def encoder(self) -> int:
        """The stack of layers as stored (shared sublayers counted once)."""
        return self.attention + self.ffn + self.layer_norms

    @property
    def heads(self) -> int:
        return self.pooler + self.mlm_head + self.nsp_head

    @property
    def total(self) -> int:
        return self.embeddings + self.encoder + self.heads

    def _value(self, v: int) -> str:
        return f"{v:>13,}"


def count_parameters(
    config: EncoderConfig, *,
    pooler: bool = False, mlm_head: bool = False, nsp_head: bool = False
) -> ParameterCount:
    """N = (V + P + types) E + 2 E [+ E H + H]
         + c_A (attention + 2 H) + c_F (FFN + 2 H) [+ heads].

    Every parameter of the encoder described by ``config``, itemised, and of
    the heads asked for; c_A and c_F are the stored copies of each sublayer
    (:func:`stored_copies`). The MLM head is tied to the token embedding (its
    decoder weight is not counted again): a dense H -> E layer, a layer norm
    over E and an output bias of V. The NSP head (BERT's next-sentence,
    ALBERT's sentence-order) is a linear H -> 2 layer on the pooled output.
    """
    check_type("config", config, EncoderConfig)
    flags = (("pooler", pooler), ("mlm_head", mlm_head), ("nsp_head", nsp_head))
    for name, flag in flags:
        check_bool(name, flag)
    V, E = config.vocab_size, config.E
    H, F = config.hidden_size, config.intermediate_size
    attention_copies, ffn_copies = stored_copies(config)
    per_attention = attention_params(H, config.num_attention_heads,
                                     config.attention)
    per_ffn = ffn_params(H, F)
    return ParameterCount(
        token_embeddings=V * E,
        position_embeddings=config.max_position_embeddings * E,
        token_type_embeddings=config.type_vocab_size * E,
        embedding_layer_norm=layer_norm_params(E),
        embedding_projection=(linear_params(E, H)
                              if config.has_embedding_projection else 0),
        attention=attention_copies * per_attention,
        ffn=ffn_copies * per_ffn,
        layer_norms=(attention_copies + ffn_copies) * layer_norm_params(H),
        pooler=linear_params(H, H) if pooler else 0,
        mlm_head=(linear_params(H, E) + layer_norm_params(E) + V
                  if mlm_head else 0),
        nsp_head=linear_params(H, 2) if nsp_head else 0,
        attention_per_layer=per_attention,
        ffn_per_layer=per_ffn,
        layer_norms_per_layer=2 * layer_norm_params(H),
        attention_copies=attention_copies,
        ffn_copies=ffn_copies,
    )
