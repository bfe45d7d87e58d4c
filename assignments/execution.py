"""Runs one submission, in a child process that grading starts in the sandbox (and stops when it runs past
its time):

    python -m assignments.execution NOTEBOOK SHARED --cell-timeout SECONDS --answers NAME ...

Every code cell of NOTEBOOK runs in a fresh python3 kernel whose working folder is NOTEBOOK's, as Restart and
Run All would run it, errors allowed: a cell that raises is recorded and the next one runs; a cell past
``--cell-timeout`` is interrupted and recorded. Then each answer variable is pickled out of the kernel, by
code that reads no name the notebook defined (EXPORT). Writes SHARED/run.json ({"cells": {index: what went
wrong}, "timed_out": [index], "died": index of the cell the kernel died in, or "export", or null}; the
index "export" is the export's own), SHARED/answers.pkl ({name: ("value", pickled bytes) | ("missing", "")
| ("unreadable", why)}) and, as soon as the kernel starts, SHARED/kernel.pid. Runs no grading: what the
kernel says is data. This module imports only the standard library, nbformat and nbclient: the sandbox
holds no other part of the grader than it and the package's ``__init__``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError

#: The error name a cell past the per-cell timeout gets
TIMED_OUT = "CellTimeout"

#: Run in the kernel after the submission's cells, in a namespace of its own whose builtins are Python's:
#: pickles every answer variable of the notebook's namespace (``answers_of``) into answers.pkl. Only the
#: cell that starts it (EXPORT_CELL, two imports and a call) is run in the notebook's namespace.
EXPORT = '''
import pickle
out = {}
for name in names:
    if name not in answers_of:
        out[name] = ("missing", "")
        continue
    try:
        out[name] = ("value", pickle.dumps(answers_of[name], protocol=4))
    except Exception as err:
        out[name] = ("unreadable", f"a {type(answers_of[name]).__name__} cannot be saved ({err})")
with open(path, "wb") as f:
    pickle.dump(out, f, protocol=4)
'''
EXPORT_CELL = """import builtins as _grader_builtins, sys as _grader_sys
_grader_builtins.exec({code!r}, {{"__builtins__": _grader_builtins, "names": {names!r}, "path": {path!r},
                                 "answers_of": _grader_sys._getframe(0).f_globals}})"""
#: Longest wait the kernel's channels take (zmq counts milliseconds in a C int): a limit past it is none
LONGEST_WAIT = 10**6  # seconds, 11.6 days


def waited(seconds: float) -> float | None:
    """A time limit as a wait: None (no limit) past LONGEST_WAIT, longer than any run."""
    return seconds if seconds <= LONGEST_WAIT else None


def run(notebook: Path, shared: Path, cell_timeout: float, names: list[str]) -> dict:
    """Run ``notebook``'s cells and export ``names`` (see the module docstring); the run.json record."""
    nb = nbformat.read(notebook, as_version=4)
    late = f"ran past the per-cell timeout of {cell_timeout:g} s and was interrupted"
    cells: dict = {}
    timed_out: list = []
    export_index = len(nb.cells)  # the export cell's, appended after the submission's

    def executed(cell, cell_index, execute_reply):
        reply = execute_reply["content"]
        if reply.get("status") == "error":
            key = "export" if cell_index == export_index else cell_index
            if reply.get("ename") == TIMED_OUT:
                timed_out.append(key)
            cells[key] = late if key in timed_out else f"raised {reply.get('ename')}: {reply.get('evalue')}"

    client = NotebookClient(nb, timeout_func=lambda cell: waited(cell_timeout), allow_errors=True,
                            kernel_name="python3", interrupt_on_timeout=True, on_cell_executed=executed,
                            error_on_timeout={"ename": TIMED_OUT, "evalue": late, "traceback": []},
                            resources={"metadata": {"path": str(notebook.parent)}})
    died = None
    with client.setup_kernel():
        (shared / "kernel.pid").write_text(str(client.km.provisioner.pid), encoding="utf-8")
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            try:
                client.execute_cell(cell, index)
            except DeadKernelError:
                died = index
                break
        if died is None:
            export = EXPORT_CELL.format(code=EXPORT, names=names, path=str(shared / "answers.pkl"))
            nb.cells.append(nbformat.v4.new_code_cell(export))
            try:
                client.execute_cell(nb.cells[export_index], export_index)
            except DeadKernelError:
                died = "export"
    record = {"cells": cells, "timed_out": timed_out, "died": died}
    (shared / "run.json").write_text(json.dumps(record), encoding="utf-8")
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m assignments.execution",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("shared", type=Path)
    parser.add_argument("--cell-timeout", type=float, required=True)
    parser.add_argument("--answers", nargs="*", default=[])
    args = parser.parse_args(argv)
    run(args.notebook, args.shared, args.cell_timeout, args.answers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
