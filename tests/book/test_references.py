"""Every reference in a chapter's prose resolves in both readers: Sphinx (the HTML book) and jupyterlab-myst
(the notebook run live in JupyterLab), which renders each notebook alone and knows neither the
bibliography, nor another notebook's labels, nor the figure names kept in code-cell metadata. So:

- a citation is a Markdown link to the bibliography page, its text the work's (author, year) and its title
  the work's title, both as references.bib has them;
- another page is a Markdown link to its notebook (a section of it: the heading's anchor);
- a {ref} or a #label link points to a label on the same page;
- a figure is named in words ("the figure below"), and the glossary is a link to its page.

The Markdown pages (the intro, the glossary) are read by Sphinx alone and cite with {cite}; every entry of
references.bib is cited by one of the two.
"""

import re

import pytest
from book_site.pages import ROOT, notebook, notebook_pages, source, text_of, toc_pages
from myst_parser.mdit_to_docutils.base import default_slugify
from pybtex.database import parse_file

BOOK = ROOT / "book"
BIB = parse_file(BOOK / "references.bib")
ROLES_ONLY_SPHINX_RESOLVES = re.compile(r"\{(cite(?::\w+)?|numref|term|doc)\}`")
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)(?:\s+\"([^\"]*)\")?\)")
LABEL = re.compile(r"^\(([^)\s]+)\)=\s*$", re.MULTILINE)
EXERCISE_LABEL = re.compile(r"^:label: (\S+)$", re.MULTILINE)
HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)


def author_year(entry) -> str:
    """(author, year) as the author_year style prints it: one or two surnames, else the first and et al."""
    people = entry.persons.get("author", [])
    names = [" ".join(p.last_names).strip("{}") for p in people]
    if len(names) == 1 and str(people[0]) != "others":
        who = names[0]
    elif len(names) == 2 and "others" not in map(str, people):
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


def plain_title(entry) -> str:
    return re.sub(r"[{}\\]", "", entry.fields["title"])


def prose(docname: str) -> str:
    cells = notebook(docname)["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


PAGES = notebook_pages()


@pytest.mark.parametrize("docname", PAGES)
def test_no_role_that_only_sphinx_resolves(docname):
    assert not ROLES_ONLY_SPHINX_RESOLVES.findall(prose(docname))


@pytest.mark.parametrize("docname", PAGES)
def test_refs_and_hash_links_stay_on_their_page(docname):
    text = prose(docname)
    here = set(LABEL.findall(text)) | set(EXERCISE_LABEL.findall(text))
    refs = [re.sub(r".*<(.+)>$", r"\1", body) for body in re.findall(r"\{ref\}`([^`]+)`", text)]
    hashes = [target[1:] for _, target, _ in LINK.findall(text) if target.startswith("#")]
    assert set(refs + hashes) <= here, f"targets not on this page: {set(refs + hashes) - here}"


@pytest.mark.parametrize("docname", PAGES)
def test_links_to_pages_name_a_page_and_a_heading_of_it(docname):
    for text, target, _ in LINK.findall(prose(docname)):
        page, _, anchor = target.partition("#")
        if not page.endswith(".ipynb"):
            continue
        assert (BOOK / page).is_file(), target
        headings = HEADING.findall(prose(f"book/{page[:-len('.ipynb')]}"))
        if anchor:
            assert anchor in [default_slugify(h) for h in headings], target
            assert text in headings or not text[0].isupper(), f"{text!r} is not the title of {target}"
        else:
            assert text == headings[0], f"{text!r} is not the title of {page} ({headings[0]!r})"


def _citations():
    return [(docname, text, title) for docname in PAGES
            for text, target, title in LINK.findall(prose(docname)) if target == "bibliography.md"]


@pytest.mark.parametrize("docname, text, title", _citations())
def test_every_citation_is_an_entry_of_the_bibliography(docname, text, title):
    shown = {(author_year(e), plain_title(e)) for e in BIB.entries.values()}
    assert (text, title) in shown, f"{text!r} / {title!r} matches no entry of references.bib"


def _cited_by_markdown_pages() -> set[str]:
    """The keys the Markdown pages cite with {cite}."""
    roles = [keys for page in toc_pages() if source(page).suffix == ".md"
             for keys in re.findall(r"\{cite[pt]?\}`([^`]+)`", text_of(page))]
    return {key.strip() for keys in roles for key in keys.split(",")}


def test_every_entry_of_the_bibliography_is_cited():
    cited = {(text, title) for _, text, title in _citations()}
    by_role = _cited_by_markdown_pages()
    assert "kingma2015adam" in by_role  # the glossary's, read here
    uncited = [key for key, e in BIB.entries.items()
               if (author_year(e), plain_title(e)) not in cited and key not in by_role]
    assert not uncited
