"""Print the built HTML book to one PDF, in the order of the table of contents.

    python scripts/make_pdf.py [HTML_DIR] [PDF]     default: _build/html -> _build/pdf/book.pdf

Every page of ``_toc.yml`` is served from ``HTML_DIR`` on 127.0.0.1, opened in Debian's headless Chromium
(Playwright drives it; nothing is downloaded), printed on A4 once its fonts and MathJax are ready, and the
pages' PDFs are joined into one with an outline entry per page. The printed page is the reader's page:
solution dropdowns are opened first (a printed book has no buttons), the kernel-free scrubbers keep the frame
they start on, the theme's print style leaves out the sidebars and buttons. ``make pdf`` runs it after
``make book``.
"""

from __future__ import annotations

import argparse
import functools
import io
import sys
import threading
from contextlib import ExitStack, contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml
from pypdf import PdfReader, PdfWriter

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Open every solution and folded cell, so that what a reader can unfold is on paper.
UNFOLD = """() => {
  document.querySelectorAll('details').forEach(d => d.open = true);
  document.querySelectorAll('.toggle-hidden, .toggle-details__summary').forEach(e => e.click());
}"""
READY = "Promise.resolve(window.MathJax?.startup?.promise).then(() => document.fonts.ready)"


def toc_pages(toc_path: Path = ROOT / "_toc.yml") -> list[tuple[str, str]]:
    """(docname, caption of its part) for every page of the table of contents, in reading order."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))

    def files(entries):
        for entry in entries or []:
            if "file" in entry:
                yield entry["file"]
            for key in ("sections", "chapters"):
                yield from files(entry.get(key))

    pages = [(toc["root"], "")]
    for part in toc.get("parts", []):
        pages += [(f, part.get("caption", "")) for f in files(part.get("chapters"))]
    return pages


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


@contextmanager
def book_page(html_dir: Path, browser=None):
    """(a 1280 x 900 page of ``browser``, the base URL at which ``html_dir``, the built book, is served on
    127.0.0.1) while the block runs. ``browser`` is a Playwright Chromium (when None, Debian's, launched
    headless here); a request to any other host is aborted."""
    if not (html_dir / "index.html").is_file():
        raise SystemExit(f"no built book in {html_dir}: run `make book` first")
    with ExitStack() as stack:
        if browser is None:
            from playwright.sync_api import sync_playwright

            playwright = stack.enter_context(sync_playwright())
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            stack.callback(browser.close)
        server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(html_dir)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        stack.callback(server.shutdown)
        base = f"http://127.0.0.1:{server.server_port}/"
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        stack.callback(page.close)
        page.route(f"re:^(?!{base}|data:|blob:|about:).*", lambda route: route.abort())
        yield page, base


def print_book(html_dir: Path, pdf_path: Path, browser=None) -> int:
    """Write the PDF with ``browser`` (a Playwright Chromium, launched when None); return its page count."""
    writer = PdfWriter()
    with book_page(html_dir, browser) as (page, base):
        for docname, _part in toc_pages():
            page.goto(base + docname + ".html", wait_until="load")
            page.evaluate(READY)
            page.evaluate(UNFOLD)
            page.emulate_media(media="print")
            title = page.title().split(" — ")[0].strip() or docname
            pdf = page.pdf(format="A4", print_background=True,
                           margin={"top": "16mm", "bottom": "16mm", "left": "14mm", "right": "14mm"})
            first = len(writer.pages)
            writer.append(PdfReader(io.BytesIO(pdf)))
            writer.add_outline_item(title=title, page_number=first)
    writer.add_metadata({"/Title": yaml.safe_load((ROOT / "_config.yml").read_text())["title"]})
    pdf_path.parent.mkdir(parents=True, exist_ok=True)
    with pdf_path.open("wb") as f:
        writer.write(f)
    return len(writer.pages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html_dir", nargs="?", default=str(ROOT / "_build" / "html"))
    parser.add_argument("pdf", nargs="?", default=str(ROOT / "_build" / "pdf" / "book.pdf"))
    args = parser.parse_args(argv)
    n = print_book(Path(args.html_dir), Path(args.pdf))
    print(f"{args.pdf}: {n} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
