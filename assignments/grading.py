"""Grading a class: each submission alone, in a child process and a fresh kernel inside the sandbox
(``sandbox``: bubblewrap), with time limits, scored against the hidden tests (``scoring``), with the library's
checker's hint as feedback. Writes ``grades.csv`` (a row per submission: score per question, total, possible,
reason) and ``<submission>.txt`` (the feedback); ``grades.csv`` is written however the batch ends.

A submission that cannot be read (not JSON, empty, not a notebook), whose kernel dies, or that runs past
the submission timeout gets a row of zeros with the reason; a cell past the per-cell timeout is interrupted,
named in the reason, and the rest of the notebook still runs and is graded; an answer whose scoring runs
past its time limit scores 0, with the reason. Every other submission is graded regardless. The score of a
question is whether the answer variable's value, pickled out of the kernel, is the expected value fixed
when the assignment was made; the checker then runs here, in the grader's own process, only to say why.

Before the first submission runs, grading refuses to start (GradingRefused) when two submissions share a
name, the hidden tests changed since they were made, or the sandbox cannot be had here; then it imports and
runs every checker (``scoring.prepare``). With ``unsafe``, submissions run without the sandbox, with the
grader's rights. With a roster, each submission is scored against its student's own hidden tests (their
numbers: ``assignments.students``), and grading also refuses to start when it cannot tell whose a
submission is (``assignments.roster.identify``) or a student has no hidden tests.
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
from geron_lib.validate import check_positive_number

from . import ROOT, GradingRefused, kernel_environment, sandbox
from .execution import waited
from .hidden import read_hidden
from .roster import identify
from .scoring import SCORE_TIMEOUT, cell_name, prepare, score
from .students import student_hidden

#: Seconds one cell may run before it is interrupted (README, "For teachers: assignments")
CELL_TIMEOUT = 120
#: otter's own cells in a student notebook (its import, and the checks a student runs to see the checker's
#: verdict): grading leaves them out, since it scores against the hidden tests
OTTER_CELL = re.compile(r'# Initialize Otter\nimport otter\ngrader = otter\.Notebook\("[\w.-]*"\)'
                        r'|grader\.check\("[\w-]*"\)|grader\.check_all\(\)')
#: Seconds one whole submission may take, its kernel's start included, before it is stopped with zeros
SUBMISSION_TIMEOUT = 600
#: Largest run record (run.json) and stderr tail the grader reads from a run (bytes): the submission's code
#: can write the shared folder too
RECORD_LIMIT_BYTES = 2**20
TAIL_BYTES = 4096


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


def _stop(process: subprocess.Popen, shared: Path, sandboxed: bool) -> None:
    """Stop the child with everything it started: in the sandbox, bwrap (sandbox.end ends the sandbox);
    unsafe, the child's session and its kernel's (a session of its own, its pid in kernel.pid)."""
    pids = [process.pid]
    if not sandboxed:
        try:
            pids.append(int((shared / "kernel.pid").read_text(encoding="utf-8")))
        except (OSError, ValueError):
            pass
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    process.wait()


def _record(path: Path, n_cells: int) -> dict | None:
    """The run.json record at ``path``, or None when there is none or it is not one execution writes."""
    try:
        if path.stat().st_size > RECORD_LIMIT_BYTES:
            return None
        record = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None

    def index(key) -> bool:
        return key == "export" or (type(key) is int and 0 <= key < n_cells)

    cells = record.get("cells") if isinstance(record, dict) else None
    if not (isinstance(cells, dict) and isinstance(record.get("timed_out"), list)
            and all((k == "export" or k.isdigit() and index(int(k))) and isinstance(v, str)
                    for k, v in cells.items())
            and all(index(k) and str(k) in cells for k in record["timed_out"])
            and (record.get("died") is None or index(record["died"]))):
        return None
    return record


def _run(notebook, tmp: Path, answers: list[str], cell_timeout: float, timeout: float, sandboxed: bool):
    """Run the submission in a child process (assignments.execution, in the sandbox unless not
    ``sandboxed``), otter's cells blanked, its answers exported to tmp/shared/answers.pkl; its run.json
    record, or (None, why not)."""
    work, shared = tmp / "work", tmp / "shared"
    work.mkdir()
    shared.mkdir()
    path = work / "submission.ipynb"
    run = nbformat.from_dict(notebook)
    for cell in run.cells:
        if cell.cell_type == "code" and OTTER_CELL.fullmatch(cell.source.strip()):
            cell.source = ""  # kept, so that cells keep their numbers; nbclient skips empty cells
    nbformat.write(run, path)
    inner = [sys.executable, "-m", "assignments.execution"]
    options = ["--cell-timeout", repr(cell_timeout), "--answers", *answers]
    with open(tmp / "stderr", "w+b") as stderr:
        popen = {"cwd": ROOT, "start_new_session": True, "stdout": subprocess.DEVNULL, "stderr": stderr}
        if sandboxed:
            where = [f"{sandbox.WORK}/submission.ipynb", sandbox.SHARED]
            process, init = sandbox.start([*inner, *where, *options], path, shared, **popen)
        else:
            process = subprocess.Popen([*inner, str(path), str(shared), *options], env=kernel_environment(),
                                       **popen)
            init = None
        try:
            process.wait(timeout=waited(timeout))
        except subprocess.TimeoutExpired:
            sandbox.end(init)
            _stop(process, shared, sandboxed)
            return None, f"it ran past the submission timeout of {timeout:g} s and was stopped"
        sandbox.end(init)  # bwrap may end before the processes of its sandbox: they end here
        stderr.seek(max(0, stderr.seek(0, os.SEEK_END) - TAIL_BYTES))
        tail = stderr.read().decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
    record = _record(shared / "run.json", len(notebook.cells))
    if record is None:
        return None, f"the grader could not run it ({tail[0]})"
    return record, ""


def grade_one(submission: Path, hidden: list, names: dict, cell_timeout: float, timeout: float,
              score_timeout: float, sandboxed: bool) -> Outcome:
    """The outcome of one submission against ``hidden`` (read_hidden's list; ``names``: scoring.prepare's)."""
    zeros = {q.label: 0 for q, _ in hidden}
    notebook, why = _read(submission)
    if notebook is None:
        return Outcome(zeros, [], [why])
    with tempfile.TemporaryDirectory(prefix="grading-", ignore_cleanup_errors=True) as tmp:
        record, why = _run(notebook, Path(tmp), [q.answer for q, _ in hidden], cell_timeout, timeout,
                           sandboxed)
        if record is None:
            return Outcome(zeros, [], [why])
        if record["died"] is not None:
            where = ("while its answers were read" if record["died"] == "export"
                     else f"in {cell_name(notebook, record['died'])}")
            return Outcome(zeros, [], [f"its kernel died {where} (the code ended the Python process: "
                                       "os._exit, a crash, or memory exhausted)"])
        if "export" in record["cells"]:
            return Outcome(zeros, [], [f"its answers could not be read from the kernel: the export "
                                       f"{record['cells']['export']}"])
        outcome = Outcome(reasons=[f"{cell_name(notebook, k)} {record['cells'][str(k)]}"
                                   for k in record["timed_out"]])
        failed = {int(k): why for k, why in record["cells"].items() if k != "export"}
        answers = Path(tmp) / "shared" / "answers.pkl"
        for question, expected in hidden:
            points, line, late = score(question, expected, notebook, failed, answers, names[question.label],
                                       score_timeout)
            outcome.scores[question.label] = points
            outcome.lines.append(f"{question.label} ({points:g} / {question.points:g}): {line}")
            outcome.reasons += [late] if late else []
    return outcome


def _students_tests(hidden_tests: Path, who: dict[Path, str]) -> dict[str, list]:
    """{student: their hidden tests (read_hidden's list)} for every student ``who`` names."""
    tests = {}
    for student in dict.fromkeys(who.values()):
        path = student_hidden(hidden_tests, student)
        if not path.is_file():
            raise GradingRefused(f"student {student!r} has no hidden tests ({path}): run `geron-assignments "
                                 "make --roster` with the roster that lists them")
        tests[student] = read_hidden(path)
    return tests


def grade(hidden_tests: Path, submissions: list[Path], out: Path, *, cell_timeout: float = CELL_TIMEOUT,
          timeout: float = SUBMISSION_TIMEOUT, score_timeout: float = SCORE_TIMEOUT,
          unsafe: bool = False, roster: list[str] | None = None) -> list[dict]:
    """Grade each of ``submissions`` alone against ``hidden_tests`` (make's <chapter>-hidden.pkl), or, with a
    ``roster`` (its student ids), against the hidden tests of the submission's student (assignments.roster
    tells whose it is; assignments.students made them), each in the sandbox unless ``unsafe``; write
    grades.csv and one feedback file per submission into ``out``. A row per submission: its name, its student
    (with a roster), the score of every question, total, possible, and the reason ("" when the whole notebook
    ran and was scored in time). GradingRefused, before any submission runs, when grading cannot start (the
    module docstring, and assignments.roster.identify)."""
    cell_timeout, timeout, score_timeout = (check_positive_number(name, value) for name, value in (
        ("cell_timeout", cell_timeout), ("timeout", timeout), ("score_timeout", score_timeout)))
    stems = [s.stem for s in submissions]
    if len(set(stems)) != len(stems):
        raise GradingRefused(f"submissions must have distinct names (their feedback files are <name>.txt); "
                             f"got {sorted({s for s in stems if stems.count(s) > 1})} more than once")
    who = identify(submissions, roster, hidden_tests.name.removesuffix("-hidden.pkl"))
    hidden = read_hidden(hidden_tests)
    tests = _students_tests(hidden_tests, who)
    if not unsafe:
        sandbox.check_sandbox([hidden_tests.parent, out, *submissions])
    done: dict = {}  # every checker imported and run here, before the first kernel starts
    names = ({student: prepare(own, done) for student, own in tests.items()} if roster is not None
             else {None: prepare(hidden)})
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise GradingRefused(f"the grades folder {out} cannot be made ({err.strerror})") from None
    possible = sum(q.points for q, _ in hidden)
    rows = []
    try:
        for submission in submissions:
            student = who.get(submission)
            own = hidden if student is None else tests[student]
            try:
                outcome = grade_one(submission, own, names[student], cell_timeout, timeout, score_timeout,
                                    sandboxed=not unsafe)
            except Exception as err:  # noqa: BLE001 - one submission's trouble must not stop the others
                outcome = Outcome({q.label: 0 for q, _ in hidden}, [],
                                  [f"the grader failed on it ({type(err).__name__}: {shown(str(err))})"])
            total = sum(outcome.scores.values())
            reason = "; ".join(outcome.reasons)
            whose = {} if roster is None else {"student": student}
            rows.append({"submission": submission.name, **whose, **outcome.scores, "total": total,
                         "possible": possible, "reason": reason})
            text = [f"{submission.name}: {total:g} / {possible:g}",
                    *([f"Student: {student}"] if student else []),
                    *([f"Reason: {reason}."] if reason else []), "",
                    *(outcome.lines or ["Every question scores 0."])]
            (out / f"{submission.stem}.txt").write_text("\n".join(text) + "\n", encoding="utf-8")
    finally:
        with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=["submission", *(["student"] if roster is not None else []),
                                                   *(q.label for q, _ in hidden), "total", "possible",
                                                   "reason"])
            writer.writeheader()
            writer.writerows(rows)
    return rows
