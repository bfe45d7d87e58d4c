"""Convert a chapter from myst-nb ``glue`` to ``{eval}`` roles, so that its prose shows the same numbers in
the HTML book (myst-nb, inline execution) and live in JupyterLab (jupyterlab-myst evaluates them there).

In code cells, a top-level ``glue("key", value, display=False)`` becomes ``key = value`` (and is dropped when
``value`` is already the name ``key``); ``from myst_nb import glue`` goes once nothing calls it. In Markdown,
``{glue:text}`key:fmt``` becomes ``{eval}`f"{key:fmt}"``` and ``{glue:text}`key``` (or ``{glue:md}``,
``{glue}``, ``{glue:any}``) becomes ``{eval}`key```. The notebook is marked ``mystnb.execution_mode: inline``
(``{eval}`` needs a running kernel while the page is built).

What needs a person is reported and nothing is written: a glue call that is not a plain top-level statement
with a literal key (a loop, a computed key), a key that is not a free Python name (it is already used for
something else in the notebook, or is a keyword or builtin), a glue role this script does not know, and an
``{eval}`` whose name is only defined by a code cell *below* its Markdown cell (both renderers evaluate in
reading order: move that code cell up). Fix those by hand, keeping glue, and run the script again.

    python scripts/glue_to_eval.py book/x.ipynb ...          convert (all or nothing per notebook)
    python scripts/glue_to_eval.py --check book/x.ipynb ...  change nothing; report what needs a hand
"""

from __future__ import annotations

import argparse
import ast
import builtins
import keyword
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
GLUE_ROLE = re.compile(r"\{glue(?::([a-z]+))?\}`([^`]*)`")
EVAL_ROLE = re.compile(r"\{eval\}`([^`]*)`")
GLUE_IMPORT = "from myst_nb import glue"


@dataclass
class Conversion:
    """The converted notebook, or the reasons it cannot be converted mechanically."""

    nb: nbformat.NotebookNode
    problems: list[str] = field(default_factory=list)


def _python(source: str) -> str:
    """Cell source with IPython magics and shell lines blanked (same line numbers), so ``ast`` can read it."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n"))


def _names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """(names the code binds, names it reads)."""
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, ast.Store | ast.Del) else read).add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound, read


def _glue_call(statement: ast.stmt) -> ast.Call | None:
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Name) and func.id == "glue":
            return statement.value
    return None


def _is_glue_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "glue"


def _convert_code(source: str, index: int, other_names: set[str], problems: list[str]) -> str:
    """The cell with each top-level ``glue`` statement turned into an assignment."""
    tree = ast.parse(_python(source))
    lines = source.split("\n")
    top = {id(_glue_call(s).func) for s in tree.body if _glue_call(s)}
    for node in ast.walk(tree):
        if _is_glue_call(node) and id(node.func) not in top:
            problems.append(f"cell {index}: glue inside a block or expression, line {node.lineno}: "
                            "write it as a top-level glue statement with a literal key")
    for statement in reversed(tree.body):  # bottom-up, so earlier line numbers stay valid
        call = _glue_call(statement)
        if call is None:
            continue
        keywords = {k.arg: k.value for k in call.keywords}
        key = call.args[0] if call.args else None
        display = keywords.get("display")
        if len(call.args) != 2 or not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            problems.append(f"cell {index}, line {call.lineno}: glue needs a literal key and a value")
            continue
        if not (isinstance(display, ast.Constant) and display.value is False) or set(keywords) != {"display"}:
            problems.append(f"cell {index}, line {call.lineno}: glue({key.value!r}) is displayed or has "
                            "other options: only display=False glue is prose-only")
            continue
        name, value = key.value, ast.get_source_segment(_python(source), call.args[1])
        if not IDENT.fullmatch(name) or keyword.iskeyword(name) or hasattr(builtins, name):
            problems.append(f"cell {index}: glue key {name!r} is not a free Python name: rename it")
            continue
        if value != name and name in other_names:
            problems.append(f"cell {index}: glue key {name!r} is also a variable of the notebook: rename it")
            continue
        indent = lines[statement.lineno - 1][: statement.col_offset]
        new = [] if value == name else [f"{indent}{name} = {_one_expression(value, indent)}"]
        lines[statement.lineno - 1: statement.end_lineno] = new
    return "\n".join(lines)


def _one_expression(value: str, indent: str) -> str:
    """``value`` as the right-hand side of an assignment: in parentheses if its lines only held together
    inside glue's."""
    try:
        compile(f"_ = {value}", "<value>", "exec")
        return value
    except SyntaxError:
        return f"(\n{value}\n{indent})"


def _drop_glue_import(source: str) -> str:
    return "\n".join(line for line in source.split("\n") if line.strip() != GLUE_IMPORT)


def _convert_markdown(source: str, index: int, problems: list[str]) -> str:
    def replace(match: re.Match) -> str:
        kind, body = match.group(1) or "any", match.group(2)
        name, _, spec = body.partition(":")
        known = kind in ("text", "md", "any") and (kind == "text" or not spec)
        if not known or "::" in body or not IDENT.fullmatch(name):
            problems.append(f"cell {index}: cannot convert {match.group(0)} (a cross-page key, a format "
                            "on a non-text role, or a role this script does not know): convert it by hand")
            return match.group(0)
        return f'{{eval}}`f"{{{name}:{spec}}}"`' if spec else f"{{eval}}`{name}`"

    return GLUE_ROLE.sub(replace, source)


def _eval_root(expression: str) -> str | None:
    """The variable an ``{eval}`` expression reads: ``x`` for ``x``, ``f"{x:,}"`` and ``x['a']``."""
    match = IDENT.match(expression.removeprefix('f"{'))
    return match.group(0) if match else None


def _check_reading_order(cells: list, problems: list[str]) -> None:
    """Every ``{eval}`` reads a name that a code cell above its Markdown cell defines."""
    defined: set[str] = set()
    later: dict[str, int] = {}
    for index, cell in enumerate(cells):
        if cell.cell_type == "code":
            later.update({name: index for name in _names(ast.parse(_python(cell.source)))[0]
                          if name not in later})
    for index, cell in enumerate(cells):
        if cell.cell_type == "code":
            defined |= _names(ast.parse(_python(cell.source)))[0]
        elif cell.cell_type == "markdown":
            for expression in EVAL_ROLE.findall(cell.source):
                name = _eval_root(expression)
                if name not in defined:
                    where = f"defined in cell {later[name]}" if name in later else "never defined"
                    problems.append(f"cell {index}: {{eval}}`{expression}` reads {name!r}, {where}: "
                                    "move the code that defines it above this cell")


def convert(nb: nbformat.NotebookNode) -> Conversion:
    """Convert a notebook (a copy is changed; ``nb`` is left alone)."""
    nb = nbformat.from_dict(nb)
    problems: list[str] = []
    other_names: set[str] = set()  # a glue key that is one of these would rebind a variable
    for cell in nb.cells:
        if cell.cell_type == "code":
            other_names |= set().union(*_names(ast.parse(_python(cell.source))))
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            cell.source = _convert_code(cell.source, index, other_names - {"glue"}, problems)
        elif cell.cell_type == "markdown":
            cell.source = _convert_markdown(cell.source, index, problems)
    if not any(_is_glue_call(node) for cell in nb.cells if cell.cell_type == "code"
               for node in ast.walk(ast.parse(_python(cell.source)))):
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.source = _drop_glue_import(cell.source)
    _check_reading_order(nb.cells, problems)  # cell numbers as in the notebook given
    nb.cells = [cell for cell in nb.cells if cell.cell_type != "code" or cell.source.strip()]
    nb.metadata.setdefault("mystnb", {})["execution_mode"] = "inline"
    return Conversion(nb, list(dict.fromkeys(problems)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report what needs a hand; change nothing")
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    failed = False
    for path in args.notebooks:
        if path.suffix != ".ipynb" or not path.is_file():
            parser.error(f"notebooks must be existing .ipynb files, got {str(path)!r}")
        result = convert(nbformat.read(path, as_version=4))
        if result.problems:
            failed = True
            print(f"{path}: not converted, needs a hand:", file=sys.stderr)
            for problem in result.problems:
                print(f"  {problem}", file=sys.stderr)
        elif not args.check:
            nbformat.write(result.nb, path)
            print(f"converted {path}: re-execute it (jupyter execute --inplace) and rebuild the book")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
