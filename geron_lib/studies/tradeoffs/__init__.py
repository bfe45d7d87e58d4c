"""What ALBERT's savings cost, in miniature: masked-language models trained on real English with a factorised
embedding (V -> E -> H) and with cross-layer sharing, as in the ALBERT paper's Table 3 (loss against E, not
shared and all shared) and Table 4 (the four sharing modes at two values of E); and, inside each trained
model, how far every layer moves its input (the paper's Figure 1) and the rank of its token table.

Every run trains on the same tokens for the same number of steps, with a fresh masking every epoch
(dynamic masking); only E, the sharing mode and the seed differ. The seed sets the initial weights, the
masks and the batch order. One job per module: ``setup`` (the settings and the data), ``metrics`` (what is
measured of a trained model), ``runner`` (training and measuring one run) and ``step_cost`` (one training
step of a cell's model timed beside others'). Every public name of them is also a name of this package
(``from geron_lib.studies import tradeoffs as tx; tx.Setup``). The grid these runs make, trained and stored,
is :mod:`geron_lib.studies.context_grid`'s.
"""

from .metrics import (
    ENERGY,
    MOVED,
    held_out_token_losses,
    hidden_rank,
    moved_rows,
    movement,
    rank_in_text,
    shuffled_within_rows,
    token_table_rank,
    unigram_loss,
)
from .runner import describe, rounded, train_one
from .setup import Data, Setup, data, split
from .step_cost import masked_batch, step_seconds

__all__ = [
    "ENERGY", "MOVED", "held_out_token_losses", "hidden_rank", "moved_rows", "movement", "rank_in_text",
    "shuffled_within_rows",
    "token_table_rank", "unigram_loss",
    "describe", "rounded", "train_one",
    "Data", "Setup", "data", "split",
    "masked_batch", "step_seconds",
]
