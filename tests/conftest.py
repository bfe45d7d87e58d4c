"""The test tiers, and the CI rule.

Tiers: a test is marked by what it needs beyond numpy (pyproject.toml registers the markers); `make check`
runs every test that needs none of them, `make test` runs them all. Whole folders and files get their
markers from TIERS below, a test that uses one of HF_FIXTURES is marked ``hf``, and any other single test
that needs torch or transformers is marked ``hf`` where it is written. Each marker also sets the test's
timeout (pytest-timeout), so a hang in a test fails with a traceback; fixtures bound their own waits.

In CI (CI=true) a test skipped for a missing optional dependency fails instead: CI must run it. Tests that
need torch/transformers ask for them with ``pytest.importorskip`` inside a fixture or a test, so that the
skip (and, in CI, the failure) is reported per test and every other test still runs.
"""

import os
from pathlib import Path

import pytest

# One session browser for tests/book_site and tests/book_live: two open Playwright sessions in one process
# fail ("Sync API inside the asyncio loop"), so the fixture is registered here, once.
from book_site.chromium import browser  # noqa: F401, E402

TESTS = Path(__file__).parent

#: Markers by where a test lives (a path relative to tests/: a folder or a file)
TIERS = {
    "book_site/test_html.py": ("book",),
    "book_site/test_student_edition.py": ("book",),
    "book_site/test_student_edition_browser.py": ("book", "browser"),
    "book_site/test_browser.py": ("book", "browser"),
    "book_site/test_pdf.py": ("book", "browser", "slow"),
    "book_site/test_screenshots.py": ("book", "browser"),
    "book_live": ("book", "browser", "live", "slow"),
    # builds a venv from binder/requirements.txt and runs appendices A1 and A2 in it (its own timeout)
    "book/test_binder_clean_env.py": ("slow",),
    "interop/test_hf_transformers.py": ("hf",),
}

#: Fixtures that import torch, transformers or tokenizers: a test that uses one is marked hf
HF_FIXTURES = {"torch_hf", "hf_wordpiece", "torch_mlm", "hf_training"}

#: Module-scoped fixtures, parametrized by page, that several tests read: a chapter run live in JupyterLab,
#: a page of the built book loaded in chromium
SHARED_FIXTURES = {"live", "loaded"}

#: The longest xdist groups and lone tests, which `make test` starts first, in this order (it passes
#: --no-loadscope-reorder; pytest-xdist would start the groups of most tests first, and a lone test last, so
#: that the PDF's ran on one worker while the other had nothing left to do)
LONGEST_FIRST = ("grading-hostile", "walkthrough", "grading-batch", "student-edition", "test_pdf.py")

#: Seconds a test may take, by its slowest marker (unmarked: the fast tier). Generous: the machine is shared.
TIMEOUTS = {"live": 900, "slow": 600, "browser": 300, "book": 300, "hf": 300, "jax": 300}
FAST_TIMEOUT = 120


def _tier_markers(path: Path) -> tuple[str, ...]:
    """The TIERS markers of a test file."""
    where = path.resolve()
    return tuple(marker for place, markers in TIERS.items()
                 if where == TESTS / place or (TESTS / place) in where.parents for marker in markers)


# tryfirst: pytest-xdist's --dist loadgroup reads the xdist_group marks in its own hook, so they must be on
# the items before it runs (else a chapter's live tests spread over the workers, and each runs the chapter)
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    by_file: dict[Path, tuple[str, ...]] = {}
    for item in items:
        if item.path not in by_file:
            by_file[item.path] = _tier_markers(Path(item.path))
        for marker in by_file[item.path]:
            item.add_marker(marker)
        if HF_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker("hf")
        for shared in SHARED_FIXTURES & set(getattr(getattr(item, "callspec", None), "params", ())):
            # the tests that read one chapter's Run All (live) or one loaded page (loaded) share it: under
            # pytest-xdist (--dist loadgroup) one worker runs them all; the chapters spread over the workers
            item.add_marker(pytest.mark.xdist_group(f"{shared}-{item.callspec.params[shared]}"))
        if item.get_closest_marker("timeout") is None:
            marked = [TIMEOUTS[m.name] for m in item.iter_markers() if m.name in TIMEOUTS]
            item.add_marker(pytest.mark.timeout(max(marked, default=FAST_TIMEOUT)))
    items.sort(key=_started_at)  # stable: every other test keeps its place


def _started_at(item) -> int:
    """Where LONGEST_FIRST puts the item's group or file (after them all when it names neither)."""
    group = item.get_closest_marker("xdist_group")
    names = {item.path.name, *(group.args[:1] if group else ())}
    return next((i for i, name in enumerate(LONGEST_FIRST) if name in names), len(LONGEST_FIRST))


@pytest.fixture(scope="module")
def torch_mlm():
    """geron_lib.interop.torch_mlm, once torch and transformers are importable."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from geron_lib.interop import torch_mlm

    return torch_mlm


@pytest.fixture(scope="module")
def hf_training():
    """geron_lib.interop.hf_training, once torch, transformers and accelerate (for Trainer) are importable."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    from geron_lib.interop import hf_training

    return hf_training


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
