"""The rules of conftest.py: a skip for a missing optional dependency fails when CI=true, and only then; the
tests of one xdist group, among them those that read one chapter's live Run All, run on one worker."""

import importlib.util
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
def test_the_tests_of_one_xdist_group_or_one_chapter_run_on_one_worker(pytester, monkeypatch):
    """`make test` runs a grading batch's tests, and a chapter's live tests, on one worker (--dist loadgroup),
    so that each is run once: pytest-xdist must be able to mark a group in each test's id, and conftest.py
    must group the tests that read one chapter's `live` Run All."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_grouped=GROUPED, test_live=LIVE)
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=24)
    for name, count in [("workers", 8), *((f"workers-{chapter}", 4) for chapter in "abcd")]:
        workers = (pytester.path / f"{name}.txt").read_text().split()
        assert len(workers) == count and len(set(workers)) == 1, (name, workers)


def test_every_group_or_file_started_first_is_in_the_suite():
    """LONGEST_FIRST names xdist groups and test files that exist (a renamed one would no longer go first)."""
    spec = importlib.util.spec_from_file_location("tests_conftest", HERE / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    sources = {path.name: path.read_text(encoding="utf-8") for path in HERE.rglob("test_*.py")}
    for name in conftest.LONGEST_FIRST:
        assert name in sources or any(f'xdist_group("{name}")' in text for text in sources.values()), name
