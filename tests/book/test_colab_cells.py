"""The hidden Colab install cell: generated from _config.yml alone, present and current in every notebook,
silent where geron_lib is installed, installing from the configured repository where it is not."""

import importlib.util
import subprocess
import sys

import nbformat
import pytest
from book_site.pages import ROOT, config

_spec = importlib.util.spec_from_file_location("colab_cells", ROOT / "scripts" / "colab_cells.py")
colab_cells = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(colab_cells)


def test_every_notebook_has_the_install_cell_of_config_yml():
    source = colab_cells.configured_source()
    stale = [str(p.relative_to(ROOT)) for p in colab_cells.notebooks([])
             if not colab_cells.agrees(nbformat.read(p, as_version=4), source)]
    assert not stale, f"install cell missing or out of date in {stale}: run python scripts/colab_cells.py"


def test_while_the_url_is_a_placeholder_the_cell_installs_nothing_from_it():
    repo = config()["repository"]
    assert repo["placeholder"] is True  # the book names no release yet (README, "Publishing a release")
    source = colab_cells.configured_source()
    assert repo["url"] not in source and "pip" not in source.replace("pip install -e", "")


def _notebook(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def test_update_puts_one_cell_before_the_first_code_cell_and_is_idempotent():
    md, code = nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell("x = 1")
    nb = colab_cells.updated(_notebook(md, code), "# Colab: install geron_lib when it is not importable. v1")
    assert [c.source for c in nb.cells][0::2] == ["# Title", "x = 1"]
    assert nb.cells[1].metadata["tags"] == ["remove-cell"] and nb.cells[1].outputs == []
    assert colab_cells.agrees(nb, nb.cells[1].source)
    assert not colab_cells.agrees(nb, "# Colab: install geron_lib when it is not importable. v2")
    # an outdated cell that slipped below other code is replaced and moved back up
    nb.cells = [nb.cells[0], nb.cells[2], nb.cells[1]]
    assert not colab_cells.agrees(nb, nb.cells[2].source)
    v2 = "# Colab: install geron_lib when it is not importable. v2"
    again = colab_cells.updated(nb, v2)
    assert [c.source for c in again.cells] == ["# Title", v2, "x = 1"]
    assert len(colab_cells.updated(again, again.cells[1].source).cells) == 3


def test_the_cell_is_silent_where_geron_lib_is_installed():
    run = subprocess.run([sys.executable, "-c", colab_cells.configured_source()], capture_output=True,
                         text=True, timeout=60, cwd=ROOT)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


def test_a_placeholder_cell_stops_with_how_to_install_where_geron_lib_is_missing(monkeypatch):
    calls = []
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: calls.append(args))
    with pytest.raises(ModuleNotFoundError) as stopped:
        exec(colab_cells.configured_source(), {})
    assert calls == []  # nothing was installed, from anywhere
    assert "names no release" in str(stopped.value) and "pip install -e" in str(stopped.value)


@pytest.mark.parametrize("ref", ["v1.0", "v2.1.3", "v1.0-rc1", "0123456789abcdef0123456789abcdef01234567"])
def test_a_release_cell_pip_installs_the_pinned_release_where_geron_lib_is_missing(monkeypatch, ref):
    calls = []
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(subprocess, "run", lambda args, check: calls.append((args, check)))
    url = "https://github.com/example-org/example-book"
    exec(colab_cells.install_source(url, ref), {})
    assert calls == [([sys.executable, "-m", "pip", "install", "--quiet",
                       f"geron-lib[book] @ git+{url}@{ref}"], True)]


@pytest.mark.parametrize("url, branch, message", [
    ("http://example.org/repo", "v1.0", "repository url must be an https://"),
    ("https://example.org/my repo", "v1.0", "repository url must be an https://"),
    (None, "v1.0", "repository url must be an https://"),
    ("https://example.org/repo", "main", "must pin a release"),  # a moving branch
    ("https://example.org/repo", "", "must pin a release"),
    ("https://example.org/repo", "v1.0@evil", "must pin a release"),
    ("https://example.org/repo", "0123abc", "must pin a release"),  # a short hash could become ambiguous
])
def test_bad_repository_settings_are_refused(url, branch, message):
    with pytest.raises(ValueError, match=message):
        colab_cells.install_source(url, branch)


def test_only_notebooks_are_accepted(tmp_path):
    (tmp_path / "notes.md").write_text("# notes")
    with pytest.raises(ValueError, match="notebooks must be existing .ipynb files"):
        colab_cells.notebooks([str(tmp_path / "notes.md")])
    with pytest.raises(ValueError, match="notebooks must be existing .ipynb files"):
        colab_cells.notebooks([str(tmp_path / "missing.ipynb")])
