"""`make book RELEASE=1`: no release while the book names a placeholder repository."""

import importlib.util
import subprocess
import sys

import pytest
from book_site.pages import ROOT, config

_spec = importlib.util.spec_from_file_location("check_release", ROOT / "scripts" / "check_release.py")
check_release = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_release)

RELEASE = {"url": "https://github.com/example-org/example-book", "branch": "v1.0", "placeholder": False}


def test_the_placeholder_configuration_is_not_a_release():
    problems = check_release.config_problems(config()["repository"])
    assert any("placeholder" in p for p in problems)
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_release.py"), "config"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "not a release: repository.placeholder" in run.stderr


@pytest.mark.parametrize("changes, problem", [
    ({}, None),
    ({"placeholder": True}, "repository.placeholder"),
    ({"url": check_release.PLACEHOLDER_URL}, "still the placeholder"),
    ({"branch": "main"}, "must pin a release"),
])
def test_a_release_names_a_real_repository_at_a_pinned_ref(changes, problem):
    problems = check_release.config_problems(RELEASE | changes)
    assert (problems == []) if problem is None else any(problem in p for p in problems)


def test_pages_that_still_link_the_placeholder_fail(tmp_path):
    (tmp_path / "index.html").write_text('<a href="https://example.org/real/repo">source</a>')
    assert check_release.page_problems(tmp_path) == []
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "ch.html").write_text(
        '<a href="https://mybinder.org/v2/gh/geron-lib/geron-book/main?urlpath=lab">Binder</a>')
    assert check_release.page_problems(tmp_path) == [
        f"book/ch.html links to the placeholder repository {check_release.PLACEHOLDER_URL}"]
    assert "no built book" in check_release.page_problems(tmp_path / "nothing")[0]
