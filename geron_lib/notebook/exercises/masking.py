"""Checkers for the dynamic-masking chapter's exercises."""

from __future__ import annotations

from ...pretraining.masking import expected_distinct_masks
from ...validate import check_int, check_open_unit
from . import PERCENT, Feedback, grade_number


def check_empty_mask_probability(answer, n_tokens: int = 8, mask_prob: float = 0.15) -> Feedback:
    """The chance that BERT's procedure selects no word at all in a sentence of ``n_tokens`` words."""
    n_tokens = check_int("n_tokens", n_tokens, minimum=1)
    mask_prob = check_open_unit("mask_prob", mask_prob)
    return grade_number(answer, (1 - mask_prob) ** n_tokens, rel_tol=1e-6,
                        what=f"the chance that none of {n_tokens} words is selected at p = {mask_prob}",
                        factors=PERCENT,
                        hint="Each word escapes selection on its own, with probability 1 - p; the special "
                             "tokens do not count.")


def check_distinct_masks(answer, n_tokens: int, mask_prob: float, epochs: int, schedule: str,
                         copies: int = 10) -> Feedback:
    """The expected number of distinct masks after ``epochs`` epochs (to 0.1 %)."""
    expected = expected_distinct_masks(n_tokens, mask_prob, epochs, schedule, copies)
    return grade_number(answer, expected, rel_tol=1e-3,
                        what=f"the expected number of distinct masks ({schedule}, {epochs} epochs)",
                        hint="Count how many maskings are drawn (1, min(epochs, copies) or epochs), then "
                             "sum, over every set of positions, the chance that some draw picks it.")

