"""assignments/spec.yml: the graded questions of every chapter, checked for form when read."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import yaml

from geron_lib.notebook.exercises import graded_feedback

from . import BOOK, SPEC

CHECKERS = "geron_lib.notebook.exercises."
QUESTION_KEYS = {"label", "answer", "check", "solution", "setup", "points", "tolerance"}


@dataclass(frozen=True)
class Graded:
    """A graded question of the spec: the student assigns ``answer``; ``check`` grades it."""

    label: str
    answer: str
    check: str
    solution: str
    points: float
    setup: str = ""
    #: how far (relative) a numeric answer may be from the solution's value and still score: the checker's own
    tolerance: float = 1e-9

    @property
    def checker(self) -> tuple[str, str, str]:
        """(module, function, call): ``check`` split into its import and a call of the bare function."""
        call = ast.parse(self.check, mode="eval").body
        parts, func = [], call.func
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        module, _, name = ".".join([func.id, *reversed(parts)]).rpartition(".")
        call.func = ast.Name(name, ast.Load())
        return module, name, ast.unparse(call)


def _question(chapter: str, entry) -> Graded:
    where = f"assignments/spec.yml, chapter {chapter}"
    if not isinstance(entry, dict) or not {"label", "answer", "check", "solution", "points"} <= entry.keys():
        raise ValueError(f"{where}: every graded question needs label, answer, check, solution and points; "
                         f"got {entry!r}")
    where += f", {entry['label']}"
    if unknown := entry.keys() - QUESTION_KEYS:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)} (allowed: {sorted(QUESTION_KEYS)})")
    answer = entry["answer"]
    if not isinstance(answer, str) or not answer.isidentifier():
        raise ValueError(f"{where}: answer must be a Python variable name, got {answer!r}")
    points = entry["points"]
    if isinstance(points, bool) or not isinstance(points, int | float) or points <= 0:
        raise ValueError(f"{where}: points must be a positive number, got {points!r}")
    try:
        call = ast.parse(entry["check"], mode="eval").body
    except SyntaxError as err:
        raise ValueError(f"{where}: check is not a Python call: {err}") from None
    func = call.func if isinstance(call, ast.Call) else None
    if func is None or not ast.unparse(func).startswith(CHECKERS):
        raise ValueError(f"{where}: check must call a checker of {CHECKERS}..., got {entry['check']!r}")
    if answer not in {n.id for arg in [*call.args, *call.keywords] for n in ast.walk(arg)
                      if isinstance(n, ast.Name)}:
        raise ValueError(f"{where}: check {entry['check']!r} never passes the answer {answer!r}")
    for key in ("solution", "setup"):
        try:
            ast.parse(entry.get(key, ""))
        except SyntaxError as err:
            raise ValueError(f"{where}: {key} is not Python code: {err}") from None
    tolerance = entry.get("tolerance", Graded.tolerance)
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 0 <= tolerance < 1:
        raise ValueError(f"{where}: tolerance must be a number in [0, 1), got {tolerance!r}")
    return Graded(entry["label"], answer, entry["check"], entry["solution"].strip("\n"), points,
                  entry.get("setup", "").strip("\n"), float(tolerance))


def load_spec(path: Path = SPEC) -> dict[str, list[Graded]]:
    """The graded questions of every chapter named in the spec, checked for form (not yet for content)."""
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    chapters = spec.get("chapters") if isinstance(spec, dict) else None
    if not isinstance(chapters, dict):
        raise ValueError(f"{path}: expected a mapping 'chapters:' of chapter name -> {{graded: [...]}}")
    out = {}
    for chapter, entry in chapters.items():
        if not (BOOK / f"{chapter}.ipynb").is_file():
            raise ValueError(f"{path}: chapter {chapter!r} has no notebook book/{chapter}.ipynb")
        if not isinstance(entry, dict) or set(entry) != {"graded"} or not isinstance(entry["graded"], list):
            raise ValueError(f"{path}: chapter {chapter} must hold exactly 'graded:', a list of questions")
        out[chapter] = [_question(chapter, q) for q in entry["graded"]]
        labels = [q.label for q in out[chapter]]
        if len(set(labels)) != len(labels):
            raise ValueError(f"{path}: chapter {chapter} grades an exercise twice: {labels}")
    return out


def checker_names(question: Graded) -> dict:
    """The names the question's checker call needs: its setup's, run in this process, and the checker."""
    module, name, _ = question.checker
    env: dict = {}
    exec(question.setup, env)  # noqa: S102 - the spec's own code
    exec(f"from {module} import {name}", env)  # noqa: S102
    return env


def check_answer(question: Graded, answer, names: dict):
    """The checker's graded verdict (a ``Feedback`` in graded mode: right or wrong, and which mistake, never
    which way to move) on ``answer``, run in this process with ``names`` (what :func:`checker_names` gives;
    not changed)."""
    with graded_feedback():
        return eval(question.checker[2], {**names, question.answer: answer})  # noqa: S307


def check_solution(question: Graded, env: dict | None = None):
    """The checker's verdict on the spec's own solution, run in this process (in ``env``, which then holds
    the solution's names, when given)."""
    env = {} if env is None else env
    env.update(checker_names(question))
    exec(question.solution, env)  # noqa: S102
    return check_answer(question, env[question.answer], env)
