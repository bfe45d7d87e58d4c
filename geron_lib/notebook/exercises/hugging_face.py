"""Checkers for the appendix "Check yourself against Hugging Face"."""

from __future__ import annotations

import itertools

import numpy as np

from ...config import PRESETS
from ...costs.params import count_parameters
from ...model.encoder import position_ids
from ...validate import is_torch_tensor
from . import Feedback, exact_number, grade_number, say, shown

#: The ids of the positions exercise: <s> three tokens </s> and two pads, for roberta-base (pad id 1).
POSITION_IDS_EXERCISE = [0, 713, 16, 205, 2, 1, 1]


def unfactorised_albert_count() -> int:
    """transformers' AlbertModel (with pooler) at albert-base-v2 size but embedding_size = hidden_size."""
    config = PRESETS["albert-base-v2"].replace(embedding_size=None, embedding_projection=True)
    return count_parameters(config, pooler=True).total  # the E -> H map (here H -> H) included


def check_unfactorised_albert(answer) -> Feedback:
    """Exercise: count AlbertModel at albert-base-v2 size with embedding_size = 768."""
    return grade_number(
        answer, unfactorised_albert_count(), what="AlbertModel's parameter count with E = H = 768",
        hint="Count the three embedding tables and their layer norm at width 768, the one shared layer and "
             "the pooler (count_parameters does that for embedding_size=None), then remember the map "
             "transformers' ALBERT never drops: embedding_hidden_mapping_in, 768 x 768 plus a bias.")


def _first_items(answer, n: int) -> list | None:
    """At most ``n`` items of the answer (read once: it may be an endless generator), or None when it is
    text or not a sequence of items (or reading it raises)."""
    if isinstance(answer, str | bytes):
        return None
    try:
        return list(itertools.islice(iter(answer), n))
    except Exception:  # noqa: BLE001 - a student's iterator may raise anything; it gives no items then
        return None


def check_roberta_positions(answer) -> Feedback:
    """Exercise: the position ids roberta-base gives to :data:`POSITION_IDS_EXERCISE`."""
    expected = position_ids(np.array([POSITION_IDS_EXERCISE]), PRESETS["roberta-base"])[0].tolist()
    if is_torch_tensor(answer):
        return Feedback(False, f"That is a torch tensor of shape {tuple(answer.shape)}: give its values as a "
                               "list of Python ints, tensor.tolist() (for transformers' position ids of one "
                               "sequence, shape (1, T), position_ids[0].tolist()).")
    if isinstance(answer, np.ma.MaskedArray):
        return Feedback(False, "That is a masked array: give every position id, as a list with no mask.")
    values = _first_items(answer, len(expected) + 1)
    if values is None:
        return Feedback(False, f"Give a list of whole numbers, one per token, {len(expected)} in all; got "
                               f"{shown(answer)} ({type(answer).__name__}).")
    if any(is_torch_tensor(v) for v in values):
        return Feedback(False, "Its items are torch tensors: give Python ints, tensor.tolist().")
    numbers_ = [exact_number(v) for v in values]
    if not all(v is not None and v.denominator == 1 for v in numbers_):
        return Feedback(False, "Position ids are whole numbers, one per token"
                               + say(f"; got {shown(values)}.", "."))
    given = [int(v) for v in numbers_]
    if len(given) != len(expected):
        gave = f"more than {len(expected)}" if len(given) > len(expected) else len(given)
        return Feedback(False, f"There are {len(expected)} tokens, so {len(expected)} position ids; "
                               + say(f"you gave {gave}.", "your list has another length."))
    if given == expected:
        return Feedback(True, f"The positions are {expected}: real tokens count up from "
                              "pad_token_id + 1 = 2, padding stays at pad_token_id = 1.")
    if given == list(range(len(expected))):
        return Feedback(False, "That is BERT's numbering. RoBERTa starts real tokens after its padding id.")
    return Feedback(False, "Real tokens take pad_token_id + 1, pad_token_id + 2, ... in order (counting only "
                           "real tokens); every padding token takes pad_token_id itself.")
