"""Grading refuses to start, with exit status 2 and a message, before any submission runs: two submissions
with one name, hidden tests changed since they were made, no sandbox (bwrap missing, or unable to make its
namespaces), a sandbox that would show a protected file, a time limit that is not a positive finite number.
And what grading does before the first submission runs and however a batch ends. No kernel runs here: the
hidden tests are made without otter, and a submission's run is a stand-in where one is needed."""

import csv
import sys
from pathlib import Path

import nbformat
import pytest

from assignments import GradingRefused, grading, sandbox
from assignments.__main__ import main
from assignments.grading import Outcome, grade
from assignments.hidden import make_hidden
from assignments.master import hidden_tests
from assignments.spec import load_spec

CHAPTER = "01_factorised_embeddings"
CHECKERS = "geron_lib.notebook.exercises.embeddings"  # the chapter's checkers' module


@pytest.fixture
def built(tmp_path):
    """(build folder holding the chapter's hidden tests, a submission: an empty notebook)."""
    out = tmp_path / "out"
    make_hidden(load_spec()[CHAPTER], hidden_tests(CHAPTER, out))
    notebook = tmp_path / "class" / "a.ipynb"
    notebook.parent.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), notebook)
    return out, notebook


def _refused(capsys, *argv) -> str:
    """The message of ``geron-assignments grade CHAPTER *argv``, which must exit 2."""
    with pytest.raises(SystemExit) as stopped:
        main(["grade", CHAPTER, *argv])
    assert stopped.value.code == 2
    return capsys.readouterr().err


def test_two_submissions_with_one_name_are_refused(built, capsys, tmp_path):
    out, notebook = built
    other = tmp_path / "other" / "a.ipynb"
    other.parent.mkdir()
    other.write_bytes(notebook.read_bytes())
    assert "got ['a'] more than once" in _refused(capsys, str(notebook), str(other), "--out", str(out))


def test_hidden_tests_changed_since_they_were_made_are_refused(built, capsys):
    out, notebook = built
    hidden = hidden_tests(CHAPTER, out)
    hidden.chmod(0o644)
    hidden.write_bytes(hidden.read_bytes() + b"\0")
    assert "have changed since they were made" in _refused(capsys, str(notebook), "--out", str(out))


@pytest.mark.parametrize("option", ["--cell-timeout", "--timeout"])
@pytest.mark.parametrize("value", ["0", "-1", "inf", "-inf", "nan", "1e999", "ten", ""])
def test_a_time_limit_not_a_positive_finite_number_is_refused_when_parsed(built, capsys, option, value):
    out, notebook = built
    message = _refused(capsys, str(notebook), "--out", str(out), f"{option}={value}")
    assert f"argument {option}: must be a positive finite number of seconds, got {value!r}" in message


@pytest.mark.parametrize("value", ["30.5", "1e300", "0.001", "7"])
def test_any_positive_finite_time_limit_reaches_grading(built, monkeypatch, value):
    out, notebook = built
    given = []
    monkeypatch.setattr("assignments.__main__.grade", lambda *args, **limits: given.append(limits) or [])
    assert main(["grade", CHAPTER, str(notebook), "--out", str(out), "--cell-timeout", value,
                 "--timeout", value]) == 0
    assert (given[0]["cell_timeout"], given[0]["timeout"]) == (float(value), float(value))


def test_without_bwrap_grading_is_refused(built, capsys, monkeypatch, tmp_path):
    out, notebook = built
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert "bwrap is not installed" in _refused(capsys, str(notebook), "--out", str(out))


def test_a_bwrap_that_cannot_make_its_namespaces_is_refused(built, capsys, monkeypatch, tmp_path):
    out, notebook = built
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    message = _refused(capsys, str(notebook), "--out", str(out))
    assert "the sandbox cannot be had: bwrap: No permissions to create new namespace" in message


@pytest.mark.parametrize("inside", [sys.prefix, sys.base_prefix, "/usr", "/etc"])
def test_a_sandbox_that_would_show_a_protected_file_is_refused(inside):
    with pytest.raises(GradingRefused, match="the sandbox would show .*a.ipynb: it lies in "):
        sandbox.check_sandbox([Path(inside) / "a.ipynb"])


class _Started:
    """A stand-in for the child process a submission runs in: it notes whether the checkers' module was
    imported when it started, and ends at once, having written no record."""

    imported: list = []

    def __init__(self, *args, **kwargs):
        self.imported.append(CHECKERS in sys.modules)
        self.pid = 0

    def wait(self, timeout=None):
        return 0


def test_every_checker_is_imported_before_the_first_submission_runs(built, monkeypatch, tmp_path):
    out, notebook = built
    monkeypatch.delitem(sys.modules, CHECKERS)
    monkeypatch.setattr(grading.subprocess, "Popen", _Started)
    monkeypatch.setattr(_Started, "imported", [])
    rows = grade(hidden_tests(CHAPTER, out), [notebook], tmp_path / "grades", unsafe=True)
    assert _Started.imported == [True]
    assert rows[0]["reason"] == "the grader could not run it (no message)"


def test_a_batch_stopped_half_way_still_writes_grades_csv(built, monkeypatch, tmp_path):
    out, notebook = built
    second = tmp_path / "class" / "b.ipynb"
    second.write_bytes(notebook.read_bytes())
    outcomes = iter([Outcome({"ex-embeddings-breakeven": 1, "ex-embeddings-xxlarge": 0}, [], [])])

    def one(*args, **kwargs):
        for outcome in outcomes:
            return outcome
        raise KeyboardInterrupt  # the second submission: the teacher stops the grader

    monkeypatch.setattr(grading, "grade_one", one)
    with pytest.raises(KeyboardInterrupt):
        grade(hidden_tests(CHAPTER, out), [notebook, second], tmp_path / "grades", unsafe=True)
    with open(tmp_path / "grades" / "grades.csv", newline="", encoding="utf-8") as f:
        assert [(row["submission"], row["total"]) for row in csv.DictReader(f)] == [("a.ipynb", "1")]
