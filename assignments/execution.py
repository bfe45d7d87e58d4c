"""Runs one submission, in a child process that grading starts (and kills when it runs past its time):

    python -m assignments.execution NOTEBOOK WORKDIR --cell-timeout SECONDS --answers NAME ...

Every code cell of NOTEBOOK runs in a fresh python3 kernel whose working folder is WORKDIR, as Restart and
Run All would run it, errors allowed: a cell that raises is recorded and the next one runs; a cell past
``--cell-timeout`` is interrupted and recorded. Then each answer variable is pickled out of the kernel.
Writes WORKDIR/run.json ({"cells": {index: what went wrong}, "timed_out": [index], "died": index of the
cell the kernel died in, or "export", or null}; the index "export" is the export's own),
WORKDIR/answers.pkl ({name: ("value", pickled bytes) | ("missing", "") | ("unreadable", why)}) and, as
soon as the kernel starts, WORKDIR/kernel.pid. Runs no grading: what the kernel says is data.
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

#: Run in the kernel after the submission's cells: pickles every answer variable into answers.pkl
EXPORT = '''
def _export_answers(names, path):
    import pickle
    found = globals()
    out = {}
    for name in names:
        if name not in found:
            out[name] = ("missing", "")
            continue
        try:
            out[name] = ("value", pickle.dumps(found[name], protocol=4))
        except Exception as err:
            out[name] = ("unreadable", f"a {type(found[name]).__name__} cannot be saved ({err})")
    with open(path, "wb") as f:
        pickle.dump(out, f, protocol=4)
'''


def run(notebook: Path, workdir: Path, cell_timeout: float, names: list[str]) -> dict:
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

    client = NotebookClient(nb, timeout=cell_timeout, allow_errors=True, kernel_name="python3",
                            interrupt_on_timeout=True, on_cell_executed=executed,
                            error_on_timeout={"ename": TIMED_OUT, "evalue": late, "traceback": []},
                            resources={"metadata": {"path": str(workdir)}})
    died = None
    with client.setup_kernel():
        (workdir / "kernel.pid").write_text(str(client.km.provisioner.pid), encoding="utf-8")
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            try:
                client.execute_cell(cell, index)
            except DeadKernelError:
                died = index
                break
        if died is None:
            call = f"_export_answers({names!r}, {str(workdir / 'answers.pkl')!r})"
            nb.cells.append(nbformat.v4.new_code_cell(EXPORT + call))
            try:
                client.execute_cell(nb.cells[export_index], export_index)
            except DeadKernelError:
                died = "export"
    record = {"cells": cells, "timed_out": timed_out, "died": died}
    (workdir / "run.json").write_text(json.dumps(record), encoding="utf-8")
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m assignments.execution",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--cell-timeout", type=float, required=True)
    parser.add_argument("--answers", nargs="*", default=[])
    args = parser.parse_args(argv)
    run(args.notebook, args.workdir, args.cell_timeout, args.answers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
