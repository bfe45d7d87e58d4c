"""What the rule tests (``test_rules_*.py``) ask of a bad input: a clear error, refused by :func:`refused`,
or a right answer, checked by the test's own asserts (:func:`assert_same`, and :func:`assert_python_twin`
for numbers of other types);
:func:`case`, one row of their tables; and the calls the rows hold.

A row's id is ``entry / label``: the public entry as a reader names it ("Encoder()", "count_flops") and what
is unusual about the input ("token id -1"). A row's call is ``call(entry, *arguments)`` (functools.partial),
where an argument may be ``uses.<fixture>`` (then ``[key]`` and ``.attribute``): a session object of
conftest.py, such as ``call(Encoder.forward, uses.encoder, ids)``. :func:`run` makes the call.
``scripts/bad_input_sweep.py`` runs every row in a child process and counts the outcomes per entry;
:data:`REFUSALS` tells it which rows ended in a refusal, and with what.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from functools import partial

import numpy as np
import pytest

#: The messages of the refusals :func:`refused` accepted, in order (the sweep reads the last one)
REFUSALS: list[str] = []
#: Set in pytest's config stash while the sweep runs the rows (it measures their memory itself)
SWEPT = pytest.StashKey[bool]()


class NotRefused(AssertionError):
    """The call returned where an error was due: a silent wrong answer."""


class UnclearRefusal(AssertionError):
    """The call raised the due exception, but its message does not name the argument or the rule."""


class WrongRefusal(AssertionError):
    """The call raised another exception than the one due."""


@contextmanager
def refused(error: type[Exception] | tuple[type[Exception], ...], *names: str):
    """The block must raise ``error`` with every string of ``names`` in its message."""
    try:
        yield
    except error as err:
        message = str(err)
        if missing := [name for name in names if name not in message]:
            raise UnclearRefusal(f"{type(err).__name__}: {message!r} does not say {missing}") from err
        REFUSALS.append(message)
    except Exception as err:
        raise WrongRefusal(f"expected {error}, got {type(err).__name__}: {err}") from err
    else:
        raise NotRefused(f"returned where {error} naming {list(names)} was due")


class Uses:
    """``uses.name``: the fixture ``name``, looked up when the row runs; ``[key]`` and ``.attribute`` read
    into it (``uses.forward_cache[0]``, ``uses.encoder.embeddings``)."""

    __iter__ = None  # not a sequence, though it has __getitem__

    def __init__(self, path: tuple = ()):
        self._path = path

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return Uses((*self._path, ("attribute", name)))

    def __getitem__(self, key):
        return Uses((*self._path, ("item", key)))

    def __repr__(self) -> str:
        return "uses." + "".join(f".{k}" if how == "attribute" else f"[{k!r}]" for how, k in self._path)[1:]

    def fixture(self) -> str:
        return self._path[0][1]

    def resolve(self, request):
        value = request.getfixturevalue(self.fixture())
        for how, key in self._path[1:]:
            value = getattr(value, key) if how == "attribute" else value[key]
        return value


uses = Uses()


def fixtures_of(value) -> set[str]:
    """The fixtures a row's value (its call, or a list, tuple or dict of calls) uses; a long list is data."""
    if isinstance(value, Uses):
        return {value.fixture()}
    if type(value) in (list, tuple) and len(value) <= 64:
        return set().union(*map(fixtures_of, value))
    if type(value) is dict:
        return set().union(*map(fixtures_of, value.values()))
    if isinstance(value, partial):
        return fixtures_of([*value.args, *value.keywords.values()])
    return set()


def _resolved(value, request):
    if not fixtures_of(value):
        return value
    if isinstance(value, Uses):
        return value.resolve(request)
    if type(value) is dict:
        return {k: _resolved(v, request) for k, v in value.items()}
    return type(value)(_resolved(v, request) for v in value)


def run(request, entry):
    """Make a row's call ``entry``, its ``uses`` arguments (in lists, tuples and dicts too) looked up."""
    return entry.func(*_resolved(entry.args, request), **_resolved(entry.keywords, request))


def case(entry: str, label: str, *values, marks=()):
    """One row of a rule's table: ``values`` for the test's arguments, with the id ``entry / label``."""
    return pytest.param(*values, id=f"{entry} / {label}", marks=marks)


def _numpy_scalars(value, where: str = "the value") -> list[str]:
    """Where ``value`` holds a numpy scalar (a field of a dataclass, an item of a dict, list or tuple)."""
    if isinstance(value, np.generic):
        return [f"{where} ({type(value).__name__})"]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    elif isinstance(value, dict):
        parts = value
    elif isinstance(value, list | tuple):
        parts = dict(enumerate(value))
    else:
        return []
    return [found for key, part in parts.items() for found in _numpy_scalars(part, f"{where}.{key}")]


def assert_same(got, expected, rtol: float = 1e-12) -> None:
    """``got`` holds what ``expected`` holds: the same keys (a dict), items (a list or tuple) and numbers, to
    ``rtol`` (and as much absolute)."""
    if isinstance(expected, str):
        assert got == expected, (got, expected)
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and got.keys() == expected.keys(), (got, expected)
        for key in expected:
            assert_same(got[key], expected[key], rtol)
    elif isinstance(expected, list | tuple) and not all(isinstance(e, int) for e in expected):
        assert len(got) == len(expected), (got, expected)
        for g, e in zip(got, expected, strict=True):
            assert_same(g, e, rtol)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


def assert_python_twin(got, expected) -> None:
    """``got``, from numbers of other types (numpy scalars, Fractions, whole floats), equals ``expected``,
    from the Python numbers they equal, and holds no numpy scalar: stored and counted as Python numbers."""
    if isinstance(expected, dict):
        assert isinstance(got, dict) and got.keys() == expected.keys(), (got, expected)
        for key in expected:
            assert_python_twin(got[key], expected[key])
        return
    if isinstance(expected, list | tuple) and any(isinstance(e, np.ndarray) for e in expected):
        assert len(got) == len(expected), (got, expected)
        for g, e in zip(got, expected, strict=True):
            assert_python_twin(g, e)
        return
    if isinstance(expected, np.ndarray):
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
        return
    assert got == expected, (got, expected)
    assert not (held := _numpy_scalars(got)), f"holds numpy scalars: {held}"
