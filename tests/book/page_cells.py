"""A page's own cells, run here: the names a page's prose shows, as the page computes them."""

import nbformat
from book_site.pages import ROOT


def code_cells(docname: str) -> dict:
    """{cell id: source} of the notebook's code cells, in order."""
    notebook = nbformat.read(ROOT / f"{docname}.ipynb", as_version=4)
    return {c.get("id"): c.source for c in notebook.cells if c.cell_type == "code"}


def run_cells(docname: str, *cell_ids: str) -> dict:
    """The namespace after the page's import cell (the first code cell that imports geron_lib, its
    ``%`` magics dropped) and then the cells ``cell_ids``, in the order given."""
    cells = code_cells(docname)
    imports = next(s for s in cells.values() if "from geron_lib" in s or "import geron_lib" in s)
    namespace: dict = {}
    exec("\n".join(line for line in imports.splitlines() if not line.startswith("%")), namespace)
    for cell_id in cell_ids:
        exec(cells[cell_id], namespace)
    return namespace
