"""assignments/spec.yml: the graded questions of every chapter, checked for form when read; and the numbers
a question binds (the book's, or a student's: ``assignments.students``)."""

from __future__ import annotations

import ast
import string
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from geron_lib.notebook.exercises import graded_feedback

from . import BOOK, SPEC

CHECKERS = "geron_lib.notebook.exercises."
QUESTION_KEYS = {"label", "answer", "check", "solution", "setup", "points", "tolerance", "vary", "where",
                 "prose", "fixed"}


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
    #: the numbers the exercise can take, by name: {"book": the book's, and "from", "to" (ints, "step"
    #: optional) or "choices"}; empty when it cannot vary
    vary: dict = field(default_factory=dict)
    #: a condition (Python) the numbers must meet, beside their ranges ("" when none)
    where: str = ""
    #: where the exercise states its numbers: (the book's words, a student's words), each a template of the
    #: numbers' names, ``str.format`` style
    prose: tuple = ()
    #: why the exercise's numbers cannot vary ("" when they can)
    fixed: str = ""
    #: the numbers bound in setup, solution and check: the book's, or one student's
    numbers: dict = field(default_factory=dict)

    @property
    def book(self) -> dict:
        """The book's numbers, by name."""
        return {name: param["book"] for name, param in self.vary.items()}

    @property
    def bindings(self) -> str:
        """The code that binds the numbers, run before the setup ("" when the exercise cannot vary)."""
        return "".join(f"{name} = {value!r}\n" for name, value in self.numbers.items())

    def stated(self, text: str) -> str:
        """``text`` (the exercise's MyST) with the question's numbers where the book states its own, in the
        words of ``prose``; unchanged when they are the book's."""
        if self.numbers == self.book:
            return text
        for book_words, own_words in self.prose:
            text = text.replace(book_words.format(**self.book), own_words.format(**self.numbers))
        return text

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
    vary, condition, prose, fixed = _variation(where, entry, answer)
    return Graded(entry["label"], answer, entry["check"], entry["solution"].strip("\n"), points,
                  entry.get("setup", "").strip("\n"), float(tolerance), vary, condition, prose, fixed,
                  numbers={name: param["book"] for name, param in vary.items()})


def _scalar(value) -> bool:
    return isinstance(value, int | float | str) and not isinstance(value, bool)


def _param(where: str, name: str, param) -> dict:
    """One number of ``vary``, checked: its book value and its range or choices."""
    if not name.isidentifier() or not isinstance(param, dict) or "book" not in param:
        raise ValueError(f"{where}: vary.{name} must be a Python name holding a mapping with the book's "
                         f"value ('book') and 'from'/'to' (optionally 'step') or 'choices'; got {param!r}")
    if not _scalar(param["book"]):
        raise ValueError(f"{where}: vary.{name}.book must be a number or a string, got {param['book']!r}")
    if set(param) - {"book"} == {"choices"}:
        choices = param["choices"]
        if not isinstance(choices, list) or not choices or not all(map(_scalar, choices)):
            raise ValueError(f"{where}: vary.{name}.choices must be a non-empty list of numbers or strings, "
                             f"got {choices!r}")
        return param
    if set(param) - {"book"} not in ({"from", "to"}, {"from", "to", "step"}):
        raise ValueError(f"{where}: vary.{name} must give 'from' and 'to' (optionally 'step') or "
                         f"'choices', beside 'book'; got {sorted(param)}")
    ints = [param["from"], param["to"], param.get("step", 1)]
    whole = all(isinstance(n, int) and not isinstance(n, bool) for n in ints)
    if not whole or ints[0] > ints[1] or ints[2] < 1:
        raise ValueError(f"{where}: vary.{name} needs whole numbers from <= to and step >= 1, got {param!r}")
    return param


def _variation(where: str, entry: dict, answer: str) -> tuple[dict, str, tuple, str]:
    """(vary, where, prose, fixed) of a spec entry, checked: an exercise either varies or says why not."""
    vary, fixed = entry.get("vary", {}), entry.get("fixed", "")
    if bool(vary) == bool(fixed) or not isinstance(vary, dict) or not isinstance(fixed, str):
        raise ValueError(f"{where}: a graded question gives either 'vary' (its numbers, a mapping) or "
                         "'fixed' (why its numbers cannot vary, a sentence), not both and not neither")
    vary = {name: _param(where, name, param) for name, param in vary.items()}
    if answer in vary:
        raise ValueError(f"{where}: vary.{answer} is the answer's own name")
    condition = entry.get("where", "")
    if condition and not vary:
        raise ValueError(f"{where}: 'where' needs 'vary'")
    if condition and not satisfied(condition, {name: p["book"] for name, p in vary.items()}, where):
        raise ValueError(f"{where}: the book's numbers do not meet its own condition where: {condition}")
    prose = entry.get("prose", [])
    if bool(prose) != bool(vary) or not isinstance(prose, list):
        raise ValueError(f"{where}: 'prose' (where the exercise states its numbers, a list) goes with 'vary'")
    pairs = []
    for words in prose:
        pair = (words, words) if isinstance(words, str) else words
        if not (isinstance(pair, list | tuple) and len(pair) == 2 and all(isinstance(w, str) for w in pair)):
            raise ValueError(f"{where}: each prose entry is the words (a string) or [the book's words, a "
                             f"student's words]; got {words!r}")
        named = {f for w in pair for _, f, _, _ in string.Formatter().parse(w) if f is not None}
        if unknown := named - vary.keys():
            raise ValueError(f"{where}: prose {words!r} names {sorted(unknown)}, which vary does not hold")
        pairs.append(tuple(pair))
    return vary, condition, tuple(pairs), fixed


def satisfied(condition: str, numbers: dict, where: str) -> bool:
    """Whether ``numbers`` meet the spec's ``where`` condition (a Python expression of their names)."""
    try:
        return bool(eval(condition, {"__builtins__": {}}, dict(numbers)))  # noqa: S307 - the spec's own code
    except Exception as err:  # noqa: BLE001 - any error in the spec's condition
        raise ValueError(f"{where}: where: {condition} cannot be evaluated ({type(err).__name__}: "
                         f"{err})") from None


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


def fixed_exercises(spec: dict[str, list[Graded]]) -> dict[str, dict[str, str]]:
    """{chapter: {label: why its numbers cannot vary}} of the graded questions every student gets with the
    book's numbers (what ``geron-assignments make --roster`` cannot vary), in the spec's order."""
    return {chapter: {q.label: q.fixed for q in questions if q.fixed} for chapter, questions in spec.items()
            if any(q.fixed for q in questions)}


def checker_names(question: Graded) -> dict:
    """The names the question's checker call needs: its numbers and its setup's, run in this process, and the
    checker."""
    module, name, _ = question.checker
    env: dict = {}
    exec(question.bindings + question.setup, env)  # noqa: S102 - the spec's own code
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
