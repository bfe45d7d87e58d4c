"""Refuse to call a build a release while the book names a placeholder repository.

    python scripts/check_release.py config        before the build: _config.yml must name a real repository
    python scripts/check_release.py pages [DIR]   after it: no page of DIR (default _build/html) may link to
                                                  the placeholder repository

``make book RELEASE=1`` runs both. A release needs, in ``_config.yml``: ``repository.placeholder: false``,
the real ``repository.url``, and ``repository.branch`` pinned to a tag or a full commit hash (the notebooks'
hidden install cell installs exactly that; see scripts/colab_cells.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from urllib.parse import urlparse

sys.path.append(str(Path(__file__).resolve().parent))  # last: scripts/assignments.py hides no package
from colab_cells import RELEASE_REF, ROOT, repository  # noqa: E402

#: The address the book carried before a real one was set; no release may point at it.
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
    problems = config_problems(repository()) if args.what == "config" else page_problems(Path(args.html_dir))
    for problem in problems:
        print(f"not a release: {problem}", file=sys.stderr)
    if problems:
        print("Set the repository in _config.yml (README, \"Publishing a release\"), run "
              "scripts/colab_cells.py, then build again.", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
