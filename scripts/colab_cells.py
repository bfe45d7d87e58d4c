"""Give every notebook under book/ the hidden cell that installs geron_lib where it is not importable (Colab).

The repository URL and branch come from ``_config.yml`` (``repository.url``, ``repository.branch``), the one
place they are set. The cell is the first code cell of the notebook, tagged ``remove-cell`` (absent from the
HTML book), and prints nothing where geron_lib is installed, so strict nbval sees no output.

    python scripts/colab_cells.py            insert or update the cell in every notebook under book/
    python scripts/colab_cells.py --check    change nothing; exit 1 naming every notebook that disagrees
    python scripts/colab_cells.py book/x.ipynb ...   only these notebooks
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CELL_ID = "colab-install"
TAG = "remove-cell"
MARKER = "# Colab: install geron_lib when it is not importable."


def install_source(url: str, branch: str) -> str:
    """The cell's code for a repository ``url`` (https) and ``branch``."""
    if not isinstance(url, str) or not url.startswith("https://") or any(c.isspace() for c in url):
        raise ValueError(f"repository url must be an https:// address without spaces, got {url!r}")
    if not isinstance(branch, str) or not branch or any(c.isspace() or c in "@#" for c in branch):
        raise ValueError(f"repository branch must be a name without spaces, '@' or '#', got {branch!r}")
    requirement = f"geron-lib @ git+{url.removesuffix('/')}@{branch}"
    return "\n".join([
        f"{MARKER} Hidden in the book; written by scripts/colab_cells.py",
        "# from _config.yml (repository.url, repository.branch): edit those, then rerun the script.",
        "import importlib.util",
        "import subprocess",
        "import sys",
        "",
        f'REQUIREMENT = "{requirement}"',
        'if importlib.util.find_spec("geron_lib") is None:',
        '    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", REQUIREMENT], check=True)',
        "    importlib.invalidate_caches()",
        'if "google.colab" in sys.modules:  # Colab shows ipywidgets 8 through its custom widget manager',
        "    from google.colab import output",
        "",
        "    output.enable_custom_widget_manager()",
    ])


def configured_source(config_path: Path = ROOT / "_config.yml") -> str:
    """The cell's code for the repository set in ``_config.yml``."""
    repository = (yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}).get("repository") or {}
    return install_source(repository.get("url"), repository.get("branch", "main"))


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
