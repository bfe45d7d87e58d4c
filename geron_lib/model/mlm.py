"""BERT's masked-language-model head on an :class:`~geron_lib.model.encoder.Encoder`, its decoder tied to the
token embedding: the batch it reads, the head and the loss, each forward beside its backward."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import EncoderConfig
from ..costs.training_memory import training_memory
from ..validate import check_finite_array, check_int, check_memory, check_type, check_unmasked, plain_array
from .attention import additive_mask
from .encoder import Encoder
from .layers import ACTIVATIONS, layer_norm, layer_norm_backward, linear, linear_backward, sub_cache
from .threads import over_rows

#: What happened at each position of a :class:`MaskedBatch`.
NOT_SELECTED, MASKED, RANDOM, KEPT = 0, 1, 2, 3


@dataclass(frozen=True)
class MaskedBatch:
    """One masking of a batch of sequences, every array (B, T): what the MLM reads and predicts."""

    input_ids: np.ndarray       # what the model reads
    labels: np.ndarray          # the original ids: the targets at the selected positions
    decision: np.ndarray        # NOT_SELECTED, or what a selected token became: MASKED, RANDOM or KEPT
    attention_mask: np.ndarray  # 1 for a token, 0 for [PAD]

    #: (field, smallest value, largest value or None, what the values are)
    RULES = (("input_ids", 0, None, "token ids"), ("labels", 0, None, "the original token ids"),
             ("decision", NOT_SELECTED, KEPT, "NOT_SELECTED (0), MASKED (1), RANDOM (2) or KEPT (3)"),
             ("attention_mask", 0, 1, "1 for a token, 0 for padding"))

    def __post_init__(self):
        """Every field a (B, T) integer array of the same shape within its rule (lists are converted).

        There is no ignore index: ``labels`` holds the original id at every position and ``decision`` says
        which are predicted (transformers marks the others with labels of -100, which is refused here).
        """
        shape = None
        for name, low, high, what in self.RULES:
            value = getattr(self, name)
            arr = plain_array(f"MaskedBatch's {name}", value)
            if arr.dtype.kind not in "iu":
                raise TypeError(f"MaskedBatch's {name} must be an integer array ({what}), got "
                                f"{type(value).__name__}"
                                + (f" of {arr.dtype}" if arr.dtype.kind != "O" else ""))
            if arr.ndim != 2 or arr.size == 0:
                raise ValueError(f"MaskedBatch's {name} must be a non-empty (B, T) array, got shape "
                                 f"{arr.shape}")
            if shape is not None and arr.shape != shape:
                raise ValueError(f"MaskedBatch's {name} has shape {arr.shape}, but input_ids has {shape}: "
                                 "every field must be (B, T)")
            shape = arr.shape
            lowest, highest = arr.min(), arr.max()
            if lowest < low or (high is not None and highest > high):
                rule = f"at least {low}" if high is None else f"in [{low}, {high}]"
                hint = (" (there is no ignore index such as transformers' -100: labels holds the original id "
                        "everywhere, and decision says which positions are predicted)" if name == "labels"
                        else "")
                raise ValueError(f"MaskedBatch's {name} must hold {what}, each {rule}; found "
                                 f"{lowest if lowest < low else highest}{hint}")
            object.__setattr__(self, name, arr)

    @property
    def selected(self) -> np.ndarray:
        """Where the model is asked to predict the original token."""
        return self.decision != NOT_SELECTED

    def __len__(self) -> int:
        return len(self.input_ids)

    def __getitem__(self, rows) -> MaskedBatch:
        """The rows ``rows`` (a slice or a 1-D index array), as a batch: rows of a checked batch, so not
        checked again."""
        if not isinstance(rows, slice) and np.ndim(rows) != 1:
            raise TypeError(f"rows must be a slice or a 1-D index array, got {type(rows).__name__} of "
                            f"{np.ndim(rows)} dimensions")
        part = object.__new__(MaskedBatch)
        for name, *_ in self.RULES:
            object.__setattr__(part, name, getattr(self, name)[rows])
        if not len(part):
            raise ValueError("rows selects no row: a batch needs at least one")
        return part


def mlm_head(hidden, head: dict, word: np.ndarray, act: str, eps: float,
             cache: dict | None = None):
    """logits = LN(act(h W + b)) Emb^T + b_out: (N, H) -> (N, V).

    A dense map H -> E, LN over E, and the decoder tied to Emb (V x E). The
    rows are the hidden states at the masked positions. Writes ``cache``:
    "ln", hidden, u, z.
    """
    u = linear(hidden, head["W"], head["b"])                     # (N, E)
    z = layer_norm(ACTIVATIONS[act][0](u), head["ln_gain"], head["ln_bias"],
                   eps, sub_cache(cache, "ln"))                  # (N, E)
    if cache is not None:
        cache.update(hidden=hidden, u=u, z=z)
    return linear(z, word.T, head["b_out"])                      # (N, V)


def mlm_head_backward(d_logits, cache, head, word, g_head, g_word,
                      act: str) -> np.ndarray:
    """dEmb += dlogits^T z,  dz = dlogits Emb, then LN', act' and the dense map.

    dEmb is the tied decoder's share of the embedding's gradient. Returns
    dL/d(hidden states at the masked positions). Reads ``cache``: z, "ln",
    u, hidden (written by :func:`mlm_head`).
    """
    g_word += d_logits.T @ cache["z"]
    g_head["b_out"] += d_logits.sum(axis=0)
    dz = d_logits @ word                                         # (N, E)
    da = layer_norm_backward(dz, cache["ln"], g_head["ln_gain"],
                             g_head["ln_bias"])
    du = ACTIVATIONS[act][1](cache["u"]) * da
    return linear_backward(du, cache["hidden"], head["W"], g_head["W"],
                           g_head["b"])


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """loss = mean_n -log softmax(z_n)[y_n]; returns the loss and the probabilities its backward reads.

    With s = z - max z (no overflow): -log softmax(z)[y] = log sum_j exp(s_j) - s_y, and one array of
    z's size, turned into the probabilities in place. A target outside [0, V) is refused (numpy would read
    -1 as the last class).
    """
    _check_cross_entropy(logits, targets)
    return _cross_entropy(logits, targets)


def _check_cross_entropy(logits, targets) -> None:
    """:func:`cross_entropy`'s arguments: finite (N, V) float logits, and N integer targets in [0, V)."""
    if not isinstance(logits, np.ndarray) or logits.ndim != 2 or logits.dtype.kind != "f" or not logits.size:
        raise ValueError(f"logits must be a non-empty (N, V) float array, got {np.shape(logits)}")
    check_finite_array("logits", logits)  # softmax of inf is inf/inf, of NaN NaN
    N, V = logits.shape
    rule = f"targets must be one class per row of logits: {N} integers in [0, V) = [0, {V})"
    if not isinstance(targets, np.ndarray):
        raise TypeError(f"{rule}, as a numpy integer array; got a {type(targets).__name__}")
    check_unmasked("targets", targets)
    if targets.dtype.kind not in "iu" or targets.shape != (N,):
        raise ValueError(f"{rule}; got an array of {targets.dtype}, shape {targets.shape}")
    outside = targets[(targets < 0) | (targets >= V)]
    if outside.size:
        raise ValueError(f"{rule}; found {outside[0]} (numpy would read a negative class from the end)")


def _cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """:func:`cross_entropy` on checked logits and targets (the model's own)."""
    probs = logits - logits.max(axis=-1, keepdims=True)
    target = probs[np.arange(len(targets)), targets]
    np.exp(probs, out=probs)
    total = probs.sum(axis=-1)
    probs /= total[:, None]
    return float((np.log(total) - target).mean()), probs


def _token_losses(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """-log softmax(z_n)[y_n] = log sum_j exp(s_nj) - s_ny,  s = z - max z, per row."""
    s = logits - logits.max(axis=-1, keepdims=True)
    return np.log(np.exp(s).sum(axis=-1)) - s[np.arange(len(targets)), targets]


def cross_entropy_backward(probs: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """dz_n = (softmax(z_n) - onehot(y_n)) / N."""
    dz = probs.copy()
    dz[np.arange(len(targets)), targets] -= 1
    dz /= len(targets)
    return dz


class MaskedLM:
    """An Encoder with the MLM head that :func:`geron_lib.count_parameters` counts with ``mlm_head=True``.

    The head's weights come from ``np.random.default_rng([seed, 1])``, the encoder's from ``seed``.
    """

    def __init__(self, config: EncoderConfig, *, seed: int = 0, dtype=np.float64):
        seed = check_int("seed", seed, minimum=0)
        check_type("config", config, EncoderConfig)
        self.encoder = Encoder(config, seed=seed, dtype=dtype)
        self.config, self.dtype = config, self.encoder.dtype
        H, E, V = config.hidden_size, config.E, config.vocab_size
        rng = np.random.default_rng([seed, 1])
        self.head = {"W": rng.normal(0.0, config.initializer_range, (H, E)).astype(self.dtype),
                     "b": np.zeros(E, self.dtype), "ln_gain": np.ones(E, self.dtype),
                     "ln_bias": np.zeros(E, self.dtype), "b_out": np.zeros(V, self.dtype)}

    def parameters(self) -> dict[str, np.ndarray]:
        """Every distinct array by name: the encoder's, then ``mlm_head.*`` (its decoder is the token
        embedding, counted once)."""
        return self.encoder.parameters() | {f"mlm_head.{k}": v for k, v in self.head.items()}

    def num_parameters(self) -> int:
        return sum(p.size for p in self.parameters().values())

    def _logits(self, batch: MaskedBatch, cache: dict | None = None):
        """The logits at the selected positions of a checked batch, and their targets."""
        selected = batch.selected
        M = additive_mask(batch.attention_mask, self.dtype)
        hidden = self.encoder.forward(batch.input_ids, additive_mask=M, cache=sub_cache(cache, "encoder"))[-1]
        c = self.config
        logits = mlm_head(hidden[selected], self.head, self.encoder.embeddings["word"], c.hidden_act,
                          c.layer_norm_eps, sub_cache(cache, "head"))
        return logits, batch.labels[selected]

    def _over_rows(self, batch: MaskedBatch, fn, training: bool) -> list:
        """[fn(part, share) for every part of the batch's rows that selects a position], share = the part's
        fraction of the batch's selected positions (parts as :func:`~geron_lib.model.threads.over_rows`
        cuts them); the mean over the batch is the sum of the parts' means, each times its share."""
        self.check_batch(batch, training=training)
        n_selected = int(np.count_nonzero(batch.decision))

        def part(rows):
            rows_batch = batch[rows]
            n = int(rows_batch.selected.sum())
            return fn(rows_batch, n / n_selected) if n else None

        results = over_rows(part, self.config, *batch.input_ids.shape)
        return [r for r in results if r is not None]

    def check_size(self, batch: int, seq_len: int, *, training: bool) -> None:
        """Refuse ``batch`` sequences of ``seq_len`` tokens beyond the position table, or whose forward pass
        (or, with ``training``, whose training step: :func:`~geron_lib.costs.training_memory.training_memory`)
        would pass the memory limit: from the arithmetic, before allocating."""
        self.encoder.check_batch_size(batch, seq_len)
        if training:
            step = training_memory(self.config, batch, seq_len, dtype=self.dtype).step
            check_memory(step, f"a training step on {batch} x {seq_len} ids")

    def check_batch(self, batch: MaskedBatch, *, training: bool = True, name: str = "batch",
                    rows: int | None = None) -> None:
        """Refuse a batch this model cannot read, before any work: ids or labels beyond the vocabulary,
        nothing to predict, or sizes :meth:`check_size` refuses when read ``rows`` rows at a time (None:
        all at once)."""
        check_type(name, batch, MaskedBatch)
        B, T = batch.input_ids.shape
        self.check_size(B if rows is None else min(B, rows), T, training=training)
        V = self.config.vocab_size
        for field in ("input_ids", "labels"):
            highest = getattr(batch, field).max()
            if highest >= V:
                raise ValueError(f"{name}'s {field} holds {highest}, but vocab_size is {V}: every id must be "
                                 "below vocab_size")
        if not batch.decision.any():
            raise ValueError(f"{name} has no selected position: there is nothing to predict")

    def loss(self, batch: MaskedBatch) -> float:
        """The mean cross-entropy over the batch's selected positions."""
        return sum(self._over_rows(batch, lambda part, share: _cross_entropy(*self._logits(part))[0] * share,
                                   training=False))

    def token_losses(self, batch: MaskedBatch) -> np.ndarray:
        """l_n = -log softmax(z_n)[y_n] at every selected position, in the batch's row order: (N,)."""
        return np.concatenate(self._over_rows(batch, lambda part, share: _token_losses(*self._logits(part)),
                                              training=False))

    def loss_and_grads(self, batch: MaskedBatch) -> tuple[float, dict[str, np.ndarray]]:
        """The loss and its gradient for every parameter (named as :meth:`parameters`)."""
        (loss, grads), *others = self._over_rows(batch, self._loss_and_grads, training=True)
        for part_loss, part_grads in others:  # each part beyond the first holds its own gradients until here
            loss += part_loss
            for name, g in part_grads.items():
                grads[name] += g
        return loss, grads

    def _loss_and_grads(self, batch: MaskedBatch, share: float) -> tuple[float, dict[str, np.ndarray]]:
        """``share`` times the loss of ``batch`` and its gradients."""
        cache = {}
        logits, targets = self._logits(batch, cache)
        loss, probs = _cross_entropy(logits, targets)
        grads = {name: np.zeros_like(p) for name, p in self.parameters().items()}
        g_head = {k: grads[f"mlm_head.{k}"] for k in self.head}
        d_logits = cross_entropy_backward(probs, targets)
        d_logits *= share  # 1 for the whole batch: exact
        d_selected = mlm_head_backward(d_logits, cache["head"], self.head, self.encoder.embeddings["word"],
                                       g_head, grads["embeddings.word"], self.config.hidden_act)
        d_hidden = np.zeros(batch.input_ids.shape + (self.config.hidden_size,), self.dtype)  # (B, T, H)
        d_hidden[batch.selected] = d_selected
        self.encoder.backward(cache["encoder"], d_hidden, grads)
        return loss * share, grads

    def __repr__(self) -> str:
        return f"MaskedLM({self.encoder!r} + MLM head, {self.num_parameters():,} parameters)"
