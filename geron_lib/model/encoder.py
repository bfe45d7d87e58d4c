"""The encoder: the embeddings, the block and the stack of blocks for every sharing mode, each forward
beside its backward. Every caller (the reference functions, the chapters, the Hugging Face comparison and
training) runs this one forward."""

from __future__ import annotations

import numpy as np

from ..config import EncoderConfig, max_length
from ..costs.memory import forward_activation_bytes
from ..costs.params import count_parameters, stored_copies
from ..validate import (
    check_bool,
    check_finite_array,
    check_float_dtype,
    check_held_by,
    check_int,
    check_memory,
    check_token_ids,
    check_type,
    check_unmasked,
)
from .attention import ATTENTION_FORMS, additive_mask
from .layers import (
    feed_forward,
    feed_forward_backward,
    layer_norm,
    layer_norm_backward,
    linear,
    linear_backward,
    rows,
    scatter_add_rows,
    sub_cache,
)
from .threads import over_rows


def block_forward(x, attention: dict, ffn: dict, config: EncoderConfig,
                  additive_mask=None, cache: dict | None = None) -> np.ndarray:
    """X_1 = LN(X + MultiHead(X)),  Y = LN(X_1 + FFN(X_1))   (post-LN).

    One encoder block on (B, T, H), as in BERT and ALBERT; a sublayer
    without ``ln_gain``/``ln_bias`` gets a plain layer norm. Writes
    ``cache``: "attention", "ln_attention", "ffn", "ln_ffn", each filled by
    that step's forward.
    """
    eps, attend = config.layer_norm_eps, ATTENTION_FORMS[config.attention][0]
    a = attend(x, attention, config.num_attention_heads, additive_mask,
               sub_cache(cache, "attention"))
    x = layer_norm(x + a, attention.get("ln_gain"), attention.get("ln_bias"),
                   eps, sub_cache(cache, "ln_attention"))
    f = feed_forward(x, ffn, config.hidden_act, sub_cache(cache, "ffn"))
    return layer_norm(x + f, ffn.get("ln_gain"), ffn.get("ln_bias"), eps,
                      sub_cache(cache, "ln_ffn"))


def block_backward(dy, cache, attention, ffn, g_attention, g_ffn,
                   config: EncoderConfig) -> np.ndarray:
    """dX_1 = LN'(dY) + FFN'(LN'(dY)),  dX = LN'(dX_1) + MultiHead'(LN'(dX_1)).

    Each residual adds two paths. Reads ``cache``: "ln_ffn", "ffn",
    "ln_attention", "attention" (written by :func:`block_forward`).
    """
    attend_backward = ATTENTION_FORMS[config.attention][1]
    g_a, g_f = g_attention, g_ffn
    d_2 = layer_norm_backward(dy, cache["ln_ffn"], g_f.get("ln_gain"),
                              g_f.get("ln_bias"))
    d_1 = d_2 + feed_forward_backward(d_2, cache["ffn"], ffn, g_f,
                                      config.hidden_act)
    d_0 = layer_norm_backward(d_1, cache["ln_attention"], g_a.get("ln_gain"),
                              g_a.get("ln_bias"))
    return d_0 + attend_backward(d_0, cache["attention"], attention, g_a)


def position_ids(ids: np.ndarray, config: EncoderConfig) -> np.ndarray:
    """pos_t = t;  RoBERTa: pos_t = pad + (real tokens up to and including t).

    The position of every token, (B, T): 0, 1, ..., T - 1 (BERT, ALBERT)
    unless the model is RoBERTa with a pad id; a padding token's is pad.
    """
    pad = config.pad_token_id
    if config.model_type != "roberta" or pad is None:
        return np.broadcast_to(np.arange(ids.shape[1]), ids.shape)
    real = ids != pad
    return np.where(real, np.cumsum(real, axis=1) + pad, pad)


def embed(ids: np.ndarray, w: dict, config: EncoderConfig, token_type_ids=None,
          cache: dict | None = None) -> np.ndarray:
    """X_0 = LN(Emb[ids] + Pos[position ids] + Type[types]) at width E, then W_P + b_P when E -> H is mapped.

    (B, T) ids -> (B, T, H). Writes ``cache``: "ln", ids, positions, token_type_ids, x_E.
    """
    positions = position_ids(ids, config)                     # (B, T)
    x = w["word"][ids] + w["position"][positions]             # (B, T, E)
    if "token_type" in w:
        x = x + w["token_type"][0 if token_type_ids is None else token_type_ids]
    x = layer_norm(x, w["ln_gain"], w["ln_bias"], config.layer_norm_eps, sub_cache(cache, "ln"))
    if cache is not None:
        cache.update(ids=ids, positions=positions, token_type_ids=token_type_ids, x_E=x)
    return linear(x, w["W_P"], w["b_P"]) if "W_P" in w else x  # (B, T, H)


def embed_backward(dy, cache, w, g) -> None:
    """dX_E = dX_0 W_P^T, then every table row adds the gradient of its uses.

    The gradient of each use is LN-backward's at that position. Reads
    ``cache``: x_E, "ln", ids, positions, token_type_ids (written by
    :func:`embed`).
    """
    if "W_P" in w:
        dy = linear_backward(dy, cache["x_E"], w["W_P"], g["W_P"], g["b_P"])
    de = layer_norm_backward(dy, cache["ln"], g["ln_gain"],
                             g["ln_bias"])                   # (B, T, E)
    scatter_add_rows(g["word"], cache["ids"], de)
    scatter_add_rows(g["position"], cache["positions"], de)
    if "token_type" in w:
        types = cache["token_type_ids"]
        if types is None:
            g["token_type"][0] += rows(de).sum(axis=0)
        else:
            scatter_add_rows(g["token_type"], types, de)


class Encoder:
    """A BERT / ALBERT / RoBERTa encoder in numpy: ``Encoder(config, seed=0)(ids)`` -> (B, T, H).

    Weights are drawn from ``np.random.default_rng(seed)``: matrices and embedding tables from
    N(0, initializer_range^2), biases zero, layer-norm gains one (the Hugging Face initialisation).
    Shared sublayers are one set of arrays used by every layer.
    """

    def __init__(self, config: EncoderConfig, *, seed: int = 0, dtype=np.float64, pooler: bool = False):
        check_type("config", config, EncoderConfig)
        seed = check_int("seed", seed, minimum=0)
        self.dtype = check_float_dtype("dtype", dtype)
        check_held_by("config.layer_norm_eps", config.layer_norm_eps, self.dtype)
        check_bool("pooler", pooler)
        n = count_parameters(config, pooler=pooler).total
        check_memory(n * self.dtype.itemsize, f"Encoder weights ({n:,} parameters, {self.dtype})")
        self.config = config
        self._rng = np.random.default_rng(seed)
        self.embeddings = self._embedding_weights()
        n_attention, n_ffn = stored_copies(config)
        attention = [self._attention_weights() for _ in range(n_attention)]
        ffn = [self._ffn_weights() for _ in range(n_ffn)]
        self.layers = _share(attention, ffn, config.num_hidden_layers)
        self.pooler = self._pooler_weights() if pooler else None
        del self._rng

    @classmethod
    def from_weights(cls, config: EncoderConfig, embeddings: dict, attention: list[dict], ffn: list[dict],
                     pooler: dict | None = None, *, dtype=np.float32) -> Encoder:
        """The encoder holding given weights (as :mod:`geron_lib.interop` reads them from transformers):
        one attention and one FFN dict per stored copy, every array finite, of its shape and already in
        ``dtype`` (checked: :func:`check_weights`)."""
        dtype = check_weights(config, embeddings, attention, ffn, pooler, dtype)
        self = cls.__new__(cls)
        self.config, self.dtype = config, dtype
        self.embeddings, self.pooler = embeddings, pooler
        self.layers = _share(attention, ffn, config.num_hidden_layers)
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
        if c.has_embedding_projection:
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

    def _pooler_weights(self) -> dict:
        H = self.config.hidden_size
        return {"W": self._normal(H, H), "b": self._zeros(H)}

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

    def check_batch_size(self, batch: int, seq_len: int) -> None:
        """Refuse B sequences of T tokens whose forward pass would pass the memory limit, or T beyond the
        position table, from the arithmetic alone (before allocating)."""
        c = self.config
        if seq_len > max_length(c):
            raise ValueError(f"input_ids has {seq_len} positions, above the {max_length(c)} that "
                             f"max_position_embeddings ({c.max_position_embeddings}) covers")
        needed = forward_activation_bytes(batch, seq_len, c.hidden_size, c.num_attention_heads,
                                          c.intermediate_size, c.attention, self.dtype.itemsize)
        check_memory(needed, f"a forward pass on {batch} x {seq_len} ids")

    def _check_inputs(self, input_ids, token_type_ids, attention_mask):
        """(ids, token types or None, additive mask or None), every argument checked before any work."""
        c = self.config
        sized = isinstance(input_ids, np.ndarray) and input_ids.ndim in (1, 2)
        if sized:  # sizes first: no work on them
            self.check_batch_size(*((1,) + input_ids.shape)[-2:])
        ids, _ = check_token_ids("input_ids", input_ids, vocab_size=c.vocab_size)
        if not sized:
            self.check_batch_size(*ids.shape)
        extra = {}
        for name, value, limit, limit_name in (
                ("token_type_ids", token_type_ids, c.type_vocab_size, "type_vocab_size"),
                ("attention_mask", attention_mask, 2, "2 (1 for a token, 0 for padding)")):
            if value is None:
                continue
            if name == "token_type_ids" and limit == 0:
                raise ValueError("token_type_ids given, but type_vocab_size is 0")
            if name == "attention_mask" and np.asarray(check_unmasked(name, value)).dtype == bool:
                value = np.asarray(value, dtype=np.int64)  # True: a token, as in torch
            arr, _ = check_token_ids(name, value, vocab_size=limit, limit_name=limit_name)
            if arr.shape != ids.shape:
                raise ValueError(f"{name} must have the shape of input_ids {ids.shape}, got {arr.shape}")
            extra[name] = arr
        keep = extra.get("attention_mask")
        return ids, extra.get("token_type_ids"), None if keep is None else additive_mask(keep, self.dtype)

    def forward(self, ids, *, token_type_ids=None, additive_mask=None,
                cache: dict | None = None,
                keep_all: bool = False) -> list[np.ndarray]:
        """X_0 = embed(ids),  X_l = block_l(X_{l-1}) for l = 1 .. L.

        Returns [X_L], or every X_l with keep_all. The kernel behind every
        public call, on inputs they checked: (B, T) int arrays and an
        additive mask; writes ``cache``: "embed" and l.
        """
        c = self.config
        x = embed(ids, self.embeddings, c, token_type_ids,
                  sub_cache(cache, "embed"))
        states = [x]
        for i, (attention, ffn) in enumerate(self.layers):
            x = block_forward(x, attention, ffn, c, additive_mask,
                              sub_cache(cache, i))
            states = states + [x] if keep_all else [x]
        return states

    def backward(self, cache: dict, d_hidden: np.ndarray,
                 grads: dict[str, np.ndarray]) -> None:
        """dX_{l-1} = block_backward_l(dX_l) for l = L .. 1, then embed'.

        Adds into ``grads``, named as :meth:`parameters`; a shared sublayer
        sums its gradient over its uses. Reads ``cache``: l and "embed"
        (written by :meth:`forward`).
        """
        self.check_backward_inputs(cache, d_hidden, grads)
        view = _grad_view(self, grads)
        d = d_hidden
        for i in reversed(range(len(self.layers))):
            attention, ffn = self.layers[i]
            d = block_backward(d, cache[i], attention, ffn, view(attention),
                               view(ffn), self.config)
        embed = self.embeddings
        embed_backward(d, cache["embed"], embed, view(embed))

    def check_backward_inputs(self, cache, d_hidden, grads) -> None:
        """Refuse what :meth:`backward` cannot read: a cache :meth:`forward_cached` did not fill, a
        ``d_hidden`` not of the cached batch's (B, T, H) in floats, or ``grads`` not one finite-sized float
        array per parameter, named and shaped as :meth:`parameters` (numpy would fail deep inside, or add
        a broadcast gradient)."""
        if not isinstance(cache, dict) or "embed" not in cache or not all(i in cache for i in
                                                                           range(len(self.layers))):
            raise ValueError("cache must be the dict that forward_cached returned (it holds 'embed' and "
                             "every layer's number)")
        want = cache["embed"]["ids"].shape + (self.config.hidden_size,)
        if not isinstance(d_hidden, np.ndarray) or d_hidden.dtype.kind != "f" or d_hidden.shape != want:
            got = f"shape {d_hidden.shape}" if isinstance(d_hidden, np.ndarray) else type(d_hidden).__name__
            raise ValueError(f"d_hidden must be a float array of the hidden states' shape {want}, got {got}")
        check_finite_array("d_hidden", d_hidden)  # NaN would flow into every gradient
        params = self.parameters()
        if not isinstance(grads, dict) or not params.keys() <= grads.keys():
            missing = sorted(params.keys() - grads.keys()) if isinstance(grads, dict) else list(params)
            raise ValueError(f"grads must hold a zeroed array per parameter, named as parameters(); "
                             f"missing {missing[:3]}")
        for name, p in params.items():
            g = grads[name]
            if not isinstance(g, np.ndarray) or g.shape != p.shape or g.dtype.kind != "f":
                raise ValueError(f"grads[{name!r}] must be a float array of shape {p.shape}")
            check_finite_array(f"grads[{name!r}]", g)

    def forward_cached(self, input_ids, *, token_type_ids=None, attention_mask=None
                       ) -> tuple[np.ndarray, dict]:
        """The last hidden states (B, T, H) and the cache that :meth:`backward` reads."""
        cache = {}
        ids, types, M = self._check_inputs(input_ids, token_type_ids, attention_mask)
        hidden = self.forward(ids, token_type_ids=types, additive_mask=M, cache=cache)[-1]
        return hidden, cache

    def hidden_states(self, input_ids, *, token_type_ids=None, attention_mask=None) -> list[np.ndarray]:
        """The input to the first layer and the output of every layer: L + 1 arrays of (B, T, H)."""
        checked = self._check_inputs(input_ids, token_type_ids, attention_mask)
        return self._forward_rows(*checked, keep_all=True)

    def attentions(self, input_ids, *, token_type_ids=None, attention_mask=None) -> list[np.ndarray]:
        """A_l = softmax(Q K^T / sqrt(d_head) + mask) of every layer l = 1 .. L: L arrays of (B, h, T, T).

        What transformers returns with ``output_attentions=True``: row t of head i says where position t
        looks (every row sums to one; padded positions get no weight).
        """
        cache = {}
        ids, types, M = self._check_inputs(input_ids, token_type_ids, attention_mask)
        self.forward(ids, token_type_ids=types, additive_mask=M, cache=cache)
        return [cache[i]["attention"]["A"] for i in range(len(self.layers))]

    def __call__(self, input_ids, *, token_type_ids=None, attention_mask=None) -> np.ndarray:
        """The last layer's hidden states, (B, T, H); a 1-D ``input_ids`` is one batch row.

        ``token_type_ids`` and ``attention_mask`` are keyword-only: transformers' models take
        ``attention_mask`` second, so a second positional argument could be read as either.
        """
        return self._forward_rows(*self._check_inputs(input_ids, token_type_ids, attention_mask))[-1]

    def _forward_rows(self, ids, token_type_ids, additive_mask, keep_all: bool = False) -> list[np.ndarray]:
        """:meth:`forward` on checked inputs, its rows shared between threads by
        :func:`~geron_lib.model.threads.over_rows`: every state, the parts joined in order."""
        def part(rows):
            types = None if token_type_ids is None else token_type_ids[rows]
            M = None if additive_mask is None else additive_mask[rows]
            return self.forward(ids[rows], token_type_ids=types, additive_mask=M, keep_all=keep_all)

        parts = over_rows(part, self.config, *ids.shape)
        return parts[0] if len(parts) == 1 else [np.concatenate(layer) for layer in zip(*parts, strict=True)]

    def pool(self, hidden: np.ndarray) -> np.ndarray:
        """pooled = tanh(h_[CLS] W + b): the pooler on the first position, (B, T, H) -> (B, H)."""
        if self.pooler is None:
            raise ValueError("this Encoder was built with pooler=False")
        H = self.config.hidden_size
        if not isinstance(check_unmasked("hidden", hidden), np.ndarray) or hidden.dtype.kind != "f" \
                or hidden.ndim != 3 or hidden.shape[-1] != H or 0 in hidden.shape:
            got = f"shape {hidden.shape}" if isinstance(hidden, np.ndarray) else type(hidden).__name__
            raise ValueError(f"hidden must be the encoder's float output of shape (B, T, {H}), got {got}")
        return np.tanh(linear(hidden[:, 0], self.pooler["W"], self.pooler["b"]))

    def __repr__(self) -> str:
        c = self.config
        return (f"Encoder({c.model_type}, V={c.vocab_size}, E={c.E}, H={c.hidden_size}, "
                f"L={c.num_hidden_layers}, h={c.num_attention_heads}, sharing={c.sharing!r}, "
                f"attention={c.attention!r}, {self.num_parameters():,} parameters, {self.dtype})")


class _Shapes(Encoder):
    """An encoder whose every weight is its shape: the layout of ``config``, without allocating it."""

    def __init__(self, config: EncoderConfig):
        self.config = config

    def _normal(self, *shape):
        return shape

    def _zeros(self, n):
        return (n,)

    _ones = _zeros


def weight_shapes(config: EncoderConfig) -> dict[str, dict[str, tuple[int, ...]]]:
    """The shape of every weight an encoder of ``config`` holds, by part ("embeddings", "attention" and
    "ffn", one stored copy of each, "pooler") and name."""
    check_type("config", config, EncoderConfig)
    layout = _Shapes(config)
    return {"embeddings": layout._embedding_weights(), "attention": layout._attention_weights(),
            "ffn": layout._ffn_weights(), "pooler": layout._pooler_weights()}


def check_weights(config, embeddings, attention, ffn, pooler, dtype) -> np.dtype:
    """:meth:`Encoder.from_weights`'s arguments, checked: ``dtype`` (float32 or float64, holding
    ``layer_norm_eps``), then every dict of weights (one attention and one FFN dict per stored copy, the
    pooler's or None) holding the names of ``config``'s layout, each a plain numpy array of ``dtype``, of
    its shape and finite (NaN or infinity would make every output NaN)."""
    check_type("config", config, EncoderConfig)
    dtype = check_float_dtype("dtype", dtype)
    check_held_by("config.layer_norm_eps", config.layer_norm_eps, dtype)
    for name, given, n in (("attention", attention, stored_copies(config)[0]),
                           ("ffn", ffn, stored_copies(config)[1])):
        if not isinstance(given, list) or len(given) != n:
            raise ValueError(f"{name} must be a list of the {n} sublayer dicts that config (sharing="
                             f"{config.sharing!r}, {config.num_hidden_layers} layers) stores")
    shapes = weight_shapes(config)
    parts = [("embeddings", embeddings, shapes["embeddings"]),
             *((f"attention[{j}]", w, shapes["attention"]) for j, w in enumerate(attention)),
             *((f"ffn[{j}]", w, shapes["ffn"]) for j, w in enumerate(ffn)),
             *([("pooler", pooler, shapes["pooler"])] if pooler is not None else [])]
    for where, w, want in parts:
        if not isinstance(w, dict):
            raise TypeError(f"{where} must be a dict of weight arrays by name, got {type(w).__name__}")
        if w.keys() != want.keys():
            lacks, extra = sorted(want.keys() - w.keys()), sorted(map(repr, w.keys() - want.keys()))
            raise ValueError(f"{where} must hold the arrays {sorted(want)} of config's layout; it lacks "
                             f"{lacks} and holds {extra} besides")
        for key, shape in want.items():
            check_finite_array(f"{where}[{key!r}]", w[key], dtype=dtype, shape=shape)
    return dtype


def _share(attention: list[dict], ffn: list[dict], L: int) -> list[tuple[dict, dict]]:
    """Layer i uses its own copy of a sublayer, or copy 0 when that sublayer is shared (one copy)."""
    return [(attention[i % len(attention)], ffn[i % len(ffn)]) for i in range(L)]


def _grad_view(encoder: Encoder, grads: dict[str, np.ndarray]):
    """weights dict -> the matching dict of gradient arrays (the same arrays for a shared sublayer)."""
    name_of = {id(p): name for name, p in encoder.parameters().items()}
    return lambda w: {k: grads[name_of[id(p)]] for k, p in w.items()}
