"""The glossary: at least 35 terms, each defined once, among them the words the chapters lean on, and each
linked to a page of the book: where the book teaches it (a {ref} to a label some page defines, or a link to a
page and one of its headings) or, for a word the book meets without teaching it, where it meets it, beside
the work it comes from (a {cite}). A term a section teaches links to that section. Every link resolves: the
label exists, the page exists, the anchor is a heading of that page that MyST gives an anchor to; and every
{term} names an entry."""

import re

import pytest
from book_site.pages import ROOT, config, source, text_of, toc_pages
from myst_parser.mdit_to_docutils.base import default_slugify

PAGE = "book/glossary"
BLOCK = re.search(r"^```\{glossary\}\n(.*?)^```", text_of(PAGE), re.S | re.M).group(1)
LABEL = re.compile(r"^\(([^)\s]+)\)=\s*$", re.M)
EXERCISE_LABEL = re.compile(r"^:label: (\S+)$", re.M)
HEADING = re.compile(r"^(#{1,6}) (.+)$", re.M)
REF = re.compile(r"\{ref\}`([^`]+)`")
LINK = re.compile(r"(?<![`{])\[([^\]]+)\]\(([^)\s]+)\)")
CITE = re.compile(r"\{cite[pt]?\}`([^`]+)`")
TERM = re.compile(r"\{term\}`([^`]+)`")

#: The words the book's pages lean on most: each must have an entry.
REQUIRED = {"perplexity", "unigram loss", "effective rank", "pooler", "MLM head", "paired interval", "seed",
            "whole-word masking", "span masking", "n-gram masking", "WordPiece", "SentencePiece",
            "byte-level BPE", "LAMB", "warm-up", "gradient clipping", "AdamW", "FLOP", "activation memory"}

#: Terms taught in a section whose heading does not name them, with that section: the entry links to it (by
#: its label or by the page and the heading's anchor), so that an entry cannot say the book does not teach
#: a term a page now teaches.
MASKING_VARIANTS = {"masking-variants", "04_dynamic_masking.ipynb#masking-variants-words-n-grams-spans"}
TAUGHT_AT = {"whole-word masking": MASKING_VARIANTS, "span masking": MASKING_VARIANTS,
             "n-gram masking": MASKING_VARIANTS}


def _entries() -> dict[str, str]:
    """{term: definition}, in the glossary's order; a term repeated would overwrite, so it is refused."""
    entries, term = {}, None
    for line in BLOCK.splitlines():
        if line.strip() and not line.startswith(" "):
            term = line.strip()
            assert term not in entries, f"{term!r} is defined twice"
            entries[term] = ""
        elif term is not None:
            entries[term] += line.strip() + " "
    return entries


ENTRIES = _entries()


def _labels() -> set[str]:
    found = set()
    for page in toc_pages():
        text = text_of(page)
        found |= set(LABEL.findall(text)) | set(EXERCISE_LABEL.findall(text))
    return found


def _anchors(path) -> set[str]:
    """The anchors MyST gives the page's headings: down to myst_heading_anchors levels."""
    depth = config()["sphinx"]["config"]["myst_heading_anchors"]
    docname = str(path.relative_to(ROOT).with_suffix(""))
    return {default_slugify(title) for hashes, title in HEADING.findall(text_of(docname))
            if len(hashes) <= depth}


def _target(ref: str) -> str:
    """The label of a {ref}: ``text <label>`` or ``label``, whitespace as Sphinx normalises it."""
    ref = re.sub(r"\s+", " ", ref)
    return re.sub(r".*<(.+)>$", r"\1", ref)


def test_at_least_35_terms_among_them_the_words_the_chapters_lean_on():
    assert len(ENTRIES) >= 35, f"{len(ENTRIES)} terms"
    assert REQUIRED <= set(ENTRIES), f"missing: {sorted(REQUIRED - set(ENTRIES))}"


def _links(text: str) -> set[str]:
    """What an entry links to: the labels of its {ref}s and the targets (page#anchor) of its links."""
    return {_target(ref) for ref in REF.findall(text)} | {target for _, target in LINK.findall(text)}


@pytest.mark.parametrize("term", ENTRIES)
def test_each_term_links_to_a_page_of_the_book(term):
    # a citation alone does not do: the entry says where the book teaches the term, or where it meets it
    assert _links(ENTRIES[term]), f"{term!r}: no link to where the book teaches or meets it"


@pytest.mark.parametrize("term", TAUGHT_AT)
def test_a_term_a_section_teaches_links_to_that_section(term):
    links = _links(ENTRIES[term])
    assert links & TAUGHT_AT[term], f"{term!r} links to {sorted(links)}, not to where it is taught"


def test_the_sections_that_teach_are_sections_of_the_book():
    # each place TAUGHT_AT names is a label of the book or a heading of a page, and its label and its
    # anchor are the same section
    labels = _labels()
    for places in TAUGHT_AT.values():
        for place in places:
            page, _, anchor = place.partition("#")
            if anchor:
                assert anchor in _anchors(ROOT / "book" / page), place
            else:
                assert place in labels, place
        label = next(p for p in places if "#" not in p)
        page, _, anchor = next(p for p in places if "#" in p).partition("#")
        docname = str((ROOT / "book" / page).relative_to(ROOT).with_suffix(""))
        heading = re.search(rf"^\({re.escape(label)}\)=\s*\n#{{1,6}} (.+)$", text_of(docname), re.M)
        assert heading and default_slugify(heading.group(1)) == anchor, f"{label} is not {page}#{anchor}"


def test_every_ref_names_a_label_of_the_book():
    labels = _labels()
    refs = [_target(ref) for text in ENTRIES.values() for ref in REF.findall(text)]
    assert refs
    assert set(refs) <= labels, f"no such labels: {sorted(set(refs) - labels)}"


def test_every_link_names_a_page_and_a_heading_of_it():
    links = [target for text in ENTRIES.values() for _, target in LINK.findall(text)]
    assert links
    for target in links:
        page, _, anchor = target.partition("#")
        path = ROOT / "book" / page
        assert path.suffix in (".ipynb", ".md") and path.is_file(), target
        assert source(str(path.relative_to(ROOT).with_suffix(""))) == path, target
        assert not anchor or anchor in _anchors(path), f"{target}: no heading of {page} has that anchor"


def test_every_term_role_names_an_entry():
    used = {re.sub(r"\s+", " ", t) for t in TERM.findall(BLOCK)}
    assert used <= set(ENTRIES), f"no entries: {sorted(used - set(ENTRIES))}"


def test_the_extraction_reads_the_roles_and_links_as_myst_does():
    text = ENTRIES["paired interval"]
    assert "grid-statistics" in [_target(r) for r in REF.findall(text)]
    assert any(t.startswith("A2_numpy_to_pytorch.ipynb#") for _, t in LINK.findall(text))
    assert _target("What a training step\n  costs <albert-tradeoffs>") == "albert-tradeoffs"
    assert _target("albert-\n  tradeoffs") == "albert- tradeoffs"  # a label broken over lines breaks
