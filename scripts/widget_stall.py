"""Regression check for the widget-cell stall under nbclient: run the live-widget cells of every chapter
many times through nbclient, with both cores kept busy, and count the runs whose widget cells took more than
twice the median.

    .venv/bin/python scripts/widget_stall.py [--runs 50] [--timeout 120] [--no-load] [--book DIR]

The stall it looks for: nbclient answers an ipywidgets Output widget's captured output by sending a
comm_msg on the shell channel while it awaits the cell's execute reply on that same socket; the reply's
wake-up can be lost, and the cell then waits out nbclient's whole timeout and goes on with no error. The
explorers show their figure without an Output widget, so a widget cell should never take much longer than
usual here.

For each chapter the notebook run is its imports and hidden set-up cells (tagged remove-cell: BLAS
threads), every cell that assigns a name the widget cells need (followed back to the imports), and its
``.widget()`` cells. Each run of a chapter is a fresh kernel
started by ``NotebookClient`` (as the book build and the tests start them), with this process's
environment and this checkout after PYTHONPATH: ``PYTHONPATH=/elsewhere`` runs another checkout's
geron_lib (the first kernel prints which one it imports). A widget cell's seconds are measured here, from
nbclient sending the execute request to it receiving the reply (the kernel's own timestamps cannot show a
reply that reached nbclient late). Progress goes to stdout with the time left; run it in the background
with nohup and a log file: it takes minutes.
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
WIDGET_CALL = ".widget()"
# a plain single-threaded numpy loop; it ends by itself once the process that started it is gone
BUSY_LOOP = """
import os, numpy as np
parent = os.getppid()
a = np.random.default_rng(0).random((256, 256))
while os.getppid() == parent:
    a = np.sin(a) + 0.5
"""


def _code(cell) -> str:
    """The cell's source without IPython magics and shell lines, for ast."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in cell.source.split("\n"))


def _names(cell) -> tuple[set[str], set[str]]:
    """(names the cell assigns, names it reads)."""
    assigned, read = set(), set()
    for node in ast.walk(ast.parse(_code(cell))):
        if isinstance(node, ast.Name):
            (assigned if isinstance(node.ctx, ast.Store | ast.Del) else read).add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            assigned |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            assigned.add(node.name)
    return assigned, read


def widget_notebook(path: Path) -> nbformat.NotebookNode | None:
    """The chapter's widget cells and the cells they need, in order; None if it has no widget cell."""
    chapter = nbformat.read(path, as_version=4)
    code = [c for c in chapter.cells if c.cell_type == "code"]
    widgets = [i for i, c in enumerate(code) if WIDGET_CALL in c.source]
    if not widgets:
        return None
    keep, needed = set(widgets), set()
    for i in widgets:
        needed |= _names(code[i])[1]
    for i in range(widgets[-1], -1, -1):
        assigned, read = _names(code[i])
        setup = "%matplotlib" in code[i].source or "remove-cell" in code[i].metadata.get("tags", [])
        if i not in widgets and (assigned & needed or setup):
            keep.add(i)
            needed |= read
    cells = [code[i] for i in sorted(keep)]
    for cell in cells:
        cell.outputs, cell.execution_count = [], None
        cell.metadata["widget_cell"] = WIDGET_CALL in cell.source
    return nbformat.v4.new_notebook(cells=cells, metadata=chapter.metadata)


def kernel_env() -> dict[str, str]:
    """This process's environment, this checkout after any PYTHONPATH given (which so comes first)."""
    path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p] + [str(ROOT)]
    return os.environ | {"PYTHONPATH": os.pathsep.join(path), "PYTHONHASHSEED": "0"}


def kernel_geron_lib(book: Path, env: dict[str, str]) -> str:
    """The geron_lib file a kernel started as the runs start theirs imports."""
    probe = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import geron_lib\nprint(geron_lib.__file__)")])
    NotebookClient(probe, timeout=60, resources={"metadata": {"path": str(book)}}).execute(env=env)
    return "".join(o.get("text", "") for o in probe.cells[0].outputs).strip()


def run_once(notebook: nbformat.NotebookNode, book: Path, timeout: float, env: dict[str, str]
             ) -> tuple[float, float]:
    """(seconds of the widget cells as nbclient waited for them, seconds of the whole notebook)."""
    nb = nbformat.from_dict(notebook)  # a fresh copy: execute() writes outputs into it
    started, widget_seconds = {}, []

    def on_execute(cell, cell_index):
        started[cell_index] = time.perf_counter()

    def on_executed(cell, cell_index, execute_reply):
        if cell.metadata.get("widget_cell"):
            widget_seconds.append(time.perf_counter() - started[cell_index])

    client = NotebookClient(nb, timeout=timeout, resources={"metadata": {"path": str(book)}},
                            on_cell_execute=on_execute, on_cell_executed=on_executed)
    start = time.perf_counter()
    client.execute(env=env)
    return sum(widget_seconds), time.perf_counter() - start


def start_load(n: int = 2) -> list[subprocess.Popen]:
    env = os.environ | {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return [subprocess.Popen([sys.executable, "-c", BUSY_LOOP], env=env) for _ in range(n)]


def stop_load(load: list[subprocess.Popen]) -> None:
    for process in load:
        process.terminate()
    for process in load:
        process.wait(timeout=30)


def report(seconds: dict[str, list[tuple[float, float]]], timeout: float) -> None:
    print("\nchapter  runs  widget-cell median s  notebook median s  runs > 2x median  at the timeout  "
          "slow runs (run: widget-cell s)")
    total_slow = total_runs = 0
    for name, rows in seconds.items():
        widget = [w for w, _ in rows]
        median = statistics.median(widget)
        slow = [(k, w) for k, w in enumerate(widget, 1) if w > 2 * median]
        at_timeout = sum(w >= timeout for w in widget)
        total_slow, total_runs = total_slow + len(slow), total_runs + len(widget)
        listed = ", ".join(f"{k}: {w:.1f}" for k, w in slow) or "-"
        print(f"{name:<8} {len(widget):>4}  {median:>20.2f}  {statistics.median(n for _, n in rows):>17.2f}  "
              f"{len(slow):>16}  {at_timeout:>14}  {listed}")
    print(f"all      {total_runs:>4} chapter runs, {total_slow} took more than twice their chapter's median")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50, help="runs of every chapter (default 50)")
    parser.add_argument("--timeout", type=float, default=120, help="nbclient's cell timeout, s (default 120)")
    parser.add_argument("--no-load", action="store_true", help="do not keep both cores busy")
    parser.add_argument("--book", type=Path, default=ROOT / "book", help="the chapters' folder")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.timeout <= 0:
        parser.error("--timeout must be positive")
    book = args.book.resolve()
    chapters = {p.name.split("_")[0]: nb for p in sorted(book.glob("*.ipynb"))
                if (nb := widget_notebook(p)) is not None}
    if not chapters:
        parser.error(f"--book: no notebook in {book} has a {WIDGET_CALL} cell")
    env = kernel_env()
    print(f"kernel imports geron_lib from {kernel_geron_lib(book, env)}")
    for name, nb in chapters.items():
        widget_cells = sum(c.metadata["widget_cell"] for c in nb.cells)
        print(f"{name}: {len(nb.cells)} cells, {widget_cells} widget cell(s)")
    load = [] if args.no_load else start_load()
    print(f"{args.runs} runs, timeout {args.timeout:g} s, "
          f"{'no load' if args.no_load else f'{len(load)} busy numpy loops (pids {[p.pid for p in load]})'}",
          flush=True)
    seconds: dict[str, list[tuple[float, float]]] = {name: [] for name in chapters}
    start = time.perf_counter()
    try:
        for k in range(1, args.runs + 1):
            parts = []
            for name, nb in chapters.items():
                widget, total = run_once(nb, book, args.timeout, env)
                seconds[name].append((widget, total))
                parts.append(f"{name} {widget:.2f}/{total:.1f}")
            elapsed = time.perf_counter() - start
            left = elapsed / k * (args.runs - k)
            print(f"run {k}/{args.runs} (widget-cell s/notebook s): {', '.join(parts)}; "
                  f"{elapsed / 60:.1f} min so far, about {left / 60:.1f} min left", flush=True)
    finally:
        stop_load(load)
    report(seconds, args.timeout)


if __name__ == "__main__":
    main()
