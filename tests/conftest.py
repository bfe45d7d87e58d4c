"""In CI (CI=true) a test skipped for a missing optional dependency fails instead: CI must run it.

Tests that need torch/transformers ask for them with ``pytest.importorskip`` inside a fixture or a test, so
that the skip (and, in CI, the failure) is reported per test and every other test still runs.
"""

import os

import pytest

# One session browser for tests/book_site and tests/book_live: two open Playwright sessions in one process
# fail ("Sync API inside the asyncio loop"), so the fixture is registered here, once.
from book_site.chromium import browser  # noqa: F401, E402


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.skipped and _in_ci() and isinstance(report.longrepr, tuple):
        reason = report.longrepr[2]
        if "could not import" in reason:  # pytest.importorskip's message
            report.outcome = "failed"
            report.longrepr = (f"CI=true, so this test must run, but it was skipped: {reason}. "
                               "`make test` installs the optional dependencies (pip install -e '.[hf]').")
    return report
