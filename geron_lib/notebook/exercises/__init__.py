"""Checkers that students call with their answers; one module per chapter, one verdict type for all.

A checker never raises on the answer, whatever it is: it returns a :class:`Feedback` saying what was
expected. A numeric answer is right when it is a finite real number within the checker's tolerance of
the expected value, whatever its type: int (of any size), float, ``Fraction``, ``Decimal``, a numpy integer
or floating scalar, or a 0-d numpy array of one; an expected count (an int) is matched exactly, with no
tolerance. It is compared exactly (as a fraction), never through a float that could overflow, and read
from the number itself, never through its own ``__int__`` or ``__float__`` (which a subclass may
redefine; :func:`geron_lib.validate.exact_real`). A Decimal beyond 10^±DECIMAL_EXPONENT is compared by
its order of magnitude alone, without expanding its digits. Anything else is wrong, with feedback naming
what was expected: a bool, a complex number (even with no imaginary part), text (even "756"), None,
``...``, a list or an array of one or more dimensions, NaN and infinities, a ``numpy.timedelta64`` (a
duration), a masked value, a torch tensor (its ``.item()`` or ``.tolist()`` is the number).

Two modes, one switch (:func:`graded_mode`, :func:`graded_feedback`). For self-study (the book's pages, the
default) a wrong number is told which way it is off ("too large"). In graded mode (the assignments' student
notebooks, their checks and the grader's feedback) feedback says whether the answer is right and, where a
checker can tell, which kind of mistake it is (a known slip, a whole factor such as 2 or h, a percentage
for a share), never which way to move: it quotes no wrong number and no distance to the expected value, so
an answer a little above and one a little below it get the same message. Checkers word what differs between
the modes with :func:`say`.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np

from ...config import PRESETS, EncoderConfig
from ...validate import check_choice, exact_real, is_torch_tensor

#: Longest excerpt of an answer that feedback quotes
SHOWN_CHARS = 80
#: Widest integer that feedback writes out in digits (Python refuses to print ints past 4,300 digits)
SHOWN_DIGITS = 40


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = SHOWN_CHARS
_REPR.maxlong = SHOWN_DIGITS


#: Whether feedback is in graded mode (module docstring); only graded_mode and graded_feedback change it
_MODE = {"graded": False}


def graded_mode(on: bool = True) -> None:
    """Graded feedback (``on``) or self-study feedback from here on, in this process (the assignments' student
    notebooks switch it on in their first cell)."""
    _MODE["graded"] = bool(on)


@contextmanager
def graded_feedback():
    """Graded feedback within the ``with`` block, the mode it was in after it (the assignments' checks and
    grader)."""
    before = _MODE["graded"]
    _MODE["graded"] = True
    try:
        yield
    finally:
        _MODE["graded"] = before


def say(study: str, graded: str) -> str:
    """The message for the mode feedback is in: ``study`` for self-study, ``graded`` in graded mode."""
    return graded if _MODE["graded"] else study


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


#: A Decimal whose exponent passes this (10**10_000 has 10,001 digits) is compared by its magnitude alone
DECIMAL_EXPONENT = 10_000
#: A Decimal of more significant digits than this is not read: no answer needs them, and expanding them
#: takes time that grows with their square
DECIMAL_DIGITS = 10_000


def _decimal_value(answer: Decimal) -> Fraction | None:
    """A finite Decimal as an exact fraction, or, past 10^±DECIMAL_EXPONENT, as ±10^±(DECIMAL_EXPONENT + 1):
    beyond every expected value, on its side of it (``Decimal("1e999999999")`` would take hours to
    expand). None for NaN, infinities and more than :data:`DECIMAL_DIGITS` digits."""
    if not answer.is_finite() or len(answer.as_tuple().digits) > DECIMAL_DIGITS:
        return None
    if answer.is_zero():
        return Fraction(0)
    sign = -1 if answer.is_signed() else 1
    if answer.adjusted() > DECIMAL_EXPONENT:
        return sign * Fraction(10) ** (DECIMAL_EXPONENT + 1)
    if answer.adjusted() < -DECIMAL_EXPONENT:
        return sign * Fraction(1, 10 ** (DECIMAL_EXPONENT + 1))
    return Fraction(answer)


def exact_number(answer) -> Fraction | None:
    """``answer`` as an exact fraction when it is a finite real number of any of the types the module
    docstring lists, else None. Never raises."""
    try:
        if isinstance(answer, np.ndarray) and answer.ndim == 0:
            answer = answer[()]  # a masked one gives numpy's masked constant: no number
        if isinstance(answer, Decimal):
            return _decimal_value(answer)
        value = exact_real(answer)
        if value is None or isinstance(value, float) and not math.isfinite(value):
            return None
        return Fraction(value)
    except Exception:  # noqa: BLE001 - a student's own number type may raise anything; it is no number then
        return None


def not_a_number_because(answer) -> str:
    """Why ``answer`` is read as no number, when that is not plain from its type (a sentence to add to
    feedback), else ""."""
    if isinstance(answer, np.ndarray) and answer.ndim == 0 and not isinstance(answer, np.ma.MaskedArray):
        answer = answer[()]
    if is_torch_tensor(answer):
        return " It is a torch tensor: give its number, tensor.item(), or its list, tensor.tolist()."
    if isinstance(answer, np.timedelta64):
        return " A numpy.timedelta64 is a duration, not a number."
    if isinstance(answer, np.ma.MaskedArray):
        return " It is masked (a numpy masked value): give the number itself."
    if isinstance(answer, Decimal) and answer.is_finite():
        return f" A Decimal of more than {DECIMAL_DIGITS:,} digits is not read."
    if (isinstance(answer, numbers.Real) and not isinstance(answer, bool | np.bool_ | Decimal)
            and exact_real(answer) is None):
        return (" Only those types are read, by their own value, never through a method (such as "
                "__float__) that another number type defines.")
    return ""


def shown(answer) -> str:
    """A short excerpt of ``answer`` for feedback: numbers as written (ints with thousands separators, huge
    ones by their length), anything else by its repr, clipped to :data:`SHOWN_CHARS`. Never raises."""
    value = exact_number(answer)
    try:
        if value is not None and value.denominator == 1 and isinstance(answer, numbers.Integral):
            n = int(value)  # its own value, not its __int__
            if abs(n) < 10**SHOWN_DIGITS:
                return f"{n:,}"
            return f"an integer of about {int(n.bit_length() * math.log10(2)) + 1:,} digits"
        if value is not None and isinstance(answer, float | np.floating):
            return f"{float(value):,}"
        text = _REPR.repr(answer)
    except Exception:  # noqa: BLE001 - a repr that raises, such as a list holding a 5,000-digit int
        text = f"a {type(answer).__name__}"
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 3] + "..."


def close(value: Fraction, expected, rel_tol: float) -> bool:
    """|value - expected| <= rel_tol max(|value|, |expected|), or within 1e-12 when ``expected`` is 0, in
    exact arithmetic (``value`` as :func:`exact_number` gives it); an int ``expected`` (a count) only when
    ``value`` equals it."""
    if isinstance(expected, int | np.integer) and not isinstance(expected, bool | np.bool_):
        return value == expected
    expected = Fraction(expected)
    if not expected:
        return abs(value) <= Fraction(1e-12)
    return abs(value - expected) <= Fraction(rel_tol) * max(abs(value), abs(expected))


#: Whole factors a numeric answer is checked for: off by one of them is named (a checker adds its own)
FACTORS = {2: "2"}
#: The factor a share or probability given in percent is off by (for checkers of shares)
PERCENT = {100: "100: a percentage where a share is asked, or the reverse"}


def _off_by(value: Fraction, expected, rel_tol: float, factors: dict) -> str | None:
    """The name of the whole factor ``value`` is off from ``expected`` by (either way), if any."""
    if not expected:
        return None
    for factor, name in factors.items():
        factor = Fraction(factor)
        if any(close(value, Fraction(expected) * f, rel_tol) for f in (factor, 1 / factor)):
            return name
    return None


def grade_number(answer, expected: float, *, what: str, hint: str, rel_tol: float = 1e-9,
                 slips: dict | None = None, factors: dict | None = None) -> Feedback:
    """Compare a numeric answer with the expected value (a count, an int, exactly). When wrong, say what to
    look at: the hint kept in ``slips`` for a known wrong value (a common mistake), else, when it is off by a
    whole factor of :data:`FACTORS` or ``factors`` ({factor: its name}), that factor and ``hint``, else
    ``hint``; which way it is off only for self-study (:func:`say`)."""
    value = exact_number(answer)
    if value is None:
        return Feedback(False, f"{what} should be a finite number (a real one: an int, a float, a Fraction "
                               f"or a Decimal); got {shown(answer)} ({type(answer).__name__})."
                               + not_a_number_because(answer))
    if close(value, expected, rel_tol):
        return Feedback(True, f"{what} is {expected:,}.")
    direction = "too large" if value > expected else "too small"
    whole = ("" if value.denominator == 1 or not isinstance(expected, int | np.integer)
             else " It is a count: a whole number, matched exactly.")
    slips = slips or {}
    factor = None if value in slips else _off_by(value, expected, rel_tol, FACTORS | (factors or {}))
    why = slips.get(value, hint) if factor is None else f"It is off by a factor of {factor}. {hint}"
    return Feedback(False, say(f"{shown(answer)} is {direction} for {what}.", f"That is wrong for {what}.")
                    + f"{whole} {why}")
