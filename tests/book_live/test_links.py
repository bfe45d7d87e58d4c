"""Links between chapters, live: in JupyterLab, where jupyterlab-myst renders the prose, a click on a
Markdown link to another chapter (``[Title](02_cross_layer_sharing.ipynb)``) opens that chapter in a tab of
the same lab. The link's href is the raw file (``/files/book/...ipynb``, what jupyterlab-myst writes, as
JupyterLab's own Markdown does), and JupyterLab's link handler takes the click instead: these tests click
as a reader does and check that the lab, not the raw file, opens: every chapter the quickstart links to, and
those a chapter links to (chapter 6's to chapters 5 and 4), each source page in a workspace of its own."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

import pytest
from book_site.pages import ROOT, notebook, text_of

#: The pages whose chapter links are clicked: the quickstart, and a chapter linking back to others
SOURCES = ("book/00_quickstart", "book/06_savings_in_training")
# A link to a whole notebook beside it: [text](name.ipynb)
CHAPTER_LINK = re.compile(r"\[([^\]`*_]+)\]\(([\w-]+\.ipynb)\)")
# The open tabs' labels, the current tab's label, and the current notebook's rendered Markdown cells
TABS = """() => ({
  labels: [...document.querySelectorAll('.lm-DockPanel-tabBar .lm-TabBar-tabLabel')].map(t => t.textContent),
  current: document.querySelector('.lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel')
    ?.textContent,
  rendered: document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell .myst').length,
})"""


def _links(source: str) -> dict[str, str]:
    """A page's links to other chapters: target notebook -> the first link text naming it."""
    links = {}
    for text, target in CHAPTER_LINK.findall(text_of(source)):
        if (ROOT / "book" / target).is_file():
            links.setdefault(target, text)
    return links


def _markdown_cells(docname: str) -> int:
    return sum(c["cell_type"] == "markdown" for c in notebook(docname)["cells"])


def _shut_down_kernels(lab, path: str) -> None:
    for session in lab.api("sessions"):
        if session["path"] == path:
            lab.api(f"sessions/{session['id']}", method="DELETE")


def _workspace(source: str) -> str:
    return "links-" + re.sub(r"\W", "-", source)


@dataclass
class Source:
    """A page open in JupyterLab whose links the tests click."""

    docname: str
    page: object


@pytest.fixture(scope="module")
def source(browser, jupyterlab, request):
    """The page (request.param) open in JupyterLab in a workspace of its own, every Markdown cell rendered."""
    docname = request.param
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{jupyterlab.url}/lab/workspaces/{_workspace(docname)}/tree/{quote(docname)}.ipynb"
              f"?token={jupyterlab.token}", timeout=120_000)
    page.wait_for_function(f"() => ({TABS})().rendered === {_markdown_cells(docname)}", timeout=300_000,
                           polling=500)
    yield Source(docname, page)
    context.close()
    _shut_down_kernels(jupyterlab, f"{docname}.ipynb")


@pytest.mark.parametrize("docname", SOURCES)
def test_the_page_links_to_other_chapters(docname):
    assert _links(docname), f"{docname} has no [text](chapter.ipynb) link for the test below to click"


@pytest.mark.parametrize(("source", "target"), [(s, t) for s in SOURCES for t in sorted(_links(s))],
                         indirect=["source"])
def test_a_click_on_a_chapter_link_opens_that_chapter_in_the_lab(source, jupyterlab, target):
    page, name = source.page, source.docname.split("/")[-1] + ".ipynb"
    link = page.locator(".jp-Notebook .jp-MarkdownCell .myst a", has_text=re.compile(
        rf"^{re.escape(_links(source.docname)[target])}$")).first
    # jupyterlab-myst hands the link to JupyterLab's link handler, then writes the raw file into its href
    page.wait_for_function("a => a.href.includes('/files/')", arg=link.element_handle(), timeout=60_000)
    assert link.get_attribute("href").split("?")[0].endswith(f"/files/book/{target}")
    page.evaluate("() => { window.__before_click = true; }")  # gone if the click leaves the lab
    link.scroll_into_view_if_needed()
    link.click()
    page.wait_for_function(f"() => ({TABS})().current === {target!r}", timeout=120_000, polling=250)
    assert page.evaluate("() => window.__before_click === true"), "the click left the lab"
    assert len(page.context.pages) == 1, "the click opened a browser tab of its own"
    assert page.url.split("?")[0].endswith(f"/lab/workspaces/{_workspace(source.docname)}/tree/book/{target}")
    tabs = page.evaluate(TABS)
    assert tabs["labels"].count(target) == 1 and name in tabs["labels"]
    # the chapter itself, rendered: its Markdown cells, by jupyterlab-myst
    page.wait_for_function(f"() => ({TABS})().rendered === {_markdown_cells('book/' + target[:-6])}",
                           timeout=300_000, polling=500)
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabCloseIcon").click()
    page.wait_for_function(f"() => ({TABS})().current === {name!r}", timeout=60_000)
    _shut_down_kernels(jupyterlab, f"book/{target}")
