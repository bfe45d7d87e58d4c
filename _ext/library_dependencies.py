"""Sphinx extension: a notebook page is out of date whenever geron_lib changes.

Sphinx rebuilds a page only when its source (or a file it includes) changes, so an incremental
`make book` would keep serving pages executed against an older library. Every notebook imports
geron_lib, so every .py file of it is noted as a dependency of every notebook page: a library edit
re-executes the notebooks, an untouched library keeps the incremental build fast.
"""

from __future__ import annotations

from pathlib import Path


def note_library(app, doctree) -> None:
    env = app.env
    if Path(env.doc2path(env.docname)).suffix != ".ipynb":
        return
    library = Path(app.srcdir) / "geron_lib"
    for path in sorted(library.rglob("*.py")):
        env.note_dependency(str(path))


def setup(app):
    app.connect("doctree-read", note_library)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
