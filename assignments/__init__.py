"""Assignments from the book's exercises: per chapter, a student notebook without solutions whose otter
checks call the library's checkers, so students get the same hints as in the book, and hidden tests that
grade what comes back.

    geron-assignments make [CHAPTER ...] [--out DIR] [--no-run-tests] [--roster CSV]
                                                                          (what `make assignments` runs)
    geron-assignments grade CHAPTER SUBMISSION.ipynb ... [--out DIR] [--cell-timeout S] [--timeout S]
                                                                          [--unsafe] [--roster CSV]

(``python -m assignments`` is the same command line.)

The modules: ``spec`` reads ``assignments/spec.yml`` (which exercises are graded, and how); ``myst``
reads the chapters' exercises and turns their MyST into the Markdown Jupyter renders; ``master`` writes a
chapter's otter master notebook, runs ``otter assign`` on it and stores the hidden tests; ``hidden`` makes
and reads the hidden tests (each question's expected value, with its checksum) and reads answers back from
a kernel; ``grading`` grades a batch of submissions, each alone, running it with ``execution`` in a child
process inside the ``sandbox`` (bubblewrap), and scores its answers with ``scoring``, each under a time
limit; ``roster`` reads a class roster and tells whose a submission is, ``students`` gives each student
numbers of their own and writes their notebooks and hidden tests; ``__main__`` is the command line. An
exercise's ``{eval}`` numbers are the ones the built book shows: the book build records them
(``_ext/eval_values.py``) in ``_build/eval_values.json``, so ``make book`` comes first.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
SPEC = ROOT / "assignments" / "spec.yml"
OUT = ROOT / "_build" / "assignments"
#: What the book build's _ext/eval_values.py writes: {docname: {expression: [the text shown, per use]}}
EVAL_VALUES = ROOT / "_build" / "eval_values.json"


def kernel_environment() -> dict[str, str]:
    """The environment for otter and its kernels: this checkout's geron_lib, this environment's kernel."""
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), path) if p),
            "JUPYTER_PREFER_ENV_PATH": "1", "JUPYTER_PLATFORM_DIRS": "1", "PYTHONHASHSEED": "0"}


class GradingRefused(Exception):
    """Grading refuses to start (the sandbox cannot be had, the hidden tests changed, two submissions share a
    name, ...): the message says why and what to do; the command line exits 2 with it."""
