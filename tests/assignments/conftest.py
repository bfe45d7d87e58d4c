"""The assignments package (`assignments/`, importable from the repository root, where pytest runs), its spec,
and every chapter's master notebook, built once per session. Masters need the built book: the exercises'
{eval} numbers are the ones it shows (`make book` records them in _build/eval_values.json)."""

import pytest
from book_site.pages import skip_or_fail

from assignments import EVAL_VALUES
from assignments.master import master_notebook
from assignments.myst import chapters_with_exercises
from assignments.spec import load_spec


@pytest.fixture(scope="session")
def spec():
    return load_spec()


@pytest.fixture(scope="session")
def built_book():
    if not EVAL_VALUES.is_file():
        skip_or_fail(f"the book is not built (no {EVAL_VALUES}): run `make book` first")
    return EVAL_VALUES


@pytest.fixture(scope="session")
def masters(spec, built_book):
    """{chapter: its otter master notebook} for every chapter with exercises."""
    return {chapter: master_notebook(chapter, spec.get(chapter, [])) for chapter in chapters_with_exercises()}
