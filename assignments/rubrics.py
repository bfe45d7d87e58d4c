"""assignments/rubrics.yml: a grading rubric for every written (ungraded) exercise, checked for form when
read. The teachers' page (book/teachers.ipynb) prints them; tests/book/test_teachers_page.py checks that
every written exercise of the chapters has one and that each names a written exercise of the book."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import ROOT

RUBRICS = ROOT / "assignments" / "rubrics.yml"
#: How many criteria a rubric lists: enough to grade with, few enough to read during grading
CRITERIA = (2, 4)
# The page renders the text as GitHub-flavoured Markdown: MyST roles and dollar math would show raw
_NOT_PLAIN = re.compile(r"\{[\w:-]+\}`|\$")


@dataclass(frozen=True)
class Rubric:
    """What a full-credit answer to one written exercise contains, and the mistake to watch for."""

    label: str
    criteria: tuple[str, ...]
    mistake: str


def plain_text(where: str, value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where} must be a non-empty string, got {value!r}")
    if _NOT_PLAIN.search(value):
        raise ValueError(f"{where} must be plain Markdown (no MyST roles, no $ math: the teachers' page "
                         f"shows them raw), got {value!r}")
    return " ".join(value.split())


def _rubric(where: str, label, entry) -> Rubric:
    where = f"{where}, {label}"
    if not isinstance(entry, dict) or set(entry) != {"criteria", "mistake"}:
        raise ValueError(f"{where}: a rubric has exactly the keys criteria and mistake, got {entry!r}")
    criteria = entry["criteria"]
    low, high = CRITERIA
    if not isinstance(criteria, list) or not low <= len(criteria) <= high:
        raise ValueError(f"{where}: criteria must be a list of {low} to {high} items, got {criteria!r}")
    criteria = tuple(plain_text(f"{where}, criterion {i + 1}", c) for i, c in enumerate(criteria))
    return Rubric(str(label), criteria, plain_text(f"{where}, mistake", entry["mistake"]))


def load_rubrics(path: Path = RUBRICS) -> dict[str, Rubric]:
    """The rubrics by exercise label, in the file's order."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or set(data) != {"rubrics"} or not isinstance(data["rubrics"], dict):
        raise ValueError(f"{path}: expected one mapping 'rubrics:' of exercise labels to rubrics")
    return {str(label): _rubric(Path(path).name, label, entry) for label, entry in data["rubrics"].items()}
