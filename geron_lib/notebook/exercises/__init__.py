"""Checkers that students call with their answers; one module per chapter, one verdict type for all.

A checker never raises on the answer, whatever it is: it returns a :class:`Feedback` saying what was
expected. A numeric answer is right when it is a finite real number within the checker's tolerance of
the expected value, whatever its type: int (of any size), float, ``Fraction``, ``Decimal``, a numpy integer
or floating scalar, or a 0-d numpy array of one; it is compared exactly (as a fraction), never through a
float that could overflow. Anything else is wrong, with feedback naming what was expected: a bool, a
complex number (even with no imaginary part), text (even "756"), None, ``...``, a list or an array of one
or more dimensions, NaN and infinities.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np

from ...config import PRESETS, EncoderConfig
from ...validate import check_choice

#: Longest excerpt of an answer that feedback quotes
SHOWN_CHARS = 80
#: Widest integer that feedback writes out in digits (Python refuses to print ints past 4,300 digits)
SHOWN_DIGITS = 40


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = SHOWN_CHARS
_REPR.maxlong = SHOWN_DIGITS


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer: ``correct``, and a message saying why or what to look at."""

    correct: bool
    message: str

    def __bool__(self) -> bool:
        return self.correct

    def __repr__(self) -> str:
        return ("Correct. " if self.correct else "Not yet. ") + self.message


def preset_config(preset) -> EncoderConfig:
    """The configuration an exercise names by ``preset``; a clear error naming ``preset`` otherwise."""
    return EncoderConfig.preset(check_choice("preset", preset, tuple(PRESETS)))


def exact_number(answer) -> Fraction | None:
    """``answer`` as an exact fraction when it is a finite real number of any of the types the module
    docstring lists, else None. Never raises."""
    try:
        if isinstance(answer, np.ndarray) and answer.ndim == 0:
            answer = answer[()]
        if isinstance(answer, bool | np.bool_) or not isinstance(answer, numbers.Number | Decimal):
            return None
        if isinstance(answer, numbers.Integral):
            return Fraction(int(answer))
        if isinstance(answer, numbers.Rational):
            return Fraction(int(answer.numerator), int(answer.denominator))
        if isinstance(answer, Decimal):
            return Fraction(answer) if answer.is_finite() else None
        if isinstance(answer, numbers.Real):
            value = float(answer)
            return Fraction(value) if math.isfinite(value) else None
    except Exception:  # noqa: BLE001 - a student's own number type may raise anything; it is no number then
        return None
    return None  # complex, or another non-real number


def shown(answer) -> str:
    """A short excerpt of ``answer`` for feedback: numbers as written (ints with thousands separators, huge
    ones by their length), anything else by its repr, clipped to :data:`SHOWN_CHARS`. Never raises."""
    value = exact_number(answer)
    try:
        if value is not None and value.denominator == 1 and isinstance(answer, numbers.Integral):
            n = int(answer)
            if abs(n) < 10**SHOWN_DIGITS:
                return f"{n:,}"
            return f"an integer of about {int(n.bit_length() * math.log10(2)) + 1:,} digits"
        if value is not None and isinstance(answer, float | np.floating):
            return f"{float(answer):,}"
        text = _REPR.repr(answer)
    except Exception:  # noqa: BLE001 - a repr that raises, such as a list holding a 5,000-digit int
        text = f"a {type(answer).__name__}"
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 3] + "..."


def close(value: Fraction, expected, rel_tol: float) -> bool:
    """|value - expected| <= rel_tol max(|value|, |expected|), or within 1e-12 when ``expected`` is 0, in
    exact arithmetic (``value`` as :func:`exact_number` gives it)."""
    expected = Fraction(expected)
    if not expected:
        return abs(value) <= Fraction(1e-12)
    return abs(value - expected) <= Fraction(rel_tol) * max(abs(value), abs(expected))


def grade_number(answer, expected: float, *, what: str, hint: str, rel_tol: float = 1e-9,
                 slips: dict | None = None) -> Feedback:
    """Compare a numeric answer with the expected value. When wrong, say what to look at: the hint kept
    in ``slips`` for a known wrong value (a common mistake), else ``hint``."""
    value = exact_number(answer)
    if value is None:
        return Feedback(False, f"{what} should be a finite number (a real one: an int, a float, a Fraction "
                               f"or a Decimal); got {shown(answer)} ({type(answer).__name__}).")
    if close(value, expected, rel_tol):
        return Feedback(True, f"{what} is {expected:,}.")
    direction = "too large" if value > expected else "too small"
    return Feedback(False, f"{shown(answer)} is {direction} for {what}. {(slips or {}).get(value, hint)}")
