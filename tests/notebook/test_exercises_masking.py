"""The dynamic-masking chapter's checkers accept the right answer and point at the usual slips."""

from geron_lib.notebook.exercises.masking import (
    check_distinct_masks,
    check_empty_mask_probability,
)
from geron_lib.pretraining.masking import expected_distinct_masks


def test_exercise_checkers():
    assert check_empty_mask_probability(0.85**8)
    wrong = check_empty_mask_probability(0.15**8)
    assert not wrong and "escapes selection" in wrong.message
    exact = expected_distinct_masks(10, 0.15, 40, "duplicated", 10)
    assert check_distinct_masks(round(exact, 2), 10, 0.15, 40, "duplicated")
    assert not check_distinct_masks(40, 10, 0.15, 40, "duplicated")
