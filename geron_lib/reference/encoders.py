"""``albert()`` and ``roberta()``: the reference implementation's two functions, with its arithmetic, on the
model's core.

The reference encoder is simpler than the published models: no biases on Q, K, V, O, layer norms without
gain or bias (eps 1e-5), ReLU, no token types, and weights drawn from the reference generator. Its argument
names (``d_model``, ``n_heads``, ``d_embed``, ``n_layers``, ``d_ff``) are the reference's own, and live only
in this module.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..config import EncoderConfig
from ..costs.memory import forward_activation_bytes
from ..costs.params import attention_params, ffn_params, linear_params
from ..model.encoder import block_forward
from ..model.layers import softmax
from ..validate import check_int, check_memory, check_open_unit, check_token_ids
from .masks import fixed_count_masks, masked_count
from .rng import M, tensor

REFERENCE_EPS = 1e-5
#: At most this many passes through a block per call (n_layers, times epochs for roberta): each pass is a
#: forward in Python, and more would run for minutes.
MAX_BLOCK_PASSES = 100_000


class ReferenceResult(Mapping):
    """The fields a reference function returns: ``r["hidden"]`` and ``r.hidden`` alike, a short printout.

    The reference's own field names, but two: ``headline`` (its ``estimate``: the one number each function
    reports, ALBERT's parameter count as a float, RoBERTa's last MLM loss) and ``n_tokens`` (its ``n``: the
    B T tokens encoded).
    """

    def __init__(self, **fields):
        self._fields = fields

    def __getitem__(self, key):
        return self._fields[key]

    def __iter__(self):
        return iter(self._fields)

    def __len__(self):
        return len(self._fields)

    def __getattr__(self, name):
        try:
            return self.__dict__["_fields"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self):
        return [*super().__dir__(), *self._fields]

    def __repr__(self) -> str:
        def show(v):
            if isinstance(v, np.ndarray):
                return f"array {v.shape}, {v.dtype}"
            if isinstance(v, float):
                return f"{v:.7g}"
            if isinstance(v, list):
                return "[" + ", ".join(show(x) if not isinstance(x, np.ndarray) else str(x.tolist())
                                       for x in v) + "]"
            return repr(v)

        width = max(map(len, self._fields))
        lines = [f"  {k:<{width}}  {show(v)}" for k, v in self._fields.items() if k != "method"]
        return "\n".join([self._fields.get("method", "ReferenceResult"), *lines])


def _geometry(X, n_layers, n_heads, d_model, vocab_size, d_ff, seed):
    """Validate the arguments both reference functions share; returns ids and the resolved sizes."""
    ids, _ = check_token_ids("X", X)
    n_layers = check_int("n_layers", n_layers, minimum=1)
    n_heads = check_int("n_heads", n_heads, minimum=1)
    d_model = check_int("d_model", d_model, minimum=1)
    if d_model % n_heads:
        raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
    largest = int(ids.max())
    if vocab_size is None:
        vocab_size = largest + 1
    elif check_int("vocab_size", vocab_size, minimum=1) <= largest:
        raise ValueError(f"vocab_size ({vocab_size}) must be above the largest id in X ({largest})")
    d_ff = 2 * d_model if d_ff is None else check_int("d_ff", d_ff, minimum=1)
    # every seed the reference draws from is seed + k, taken mod 2^32 by its generator
    return ids, n_layers, n_heads, d_model, vocab_size, d_ff, check_int("seed", seed) % M


def _check_passes(n_layers: int, epochs: int = 1) -> None:
    if n_layers * epochs > MAX_BLOCK_PASSES:
        shown = f"n_layers ({n_layers}) x epochs ({epochs})" if epochs > 1 else f"n_layers ({n_layers})"
        raise ValueError(f"{shown} must be at most {MAX_BLOCK_PASSES:,} passes through a block: each is a "
                         "forward in Python, and more would run for minutes")


def _check_size(call: str, n_weights: int, ids: np.ndarray, config: EncoderConfig):
    B, T = ids.shape
    c = config
    activations = forward_activation_bytes(B, T, c.hidden_size, c.num_attention_heads, c.intermediate_size,
                                           c.attention, itemsize=8)
    check_memory(8 * n_weights + activations, f"{call} with X of shape {ids.shape}")


def reference_config(d: int, h: int, F: int, V: int, T: int) -> EncoderConfig:
    """The reference's block as an EncoderConfig: ReLU, layer-norm eps 1e-5, no token types."""
    return EncoderConfig(vocab_size=V, hidden_size=d, num_attention_heads=h, intermediate_size=F,
                         hidden_act="relu", max_position_embeddings=T, type_vocab_size=0,
                         layer_norm_eps=REFERENCE_EPS)


def reference_block(s: int, d: int, F: int) -> tuple[dict, dict]:
    """Base seed s: W_Q s+1, W_K s+2, W_V s+3, W_O s+4, W_1 s+5, W_2 s+6; b_1 = b_2 = 0.

    The reference's (attention, ffn) weights: no attention biases, no layer-norm gains.
    """
    attention = {name: tensor(s + k, (d, d)) for k, name in enumerate(("W_Q", "W_K", "W_V", "W_O"), 1)}
    ffn = {"W_1": tensor(s + 5, (d, F)), "b_1": np.zeros(F), "W_2": tensor(s + 6, (F, d)), "b_2": np.zeros(d)}
    return attention, ffn


def reference_block_params(d: int, F: int, n_heads: int) -> int:
    """4 d^2 + d F + F + F d + d."""
    return attention_params(d, n_heads, "concat", bias=False) + ffn_params(d, F)


def _run_blocks(x, blocks, config: EncoderConfig):
    for attention, ffn in blocks:
        x = block_forward(x, attention, ffn, config)
    return x


def _check_albert(X, n_layers, n_heads, d_model, d_embed, vocab_size, d_ff, seed):
    """:func:`albert`'s arguments, checked (with memory for its weights and activations): its geometry
    (ids, L, h, d, V, F, seed) and E."""
    ids, L, h, d, V, F, seed = _geometry(X, n_layers, n_heads, d_model, vocab_size, d_ff, seed)
    E = check_int("d_embed", d_embed, minimum=1)
    if E > d:
        raise ValueError(f"d_embed ({E}) must lie in [1, d_model] = [1, {d}]")
    _check_passes(L)
    T = ids.shape[1]
    weights = V * E + linear_params(E, d, bias=False) + T * d + reference_block_params(d, F, h)
    _check_size(f"albert(vocab_size={V}, d_model={d}, d_embed={E}, d_ff={F})", weights, ids,
                reference_config(d, h, F, V, T))
    return ids, L, h, d, V, F, seed, E


def albert(X, n_layers=4, n_heads=2, d_model=8, d_embed=4,
           vocab_size=None, d_ff=None, seed=0) -> ReferenceResult:
    """X_0 = Emb[ids] P + Pos,  then ONE block applied L times.

    ALBERT: factorised embedding (V -> E -> H) and one encoder block shared
    by all layers.
    """
    ids, L, h, d, V, F, seed, E = _check_albert(X, n_layers, n_heads, d_model,
                                                d_embed, vocab_size, d_ff, seed)
    B, T = ids.shape
    embedding_params = V * E + linear_params(E, d, bias=False)
    block_params = reference_block_params(d, F, h)
    config = reference_config(d, h, F, V, T)

    emb = tensor(seed + 101, (V, E))
    proj = tensor(seed + 202, (E, d))
    pos = tensor(seed + 303, (T, d))
    x = emb[ids] @ proj + pos                # (B, T, d)
    hidden = _run_blocks(x, [reference_block(seed, d, F)] * L, config)
    n_params = embedding_params + T * d + block_params
    return ReferenceResult(
        hidden=hidden,
        n_params=n_params,
        n_params_unshared=embedding_params + T * d + L * block_params,
        block_params=block_params,
        embedding_params=embedding_params,
        embedding_params_direct=V * d,
        shared=True,
        d_embed=E,
        headline=float(n_params),
        n_tokens=B * T,
        method="ALBERT: factorised embedding plus one cross-layer-shared "
               "encoder block",
    )


def _mlm_loss(hidden, emb, masked, targets) -> float:
    """loss = mean over masked t of -log max(softmax(h_t Emb^T)[x_t], 1e-15)   (tied output layer)."""
    rows = np.arange(hidden.shape[0])[:, None]
    p = softmax(hidden[rows, masked] @ emb.T)                    # (B, n_mask, V + 1)
    p_true = np.take_along_axis(p, targets[..., None], axis=-1)[..., 0]
    return float(np.mean(-np.log(np.maximum(p_true, 1e-15)).mean(axis=1)))


def roberta(X, n_layers=2, n_heads=2, d_model=8, vocab_size=None, d_ff=None, mask_prob=0.15, epochs=4,
            seed=0) -> ReferenceResult:
    """loss_e = MLM loss under epoch e's fresh mask, e = 0 .. epochs - 1   (no NSP head, weights fixed).

    RoBERTa: no NSP head, a fresh mask every epoch; the MLM loss under each epoch's mask.
    """
    ids, L, h, d, V, F, seed = _geometry(X, n_layers, n_heads, d_model, vocab_size, d_ff, seed)
    mask_prob = check_open_unit("mask_prob", mask_prob)
    epochs = check_int("epochs", epochs, minimum=1)
    _check_passes(L, epochs)
    B, T = ids.shape
    n_mask = masked_count(T, mask_prob)
    if n_mask >= T and T > 1:
        raise ValueError(f"mask_prob ({mask_prob}) masks {n_mask} of the {T} tokens in a row; "
                         "at least one token must stay visible")
    block_params = reference_block_params(d, F, h)
    n_params = (V + 1) * d + T * d + L * block_params
    config = reference_config(d, h, F, V + 1, T)
    _check_size(f"roberta(vocab_size={V}, d_model={d}, d_ff={F}, n_layers={L})", n_params, ids, config)

    mask_id = V  # one extra embedding row for [MASK]
    emb, pos = tensor(seed + 101, (V + 1, d)), tensor(seed + 202, (T, d))
    blocks = [reference_block(seed + 1000 * (i + 1), d, F) for i in range(L)]
    rows = np.arange(B)[:, None]
    losses, masks = [], []
    for epoch in range(epochs):
        masked = fixed_count_masks(seed, epoch, B, T, n_mask)  # (B, n_mask)
        tokens = ids.copy()
        tokens[rows, masked] = mask_id
        hidden = _run_blocks(emb[tokens] + pos, blocks, config)
        losses.append(_mlm_loss(hidden, emb, masked, ids[rows, masked]))
        masks.append(masked[0])
    return ReferenceResult(
        hidden=hidden,
        mlm_loss=losses[-1],
        epoch_losses=losses,
        masks=masks,
        dynamic_masking=True,
        has_nsp_head=False,
        n_params=n_params,
        n_params_with_nsp=n_params + linear_params(d, 2, bias=False),
        n_masked_per_sequence=n_mask,
        headline=losses[-1],
        n_tokens=B * T,
        method="RoBERTa: NSP-free encoder pretraining with per-epoch dynamic masking",
    )
