"""The hidden tests: every graded question's expected value, fixed when the assignment is made (the spec's
solution, run here, where the library is untouched) and stored beside the autograder, never in the student's
notebook. Grading compares an answer with it, so nothing a submission does to the library in its own kernel
changes its score. The file is written read-only, with its sha256 beside it (``<chapter>-hidden.sha256``, as
``sha256sum`` writes it); grading refuses a file whose checksum differs.

Answers come out of a submission's kernel pickled; they are read back with :class:`_Reader`, which builds
only plain values (numbers, text, containers, numpy arrays and scalars, ``Fraction``, ``Decimal``): no
other class is looked up, so reading an answer runs none of the submission's code.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import pickle
from pathlib import Path

import numpy as np

from geron_lib.notebook.exercises import close, exact_number

from . import GradingRefused
from .spec import Graded, check_solution

#: Largest pickled answer read back from a kernel (bytes)
ANSWER_LIMIT_BYTES = 64 * 2**20

#: The only globals a pickled answer may name: how numpy rebuilds arrays, dtypes and scalars, and the
#: standard library's exact numbers
ALLOWED = {("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
           ("numpy._core.multiarray", "scalar"), ("numpy.core.multiarray", "scalar"),
           ("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
           ("numpy", "ndarray"), ("numpy", "dtype"), ("fractions", "Fraction"), ("decimal", "Decimal"),
           ("builtins", "complex"), ("builtins", "Ellipsis"), ("builtins", "set"), ("builtins", "frozenset"),
           ("collections", "OrderedDict")}


class UnreadableAnswer(ValueError):
    """A pickled answer the grader does not read back (its message says why)."""


class _Reader(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in ALLOWED or (module.startswith("numpy") and name.endswith("DType")
                                         and module.endswith("dtypes")):
            return super().find_class(module, name)
        raise UnreadableAnswer(f"it is (or holds) a {module}.{name}, which the grader does not read")


def read_pickled(data: bytes):
    """The plain value pickled in ``data``; UnreadableAnswer when it is too large or names another class."""
    if len(data) > ANSWER_LIMIT_BYTES:
        raise UnreadableAnswer(f"it takes {len(data):,} bytes, more than the {ANSWER_LIMIT_BYTES:,} the "
                               "grader reads")
    try:
        return _Reader(io.BytesIO(data)).load()
    except UnreadableAnswer:
        raise
    except Exception as err:  # noqa: BLE001 - a truncated or malformed pickle
        raise UnreadableAnswer(f"it could not be read back ({type(err).__name__}: {err})") from None


def matches(answer, expected, rel_tol: float) -> bool:
    """Is ``answer`` the ``expected`` value? Numbers of any type within ``rel_tol`` (exactly compared, as the
    checkers compare them), text equal, sequences and arrays item by item (arrays of floats within ``rel_tol``
    of the largest expected magnitude), dicts key by key (keys holding None count as absent)."""
    if isinstance(expected, str):
        return isinstance(answer, str) and str(answer) == expected
    if isinstance(expected, dict):
        if not isinstance(answer, dict):
            return False
        given = {k: v for k, v in answer.items() if v is not None}
        return given.keys() == expected.keys() and all(matches(given[k], v, rel_tol)
                                                          for k, v in expected.items())
    if isinstance(expected, np.ndarray) and expected.dtype.kind == "f":
        if not isinstance(answer, np.ndarray | list | tuple):
            return False
        try:
            given = np.asarray(answer, dtype=float)
        except (TypeError, ValueError, OverflowError):
            return False
        if given.shape != expected.shape or not np.isfinite(given).all():
            return False
        scale = max(float(np.abs(expected).max(initial=0.0)), 1.0)
        return bool(np.abs(given - expected).max(initial=0.0) <= rel_tol * scale)
    if isinstance(expected, list | tuple | np.ndarray):
        if not isinstance(answer, list | tuple | np.ndarray) or getattr(answer, "ndim", 1) == 0:
            return False
        if len(answer) != len(expected):
            return False
        return all(matches(a, e, rel_tol) for a, e in zip(answer, expected, strict=True))
    number = exact_number(answer)
    return number is not None and exact_number(expected) is not None and close(number, expected, rel_tol)


def checksum(path: Path) -> Path:
    """Where :func:`make_hidden` writes the sha256 of the hidden tests at ``path``: beside them."""
    return path.with_suffix(".sha256")


def expected_value(question: Graded):
    """The value a correct answer to ``question`` has: what the spec's setup and solution assign to its
    answer, run here, once the checker has passed it (ValueError when it does not)."""
    env: dict = {}
    verdict = check_solution(question, env)
    if not verdict:
        raise ValueError(f"{question.label}: the spec's solution fails its checker{_at(question)}: "
                         f"{verdict.message}")
    return env[question.answer]


def make_hidden(questions: list[Graded], path: Path, done: dict | None = None) -> Path:
    """Run every question's setup and solution here, check that its checker passes the solution, and write
    the questions with their expected values to ``path`` (pickled, read back with :func:`read_hidden`),
    read-only, with their sha256 beside them (:func:`checksum`). ``done`` keeps the expected values by
    question and numbers, for the next call (another student's: a question whose numbers cannot vary is
    solved once)."""
    stored, done = [], {} if done is None else done
    for question in questions:
        key = (question.label, question.bindings)
        if key not in done:
            done[key] = expected_value(question)
        stored.append(dataclasses.asdict(question) | {"expected": done[key]})
    data = pickle.dumps(stored, protocol=4)
    path.parent.mkdir(parents=True, exist_ok=True)
    for target, content in ((path, data),
                            (checksum(path), f"{hashlib.sha256(data).hexdigest()}  {path.name}\n".encode())):
        target.unlink(missing_ok=True)  # read-only when made before
        target.write_bytes(content)
        target.chmod(0o444)
    return path


def _at(question: Graded) -> str:
    """`` at V = 41017, H = 640``: the numbers a question was solved at ("" when it cannot vary)."""
    return " at " + ", ".join(f"{k} = {v!r}" for k, v in question.numbers.items()) if question.numbers else ""


def read_hidden(path: Path) -> list[tuple[Graded, object]]:
    """The questions and expected values :func:`make_hidden` wrote: [(question, expected)]; GradingRefused
    when they cannot be read or their sha256 is not the one written beside them."""
    again = "run `make assignments` again"
    try:
        data, recorded = path.read_bytes(), checksum(path).read_text(encoding="utf-8").split()
    except OSError as err:
        raise GradingRefused(f"the hidden tests cannot be read ({err.filename}: {err.strerror}); "
                             f"{again}") from None
    if recorded != [hashlib.sha256(data).hexdigest(), path.name]:
        raise GradingRefused(f"the hidden tests {path} have changed since they were made (their sha256 is "
                             f"not the one {checksum(path).name} holds): grading refuses them; {again}")
    try:
        stored = read_pickled(data)
    except UnreadableAnswer as err:
        raise GradingRefused(f"the hidden tests {path} cannot be read back: {err}; {again}") from None
    fields = {f.name for f in dataclasses.fields(Graded)}
    return [(Graded(**{k: v for k, v in q.items() if k in fields}), q["expected"]) for q in stored]
