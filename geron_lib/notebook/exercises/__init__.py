"""Checkers that students call with their answers; one module per chapter, one verdict type for all."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer: ``correct``, and a message saying why or what to look at."""

    correct: bool
    message: str

    def __bool__(self) -> bool:
        return self.correct

    def __repr__(self) -> str:
        return ("Correct. " if self.correct else "Not yet. ") + self.message


def grade_number(answer, expected: float, *, what: str, hint: str, rel_tol: float = 1e-9,
                 slips: dict | None = None) -> Feedback:
    """Compare a numeric answer with the expected value. When wrong, say what to look at: the hint kept
    in ``slips`` for a known wrong value (a common mistake), else ``hint``."""
    if isinstance(answer, bool) or not isinstance(answer, numbers.Real) or not math.isfinite(answer):
        return Feedback(False, f"{what} should be a finite number; got {answer!r}.")
    if math.isclose(answer, expected, rel_tol=rel_tol, abs_tol=0 if expected else 1e-12):
        return Feedback(True, f"{what} is {expected:,}.")
    direction = "too large" if answer > expected else "too small"
    return Feedback(False, f"{answer:,} is {direction} for {what}. {(slips or {}).get(answer, hint)}")
