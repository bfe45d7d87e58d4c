"""A screenshot of every page of the built book, whole and in both themes, for a person to look at.

    python scripts/screenshots.py [HTML_DIR] [OUT_DIR] [--pages DOCNAME ...]
        default: _build/html -> _build/screenshots/<docname>.png and <docname>-dark.png

Every page of ``_toc.yml`` (or those given) is served from ``HTML_DIR`` on 127.0.0.1 and opened in Debian's
headless Chromium as ``make pdf`` opens it (scripts/make_pdf.py), at 1280 px, once its fonts and MathJax are
ready; then the whole page is taken in the light theme and again in the dark one. ``make screenshots`` runs it
after ``make book``. The browser tests check the pages; these pictures are for the eye (a figure unreadable
on the dark background, a table too wide); at 40 core-seconds of Chromium's for the book, they are not taken
on every test run.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from make_pdf import READY, ROOT, book_page, toc_pages

#: where the pictures go (the live tests, tests/book_live, put theirs here too)
OUT = ROOT / "_build" / "screenshots"


def file_name(docname: str) -> str:
    """``book/01_x`` -> ``book_01_x``: a page's pictures are named for it, in one folder."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", docname)


def take(html_dir: Path, out_dir: Path, docnames: list[str], browser=None) -> list[Path]:
    """Write ``<docname>.png`` and ``<docname>-dark.png`` of every page in ``docnames`` with ``browser`` (a
    Playwright Chromium, launched when None); return their paths."""
    written = []
    with book_page(html_dir, browser) as (page, base):
        out_dir.mkdir(parents=True, exist_ok=True)
        for docname in docnames:
            page.goto(base + docname + ".html", wait_until="load")
            page.evaluate(READY)
            for theme in ("light", "dark"):
                page.evaluate("theme => { document.documentElement.dataset.theme = theme; }", theme)
                path = out_dir / f"{file_name(docname)}{'-dark' if theme == 'dark' else ''}.png"
                page.screenshot(path=path, full_page=True)
                written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html_dir", nargs="?", default=str(ROOT / "_build" / "html"))
    parser.add_argument("out_dir", nargs="?", default=str(OUT))
    parser.add_argument("--pages", nargs="+", metavar="DOCNAME", help="these pages only (book/glossary ...)")
    args = parser.parse_args(argv)
    every = [docname for docname, _ in toc_pages()]
    unknown = sorted(set(args.pages or ()) - set(every))
    if unknown:
        parser.error(f"--pages: {', '.join(unknown)} not in _toc.yml (its pages: {', '.join(every)})")
    written = take(Path(args.html_dir), Path(args.out_dir), args.pages or every)
    print(f"{len(written)} screenshots in {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
