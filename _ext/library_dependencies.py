"""Sphinx extension: a notebook page is out of date whenever geron_lib changes, or the BLAS settings do.

Sphinx rebuilds a page only when its source (or a file it includes) changes, so an incremental
`make book` would keep serving pages executed against an older library. Every notebook imports
geron_lib, so every .py file of it is noted as a dependency of every notebook page: a library edit
re-executes the notebooks, an untouched library keeps the incremental build fast. So does
_build/blas-env, which `make book` rewrites only when the BLAS settings it runs with change: `make test`
builds on other BLAS kernels than a reader's `make book`, and neither may serve the other's execution.
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
    blas = Path(app.outdir).parent / "blas-env"  # _build/html -> _build/blas-env
    if blas.is_file():  # a dependency that is missing would make every page outdated on every build
        env.note_dependency(str(blas))


def setup(app):
    app.connect("doctree-read", note_library)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
