"""The book as its tests see it: pages from _toc.yml, their sources, settings from _config.yml, the build."""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
#: The student edition (make student-book): the book without its solutions
STUDENT = ROOT / "_build" / "student" / "html"


def skip_or_fail(reason: str):
    """Skip locally; under CI (CI=true) a test that cannot run is a failure."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: not allowed to skip)")
    pytest.skip(reason)


def config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def toc() -> dict:
    return yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))


def _files(entries: list[dict]) -> list[str]:
    found = []
    for entry in entries or []:
        if "file" in entry:
            found.append(entry["file"])
        for key in ("sections", "chapters"):
            found += _files(entry.get(key))
    return found


def toc_pages() -> list[str]:
    """Every page of the table of contents (docnames such as ``book/intro``), in reading order."""
    t = toc()
    return [t["root"]] + _files(t.get("chapters")) + [f for part in t.get("parts", []) for f in
                                                      _files(part.get("chapters"))]


def source(docname: str) -> Path:
    """The page's source file (.ipynb or .md)."""
    for suffix in (".ipynb", ".md"):
        if (ROOT / (docname + suffix)).is_file():
            return ROOT / (docname + suffix)
    raise FileNotFoundError(f"_toc.yml lists {docname!r} but neither {docname}.ipynb nor {docname}.md exists")


def notebook_pages() -> list[str]:
    return [page for page in toc_pages() if source(page).suffix == ".ipynb"]


def notebook(docname: str) -> dict:
    return json.loads(source(docname).read_text(encoding="utf-8"))


def text_of(docname: str) -> str:
    """The page's prose: the whole Markdown file, or a notebook's Markdown cells."""
    path = source(docname)
    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    return "\n".join("".join(c["source"]) for c in notebook(docname)["cells"] if c["cell_type"] == "markdown")


def html_path(docname: str) -> Path:
    return HTML / (docname + ".html")


def require_built_book() -> None:
    if not (HTML / "index.html").is_file():
        skip_or_fail(f"the book is not built (no {HTML / 'index.html'}): run `make book` first")


def launch_urls(docname: str) -> dict[str, str]:
    """The Binder and Colab addresses a notebook page must offer, from _config.yml alone."""
    c = config()
    repo = c["repository"]
    org, name = urlparse(repo["url"]).path.strip("/").split("/")[:2]
    path = "/".join(p for p in (repo.get("path_to_book", "").strip("/"), docname + ".ipynb") if p)
    branch = repo.get("branch", "main")
    binder, colab = (c["launch_buttons"][key].rstrip("/") for key in ("binderhub_url", "colab_url"))
    return {  # Binder opens JupyterLab (the book's notebook_interface, checked in test_book_sources)
        "binder": f"{binder}/v2/gh/{org}/{name}/{branch}?urlpath=lab/tree/{path}",
        "colab": f"{colab}/github/{org}/{name}/blob/{branch}/{path}",
    }


def outputs(docname: str) -> list[dict]:
    """Every stored output of a notebook page (none for a Markdown page)."""
    if source(docname).suffix != ".ipynb":
        return []
    return [o for c in notebook(docname)["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]


def scrubber_count(docname: str) -> int:
    """Scrubbers the notebook's stored outputs hold: the page must show every one of them."""
    return sum("".join(o.get("data", {}).get("text/html", "")).count('class="geron-scrubber"')
               for o in outputs(docname))


def solution_count(docname: str) -> int:
    """``{solution}`` directives in the page's prose (each must be a dropdown on the page)."""
    return len(re.findall(r"^\s*(?:`{3,}|:{3,})\{solution\}", text_of(docname), re.MULTILINE))


class _ProseParser(HTMLParser):
    """Collects the text a reader sees in a page's article, leaving out code, outputs and scripts
    (what Sphinx's search index leaves out too)."""

    SKIP_TAGS = {"script", "style", "pre", "nav"}
    SKIP_CLASSES = {"cell_input", "cell_output", "highlight", "toggle-details"}
    VOID = {"br", "img", "input", "meta", "link", "hr", "wbr", "source"}

    def __init__(self):
        super().__init__()
        self.depth_in_article, self.skip_depth, self.parts = 0, 0, []

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        classes = set((dict(attrs).get("class") or "").split())
        if self.depth_in_article:
            self.depth_in_article += 1
            if self.skip_depth or tag in self.SKIP_TAGS or classes & self.SKIP_CLASSES:
                self.skip_depth += 1
        elif tag == "article":
            self.depth_in_article = 1

    def handle_endtag(self, tag):
        if tag in self.VOID or not self.depth_in_article:
            return
        self.depth_in_article -= 1
        if self.skip_depth:
            self.skip_depth -= 1

    def handle_data(self, data):
        if self.depth_in_article and not self.skip_depth:
            self.parts.append(data)


def prose_of_built_page(docname: str) -> str:
    """The visible prose of a built page: its article's text without code cells, outputs or scripts."""
    parser = _ProseParser()
    parser.feed(html_path(docname).read_text(encoding="utf-8"))
    return " ".join(parser.parts)
