"""What the student edition (_ext/student_edition.py) reads in place of a page's source, without a build: the
teachers' page, whose exam answers, rubrics and sample grades give graded answers away, becomes its label and
title with a sentence saying where it is; any other notebook page still needs the normal build's execution.
(tests/book_site/test_student_edition.py checks the built edition.)"""

import json
import sys
from types import SimpleNamespace

import nbformat
import pytest
from book_site.pages import ROOT
from sphinx.errors import ExtensionError

sys.path.insert(0, str(ROOT / "_ext"))  # the Sphinx extensions, imported as Sphinx does (_config.yml)
import student_edition  # noqa: E402


def _app():
    """A normal build's folder that holds nothing: the edition must not need it for a page for teachers."""
    return SimpleNamespace(srcdir=str(ROOT), config=SimpleNamespace(student_edition_from="_build/nowhere"),
                           env=SimpleNamespace(doc2path=lambda docname: str(ROOT / f"{docname}.ipynb"),
                                               note_dependency=lambda path: None))


def _read(docname: str) -> list[str]:
    source = [(ROOT / f"{docname}.ipynb").read_text(encoding="utf-8")]
    student_edition.read_executed(_app(), docname, source)
    return source


def test_the_teachers_page_is_its_title_and_where_it_is():
    assert "book/teachers" in student_edition.TEACHERS_ONLY
    page = nbformat.reads(_read("book/teachers")[0], as_version=4)
    nbformat.validate(page)
    assert [c.cell_type for c in page.cells] == ["markdown"]
    assert page.cells[0].source == f"(teachers)=\n# For teachers\n\n{student_edition.TEACHERS_ONLY_TEXT}\n"


def test_every_other_notebook_page_is_read_from_the_normal_build():
    with pytest.raises(ExtensionError, match="is missing: run `make book` first"):
        _read("book/01_factorised_embeddings")


def test_a_page_for_teachers_without_a_title_is_refused():
    notebook = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "no title"}], "metadata": {},
                "nbformat": 4, "nbformat_minor": 5}
    with pytest.raises(ExtensionError, match="label and title"):
        student_edition.title_only(notebook)
    assert json.loads(json.dumps(student_edition.title_only({**notebook, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# A title\n", "text"]}]})))["cells"][0][
        "source"] == f"# A title\n\n{student_edition.TEACHERS_ONLY_TEXT}\n"
