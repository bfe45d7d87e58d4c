"""Refuse to call a build a release while the book names a placeholder repository.

    python scripts/check_release.py config        before the build: _config.yml must name a real repository,
                                                  and pyproject.toml's [project.urls] point into it
    python scripts/check_release.py pages [DIR]   after it: no page of DIR (default _build/html) may link to
                                                  the placeholder repository

``make book RELEASE=1`` runs both. A release needs, in ``_config.yml``: ``repository.placeholder: false``,
the real ``repository.url``, and ``repository.branch`` pinned to a tag or a full commit hash (the notebooks'
hidden install cell installs exactly that; see scripts/colab_cells.py).
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path
from urllib.parse import urlparse

from colab_cells import RELEASE_REF, ROOT, repository  # scripts/colab_cells.py, beside this script

#: The address the book carries until it has a public home; no release may point at it.
PLACEHOLDER_URL = "https://github.com/geron-lib/geron-book"


def config_problems(repo: dict) -> list[str]:
    """Why these repository settings are not a release (empty when they are)."""
    problems = []
    if repo.get("placeholder", False) is not False:
        problems.append("repository.placeholder is not false: the repository URL is a placeholder")
    if repo.get("url", "").rstrip("/") == PLACEHOLDER_URL:
        problems.append(f"repository.url is still the placeholder {PLACEHOLDER_URL}")
    if not RELEASE_REF.fullmatch(str(repo.get("branch", ""))):
        problems.append(f"repository.branch must pin a release (a tag such as v1.0 or a full commit hash), "
                        f"got {repo.get('branch')!r}")
    return problems


def metadata_problems(repo: dict, pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """Every ``[project.urls]`` entry of ``pyproject`` outside the repository that ``repo`` names."""
    url = str(repo.get("url", "")).rstrip("/")
    urls = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"].get("urls", {})
    return [f"pyproject.toml's [project.urls] {name} is {value}, outside the repository {url}"
            for name, value in urls.items() if value.rstrip("/") != url and not value.startswith(url + "/")]


def page_problems(html_dir: Path) -> list[str]:
    """Every built page that still names the placeholder repository (by its path, in any link or text)."""
    if not (html_dir / "index.html").is_file():
        return [f"no built book in {html_dir}: build it first"]
    needle = urlparse(PLACEHOLDER_URL).path.strip("/")  # geron-lib/geron-book: also inside Binder/Colab links
    return [f"{page.relative_to(html_dir)} links to the placeholder repository {PLACEHOLDER_URL}"
            for page in sorted(html_dir.rglob("*.html")) if needle in page.read_text(encoding="utf-8")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("config", "pages"))
    parser.add_argument("html_dir", nargs="?", default=str(ROOT / "_build" / "html"))
    args = parser.parse_args(argv)
    if args.what == "config":
        problems = config_problems(repository()) + metadata_problems(repository())
    else:
        problems = page_problems(Path(args.html_dir))
    for problem in problems:
        print(f"not a release: {problem}", file=sys.stderr)
    if problems:
        print("Set the repository in _config.yml and pyproject.toml (README, \"Publishing a release\"), run "
              "scripts/colab_cells.py, then build again.", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
