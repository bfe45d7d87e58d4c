"""Grading submissions with otter's runner, without containers, in this environment (where geron_lib is
installed): ``grades.csv`` (a row per submission: score per question, total) and ``<submission>.txt`` (the
feedback)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

from . import kernel_environment


def grade(autograder: Path, submissions: list[Path], out: Path) -> list[dict]:
    """Grade ``submissions`` with otter's runner (no containers); write grades.csv and one feedback file per
    submission into ``out``. A row per submission: its name, the score of every question, total, possible."""
    from otter.api import grade_submission

    out.mkdir(parents=True, exist_ok=True)
    rows, saved = [], dict(os.environ)
    os.environ.update(kernel_environment())  # the kernels otter starts inherit it
    try:
        for submission in submissions:
            results = grade_submission(str(submission), str(autograder), quiet=True)
            row = {"submission": submission.name}
            row |= {name: results.get_score(name) for name in sorted(results.results)}
            rows.append(row | {"total": results.total, "possible": results.possible})
            (out / f"{submission.stem}.txt").write_text(results.summary(), encoding="utf-8")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for row in rows for k in row)))
        writer.writeheader()
        writer.writerows(rows)
    return rows
