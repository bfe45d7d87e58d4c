"""Give every notebook under book/ the hidden cell that installs geron_lib where it is not importable (Colab).

The repository comes from ``_config.yml`` (``repository.url``, ``repository.branch``,
``repository.placeholder``), the one place it is set. The cell is the first code cell of the notebook, tagged
``remove-cell`` (absent from the HTML book), and prints nothing where geron_lib is installed, so strict nbval
sees no output. Where geron_lib is missing:

- while ``repository.placeholder`` is true (the URL names nobody's repository yet), the cell installs nothing
  and stops with a message that says how to install geron_lib: code from an address that anyone could
  register must never run on a student's machine;
- once the URL is real, ``repository.branch`` must pin a release, a tag such as ``v1.0`` or a full 40-digit
  commit, never a moving branch such as ``main``, and the cell installs exactly that.

    python scripts/colab_cells.py            insert or update the cell in every notebook under book/
    python scripts/colab_cells.py --check    change nothing; exit 1 naming every notebook that disagrees
    python scripts/colab_cells.py book/x.ipynb ...   only these notebooks
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CELL_ID = "colab-install"
TAG = "remove-cell"
MARKER = "# Colab: install geron_lib when it is not importable."


#: A pinned release: a version tag (v1, v1.2, v1.2.3, optionally -rc1 and the like) or a full commit hash.
RELEASE_REF = re.compile(r"v\d+(\.\d+)*([-.]?[a-z]+\d*)?|[0-9a-f]{40}")

#: Printed where geron_lib is missing and the book names no release to install it from.
HOW_TO_INSTALL = ("geron_lib is not installed, and this copy of the book names no release to install it from "
                  "(repository.placeholder is true in its _config.yml). Install it from a copy of the book: "
                  "pip install -e /path/to/the/book (or make install there), then restart the kernel.")

_COLAB = ['if "google.colab" in sys.modules:  # Colab shows ipywidgets 8 through its custom widget manager',
          "    from google.colab import output",
          "",
          "    output.enable_custom_widget_manager()"]


def install_source(url: str, branch: str, *, placeholder: bool = False) -> str:
    """The cell's code for a repository ``url`` (https) pinned at ``branch`` (a tag or a commit); with
    ``placeholder`` the cell never installs anything and says how to install instead."""
    if not isinstance(url, str) or not url.startswith("https://") or any(c.isspace() for c in url):
        raise ValueError(f"repository url must be an https:// address without spaces, got {url!r}")
    if not isinstance(placeholder, bool):
        raise ValueError(f"repository placeholder must be true or false, got {placeholder!r}")
    head = [f"{MARKER} Hidden in the book; written by scripts/colab_cells.py",
            "# from _config.yml (repository): edit it there, then rerun the script.",
            "import importlib.util"]
    if placeholder:
        return "\n".join([*head, "import sys", "",
                          'if importlib.util.find_spec("geron_lib") is None:',
                          "    raise ModuleNotFoundError(",
                          *(f"        {line!r}" for line in textwrap.wrap(HOW_TO_INSTALL, 80,
                                                                     drop_whitespace=False)),
                          "    )", *_COLAB])
    if not isinstance(branch, str) or not RELEASE_REF.fullmatch(branch):
        raise ValueError(f"repository branch must pin a release, a tag such as v1.0 or a full 40-digit "
                         f"commit hash, not a moving branch; got {branch!r}")
    requirement = f"geron-lib[book] @ git+{url.removesuffix('/')}@{branch}"  # book: what the pages draw with
    return "\n".join([*head, "import subprocess", "import sys", "",
                      f'REQUIREMENT = "{requirement}"',
                      'if importlib.util.find_spec("geron_lib") is None:',
                      '    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", REQUIREMENT],',
                      "                   check=True)",
                      "    importlib.invalidate_caches()", *_COLAB])


def repository(config_path: Path = ROOT / "_config.yml") -> dict:
    """The ``repository`` settings of ``_config.yml``."""
    return (yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}).get("repository") or {}


def configured_source(config_path: Path = ROOT / "_config.yml") -> str:
    """The cell's code for the repository set in ``_config.yml``."""
    repo = repository(config_path)
    return install_source(repo.get("url"), repo.get("branch", "main"),
                          placeholder=repo.get("placeholder", False))


def _is_install_cell(cell) -> bool:
    return cell.cell_type == "code" and (cell.get("id") == CELL_ID or cell.source.startswith(MARKER))


def _place(cells: list) -> int:
    """Index the install cell belongs at: just before the first other code cell."""
    return next((i for i, cell in enumerate(cells) if cell.cell_type == "code"), len(cells))


def updated(nb, source: str):
    """``nb`` with exactly one install cell, holding ``source``, placed before every other code cell."""
    cells = [cell for cell in nb.cells if not _is_install_cell(cell)]
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": [TAG]})
    cell.id = CELL_ID
    cells.insert(_place(cells), cell)
    nb.cells = cells
    return nb


def agrees(nb, source: str) -> bool:
    """True when the notebook's install cell is in place, tagged, output-free and holds ``source``."""
    cells = [c for c in nb.cells if not _is_install_cell(c)]
    ours = [i for i, c in enumerate(nb.cells) if _is_install_cell(c)]
    if len(ours) != 1 or ours[0] != _place(cells):
        return False
    cell = nb.cells[ours[0]]
    return cell.source == source and TAG in cell.metadata.get("tags", []) and not cell.outputs


def notebooks(paths: list[str]) -> list[Path]:
    found = [Path(p) for p in paths] if paths else sorted((ROOT / "book").rglob("*.ipynb"))
    found = [p for p in found if ".ipynb_checkpoints" not in p.parts]
    for path in found:
        if path.suffix != ".ipynb" or not path.is_file():
            raise ValueError(f"notebooks must be existing .ipynb files, got {str(path)!r}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report notebooks that disagree; change nothing")
    parser.add_argument("notebooks", nargs="*", help="notebooks (default: every one under book/)")
    args = parser.parse_args(argv)
    source = configured_source()
    stale = []
    for path in notebooks(args.notebooks):
        nb = nbformat.read(path, as_version=4)
        if agrees(nb, source):
            continue
        stale.append(path)
        if not args.check:
            nbformat.write(updated(nb, source), path)
            print(f"updated {path}")
    if args.check and stale:
        print("install cell missing or out of date (run python scripts/colab_cells.py):", file=sys.stderr)
        for path in stale:
            print(f"  {path}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
