"""What the trade-off grid measures of a trained model besides its loss: the unigram baseline it must beat,
the rank of its token table (all rows, the rows training moved, the rows as a text uses them) and of its
last hidden states, how far every layer moves its input, and the held-out rows with their context destroyed.
"""

from __future__ import annotations

import numpy as np

from ...model.mlm import MaskedBatch, MaskedLM
from ...validate import check_int, check_type, plain_array
from ..depth import layer_movement
from ..factorised import rank_errors

#: The energy share that :func:`token_table_rank`'s ``rank_90`` keeps.
ENERGY = 0.9
#: A token's row "moved" in training when it changed by at least this many times its initial length
#: (:func:`moved_rows`): training, not the random start, then sets where it points.
MOVED = 1.0


def unigram_loss(train_ids: np.ndarray, held_out: MaskedBatch, vocab_size: int, n_special: int) -> float:
    """loss = -mean over held-out selected positions of log p(y),  p(w) = (n_w + 1) / sum_w' (n_w' + 1).

    The loss of a model that ignores context and predicts every masked token from its frequency in the
    training ids (add-one smoothed over the non-special tokens): the baseline a trained model must beat.
    """
    counts = np.bincount(train_ids.ravel(), minlength=vocab_size)[n_special:] + 1.0
    log_p = np.log(counts / counts.sum())
    return float(-log_p[held_out.labels[held_out.selected] - n_special].mean())


def token_table_rank(table: np.ndarray, *, centred: bool = False) -> dict:
    """r_eff = exp(-sum_j p_j log p_j),  p_j = s_j / sum_k s_k

    The singular values s of a token table (V x E), its effective rank (Roy
    and Vetterli's: E for a flat spectrum, 1 for rank one) and rank_90, the
    number of directions holding 90 % of its energy
    (from :func:`~.factorised.rank_errors`).
    ``centred``: of the table less its mean row, so that a direction every token
    shares (trained tables have a large one) does not count as structure.
    """
    table = plain_array("table", table).astype(np.float64)
    if centred:
        table = table - table.mean(axis=0)
    s = np.linalg.svd(table, compute_uv=False)
    if not s.sum() > 0:
        where = " once its mean row is removed" if centred else ""
        raise ValueError(f"table is zero{where}: it has no spectrum to measure")
    p = s / s.sum()
    entropy = -(p[p > 0] * np.log(p[p > 0])).sum()
    rank_90 = int(np.argmax(rank_errors(table) ** 2 <= 1 - ENERGY + 1e-12))
    return {"singular_values": s, "effective_rank": float(np.exp(entropy)),
            "rank_90": rank_90}


def moved_rows(initial: np.ndarray, trained: np.ndarray) -> np.ndarray:
    """r_i = ||w_i - w_i^0|| / ||w_i^0||,  moved_i = r_i >= MOVED.

    Which rows of a token table training moved from their random start, by
    at least their initial length (:data:`MOVED` times it).
    """
    initial = plain_array("initial", initial).astype(np.float64)
    trained = plain_array("trained", trained).astype(np.float64)
    change = (np.linalg.norm(trained - initial, axis=1)
              / np.linalg.norm(initial, axis=1))
    return change >= MOVED


def rank_in_text(table: np.ndarray, ids: np.ndarray, pad_id: int) -> dict:
    """r_eff(Z - mean row),  Z = [W[x_t]] for every real token t of ids.

    :func:`token_table_rank` (centred) of the token table's rows as a text
    uses them: one row per token of ``ids`` that is not ``pad_id``, each
    token's row as often as it occurs. The context-independent counterpart
    of :func:`hidden_rank` on the same positions: a row the text never uses
    weighs nothing.
    """
    ids = plain_array("ids", ids)
    return token_table_rank(plain_array("table", table)[ids[ids != pad_id]],
                            centred=True)


def movement(model: MaskedLM, ids: np.ndarray, pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~.depth.layer_movement` of the trained model on ``ids``, over their real tokens (not
    ``pad_id``): per layer, the mean L2 distance and cosine similarity between its input and output."""
    keep = ids != pad_id
    states = model.encoder.hidden_states(ids, attention_mask=keep.astype(np.int64))
    return layer_movement([s[keep][None] for s in states])  # each (1, tokens, H)


def hidden_rank(model: MaskedLM, ids: np.ndarray, pad_id: int) -> dict:
    """:func:`token_table_rank` (centred) of the last layer's hidden states on ``ids``: one row per real
    token (not ``pad_id``), H wide. The context-dependent counterpart of the token table's spectrum."""
    keep = ids != pad_id
    hidden = model.encoder(ids, attention_mask=keep.astype(np.int64))  # (B, T, H)
    return token_table_rank(hidden[keep], centred=True)


def shuffled_within_rows(batch: MaskedBatch, seed: int = 0) -> MaskedBatch:
    """x'_{b,t} = x_{b, pi_b(t)} for every field, pi_b a random order of row b's real positions after [CLS].

    The same batch with each row's tokens in a random order: every input, target and masking decision
    kept, together, but no token beside its neighbours. A model's loss on it is what the tokens alone tell
    it; the loss it gains on the real rows is what it reads from context. Padding and [CLS] stay put.
    """
    check_type("batch", batch, MaskedBatch)
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    fields = [f.copy() for f in (batch.input_ids, batch.labels, batch.decision, batch.attention_mask)]
    for b in range(len(batch)):
        real = np.flatnonzero(batch.attention_mask[b])[1:]  # (n_b,) positions after [CLS]
        order = rng.permutation(real)
        for f in fields:
            f[b, real] = f[b, order]
    return MaskedBatch(*fields)


def held_out_token_losses(model: MaskedLM, batch: MaskedBatch, rows: int = 256) -> np.ndarray:
    """l_n = -log p(y_n | context) at every selected position of ``batch``, read ``rows`` rows at a time
    (as :func:`~geron_lib.pretraining.train.evaluate` reads them): their mean is the held-out loss."""
    check_type("model", model, MaskedLM)
    rows = check_int("rows", rows, minimum=1)
    parts = [model.token_losses(batch[s:s + rows]) for s in range(0, len(batch), rows)
             if batch.selected[s:s + rows].any()]
    return np.concatenate(parts)
