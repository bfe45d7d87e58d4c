"""Every listing the book shows opens with its equation.

The book shows library code with ``literalinclude`` and ``:pyobject:``, which starts at the ``def`` (or
``class``) line: a comment above it never reaches the page. So every included function, method or class
must carry its equation in the first line of its docstring, right under the signature, where the listing
shows it.
"""

import ast
import re

import nbformat
import pytest
from book_site.pages import ROOT, notebook_pages, source
from listing_lines import find, listings, measure

#: What counts as an equation in a docstring's first line: an equals sign, an update arrow, an approximation.
EQUATION = re.compile(r"=|<-|\s~\s")


LISTINGS = listings()


def test_the_book_includes_library_code():
    assert len(LISTINGS) >= 30
    assert {path.split("/")[1] for _, path, _ in LISTINGS} >= {"model", "pretraining", "studies", "reference",
                                                               "interop"}


@pytest.mark.parametrize("page, path, name", LISTINGS, ids=[f"{p}:{n}" for p, _, n in LISTINGS])
def test_every_listing_opens_with_its_equation(page, path, name):
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    node = find(tree, name)
    assert node is not None, f"{page} includes {name} from {path}, which has no such object"
    docstring = ast.get_docstring(node)
    assert docstring, f"{path}:{name} (shown in {page}) has no docstring, so its listing shows no equation"
    first = docstring.strip().splitlines()[0]
    assert EQUATION.search(first), (f"{path}:{name} (shown in {page}) must open its docstring with its "
                                    f"equation; its first line is {first!r}")


#: The characters a line of code may have in the book's column (the built page's 0.8em monospace in the
#: book theme's content width); a wider line scrolls sideways. tests/book_site checks the rendered pages.
COLUMN = 80
BOXED = 74  # in an exercise's or a note's box (a 77-character line scrolled 7 px)


@pytest.mark.parametrize("page, path, name", LISTINGS, ids=[f"{p}:{n}" for p, _, n in LISTINGS])
def test_every_listing_fits_the_column(page, path, name):
    source = (ROOT / path).read_text(encoding="utf-8")
    node = find(ast.parse(source), name)
    assert node is not None, f"{page} includes {name} from {path}, which has no such object"
    lines = source.splitlines()[node.lineno - 1:node.end_lineno]
    wide = {node.lineno + i: len(line) for i, line in enumerate(lines) if len(line) > COLUMN}
    assert not wide, f"{path}:{name} (shown in {page}) has lines wider than {COLUMN} characters: {wide}"


@pytest.mark.parametrize("page, path, name", LISTINGS, ids=[f"{p}:{n}" for p, _, n in LISTINGS])
def test_every_listing_is_the_algorithm(page, path, name):
    """At most 2 check lines (the rest checked once, in one call or at the public entry) and no speed form:
    the listing is the textbook computation."""
    listing = measure(path, name)
    assert listing.checks <= 2, f"{path}:{name} (shown in {page}) has {listing.checks} check lines"
    assert not listing.speed, f"{path}:{name} (shown in {page}) uses {listing.speed}"


@pytest.mark.parametrize("docname", notebook_pages())
def test_every_shown_cell_and_code_block_fits_the_column(docname):
    nb = nbformat.read(source(docname), as_version=4)
    hidden = {"remove-input", "remove-cell"}
    shown = [c.source for c in nb.cells
             if c.cell_type == "code" and not hidden & set(c.metadata.get("tags", []))]
    wide = [line for text in shown for line in text.splitlines() if len(line) > COLUMN]
    # a code block in an exercise sits in the exercise's box, a few characters narrower
    blocks = [block for c in nb.cells if c.cell_type == "markdown"
              for block in re.findall(r"```python\n(.*?)```", c.source, re.S)]
    wide += [line for text in blocks for line in text.splitlines() if len(line) > BOXED]
    assert not wide, f"{docname}: code lines wider than {COLUMN} characters: {wide}"
