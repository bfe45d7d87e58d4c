"""Where a trained miniature's heads look: an unfactorised, not-shared model (E = H = 64, seed 0), shipped
with the library, read on one sentence of the held-out documentation text. Its weights come from the first
trade-off grid (6 epochs), whose stored results the context grid (chapter 6, "What the savings cost in
training") replaced; its data, tokenizer and model are the context grid's."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..model.checkpoint import encoder_from_arrays
from ..model.encoder import Encoder
from ..pretraining.subword import WordPieceTokenizer
from ..pretraining.tokenizer import SPECIAL_TOKENS
from ..validate import check_finite_array, check_int, check_type, plain_array
from . import stored
from .tradeoffs.setup import Setup

#: The cell (E, sharing; at H = 64) and seed shipped: ``scripts/ship_miniature.py`` copies its weights from a
#: grid's cache.
CELL, SEED = (64, "none"), 0
SHIPPED_BY = "scripts/ship_miniature.py"
#: Its encoder's arrays (``model.checkpoint.encoder_arrays``) and its tokenizer's pieces, one a line.
WEIGHTS = stored.DATA / "miniature_E64_none_seed0.npz"
PIECES = stored.DATA / "miniature_pieces.txt"
#: A sentence of a held-out paragraph (index in the "docs" corpus): unseen by training and the tokenizer.
SENTENCE, PARAGRAPH = "The buffer is discarded when the close method is called.", 12954


def load_miniature(weights: Path = WEIGHTS, pieces: Path = PIECES) -> tuple[Encoder, WordPieceTokenizer]:
    """The shipped miniature's encoder (float32) and the WordPiece tokenizer it was trained with: the
    special tokens, then one piece a line, one line per row of the encoder's token table. A file that
    cannot be read, or pieces that do not fit the table, are refused naming the file."""
    tokens = stored.load_lines(pieces, SHIPPED_BY)
    if tokens[:len(SPECIAL_TOKENS)] != list(SPECIAL_TOKENS):
        raise ValueError(f"{pieces} must start with the special tokens {list(SPECIAL_TOKENS)}, one a line; "
                         f"it starts {tokens[:len(SPECIAL_TOKENS)]}")
    tokenizer = WordPieceTokenizer(tokens[len(SPECIAL_TOKENS):])
    encoder = encoder_from_arrays(Setup().model_config(*CELL), stored.load_arrays(weights, SHIPPED_BY))
    if tokenizer.vocab_size != encoder.config.vocab_size:
        raise ValueError(f"{pieces} holds {tokenizer.vocab_size:,} tokens, but the encoder of {weights} has "
                         f"{encoder.config.vocab_size:,} rows in its token table: pieces and weights must "
                         f"come from one run ({SHIPPED_BY} writes both)")
    return encoder, tokenizer


def head_patterns(encoder: Encoder, tokenizer: WordPieceTokenizer, sentence: str = SENTENCE,
                  ) -> tuple[list[str], np.ndarray]:
    """The sentence's tokens ([CLS] ... [SEP]) and every head's attention A_{l,i} = softmax(Q_i K_i^T /
    sqrt(d_head)) on them: an (L, h, T, T) array whose row t of head i in layer l says where token t
    looks."""
    check_type("encoder", encoder, Encoder)
    check_type("tokenizer", tokenizer, WordPieceTokenizer)
    check_type("sentence", sentence, str)
    if tokenizer.vocab_size != encoder.config.vocab_size:
        raise ValueError(f"tokenizer has {tokenizer.vocab_size:,} tokens, but encoder's token table "
                         f"{encoder.config.vocab_size:,} rows: they must come from one training run")
    ids = tokenizer.encode(sentence)
    check_int("the sentence's length in tokens", len(ids), minimum=3)  # [CLS], one token, [SEP]
    if len(ids) > encoder.config.max_position_embeddings:
        raise ValueError(f"sentence is {len(ids)} tokens long; the model reads at most "
                         f"{encoder.config.max_position_embeddings}")
    A = np.stack([a[0] for a in encoder.attentions(np.array([ids]))])  # (L, h, T, T)
    return [tokenizer.vocabulary[i] for i in ids], A


def pattern_shares(A: np.ndarray) -> dict[str, np.ndarray]:
    """What share of its weight a head gives, on average over the T tokens looking:

        first[l, i] = mean_t A_{l,i}[t, 0]          ([CLS])
        last[l, i]  = mean_t A_{l,i}[t, T - 1]      ([SEP])
        near[l, i]  = mean_t sum_{|s - t| <= 1} A_{l,i}[t, s]   (itself and its neighbours)
        peak[l, i]  = mean_t max_s A_{l,i}[t, s]    (its largest single weight)

    each an (L, h) array; weights spread evenly would give 1/T, 1/T, about 3/T and 1/T.
    """
    A = check_finite_array("A", plain_array("A", A))
    if A.ndim != 4 or A.shape[2] != A.shape[3]:
        raise ValueError(f"A must be (L, h, T, T); got shape {A.shape}")
    T = A.shape[-1]
    t, s = np.indices((T, T))
    near = (np.abs(t - s) <= 1)
    return {"first": A[..., :, 0].mean(-1), "last": A[..., :, -1].mean(-1),
            "near": (A * near).sum(-1).mean(-1), "peak": A.max(-1).mean(-1)}
