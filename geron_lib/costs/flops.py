"""Closed-form compute counts: the matrix products of a forward pass and of a training step, itemised like
:func:`~geron_lib.costs.params.count_parameters`, without running the model.

Convention (torch's ``FlopCounterMode``): a product of an (m, k) and a (k, n) matrix costs 2 m k n FLOPs (one
multiply and one add per multiply-add); only matrix products count. Bias adds, layer norms, softmax,
activations, the sum over heads of the summed form and embedding look-ups are left out: each costs a few
operations per element, not per product.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import EncoderConfig
from ..validate import check_bool, check_int
from .itemised import Itemised
from .params import count_parameters
from .sequence import check_estimate_sequence


@dataclass(frozen=True)
class FlopCount(Itemised):
    """An itemised FLOP count; ``total`` adds the additive items up (see :meth:`items`).

    Every item is over the whole batch: ``batch`` sequences of ``seq_len`` tokens, the MLM head on
    ``masked`` positions of each; with ``training`` the items count a forward and a backward pass.
    """

    embedding_projection: int
    query_key: int
    value: int
    scores: int
    weighted_values: int
    output: int
    ffn: int
    pooler: int
    nsp_head: int
    mlm_dense: int
    mlm_decoder: int
    # what the count is of (not added)
    batch: int
    seq_len: int
    masked: int
    training: bool

    #: The fields that add up to ``total``; the rest describe them.
    ADDITIVE = ("embedding_projection", "query_key", "value", "scores", "weighted_values", "output", "ffn",
                "pooler", "nsp_head", "mlm_dense", "mlm_decoder")

    @property
    def attention(self) -> int:
        """The attention sublayers: the projections and the two T^2 products."""
        return self.query_key + self.value + self.scores + self.weighted_values + self.output

    @property
    def encoder(self) -> int:
        """The E -> H map and the stack of layers, without heads."""
        return self.embedding_projection + self.attention + self.ffn

    @property
    def heads(self) -> int:
        return self.pooler + self.nsp_head + self.mlm_dense + self.mlm_decoder

    @property
    def total(self) -> int:
        return self.encoder + self.heads

    def _value(self, v: int) -> str:
        return f"{v:>17,}"


def count_flops(config: EncoderConfig, seq_len: int, *, batch: int = 1, pooler: bool = False,
                mlm_head: bool = False, nsp_head: bool = False, masked: int | None = None,
                training: bool = False) -> FlopCount:
    """C = B [2TEH + L (2TH^2 (2 + h_V + o) + 2T^2H (1 + h_V) + 4THF) + 2H^2 + 4H + 2 n_mask E (H + V)].

    The FLOPs of the matrix products in a forward pass over ``batch`` sequences of ``seq_len`` tokens,
    itemised: the E -> H map (2TEH, when the config has one), then in each of the L layers the query and key
    maps (2 x 2TH^2), the value map (2TH^2 in the concat form; h of them, 2hTH^2, in the summed form: h_V = 1
    or h), the scores Q_i K_i^T (2T^2 d_head per head, 2T^2H in all), the weighted values A_i V_i (2T^2H;
    2hT^2H summed, each head's values being H wide), W_O (2TH^2, concat only: o = 1 or 0) and the FFN
    (2 x 2THF). Heads: the pooler reads one position ([CLS]: 2H^2), the NSP head maps the pooled output to
    2 classes (4H), the MLM head runs its dense H -> E map and the tied E -> V decoder on the n_mask =
    ``masked`` positions of each sequence it predicts (all T when None, as transformers' ``*ForMaskedLM``
    does).

    Sharing changes no FLOPs: a shared sublayer is stored once but still runs in all L layers, so every
    sharing mode gives the same count.

    ``training`` counts a forward and a backward pass: the backward of Y = X W costs a dX = dY W^T and a
    dW = X^T dY product, each as many FLOPs as the forward product, and the backward of the attention
    products (Q K^T, A V) costs one product per operand; every item triples. No product is spared its dX:
    the first product's input (the embeddings' layer-norm output) depends on the token, position and type
    tables, which are trained. The backward runs through what a loss reads: a training step needs the MLM
    or the NSP head, and the pooler's backward is counted only when the NSP head reads it. Each head is an
    item of its own, as in :func:`~geron_lib.costs.params.count_parameters`: ``nsp_head`` without ``pooler``
    counts the head alone (a training step through it needs the pooler, and is refused without it).
    """
    T, n = check_estimate_sequence(config, seq_len, masked)
    B = check_int("batch", batch, minimum=1)
    for name, flag in (("pooler", pooler), ("mlm_head", mlm_head), ("nsp_head", nsp_head),
                       ("training", training)):
        check_bool(name, flag)
    if masked is not None and not mlm_head:
        raise ValueError("masked is the number of positions the MLM head predicts: set mlm_head=True")
    if training and nsp_head and not pooler:
        raise ValueError("training through nsp_head needs the pooler it reads (the pooled output): set "
                         "pooler=True")
    if training and not (mlm_head or nsp_head):
        raise ValueError("training needs a loss: set mlm_head=True or nsp_head=True")
    V, E, H, F = config.vocab_size, config.E, config.hidden_size, config.intermediate_size
    L, h = config.num_hidden_layers, config.num_attention_heads
    concat = config.attention == "concat"
    h_V = 1 if concat else h  # value maps H wide: one (concat: h heads of d_head) or h (summed)

    def run(flops: int, used: bool = True, learns: bool = training) -> int:
        """B x the forward FLOPs, x3 (forward, dX, dW) when a loss's backward runs through them."""
        return B * flops * (3 if learns else 1) if used else 0

    return FlopCount(
        embedding_projection=run(2 * T * E * H, config.has_embedding_projection),
        query_key=run(L * 2 * (2 * T * H * H)),
        value=run(L * h_V * 2 * T * H * H),
        scores=run(L * 2 * T * T * H),
        weighted_values=run(L * h_V * 2 * T * T * H),
        output=run(L * 2 * T * H * H, concat),
        ffn=run(L * 2 * (2 * T * H * F)),
        pooler=run(2 * H * H, pooler, learns=training and nsp_head),
        nsp_head=run(2 * H * 2, nsp_head),
        mlm_dense=run(2 * n * H * E, mlm_head),
        mlm_decoder=run(2 * n * E * V, mlm_head),
        batch=B, seq_len=T, masked=n if mlm_head else 0, training=training,
    )


def flops_per_token(config: EncoderConfig, seq_len: int, *, pooler: bool = False, mlm_head: bool = False,
                    nsp_head: bool = False, masked: int | None = None, training: bool = False) -> float:
    """C / T = count_flops(config, T, ...).total / T: the exact count for one sequence, per token."""
    count = count_flops(config, seq_len, pooler=pooler, mlm_head=mlm_head, nsp_head=nsp_head, masked=masked,
                        training=training)
    return count.total / count.seq_len


def approximate_flops_per_token(config: EncoderConfig, seq_len: int, *, training: bool = False) -> int:
    """C / T ~ 2 N + 4 L T H   (x3 for a training step: 6 N + 12 L T H),  N = non-embedding parameters.

    The usual rule of thumb, as PaLM's FLOP accounting writes it (Chowdhery et al. 2022, Appendix B:
    6N + 12LHQT per token for training, with h heads of d_head = Q making H): every parameter is multiplied
    once and added once per token, and each of the L layers adds its two T^2 products, Q K^T and A V, 2 T H
    FLOPs each per token. (Kaplan et al. 2020, Table 1, list a single 2 L T H "Attention: Mask" term, half
    of what an encoder's two T^2 products cost.) N is the encoder stack as stored (attention, FFN and their
    layer norms: ``count_parameters(config).encoder``); embeddings and heads are left out.

    Against :func:`flops_per_token` without heads: it counts biases and layer-norm parameters as if they
    were multiplied, 2 L (9H + F) too many for BERT; it misses the E -> H map and, in the summed form,
    2 (h - 1) L T H of the A V products; and it assumes each parameter is used once per token, while a
    shared sublayer is used in every layer: with ALBERT's sharing of everything it counts the one stored
    layer once instead of L times, 2 (L - 1) N_layer too few.
    """
    T, _ = check_estimate_sequence(config, seq_len)
    check_bool("training", training)
    forward = 2 * count_parameters(config).encoder + 4 * config.num_hidden_layers * T * config.hidden_size
    return 3 * forward if training else forward
