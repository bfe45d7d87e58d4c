"""One bad or unusual input at a public entry, and what the project's rule says must happen to it.

Every ``cases_*.py`` module beside this one holds a list ``CASES`` of :class:`Case`. The tests in this
folder run each case and assert its outcome; ``scripts/bad_input_sweep.py`` runs them all, each in a
child process with a time limit, and counts the outcomes for the README's bad-input table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    """``call()`` must raise ``raises`` with every string of ``names`` in its message (a clear error),
    or, when ``raises`` is None, return a value for which ``expect(value)`` is True (a right answer).

    entry: the public entry, as a reader would name it ("Encoder.forward", "EncoderConfig").
    label: what is unusual about the input, in a few words ("token id -1").
    """

    entry: str
    label: str
    call: Callable[[], object]
    raises: type[Exception] | tuple[type[Exception], ...] | None = None
    names: tuple[str, ...] = ()
    expect: Callable[[object], bool] | None = None

    def __post_init__(self):
        if (self.raises is None) == (self.expect is None):
            raise ValueError(f"{self.entry} / {self.label}: give exactly one of raises and expect")
