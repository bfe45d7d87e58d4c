"""Strict nbval, fed the book build's own execution instead of executing every notebook a second time.

``pytest -p plugins.nbval_build --nbval-build --nbval-sanitize-with nbval_sanitize.cfg book/`` collects
every code cell of every notebook as nbval does (its markers and tags, its sanitizers, its strict
comparison, image bytes excepted), but takes each cell's outputs from the notebook that ``make book``
executed (``_build/jupyter_execute/<same path>``, written by myst-nb) rather than from a kernel of its own.
So one ``make test`` executes each chapter once: in the build, whose pages show those outputs.

A cell the build did not execute (a stale or missing build) fails with the reason; so does a cell whose
source differs from the stored notebook's (the build is older than the notebook).
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbval.plugin import IPyNbCell, IPyNbFile, coalesce_streams


def pytest_addoption(parser):
    parser.getgroup("nbval").addoption(
        "--nbval-build", action="store_true",
        help="compare every notebook's stored outputs with the outputs of the last `make book` "
             "(_build/jupyter_execute), with nbval's strict comparison")
    parser.getgroup("nbval").addoption(
        "--nbval-build-dir", default="_build/jupyter_execute",
        help="where the build wrote its executed notebooks, relative to the rootdir")


def pytest_collect_file(file_path, parent):
    if parent.config.option.nbval_build and file_path.suffix == ".ipynb":
        return BuiltNotebook.from_parent(parent, path=file_path)
    return None


class BuiltNotebook(IPyNbFile):
    """A stored notebook, paired with the build's execution of it (no kernel)."""

    def setup(self):
        self.setup_sanitize_files()
        root = self.config.rootpath
        built = root / self.config.option.nbval_build_dir / Path(self.fspath).resolve().relative_to(root)
        if not built.is_file():
            raise FileNotFoundError(f"{built} is missing: run `make book` first")
        self.built = [c for c in nbformat.read(built, as_version=4).cells if c.cell_type == "code"]

    def collect(self):
        for item in super().collect():
            yield BuiltCell.from_parent(self, name=item.name, cell_num=item.cell_num, cell=item.cell,
                                        options=item.options)


class BuiltCell(IPyNbCell):
    """A code cell whose outputs come from the build; compared as nbval compares them."""

    def runtest(self):
        if self.options["skip"]:
            pytest.skip()
        built = self.parent.built
        if self.cell_num >= len(built) or built[self.cell_num].source != self.cell.source:
            self.raise_cell_error("the build executed another version of this cell: run `make book`")
        outs = coalesce_streams(built[self.cell_num].outputs)
        errors = [o for o in outs if o.output_type == "error"]
        if errors and not self.options["check_exception"]:
            self.raise_cell_error("Cell execution caused an exception", "\n".join(errors[0].traceback))
        if self.options["check_exception"] and not errors:
            self.raise_cell_error("Expected cell to raise an exception, but it did not")
        if self.cell.execution_count is None:
            if self.cell.outputs:
                self.raise_cell_error("Unrun reference cell has outputs")
            return
        if self.options["check"] and not self.compare_outputs(outs, coalesce_streams(self.cell.outputs)):
            self.raise_cell_error("Cell outputs differ", "\n".join(self.comparison_traceback))
