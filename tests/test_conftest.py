"""The rules of conftest.py: a skip for a missing optional dependency fails when CI=true, and only then; the
tests of one xdist group, among them those that read one chapter's live Run All, run on one worker."""

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

HERE = Path(__file__).parent
CONFTEST = (HERE / "conftest.py").read_text()
TESTS = """
import pytest

def test_needs_a_missing_module():
    pytest.importorskip("geron_lib_no_such_module")

def test_skipped_for_another_reason():
    pytest.skip("not about a missing module")
"""


@pytest.mark.parametrize("ci, failed", [("true", 1), ("", 0), ("false", 0)])
def test_missing_optional_dependency_fails_only_in_ci(pytester, monkeypatch, ci, failed):
    monkeypatch.setenv("CI", ci)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(TESTS)
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(failed=failed, skipped=2 - failed)
    if failed:
        result.stdout.fnmatch_lines(["*CI=true, so this test must run*geron_lib_no_such_module*"])


GROUPED = """
import os
import pytest

@pytest.mark.xdist_group("one")
@pytest.mark.parametrize("i", range(8))
def test_in_a_group(i):
    with open("workers.txt", "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
"""


@pytest.mark.slow  # two workers start: about 7 s
def test_the_tests_of_one_xdist_group_run_on_one_worker(pytester):
    """`make test` runs a chapter's live tests, and a grading batch's, on one worker (--dist loadgroup), so
    that each is run once: pytest-xdist must be able to mark the group in each test's id."""
    pytester.makepyfile(GROUPED)
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=8)
    workers = (pytester.path / "workers.txt").read_text().split()
    assert len(workers) == 8 and len(set(workers)) == 1, workers


LIVE = """
import os
import pytest

@pytest.fixture(scope="module", params=["a", "b", "c", "d"])
def live(request):
    return request.param

@pytest.mark.parametrize("i", range(4))
def test_reads_a_chapter(live, i):
    with open(f"workers-{live}.txt", "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
"""


@pytest.mark.slow  # two workers start: about 7 s
def test_a_chapters_live_tests_run_on_one_worker(pytester, monkeypatch):
    """conftest.py groups the tests that read one chapter's `live` Run All, so each chapter is run once."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(LIVE)
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=16)
    for chapter in "abcd":
        workers = (pytester.path / f"workers-{chapter}.txt").read_text().split()
        assert len(workers) == 4 and len(set(workers)) == 1, (chapter, workers)
