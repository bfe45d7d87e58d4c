"""The teachers' page's walk-through, from a clean clone to grades: the commands it shows, what they write,
and the sample grades it shows.

``COMMANDS`` are the page's commands; tests/assignments/test_walkthrough_run.py runs them on ``CHAPTER``
(each with ``--out`` into a folder of its own, the one change) and finds ``LAYOUT``, what ``make`` writes,
where the page says. ``SAMPLE`` holds what the grade command wrote for two submissions (``SAMPLE_ANSWERS``),
and what the roster commands wrote for a class of five (``ROSTER``), one of whom hands in a neighbour's
answers (``COPIED``), which the page shows; the test grades them again and compares, and
``python -m assignments.walkthrough`` writes them again after a change (a checker's hint, the spec's points
or numbers).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import nbformat

from . import ROOT
from .hidden import expected_value
from .spec import load_spec
from .students import student_notebook, student_questions

#: The chapter the page's commands make and grade
CHAPTER = "01_factorised_embeddings"
_TOOL = ".venv/bin/geron-assignments"
#: The page's commands, run from the repository's root (the two make targets run the tool's make); a long one
#: is continued on a second line, as the page shows it
COMMANDS = {
    "book": "make book",
    "assignments": "make assignments",
    "chapter": f"{_TOOL} make {CHAPTER}",
    "grade": f"{_TOOL} grade {CHAPTER} submissions/*.ipynb",
    "limits": f"{_TOOL} grade {CHAPTER} submissions/*.ipynb \\\n    --timeout 1200 --cell-timeout 300",
    "unsafe": f"{_TOOL} grade {CHAPTER} submissions/*.ipynb \\\n    --unsafe",
    "roster-make": f"{_TOOL} make {CHAPTER} --roster roster.csv",
    "roster-grade": f"{_TOOL} grade {CHAPTER} submissions/*.ipynb \\\n    --roster roster.csv",
}
#: What ``make`` writes under ``_build/assignments/<chapter>/``, and ``grade`` beside it, with what each is
LAYOUT = {
    "student/{chapter}.ipynb": "the notebook to hand out: every exercise of the chapter, no solution",
    "autograder/{chapter}.ipynb": "the same notebook with the solutions, for you",
    "autograder/{chapter}-hidden.pkl": "the hidden tests: each graded question's expected value "
                                       "(read-only, never handed out)",
    "autograder/{chapter}-hidden.sha256": "their checksum: grading refuses hidden tests that differ from it",
    "autograder/{chapter}-autograder.zip": "otter's autograder, for Gradescope or `otter run`",
    "autograder/otter_config.json": "otter's settings (also inside the zip)",
    "master/{chapter}.ipynb": "otter's master notebook, which the others are made from",
    "grades/grades.csv": "written by `grade`: a row per submission",
    "grades/{submission}.txt": "written by `grade`: one student's feedback",
}
#: Two submissions of CHAPTER, by student: {answer variable: the code in its answer cell}
SAMPLE_ANSWERS = {
    "ada": {"largest_width": "756", "factorised_count": "30_000 * 128 + 128 * 4096 + 4096"},
    "ben": {"largest_width": "756", "factorised_count": "30_000 * 128 + 128 * 4096"},
}
#: What the grade command wrote for them: grades.csv and a <student>.txt each
SAMPLE = ROOT / "assignments" / "sample_grades"
#: A class of five with their own numbers (roster.csv's student_id column), each handing in the right answers
#: at their own numbers, but for the one in COPIED, who hands in a neighbour's
ROSTER = ("ada", "ben", "cyd", "dee", "eve")
COPIED = {"eve": "dee"}
#: What the roster commands wrote for them, in SAMPLE: grades.csv, and the copier's feedback
ROSTER_SAMPLE = {"grades.csv": "roster_grades.csv", f"{next(iter(COPIED))}.txt": "roster_copied.txt"}


def answer_cells(notebook, answers: dict[str, str]):
    """``notebook`` with ``answers`` ({variable: source}) in its answer cells (``variable = ...``)."""
    filled = set()
    for cell in notebook.cells:
        source = cell.source.strip()
        name = source.removesuffix(" = ...")
        if cell.cell_type == "code" and name != source and name in answers:
            cell.source = f"{name} = {answers[name]}"
            filled.add(name)
    if missing := sorted(answers.keys() - filled):
        raise ValueError(f"answers names variables the notebook has no answer cell for: {missing}")
    return notebook


def run(command: str, folder: Path) -> subprocess.CompletedProcess:
    """One of COMMANDS run by the shell in ``folder`` (which holds a link to this checkout's .venv), with
    ``--out`` into ``folder/_build/assignments``."""
    out = folder / "_build" / "assignments"
    return subprocess.run(f"{command} --out {shlex.quote(str(out))}", shell=True, cwd=folder,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


def grade_sample(folder: Path) -> Path:
    """In ``folder``: make CHAPTER's assignment, hand in SAMPLE_ANSWERS as submissions/<student>.ipynb and
    grade them, with the page's commands; the grades folder."""
    (folder / ".venv").symlink_to(ROOT / ".venv")
    _run_or_raise("chapter", folder)
    made = folder / "_build" / "assignments" / CHAPTER
    student = nbformat.read(made / "student" / f"{CHAPTER}.ipynb", as_version=4)
    (folder / "submissions").mkdir()
    for name, answers in SAMPLE_ANSWERS.items():
        submission = folder / "submissions" / f"{name}.ipynb"
        nbformat.write(answer_cells(nbformat.from_dict(student), answers), submission)
    _run_or_raise("grade", folder)
    return made / "grades"


def own_answers(student: str) -> dict[str, str]:
    """{answer variable: the value a right answer has at ``student``'s numbers, as code} for CHAPTER."""
    return {q.answer: repr(expected_value(q)) for q in student_questions(load_spec()[CHAPTER], student)}


def grade_roster_sample(folder: Path) -> Path:
    """In ``folder``: write roster.csv for ROSTER, make CHAPTER's assignment with it, hand in each student's
    own notebook with the right answers at their numbers (COPIED's a neighbour's), and grade them with the
    roster, with the page's commands; the grades folder."""
    (folder / ".venv").symlink_to(ROOT / ".venv")
    (folder / "roster.csv").write_text("student_id,name\n" + "".join(f"{s},{s.title()}\n" for s in ROSTER),
                                       encoding="utf-8")
    _run_or_raise("roster-make", folder)
    out = folder / "_build" / "assignments"
    (folder / "submissions").mkdir()
    for student in ROSTER:
        own = nbformat.read(student_notebook(out, CHAPTER, student), as_version=4)
        answers = own_answers(COPIED.get(student, student))
        nbformat.write(answer_cells(own, answers), folder / "submissions" / f"{student}.ipynb")
    _run_or_raise("roster-grade", folder)
    return out / CHAPTER / "grades"


def _run_or_raise(step: str, folder: Path) -> None:
    done = run(COMMANDS[step], folder)
    if done.returncode:
        raise RuntimeError(f"{COMMANDS[step]} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="walkthrough-") as tmp:
        one, whole = Path(tmp, "one"), Path(tmp, "class")
        one.mkdir()
        whole.mkdir()
        grades = grade_sample(one)
        SAMPLE.mkdir(exist_ok=True)
        for name in ("grades.csv", *(f"{s}.txt" for s in SAMPLE_ANSWERS)):
            shutil.copyfile(grades / name, SAMPLE / name)
        grades = grade_roster_sample(whole)
        for written, stored in ROSTER_SAMPLE.items():
            shutil.copyfile(grades / written, SAMPLE / stored)
    print(f"sample grades written to {SAMPLE}")


if __name__ == "__main__":
    main()
