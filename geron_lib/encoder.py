"""The encoder: weights for every sharing mode, and one forward pass that every caller uses."""

from __future__ import annotations

import numpy as np

from .attention import additive_mask, multi_head_attention
from .config import EncoderConfig
from .hf import hf_weights
from .layers import feed_forward, layer_norm, linear, sub_cache
from .params import count_parameters, stored_copies
from .validate import check_bool, check_int, check_memory, check_token_ids


# X <- LN(X + MultiHead(X));   X <- LN(X + FFN(X))        (post-LN, as in BERT and ALBERT)
def block_forward(x, attention: dict, ffn: dict, *, num_heads: int, form: str, act: str,
                  eps: float, mask=None, cache: dict | None = None) -> np.ndarray:
    """One encoder block on (B, T, H); a sublayer dict without ``ln_gain``/``ln_bias`` gets a plain LN.
    A ``cache`` dict receives what the backward pass needs (:func:`geron_lib.backward.block_backward`)."""
    a = multi_head_attention(x, attention, num_heads, form, mask, sub_cache(cache, "attention"))
    x = layer_norm(x + a, attention.get("ln_gain"), attention.get("ln_bias"), eps,
                   sub_cache(cache, "ln_attention"))
    f = feed_forward(x, ffn, act, sub_cache(cache, "ffn"))
    return layer_norm(x + f, ffn.get("ln_gain"), ffn.get("ln_bias"), eps, sub_cache(cache, "ln_ffn"))


# RoBERTa: a real token's position is pad + (number of real tokens up to and including it); a pad's is pad
def position_ids(ids: np.ndarray, config: EncoderConfig) -> np.ndarray:
    """The position of every token, (B, T); 0, 1, ..., T - 1 unless the model is RoBERTa with a pad id."""
    pad = config.pad_token_id
    if config.model_type != "roberta" or pad is None:
        return np.broadcast_to(np.arange(ids.shape[1]), ids.shape)
    real = ids != pad
    return np.where(real, np.cumsum(real, axis=1) + pad, pad)


def max_length(config: EncoderConfig) -> int:
    """The longest input the position table covers (RoBERTa's positions start after its pad id)."""
    if config.model_type != "roberta" or config.pad_token_id is None:
        return config.max_position_embeddings
    return config.max_position_embeddings - config.pad_token_id - 1


def activation_bytes(B: int, T: int, config: EncoderConfig, itemsize: int) -> int:
    """A generous bound on the memory one forward pass holds at once."""
    H, h, F = config.hidden_size, config.num_attention_heads, config.intermediate_size
    widest = max(F, h * H if config.attention == "sum" else H)
    return itemsize * B * (3 * h * T * T + 6 * T * widest + 8 * T * H)


class Encoder:
    """A BERT / ALBERT / RoBERTa encoder in numpy: ``Encoder(config, seed=0)(ids)`` -> (B, T, H).

    Weights are drawn from ``np.random.default_rng(seed)``: matrices and embedding tables from
    N(0, initializer_range^2), biases zero, layer-norm gains one (the Hugging Face initialisation).
    Shared sublayers are one set of arrays used by every layer.
    """

    def __init__(self, config: EncoderConfig, *, seed: int = 0, dtype=np.float64, pooler: bool = False):
        if not isinstance(config, EncoderConfig):
            raise TypeError(f"config must be an EncoderConfig, got {type(config).__name__}")
        seed = check_int("seed", seed)
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {self.dtype}")
        check_bool("pooler", pooler)
        n = count_parameters(config, pooler=pooler).total
        check_memory(n * self.dtype.itemsize, f"Encoder weights ({n:,} parameters, {self.dtype})")
        self.config = config
        self._rng = np.random.default_rng(seed)
        self.embeddings = self._embedding_weights()
        n_attention, n_ffn = stored_copies(config)
        attention = [self._attention_weights() for _ in range(n_attention)]
        ffn = [self._ffn_weights() for _ in range(n_ffn)]
        # layer i uses its own copy, or copy 0 when that sublayer is shared
        self.layers = [(attention[i % n_attention], ffn[i % n_ffn])
                       for i in range(config.num_hidden_layers)]
        self.pooler = {"W": self._normal(config.hidden_size, config.hidden_size),
                       "b": self._zeros(config.hidden_size)} if pooler else None
        del self._rng

    @classmethod
    def from_hf_state_dict(cls, config: EncoderConfig, state_dict, *, dtype=np.float32) -> Encoder:
        """The encoder holding a transformers model's weights: ``state_dict`` maps transformers' names to
        numpy arrays (``AlbertModel``/``BertModel``/``RobertaModel`` or a model with a head on top)."""
        embeddings, attention, ffn, pooler = hf_weights(config, state_dict, dtype)
        self = cls.__new__(cls)
        self.config, self.dtype, self.embeddings, self.pooler = config, np.dtype(dtype), embeddings, pooler
        # layer i uses its own copy, or copy 0 when the sublayers are shared
        self.layers = [(attention[i % len(attention)], ffn[i % len(ffn)])
                       for i in range(config.num_hidden_layers)]
        return self

    def _normal(self, *shape):
        return self._rng.normal(0.0, self.config.initializer_range, shape).astype(self.dtype)

    def _zeros(self, n):
        return np.zeros(n, self.dtype)

    def _ones(self, n):
        return np.ones(n, self.dtype)

    def _embedding_weights(self) -> dict:
        c, E, H = self.config, self.config.E, self.config.hidden_size
        w = {"word": self._normal(c.vocab_size, E), "position": self._normal(c.max_position_embeddings, E)}
        if c.type_vocab_size:
            w["token_type"] = self._normal(c.type_vocab_size, E)
        w |= {"ln_gain": self._ones(E), "ln_bias": self._zeros(E)}
        if c.factorised:
            w |= {"W_P": self._normal(E, H), "b_P": self._zeros(H)}  # the E -> H projection
        return w

    def _attention_weights(self) -> dict:
        H, h = self.config.hidden_size, self.config.num_attention_heads
        w = {"W_Q": self._normal(H, H), "b_Q": self._zeros(H),
             "W_K": self._normal(H, H), "b_K": self._zeros(H)}
        if self.config.attention == "concat":
            w |= {"W_V": self._normal(H, H), "b_V": self._zeros(H), "W_O": self._normal(H, H)}
        else:
            w |= {"W_V": self._normal(h, H, H)}  # one full-width value map per head, no W_O
        return w | {"b_O": self._zeros(H), "ln_gain": self._ones(H), "ln_bias": self._zeros(H)}

    def _ffn_weights(self) -> dict:
        H, F = self.config.hidden_size, self.config.intermediate_size
        return {"W_1": self._normal(H, F), "b_1": self._zeros(F), "W_2": self._normal(F, H),
                "b_2": self._zeros(H), "ln_gain": self._ones(H), "ln_bias": self._zeros(H)}

    def parameters(self) -> dict[str, np.ndarray]:
        """Every distinct array by name; a shared sublayer appears once."""
        out = {f"embeddings.{k}": v for k, v in self.embeddings.items()}
        seen = set()
        for i, sublayers in enumerate(self.layers):
            for part, w in zip(("attention", "ffn"), sublayers, strict=True):
                if id(w) not in seen:
                    seen.add(id(w))
                    out |= {f"layers.{i}.{part}.{k}": v for k, v in w.items()}
        if self.pooler is not None:
            out |= {f"pooler.{k}": v for k, v in self.pooler.items()}
        return out

    def num_parameters(self) -> int:
        """The number of values actually stored (compare :func:`geron_lib.count_parameters`)."""
        return sum(v.size for v in self.parameters().values())

    def _check_inputs(self, input_ids, token_type_ids, attention_mask):
        c = self.config
        ids, _ = check_token_ids("input_ids", input_ids, vocab_size=c.vocab_size)
        B, T = ids.shape
        if T > max_length(c):
            raise ValueError(f"input_ids has {T} positions, above the {max_length(c)} that "
                             f"max_position_embeddings ({c.max_position_embeddings}) covers")
        extra = {}
        for name, value, limit in (("token_type_ids", token_type_ids, c.type_vocab_size),
                                   ("attention_mask", attention_mask, 2)):
            if value is None:
                continue
            if name == "token_type_ids" and limit == 0:
                raise ValueError("token_type_ids given, but type_vocab_size is 0")
            arr, _ = check_token_ids(name, value, vocab_size=limit)
            if arr.shape != ids.shape:
                raise ValueError(f"{name} must have the shape of input_ids {ids.shape}, got {arr.shape}")
            extra[name] = arr
        check_memory(activation_bytes(B, T, c, self.dtype.itemsize), f"a forward pass on {B} x {T} ids")
        return ids, extra.get("token_type_ids"), extra.get("attention_mask")

    # X_0 = LN(Emb[ids] + Pos[position_ids] + Type[type]) (then W_P + b_P when E < H)
    def embed(self, ids: np.ndarray, token_type_ids=None, cache: dict | None = None) -> np.ndarray:
        """(B, T) ids -> (B, T, H) inputs to the first layer (``cache``: see :meth:`forward_cached`)."""
        w = self.embeddings
        positions = position_ids(ids, self.config)                # (B, T)
        x = w["word"][ids] + w["position"][positions]             # (B, T, E)
        if "token_type" in w:
            x = x + w["token_type"][0 if token_type_ids is None else token_type_ids]
        x = layer_norm(x, w["ln_gain"], w["ln_bias"], self.config.layer_norm_eps, sub_cache(cache, "ln"))
        if cache is not None:
            cache.update(ids=ids, positions=positions, token_type_ids=token_type_ids, x_E=x)
        return linear(x, w["W_P"], w["b_P"]) if "W_P" in w else x

    def _forward(self, input_ids, token_type_ids, attention_mask, keep_all: bool,
                 cache: dict | None = None) -> list[np.ndarray]:
        ids, types, keep = self._check_inputs(input_ids, token_type_ids, attention_mask)
        c = self.config
        mask = None if keep is None else additive_mask(keep, self.dtype)
        x = self.embed(ids, types, sub_cache(cache, "embed"))
        states = [x]
        for i, (attention, ffn) in enumerate(self.layers):
            x = block_forward(x, attention, ffn, num_heads=c.num_attention_heads, form=c.attention,
                              act=c.hidden_act, eps=c.layer_norm_eps, mask=mask, cache=sub_cache(cache, i))
            states = states + [x] if keep_all else [x]
        return states

    def forward_cached(self, input_ids, token_type_ids=None, attention_mask=None) -> tuple[np.ndarray, dict]:
        """The last hidden states (B, T, H) and a cache of what :func:`geron_lib.backward.encoder_backward`
        needs: ``cache["embed"]`` and ``cache[i]`` for layer i, each filled by the forward functions."""
        cache = {}
        hidden = self._forward(input_ids, token_type_ids, attention_mask, keep_all=False, cache=cache)[-1]
        return hidden, cache

    def hidden_states(self, input_ids, token_type_ids=None, attention_mask=None) -> list[np.ndarray]:
        """The input to the first layer and the output of every layer: L + 1 arrays of (B, T, H)."""
        return self._forward(input_ids, token_type_ids, attention_mask, keep_all=True)

    def __call__(self, input_ids, token_type_ids=None, attention_mask=None) -> np.ndarray:
        """The last layer's hidden states, (B, T, H); a 1-D ``input_ids`` is one batch row."""
        return self._forward(input_ids, token_type_ids, attention_mask, keep_all=False)[-1]

    # pooled = tanh(h_[CLS] W + b)
    def pool(self, hidden: np.ndarray) -> np.ndarray:
        """The pooler on the first position's hidden state, (B, T, H) -> (B, H)."""
        if self.pooler is None:
            raise ValueError("this Encoder was built with pooler=False")
        return np.tanh(linear(hidden[:, 0], self.pooler["W"], self.pooler["b"]))

    def __repr__(self) -> str:
        c = self.config
        return (f"Encoder({c.model_type}, V={c.vocab_size}, E={c.E}, H={c.hidden_size}, "
                f"L={c.num_hidden_layers}, h={c.num_attention_heads}, sharing={c.sharing!r}, "
                f"attention={c.attention!r}, {self.num_parameters():,} parameters, {self.dtype})")
