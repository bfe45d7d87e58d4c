"""The book's sources, before any build: table of contents, launch settings, bibliography, and the
notebook conventions that keep the static HTML alive (hidden live widgets, shown scrubbers, figure alt
text, solution dropdowns)."""

import re

import pytest
from book_site.pages import ROOT, config, notebook, notebook_pages, source, text_of, toc, toc_pages
from pybtex.database import parse_file

NUMBERED = re.compile(r"^book/(?!00)\d\d_")  # chapters 01_..., 02_...; 00_quickstart is not numbered


def test_every_page_under_book_is_in_the_toc_and_exists():
    listed = toc_pages()
    assert len(listed) == len(set(listed)), "a page is listed twice in _toc.yml"
    for page in listed:
        source(page)  # raises when the file is missing
    on_disk = {str(p.relative_to(ROOT).with_suffix("")) for p in (ROOT / "book").rglob("*")
               if p.suffix in (".md", ".ipynb") and ".ipynb_checkpoints" not in p.parts}
    unlisted = sorted(on_disk - set(listed))
    assert not unlisted, f"pages never built (add them to _toc.yml): {unlisted}"


def test_toc_has_captioned_parts_and_numbers_exactly_the_chapters_in_order():
    t = toc()
    assert t["format"] == "jb-book" and t["root"] == "book/intro"
    parts = t["parts"]
    assert parts and all(part.get("caption") for part in parts)
    assert parts[0]["caption"] == "Getting started" and parts[-1]["caption"] == "Appendices"
    chapters = []
    for part in parts:
        files = [entry["file"] for entry in part["chapters"]]
        numbered = [bool(NUMBERED.match(f)) for f in files]
        assert all(numbered) or not any(numbered), f"part {part['caption']!r} mixes chapters and other pages"
        assert bool(part.get("numbered")) == all(numbered), (
            f"part {part['caption']!r}: numbered must be set exactly for parts of chapters 01, 02, ...")
        chapters += [f for f, n in zip(files, numbered, strict=True) if n]
    assert chapters == sorted(chapters), "chapters must appear in the order of their numbers"


def test_binder_and_colab_launch_from_main_in_jupyterlab():
    c = config()
    assert c["repository"]["branch"] == "main" and c["repository"]["url"].startswith("https://github.com/")
    assert c["launch_buttons"] == {"notebook_interface": "jupyterlab", "binderhub_url": "https://mybinder.org",
                                   "colab_url": "https://colab.research.google.com"}
    # What Binder installs, and from where: tests/book/test_environments.py


@pytest.fixture(scope="module")
def bibliography():
    return parse_file(ROOT / "book" / "references.bib").entries


@pytest.mark.parametrize("key, first_author, year, venue", [
    ("lan2020albert", "Lan", "2020", "International Conference on Learning Representations"),
    ("liu2019roberta", "Liu", "2019", "arXiv:1907.11692"),
    ("devlin2019bert", "Devlin", "2019", "North {A}merican Chapter of the"),
    ("vaswani2017attention", "Vaswani", "2017", "Neural Information Processing Systems"),
])
def test_the_four_papers_are_in_the_bibliography(bibliography, key, first_author, year, venue):
    entry = bibliography[key]
    assert entry.persons["author"][0].last_names == [first_author]
    assert entry.fields["year"] == year
    assert venue in " ".join(entry.fields.get(f, "") for f in ("booktitle", "journal"))


def test_every_citation_has_an_entry(bibliography):
    roles = [keys for page in toc_pages() for keys in re.findall(r"\{cite[pt]?\}`([^`]+)`", text_of(page))]
    cited = {key.strip() for keys in roles for key in keys.split(",")}
    assert cited, "the book cites its sources"
    missing = sorted(cited - set(bibliography))
    assert not missing, f"cited but not in references.bib: {missing}"


def _cells(docname: str):
    for index, cell in enumerate(notebook(docname)["cells"]):
        if cell["cell_type"] == "code":
            data = [o.get("data", {}) for o in cell.get("outputs", [])]
            yield index, cell, cell.get("metadata", {}).get("tags", []), data


NOTEBOOKS = notebook_pages()


@pytest.mark.parametrize("docname", NOTEBOOKS)
def test_live_widgets_are_hidden_and_scrubbers_shown(docname):
    for index, cell, tags, data in _cells(docname):
        where = f"{docname}.ipynb cell {index}"
        if any("application/vnd.jupyter.widget-view+json" in d for d in data):
            assert "remove-output" in tags, f"{where}: a live widget cell needs the tag remove-output"
            assert "nbval-ignore-output" in tags or "".join(cell["source"]).startswith(
                "# NBVAL_IGNORE_OUTPUT"), f"{where}: a live widget cell needs the tag nbval-ignore-output"
        if any('class="geron-scrubber"' in "".join(d.get("text/html", "")) for d in data):
            assert "remove-input" in tags and not {"remove-output", "remove-cell"} & set(tags), (
                f"{where}: a scrubber cell carries remove-input, and nothing that hides its output")


@pytest.mark.parametrize("docname", NOTEBOOKS)
def test_no_code_cell_is_empty(docname):
    # JupyterLab's Run All skips an empty code cell, so a live reader's run never shows it as done
    empty = [i for i, cell, _, _ in _cells(docname) if not "".join(cell["source"]).strip()]
    assert not empty, f"{docname}.ipynb: empty code cells {empty}"


@pytest.mark.parametrize("docname", NOTEBOOKS)
def test_figures_are_images_with_alt_text(docname):
    for index, cell, _tags, data in _cells(docname):
        where = f"{docname}.ipynb cell {index}"
        for d in data:
            text = "".join(d.get("text/plain", ""))
            assert not (re.match(r"<Figure size \d+x\d+ with", text) and "image/png" not in d), (
                f"{where}: a figure shows as text; run %matplotlib inline before the first figure")
            if "image/png" in d or "image/svg+xml" in d:
                alt = cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt", "")
                assert alt.strip(), f"{where}: a figure needs cell metadata mystnb.image.alt"


@pytest.mark.parametrize("docname", toc_pages())
def test_every_solution_is_a_dropdown(docname):
    text = text_of(docname)
    for block in re.findall(r"^(?:`{3,}|:{3,})\{solution\}.*\n((?::[^\n]*\n)*)", text, re.MULTILINE):
        assert re.search(r"^:class:.*\bdropdown\b", block, re.MULTILINE), (
            f"{docname}: every {{solution}} needs :class: dropdown")


@pytest.mark.parametrize("docname", toc_pages())
def test_no_backtick_fence_opens_a_directive_whose_title_holds_a_backtick(docname):
    # CommonMark ends a backtick fence's info string at its first backtick: such a directive is not parsed,
    # and its whole body shows as raw text (a colon fence takes backticks in its title)
    broken = re.findall(r"^\s*`{3,}\{[\w-]+\}[^\n]*`[^\n]*$", text_of(docname), re.MULTILINE)
    assert not broken, f"{docname}: {broken}"


@pytest.mark.parametrize("docname", NOTEBOOKS)
def test_markdown_outputs_render_as_tables_and_lists(docname):
    # myst-nb renders a text/markdown output as CommonMark unless the cell says otherwise, and CommonMark
    # has no tables: a table printed by a cell shows as raw | text
    for index, cell, _tags, data in _cells(docname):
        if any("text/markdown" in d for d in data):
            fmt = cell.get("metadata", {}).get("mystnb", {}).get("markdown_format")
            assert fmt == "gfm", f"{docname}.ipynb cell {index}: a Markdown output needs markdown_format gfm"
