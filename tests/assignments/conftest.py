"""The assignments package (`assignments/`, importable from the repository root, where pytest runs), its spec,
and every chapter's master notebook, built once per session. Masters need the built book: the exercises'
{eval} numbers are the ones it shows (`make book` records them in _build/eval_values.json). Grading runs each
submission in bubblewrap's sandbox (`bwrap`: .ci/run installs it); the tests that grade skip without it
locally, and fail under CI=true."""

import shutil

import nbformat
import pytest
from book_site.pages import skip_or_fail

from assignments import EVAL_VALUES
from assignments.master import master_notebook
from assignments.myst import chapters_with_exercises
from assignments.spec import load_spec
from assignments.walkthrough import answer_cells


@pytest.fixture(scope="session")
def spec():
    return load_spec()


@pytest.fixture(scope="session")
def built_book():
    if not EVAL_VALUES.is_file():
        skip_or_fail(f"the book is not built (no {EVAL_VALUES}): run `make book` first")
    return EVAL_VALUES


@pytest.fixture(scope="session")
def bubblewrap():
    if shutil.which("bwrap") is None:
        skip_or_fail("no bwrap: install Debian's bubblewrap (apt-get install -y bubblewrap; .ci/run does)")


@pytest.fixture(scope="session")
def masters(spec, built_book):
    """{chapter: its otter master notebook} for every chapter with exercises."""
    return {chapter: master_notebook(chapter, spec.get(chapter, [])) for chapter in chapters_with_exercises()}


def fill_in(student, path, answers: dict, *, before: str = "", after: str = "", without: str = ""):
    """The student notebook ``student`` written to ``path`` with ``answers`` ({variable: source}) in its
    answer cells, a code cell ``before`` the first answer cell and one ``after`` the last cell, and no cell
    that starts with ``without``."""
    notebook = nbformat.read(student, as_version=4)
    first_answer = next(i for i, c in enumerate(notebook.cells) if c.source.endswith(" = ..."))
    answer_cells(notebook, answers)
    if before:
        notebook.cells.insert(first_answer, nbformat.v4.new_code_cell(before))
    if after:
        notebook.cells.append(nbformat.v4.new_code_cell(after))
    notebook.cells = [c for c in notebook.cells if not (without and c.source.startswith(without))]
    nbformat.write(notebook, path)
    return path


@pytest.fixture(scope="session")
def submission():
    """fill_in: a student notebook filled in as a submission."""
    return fill_in
