"""Sphinx extension: a page shows what one ``print`` wrote as one block, whatever the kernel sent.

The kernel sends what a cell writes to stdout as it goes, on a timer, so a loaded machine can cut one
``print("ids", ids)`` between its pieces: the executed notebook then holds two stream outputs, ``"ids"`` and
``" [0, 100, ...]\\n"``, and myst-nb would show them as two blocks. Its remedy, ``nb_merge_streams`` (on in
_config.yml), joins them with a newline, strips the trailing blank lines a cell printed, and edits the
executed notebook's outputs in place (the notebook the student edition and strict nbval read). This
extension gives myst-nb's renderer, in place of that merge, one that joins consecutive stream outputs of one
name exactly, as JupyterLab shows them and nbval compares them, on copies.
"""

from __future__ import annotations

from myst_nb.core import render
from nbformat import NotebookNode


def joined_streams(outputs: list[NotebookNode]) -> list[NotebookNode]:
    """The outputs with each run of consecutive stream outputs of one name as one output, its texts joined."""
    joined: list[NotebookNode] = []
    for output in outputs:
        last = joined[-1] if joined else None
        if (last is not None and output["output_type"] == last["output_type"] == "stream"
                and output["name"] == last["name"]):
            joined[-1] = NotebookNode({**last, "text": last["text"] + output["text"]})
        else:
            joined.append(output)
    return joined


def setup(app):
    if not callable(getattr(render, "coalesce_streams", None)):
        raise RuntimeError("myst_nb.core.render.coalesce_streams is gone: update _ext/whole_prints.py")
    render.coalesce_streams = joined_streams
    return {"parallel_read_safe": True, "parallel_write_safe": True}
