"""`make book RELEASE=1`: no release while the book names a placeholder repository."""

import subprocess
import sys

import pytest
from book_site.pages import ROOT, config

# scripts/ on the path, as `python scripts/check_release.py` has it: the script imports colab_cells beside it
sys.path.append(str(ROOT / "scripts"))
import check_release  # noqa: E402

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


def test_the_package_metadata_names_the_repository_of_the_config():
    assert check_release.metadata_problems(config()["repository"]) == []


@pytest.mark.parametrize("urls, problems", [
    ({"Repository": RELEASE["url"], "Issues": RELEASE["url"] + "/issues"}, []),
    ({"Repository": RELEASE["url"] + "/"}, []),
    ({"Repository": check_release.PLACEHOLDER_URL, "Issues": RELEASE["url"] + "/issues"}, ["Repository"]),
    ({"Issues": RELEASE["url"] + "-fork/issues"}, ["Issues"]),  # another repository whose name starts alike
])
def test_a_release_needs_the_package_urls_in_its_repository(tmp_path, urls, problems):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[project]\nname = 'x'\n[project.urls]\n"
                         + "".join(f"{name} = '{url}'\n" for name, url in urls.items()))
    found = check_release.metadata_problems(RELEASE, pyproject)
    assert [p.split("] ", 1)[1].split(" ", 1)[0] for p in found] == problems


def test_pages_that_still_link_the_placeholder_fail(tmp_path):
    (tmp_path / "index.html").write_text('<a href="https://example.org/real/repo">source</a>')
    assert check_release.page_problems(tmp_path) == []
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "ch.html").write_text(
        '<a href="https://mybinder.org/v2/gh/geron-lib/geron-book/main?urlpath=lab">Binder</a>')
    assert check_release.page_problems(tmp_path) == [
        f"book/ch.html links to the placeholder repository {check_release.PLACEHOLDER_URL}"]
    assert "no built book" in check_release.page_problems(tmp_path / "nothing")[0]
