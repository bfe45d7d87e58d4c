"""Every number the prose shows with {eval} exists however the notebook ran: its name is bound by a code cell
above the prose that the book executes (not one tagged remove-cell, which myst-nb's inline execution skips),
unconditionally (at the top level of the cell, or in every branch of an if/else or a try/except), so that a
reader without the optional extras (torch, transformers) still sees every sentence."""

from __future__ import annotations

import ast
import re

import nbformat
import pytest
from book_site.pages import config, notebook_pages, source

EVAL = re.compile(r"\{eval\}`([^`]+)`")
ROOT = re.compile(r'^(?:f"\{)?([A-Za-z_][A-Za-z0-9_]*)')


def _python(text: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in text.split("\n"))


def _targets(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def bound_for_sure(statements: list[ast.stmt]) -> set[str]:
    """Names every run through ``statements`` binds."""
    names: set[str] = set()
    for s in statements:
        if isinstance(s, ast.Assign | ast.AnnAssign | ast.AugAssign):
            names |= set().union(*(_targets(t) for t in getattr(s, "targets", [getattr(s, "target", None)])))
        elif isinstance(s, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in s.names}
        elif isinstance(s, ast.FunctionDef | ast.ClassDef):
            names.add(s.name)
        elif isinstance(s, ast.If) and s.orelse:
            names |= bound_for_sure(s.body) & bound_for_sure(s.orelse)
        elif isinstance(s, ast.Try) and s.handlers:
            names |= bound_for_sure(s.body + s.orelse).intersection(
                *(bound_for_sure(h.body) for h in s.handlers)) | bound_for_sure(s.finalbody)
        elif isinstance(s, ast.With):
            names |= bound_for_sure(s.body)
    return names


def test_the_book_executes_inline_and_no_page_uses_glue():
    # {eval} needs the kernel while a page is parsed; glue would be invisible to the live JupyterLab reader
    assert config()["execute"]["execute_notebooks"] == "inline"
    for page in notebook_pages():
        nb = nbformat.read(source(page), as_version=4)
        assert "execution_mode" not in nb.metadata.get("mystnb", {}), f"{page} overrides the execution mode"
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert "glue(" not in code and "{glue" not in prose, f"{page} still uses glue: use {{eval}}"


def test_the_rule_sees_branches():
    tree = ast.parse("a = 1\nif x:\n    b = c = 1\nelse:\n    b = 2\nfor i in y:\n    d = 1\n"
                     "try:\n    e = 1\nexcept E:\n    e = 2\nif z:\n    f = 1")
    assert bound_for_sure(tree.body) == {"a", "b", "e"}


@pytest.mark.parametrize("docname", notebook_pages())
def test_every_eval_name_is_bound_above_whatever_the_branch(docname):
    nb = nbformat.read(source(docname), as_version=4)
    bound: set[str] = set()
    missing = []
    for index, cell in enumerate(nb.cells):
        skipped = {"remove-cell", "remove_cell"} & set(cell.metadata.get("tags", []))
        if cell.cell_type == "code" and not skipped:
            # myst-nb's inline execution never runs a remove-cell cell: hide a cell with remove-input and
            # remove-output instead
            bound |= bound_for_sure(ast.parse(_python(cell.source)).body)
        elif cell.cell_type == "markdown":
            for expression in EVAL.findall(cell.source):
                name = ROOT.match(expression).group(1)
                if name not in bound:
                    missing.append(f"cell {index}: {name}")
    assert not missing, f"{docname}: {{eval}} names not surely bound above their prose: {missing}"


@pytest.mark.parametrize("docname", notebook_pages())
def test_every_eval_is_what_the_book_may_evaluate(docname):
    # myst-nb leaves an {eval} that nb_eval_name_regex refuses empty, with no warning: the page would show
    # a blank where the number belongs
    allowed = re.compile(config()["sphinx"]["config"]["nb_eval_name_regex"])
    nb = nbformat.read(source(docname), as_version=4)
    refused = [expression for cell in nb.cells if cell.cell_type == "markdown"
               for expression in EVAL.findall(cell.source) if not allowed.match(expression)]
    assert not refused, f"{docname}: {{eval}} expressions that nb_eval_name_regex refuses: {refused}"


@pytest.mark.parametrize("docname", notebook_pages())
def test_no_prose_line_starts_as_a_comment(docname):
    # MyST reads a line that starts with % as a comment and drops it from the page, silently
    nb = nbformat.read(source(docname), as_version=4)
    dropped = [line for cell in nb.cells if cell.cell_type == "markdown"
               for line in cell.source.splitlines() if line.startswith("%")]
    assert not dropped, f"{docname}: prose lines MyST would drop as comments: {dropped}"


def test_no_role_runs_into_a_word():
    """JupyterLab's MyST leaves a role that a letter follows unparsed ({eval}`n`M shows as source): a unit
    after a number goes inside the value or after a space."""
    joined = re.compile(r"\{eval\}`[^`]+`[A-Za-z]")
    for page in notebook_pages():
        nb = nbformat.read(source(page), as_version=4)
        prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert not joined.findall(prose), f"{page}: {joined.findall(prose)}"
