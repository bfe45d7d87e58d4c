"""The printable book: `make pdf` prints every page of the table of contents, in order, to one PDF."""

from __future__ import annotations

import importlib.util
import re

import pypdfium2
from pypdf import PdfReader

from .pages import HTML, ROOT, require_built_book, toc_pages

_spec = importlib.util.spec_from_file_location("make_pdf", ROOT / "scripts" / "make_pdf.py")
make_pdf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_pdf)


def test_the_book_prints_to_one_pdf_with_every_page_in_order(browser, tmp_path):
    require_built_book()
    pdf = tmp_path / "book.pdf"
    n = make_pdf.print_book(HTML, pdf, browser)
    reader = PdfReader(pdf)
    assert len(reader.pages) == n >= len(toc_pages())
    outline = [item.title for item in reader.outline]
    assert len(outline) == len(toc_pages())  # one entry per page of the table of contents
    text = "\n".join(page.get_textpage().get_text_bounded() for page in pypdfium2.PdfDocument(pdf))
    for title in ("Factorised embeddings", "Dynamic masking", "Notation", "Glossary"):
        assert title.lower() in text.lower(), f"{title!r} is not in the PDF"
    assert not re.search(r"\{eval\}|\{glue:|glue\(|NBVAL_", text), "bookkeeping printed"
    assert toc_pages() == [docname for docname, _ in make_pdf.toc_pages()]
