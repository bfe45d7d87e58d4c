"""Fixtures: the built book served on 127.0.0.1, headless Debian chromium driven by Playwright, and page
visits that record every console error, uncaught exception, failed request and request to another host."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from .pages import HTML, ROOT, STUDENT, require_built_book


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


@contextmanager
def served(folder: Path):
    """The base URL of ``folder`` served by a local HTTP server while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def site():
    """Base URL of the built book, served from _build/html by a local HTTP server for the session."""
    require_built_book()
    with served(HTML) as url:
        yield url


@pytest.fixture(scope="session")
def student():
    """The student edition's folder, built (again, incrementally) from the normal build
    (scripts/student_book.py: Sphinx reads again only what changed, and executes nothing)."""
    require_built_book()
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "student_book.py")], cwd=ROOT,
                         capture_output=True, text=True)
    assert run.returncode == 0, f"scripts/student_book.py failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return STUDENT


@pytest.fixture(scope="session")
def student_site(student):
    """Base URL of the student edition, served by a local HTTP server for the session."""
    with served(student) as url:
        yield url


@dataclass
class Visit:
    """An opened page and everything that went wrong while it loaded and ran."""

    page: object
    problems: list[str] = field(default_factory=list)
    docname: str = ""  # the book page it shows (the `loaded` fixture)


def _visitor(browser, site: str):
    """``open_page(path)`` opens ``site + path`` in a fresh 1280x900 page and waits until it has loaded, its
    fonts are ready and MathJax (where the page has formulas) has typeset them. Requests to any other host
    are recorded as problems and blocked."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    elsewhere = re.compile(rf"^(?!{re.escape(site)}|data:|blob:|about:)")  # matched by the driver, not here

    def open_page(path: str) -> Visit:
        page = context.new_page()
        v = Visit(page)

        def block(request_route):
            v.problems.append(f"request to another host: {request_route.request.url}")
            request_route.abort()

        page.on("console", lambda m: m.type == "error" and v.problems.append(f"console error: {m.text}"))
        page.on("pageerror", lambda e: v.problems.append(f"uncaught exception: {e}"))
        page.on("response", lambda r: r.status >= 400 and v.problems.append(f"HTTP {r.status}: {r.url}"))
        page.on("requestfailed", lambda r: not elsewhere.match(r.url) and v.problems.append(
            f"failed: {r.url} {r.failure}"))
        page.route(elsewhere, block)
        page.goto(site + path, wait_until="load")
        page.evaluate("Promise.resolve(window.MathJax?.startup?.promise).then(() => document.fonts.ready)")
        return v

    try:
        yield open_page
    finally:
        context.close()


@pytest.fixture
def visit(browser, site):
    """``visit(path)``: a page of the built book, opened as ``_visitor`` opens it."""
    yield from _visitor(browser, site)


@pytest.hookimpl(trylast=True)  # after pytest has grouped the tests by the page they share
def pytest_collection_modifyitems(items):
    """The tests that read one page (the `loaded` fixture) in the order their module defines them, so that a
    test that changes the page runs after those that read it as it loaded."""
    places = [i for i, item in enumerate(items)
              if "loaded" in getattr(getattr(item, "callspec", None), "params", ())]
    first = {}
    for i in places:
        first.setdefault(items[i].callspec.params["loaded"], i)
    ordered = sorted((items[i] for i in places), key=lambda item: (
        first[item.callspec.params["loaded"]], item.function.__code__.co_firstlineno))
    for i, item in zip(places, ordered, strict=True):
        items[i] = item


@pytest.fixture(scope="module")
def loaded(browser, site, request) -> Visit:
    """A page of the built book (``request.param``, its docname), opened as ``_visitor`` opens it, once for
    all the tests of a module that read it: pytest runs them one after another, in the module's order (a
    test that changes the page, opening a menu or moving a slider, comes after those that read it as it
    loaded), and tests/conftest.py keeps them on one xdist worker."""
    opener = _visitor(browser, site)
    page = next(opener)(request.param + ".html")
    page.docname = request.param
    yield page
    opener.close()  # its context, and so the page, closed


@pytest.fixture
def student_visit(browser, student_site):
    """``student_visit(path)``: a page of the student edition, opened as ``_visitor`` opens it."""
    yield from _visitor(browser, student_site)
