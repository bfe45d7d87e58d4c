"""The CI rule in conftest.py: a skip for a missing optional dependency fails when CI=true, and only then."""

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = (Path(__file__).parent / "conftest.py").read_text()
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
