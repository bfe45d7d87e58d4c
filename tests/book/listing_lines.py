"""What each object the book prints is made of: its check lines against its maths lines, and any speed
form in it (tests/book/test_listings.py holds every listing to at most 2 check lines and none).

A check line validates rather than computes: a call of a ``check_*`` function or of a memory pre-check, a
``raise``, an ``if`` whose body only raises, an ``assert``; each counts its source lines. Maths lines are the
other lines of code (docstring, comments and blank lines left out). A speed form: an ``out=`` argument,
``vecdot``, sparse matrices, threads, ``*=`` and ``/=`` (scaling in place), or ``x += y`` on an array the
function made itself. Adding into a buffer the caller passed (a gradient, ``g_W += ...``) or into a
parameter (``p -= ...``) is the textbook update and not counted.

Print the table (from the repository root): .venv/bin/python tests/book/listing_lines.py
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from book_site.pages import ROOT, text_of, toc_pages  # noqa: E402

INCLUDE = re.compile(r"[`~]{3}\{literalinclude\}\s+(?P<path>\S+)\s*\n(?P<options>(?::[^\n]*\n)*)")
PYOBJECT = re.compile(r":pyobject:\s*(?P<name>\S+)")
CHECK_CALL = re.compile(r"^(check_\w+|_check\w*|\w+\.check_\w+|\w+\._check\w*|check\w*_memory|\w*_memory)$")
SPEED_NAMES = {"vecdot": "vecdot", "sparse": "sparse matrices", "csr_matrix": "sparse matrices",
               "Thread": "threads", "ThreadPoolExecutor": "threads", "threading": "threads"}


def listings() -> list[tuple[str, str, str]]:
    """(page, included file relative to the root, pyobject) for every literalinclude with :pyobject:."""
    found = []
    for page in toc_pages():
        for match in INCLUDE.finditer(text_of(page)):
            name = PYOBJECT.search(match["options"])
            if name:
                included = (ROOT / "book" / match["path"]).resolve().relative_to(ROOT).as_posix()
                found.append((page, included, name["name"]))
    return found


def find(tree: ast.Module, dotted: str):
    """The node of ``Class.method`` or ``function`` in a parsed module, or None."""
    nodes, node = tree.body, None
    for part in dotted.split("."):
        node = next((n for n in nodes if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == part),
                    None)
        if node is None:
            return None
        nodes = node.body
    return node


def _called(node: ast.AST) -> str:
    f = node.func if isinstance(node, ast.Call) else None
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        base = f.value.id if isinstance(f.value, ast.Name) else ""
        return f"{base}.{f.attr}" if base else f.attr
    return ""


def _is_check(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Raise | ast.Assert):
        return True
    if isinstance(stmt, ast.If) and not stmt.orelse and all(isinstance(s, ast.Raise) for s in stmt.body):
        return True
    value = stmt.value if isinstance(stmt, ast.Expr | ast.Assign | ast.AnnAssign) else None
    if isinstance(value, ast.Call) and CHECK_CALL.match(_called(value)):
        return True
    if isinstance(value, ast.Tuple | ast.List | ast.ListComp | ast.GeneratorExp | ast.DictComp):
        calls = [_called(n) for n in ast.walk(value) if isinstance(n, ast.Call)]  # (a, b) = (check_x, ...)
        return any(CHECK_CALL.match(c) for c in calls)
    return False


def _assigned(node: ast.AST) -> set[str]:
    """The names a plain assignment binds in ``node``: its local arrays (not its arguments or loop names)."""
    targets = [t for n in ast.walk(node) if isinstance(n, ast.Assign) for t in n.targets]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _speed(node: ast.AST) -> list[str]:
    found, local = set(), _assigned(node)
    for n in ast.walk(node):
        if isinstance(n, ast.keyword) and n.arg == "out":
            found.add("out=")
        elif isinstance(n, ast.Name | ast.Attribute):
            name = n.id if isinstance(n, ast.Name) else n.attr
            if name in SPEED_NAMES:
                found.add(SPEED_NAMES[name])
        elif isinstance(n, ast.AugAssign):
            if isinstance(n.op, ast.Mult | ast.Div):
                found.add("in-place scaling")
            elif (isinstance(n.target, ast.Name) and n.target.id in local
                  and not isinstance(n.value, ast.Constant)):
                found.add("in-place update")
    return sorted(found)


@dataclass(frozen=True)
class Listing:
    name: str
    checks: int
    maths: int
    speed: list[str]


def _lines(stmt: ast.stmt) -> set[int]:
    return set(range(stmt.lineno, stmt.end_lineno + 1))


def measure(path: str, name: str) -> Listing:
    """The check lines, maths lines and speed forms of object ``name`` of ``path`` (from the root)."""
    source = (ROOT / path).read_text(encoding="utf-8")
    node = find(ast.parse(source), name)
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    text = source.splitlines()
    check, code = set(), set()

    def visit(stmts):
        for s in stmts:
            if _is_check(s):
                check.update(_lines(s))
            elif isinstance(s, ast.If | ast.For | ast.While | ast.With | ast.Try | ast.FunctionDef):
                header = set(range(s.lineno, s.body[0].lineno))
                code.update(header)
                visit(s.body)
                visit(getattr(s, "orelse", []))
                for h in getattr(s, "handlers", []):
                    code.add(h.lineno)
                    visit(h.body)
            else:
                code.update(_lines(s))

    visit(body)
    real = {i for i in code | check if text[i - 1].strip() and not text[i - 1].strip().startswith("#")}
    return Listing(f"{Path(path).stem}.{name}", len(check & real), len((code - check) & real), _speed(node))


def listing_table() -> list[Listing]:
    """Every printed object once, measured."""
    seen, rows = set(), []
    for _, path, name in listings():
        if (path, name) not in seen:
            seen.add((path, name))
            rows.append(measure(path, name))
    return rows


if __name__ == "__main__":
    rows = listing_table()
    width = max(len(r.name) for r in rows)
    print(f"| {'object':<{width}} | check | maths | speed forms |")
    print(f"|{'-' * (width + 2)}|------:|------:|---|")
    for r in rows:
        print(f"| {r.name:<{width}} | {r.checks:>5} | {r.maths:>5} | {', '.join(r.speed) or '-'} |")
    print(f"\n{len(rows)} objects; {sum(r.checks > 2 for r in rows)} with more than 2 check lines; "
          f"{sum(bool(r.speed) for r in rows)} with speed forms")
