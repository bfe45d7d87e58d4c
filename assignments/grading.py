"""Grading a class: each submission alone, in a child process and a fresh kernel, with time limits, scored
against the hidden tests (``hidden``), with the library's checker's hint as feedback. Writes ``grades.csv``
(a row per submission: score per question, total, possible, reason) and ``<submission>.txt`` (the feedback).

A submission that cannot be read (not JSON, empty, not a notebook), whose kernel dies, or that runs past
the submission timeout gets a row of zeros with the reason; a cell past the per-cell timeout is interrupted,
named in the reason, and the rest of the notebook still runs and is graded. Every other submission is graded
regardless. The score of a question is whether the answer variable's value, pickled out of the kernel, is
the expected value fixed when the assignment was made; the checker then runs here, in the grader's own
process, only to say why.
"""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from geron_lib.notebook.exercises import shown

from . import ROOT, kernel_environment
from .hidden import UnreadableAnswer, matches, read_hidden, read_pickled
from .spec import Graded, check_answer, checker_names

#: Seconds one cell may run before it is interrupted (README, "For teachers: assignments")
CELL_TIMEOUT = 120
#: otter's own cells in a student notebook (its import, and the checks a student runs to see the checker's
#: verdict): grading leaves them out, since it scores against the hidden tests
OTTER_CELL = re.compile(r'# Initialize Otter\nimport otter\ngrader = otter\.Notebook\("[\w.-]*"\)'
                        r'|grader\.check\("[\w-]*"\)|grader\.check_all\(\)')
#: Seconds one whole submission may take, its kernel's start included, before it is stopped with zeros
SUBMISSION_TIMEOUT = 600


@dataclass
class Outcome:
    """What grading one submission found: the score and feedback line of every question, and the reason
    when something stopped or slowed the run."""

    scores: dict[str, float] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)


def _read(submission: Path):
    """The submission as a notebook, or (None, why it is not one)."""
    try:
        raw = submission.read_bytes()
    except OSError as err:
        return None, f"the file cannot be read ({err.strerror})"
    if not raw.strip():
        return None, "the file is empty"
    try:
        json.loads(raw)
    except ValueError as err:
        return None, f"the file is not valid JSON ({err}), so not a notebook"
    try:
        notebook = nbformat.reads(raw.decode("utf-8"), as_version=4)
        nbformat.validate(notebook)
    except Exception as err:  # noqa: BLE001 - nbformat raises many kinds for a malformed notebook
        return None, f"the file is JSON but not a notebook ({type(err).__name__}: {shown(str(err))})"
    return notebook, ""


def _assigning_cells(notebook, name: str) -> list[int]:
    """Indices of the code cells with a line assigning ``name`` (``name = ...``, ``name: T = ...``)."""
    pattern = re.compile(rf"^\s*{re.escape(name)}\s*(:[^=\n]*)?=(?!=)", re.MULTILINE)
    return [i for i, c in enumerate(notebook.cells) if c.cell_type == "code" and pattern.search(c.source)]


def _cell(notebook, index: int) -> str:
    lines = notebook.cells[index].source.strip().splitlines()
    return f"cell {index + 1} (`{shown(lines[0]).strip(chr(39))}`)" if lines else f"cell {index + 1}"


def _kill(process: subprocess.Popen, workdir: Path) -> None:
    """Stop the child and its kernel (a session of its own), with everything they started."""
    pids = [process.pid]
    if (workdir / "kernel.pid").is_file():
        pids.append(int((workdir / "kernel.pid").read_text(encoding="utf-8")))
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    process.wait()


def _run(notebook, workdir: Path, answers: list[str], cell_timeout: float, timeout: float):
    """Run the submission in a child process (assignments.execution), otter's cells blanked; its run.json
    record and answers, or (None, None, why not)."""
    path = workdir / "submission.ipynb"
    run = nbformat.from_dict(notebook)
    for cell in run.cells:
        if cell.cell_type == "code" and OTTER_CELL.fullmatch(cell.source.strip()):
            cell.source = ""  # kept, so that cells keep their numbers; nbclient skips empty cells
    nbformat.write(run, path)
    command = [sys.executable, "-m", "assignments.execution", str(path), str(workdir),
               "--cell-timeout", str(cell_timeout), "--answers", *answers]
    process = subprocess.Popen(command, cwd=ROOT, env=kernel_environment(), start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(process, workdir)
        return None, None, f"it ran past the submission timeout of {timeout:g} s and was stopped"
    if not (workdir / "run.json").is_file():
        tail = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
        return None, None, f"the grader could not run it ({tail[0]})"
    record = json.loads((workdir / "run.json").read_text(encoding="utf-8"))
    exported = workdir / "answers.pkl"
    return record, read_pickled(exported.read_bytes()) if exported.is_file() else {}, ""


def _question(question: Graded, expected, notebook, record: dict, exported: dict, names: dict) -> tuple:
    """(score, feedback line) of one question."""
    points, name = question.points, question.answer
    failed = {int(k): why for k, why in record["cells"].items() if k != "export"}
    cells = _assigning_cells(notebook, name)
    kind, payload = exported.get(name, ("missing", ""))
    if kind == "missing":
        if not cells:
            why = (f"the answer cell is missing: no cell assigns `{name}` (deleted, or the variable "
                   f"renamed); it should read `{name} = <your answer>`")
        elif bad := [i for i in cells if i in failed]:
            why = f"the answer cell failed: {_cell(notebook, bad[-1])} {failed[bad[-1]]}"
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
        if question.label not in names:
            names[question.label] = checker_names(question)
        hint = check_answer(question, answer, names[question.label]).message
    except Exception as err:  # noqa: BLE001 - the setup (say, a jax compile) or checker could not run here
        hint = f"(the checker could not run here: {type(err).__name__}: {err})"
    note = "".join(f" (note: {_cell(notebook, i)} {failed[i]})" for i in cells if i in failed)
    return (points if right else 0), f"{'right' if right else 'wrong'}: {hint}{note}"


def grade_one(submission: Path, hidden: list, names: dict, cell_timeout: float,
              timeout: float) -> Outcome:
    """The outcome of one submission against ``hidden`` (read_hidden's list)."""
    zeros = {q.label: 0 for q, _ in hidden}
    notebook, why = _read(submission)
    if notebook is None:
        return Outcome(zeros, [], [why])
    with tempfile.TemporaryDirectory(prefix="grading-") as tmp:
        answers = [q.answer for q, _ in hidden]
        record, exported, why = _run(notebook, Path(tmp), answers, cell_timeout, timeout)
    if record is None:
        return Outcome(zeros, [], [why])
    if record["died"] is not None:
        where = ("while its answers were read" if record["died"] == "export"
                 else f"in {_cell(notebook, record['died'])}")
        return Outcome(zeros, [], [f"its kernel died {where} (the code ended the Python process: "
                                   "os._exit, a crash, or memory exhausted)"])
    if "export" in record["cells"]:
        return Outcome(zeros, [], [f"its answers could not be read from the kernel: the export "
                                   f"{record['cells']['export']}"])
    outcome = Outcome(reasons=[f"{_cell(notebook, k)} {record['cells'][str(k)]}"
                               for k in record["timed_out"]])
    for question, expected in hidden:
        score, line = _question(question, expected, notebook, record, exported, names)
        outcome.scores[question.label] = score
        outcome.lines.append(f"{question.label} ({score:g} / {question.points:g}): {line}")
    return outcome


def grade(hidden_tests: Path, submissions: list[Path], out: Path, *, cell_timeout: float = CELL_TIMEOUT,
          timeout: float = SUBMISSION_TIMEOUT) -> list[dict]:
    """Grade each of ``submissions`` alone against ``hidden_tests`` (make's <chapter>-hidden.pkl); write
    grades.csv and one feedback file per submission into ``out``. A row per submission: its name, the score
    of every question, total, possible, and the reason ("" when the whole notebook ran in time)."""
    stems = [s.stem for s in submissions]
    if len(set(stems)) != len(stems):
        raise ValueError(f"submissions must have distinct names (their feedback files are <name>.txt); got "
                         f"{sorted({s for s in stems if stems.count(s) > 1})} more than once")
    hidden = read_hidden(hidden_tests)
    possible = sum(q.points for q, _ in hidden)
    out.mkdir(parents=True, exist_ok=True)
    rows, names = [], {}
    for submission in submissions:
        try:
            outcome = grade_one(submission, hidden, names, cell_timeout, timeout)
        except Exception as err:  # noqa: BLE001 - one submission's trouble must not stop the others
            outcome = Outcome({q.label: 0 for q, _ in hidden}, [],
                              [f"the grader failed on it ({type(err).__name__}: {shown(str(err))})"])
        total = sum(outcome.scores.values())
        reason = "; ".join(outcome.reasons)
        rows.append({"submission": submission.name, **outcome.scores, "total": total, "possible": possible,
                     "reason": reason})
        text = [f"{submission.name}: {total:g} / {possible:g}", *([f"Reason: {reason}."] if reason else []),
                "", *(outcome.lines or ["Every question scores 0."])]
        (out / f"{submission.stem}.txt").write_text("\n".join(text) + "\n", encoding="utf-8")
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["submission", *(q.label for q, _ in hidden), "total",
                                               "possible", "reason"])
        writer.writeheader()
        writer.writerows(rows)
    return rows
