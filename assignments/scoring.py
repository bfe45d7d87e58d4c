"""Scoring one submission's answers, in the grader's own process: an answer scores when its value, read back
from the kernel's pickle as a plain value only (``hidden.read_pickled``), is the hidden test's expected value
(``hidden.matches``); the library's checker then runs on it, only to say why. Each answer is read and scored
in a forked child of the grader, under a time limit (SCORE_TIMEOUT): an answer slow to read, compare or
check, such as one pickled as ``Fraction("1e999999999")`` (reading it back computes a billion digits), is
refused and cannot stall the batch, and the grader itself unpickles nothing a submission wrote.
:func:`prepare` imports and runs every checker before the first submission runs, so that scoring imports
nothing a submission could have changed.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import time
import warnings
from pathlib import Path

from geron_lib.notebook.exercises import shown

from .execution import waited
from .hidden import UnreadableAnswer, matches, read_pickled
from .spec import Graded, check_answer, checker_names

#: Seconds the reading and scoring of one answer may take before it is refused
SCORE_TIMEOUT = 10


def prepare(hidden: list, done: dict | None = None) -> dict:
    """{label: the names its checker call needs, or why they could not be had}, for every question of
    ``hidden`` (read_hidden's list): each checker imported and run once on the expected value, here. ``done``
    keeps them by question and numbers, for the next call (one student's questions after another's: a setup
    such as a jax compile runs once for all students with the same numbers)."""
    names: dict = {}
    done = {} if done is None else done
    for question, expected in hidden:
        key = (question.label, question.bindings)
        if key not in done:
            try:
                done[key] = checker_names(question)
                check_answer(question, expected, done[key])
            except Exception as err:  # noqa: BLE001 - the setup (say, a jax compile) or checker cannot run
                done[key] = f"(the checker could not run here: {type(err).__name__}: {err})"
        names[question.label] = done[key]
    return names


def assigning_cells(notebook, name: str) -> list[int]:
    """Indices of the code cells with a line assigning ``name`` (``name = ...``, ``name: T = ...``)."""
    pattern = re.compile(rf"^\s*{re.escape(name)}\s*(:[^=\n]*)?=(?!=)", re.MULTILINE)
    return [i for i, c in enumerate(notebook.cells) if c.cell_type == "code" and pattern.search(c.source)]


def cell_name(notebook, index: int) -> str:
    """``cell 3 (`its first line`)``: a cell as feedback names it."""
    lines = notebook.cells[index].source.strip().splitlines()
    return f"cell {index + 1} (`{shown(lines[0]).strip(chr(39))}`)" if lines else f"cell {index + 1}"


def _question(question: Graded, expected, notebook, failed: dict, answers: Path, names) -> tuple:
    """(score, feedback line) of one question; ``failed``: {cell index: what went wrong}."""
    points, name = question.points, question.answer
    cells = assigning_cells(notebook, name)
    try:
        exported = read_pickled(answers.read_bytes()) if answers.is_file() else {}
        kind, payload = exported.get(name, ("missing", ""))
    except (UnreadableAnswer, OSError, AttributeError, TypeError, ValueError) as err:
        return 0, f"`{name}` cannot be graded: its answers could not be read back ({err})"
    if kind == "missing":
        if not cells:
            why = (f"the answer cell is missing: no cell assigns `{name}` (deleted, or the variable "
                   f"renamed); it should read `{name} = <your answer>`")
        elif bad := [i for i in cells if i in failed]:
            why = f"the answer cell failed: {cell_name(notebook, bad[-1])} {failed[bad[-1]]}"
        else:
            why = f"`{name}` is not defined at the end of the notebook (a later cell deleted it?)"
        return 0, why
    plain = "assign a plain value: a number, a string, a list, a dict or a numpy array"
    if kind == "unreadable":
        return 0, f"`{name}` cannot be graded: {payload}; {plain}"
    try:
        answer = read_pickled(payload)
    except UnreadableAnswer as err:
        return 0, f"`{name}` cannot be graded: {err}; {plain}"
    if answer is ...:
        return 0, f"not answered: `{name}` is still `...`"
    right = matches(answer, expected, question.tolerance)
    try:
        hint = names if isinstance(names, str) else check_answer(question, answer, names).message
    except Exception as err:  # noqa: BLE001 - the checker could not run on this answer
        hint = f"(the checker could not run here: {type(err).__name__}: {err})"
    note = "".join(f" (note: {cell_name(notebook, i)} {failed[i]})" for i in cells if i in failed)
    return (points if right else 0), f"{'right' if right else 'wrong'}: {hint}{note}"


def _in_child(function, timeout: float) -> tuple[bool, object]:
    """(in time, ``function()``'s result): the result (JSON) computed in a forked child of this process,
    None when the child failed; (False, None) when it ran past ``timeout`` s, and was killed."""
    read, write = os.pipe()
    with warnings.catch_warnings():  # jax warns at every fork; the child never calls jax (nor any thread)
        warnings.filterwarnings("ignore", "os.fork\\(\\) was called", RuntimeWarning)
        pid = os.fork()
    if pid == 0:  # the child: compute, send, and end without the parent's exit handlers
        os.close(read)
        status = 1
        try:
            with os.fdopen(write, "wb") as pipe:
                pipe.write(json.dumps(function()).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    wait = waited(timeout)
    deadline = None if wait is None else time.monotonic() + wait
    chunks, ended = [], False
    with os.fdopen(read, "rb", buffering=0) as pipe:
        while not ended:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([pipe], [], [], left)[0]:
                break
            chunk = pipe.read(1 << 16)
            chunks.append(chunk)
            ended = not chunk
    if not ended:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return ended, json.loads(b"".join(chunks)) if ended and status == 0 else None


def score(question: Graded, expected, notebook, failed: dict, answers: Path, names,
          timeout: float = SCORE_TIMEOUT) -> tuple[float, str, str]:
    """(score, feedback line, reason) of one question, its answer read from ``answers`` (the kernel's
    answers.pkl) and scored in a child within ``timeout`` s; the reason says when it was not ("" else)."""
    in_time, result = _in_child(lambda: _question(question, expected, notebook, failed, answers, names),
                                timeout)
    if not in_time:
        return (0, f"refused: scoring the answer ran past {timeout:g} s",
                f"scoring its answer to {question.label} ran past {timeout:g} s and was refused")
    if result is None:
        return (0, "the grader failed while scoring the answer",
                f"the grader failed while scoring its answer to {question.label}")
    return result[0], result[1], ""
