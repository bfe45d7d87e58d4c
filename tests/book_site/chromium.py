"""Headless Debian chromium driven by Playwright: the browser of tests/book_site (the built book) and
tests/book_live (the book live in JupyterLab). Playwright's own browser download is never used."""

from __future__ import annotations

import os

import pytest

from .pages import skip_or_fail

CHROMIUM = "/usr/bin/chromium"
# Headless, sandbox-free (root in CI), and no traffic of chromium's own (updates, sync, QUIC probes).
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("Playwright is not installed: run `make install`")
    if not os.access(CHROMIUM, os.X_OK):
        skip_or_fail(f"no {CHROMIUM}: install Debian's chromium (apt-get install -y chromium; .ci/run does)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()
