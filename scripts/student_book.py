"""The student edition: the book without its solutions, in _build/student/html (`make student-book`).

    python scripts/student_book.py        after `make book` (the make target runs it first)

It is made from the normal build in _build, which it does not change: the notebooks that build executed and
the {eval} values it recorded, read by the Sphinx extension _ext/student_edition.py, which this adds to the
book's own configuration (_config.yml, _toc.yml) for this build only. Nothing is executed again, and Sphinx
reads again only the pages whose executed notebook changed since the last student build. Warnings are
errors, as in `make book`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from jupyter_book.config import get_final_config
from jupyter_book.sphinx import build_sphinx

ROOT = Path(__file__).resolve().parents[1]
CONFIG, TOC = ROOT / "_config.yml", ROOT / "_toc.yml"
#: The normal build the edition is made from, and where the edition goes
BUILD = ROOT / "_build"
OUT = BUILD / "student" / "html"


def overrides() -> dict:
    """The Sphinx settings of the student edition on top of the book's: its extension, pointed at BUILD."""
    book, _ = get_final_config(user_yaml=CONFIG, cli_config={"latex_individualpages": False}, sourcedir=ROOT)
    return {"external_toc_path": TOC.as_posix(), "latex_individualpages": False, "nitpicky": True,
            "extensions": [*book["extensions"], "student_edition"],
            "student_edition_from": BUILD.relative_to(ROOT).as_posix()}


def main() -> int:
    status = build_sphinx(ROOT, OUT, noconfig=True, path_config=str(CONFIG), confoverrides=overrides(),
                          warningiserror=True, keep_going=True)
    if status != 0:
        print(f"the student edition failed to build: {status}", file=sys.stderr)
        return 1
    print(f"Open {OUT / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
