"""Links between chapters, live: in JupyterLab, where jupyterlab-myst renders the prose, a click on a
Markdown link to another chapter (``[Title](02_cross_layer_sharing.ipynb)``) opens that chapter in a tab of
the same lab. The link's href is the raw file (``/files/book/...ipynb``, what jupyterlab-myst writes, as
JupyterLab's own Markdown does), and JupyterLab's link handler takes the click instead: these tests click
as a reader does and check that the lab, not the raw file, opens: every chapter the quickstart links to."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from book_site.pages import ROOT, notebook, text_of

SOURCE = "book/00_quickstart"
# A link to a whole notebook beside it: [text](name.ipynb)
CHAPTER_LINK = re.compile(r"\[([^\]`*_]+)\]\(([\w-]+\.ipynb)\)")
# The open tabs' labels, the current tab's label, and the current notebook's rendered Markdown cells
TABS = """() => ({
  labels: [...document.querySelectorAll('.lm-DockPanel-tabBar .lm-TabBar-tabLabel')].map(t => t.textContent),
  current: document.querySelector('.lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel')
    ?.textContent,
  rendered: document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell .myst').length,
})"""


def _links() -> dict[str, str]:
    """The quickstart's links to other chapters: target notebook -> the first link text naming it."""
    links = {}
    for text, target in CHAPTER_LINK.findall(text_of(SOURCE)):
        if (ROOT / "book" / target).is_file():
            links.setdefault(target, text)
    return links


def _markdown_cells(docname: str) -> int:
    return sum(c["cell_type"] == "markdown" for c in notebook(docname)["cells"])


def _shut_down_kernels(lab, path: str) -> None:
    for session in lab.api("sessions"):
        if session["path"] == path:
            lab.api(f"sessions/{session['id']}", method="DELETE")


@pytest.fixture(scope="module")
def quickstart(browser, jupyterlab):
    """The quickstart open in JupyterLab in a workspace of its own, every Markdown cell rendered."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{jupyterlab.url}/lab/workspaces/links/tree/{quote(SOURCE)}.ipynb?token={jupyterlab.token}",
              timeout=120_000)
    page.wait_for_function(f"() => ({TABS})().rendered === {_markdown_cells(SOURCE)}", timeout=300_000,
                           polling=500)
    yield page
    context.close()
    _shut_down_kernels(jupyterlab, f"{SOURCE}.ipynb")


def test_the_quickstart_links_to_other_chapters():
    assert _links(), f"{SOURCE} has no [text](chapter.ipynb) link for the test below to click"


@pytest.mark.parametrize("target", sorted(_links()))
def test_a_click_on_a_chapter_link_opens_that_chapter_in_the_lab(quickstart, jupyterlab, target):
    page = quickstart
    link = page.locator(".jp-Notebook .jp-MarkdownCell .myst a", has_text=re.compile(
        rf"^{re.escape(_links()[target])}$")).first
    # jupyterlab-myst hands the link to JupyterLab's link handler, then writes the raw file into its href
    page.wait_for_function("a => a.href.includes('/files/')", arg=link.element_handle(), timeout=60_000)
    assert link.get_attribute("href").split("?")[0].endswith(f"/files/book/{target}")
    page.evaluate("() => { window.__before_click = true; }")  # gone if the click leaves the lab
    link.scroll_into_view_if_needed()
    link.click()
    page.wait_for_function(f"() => ({TABS})().current === {target!r}", timeout=120_000, polling=250)
    assert page.evaluate("() => window.__before_click === true"), "the click left the lab"
    assert len(page.context.pages) == 1, "the click opened a browser tab of its own"
    assert page.url.split("?")[0].endswith(f"/lab/workspaces/links/tree/book/{target}")
    tabs = page.evaluate(TABS)
    assert tabs["labels"].count(target) == 1 and f"{SOURCE.split('/')[-1]}.ipynb" in tabs["labels"]
    # the chapter itself, rendered: its Markdown cells, by jupyterlab-myst
    page.wait_for_function(f"() => ({TABS})().rendered === {_markdown_cells('book/' + target[:-6])}",
                           timeout=300_000, polling=500)
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabCloseIcon").click()
    page.wait_for_function(f"() => ({TABS})().current === '{SOURCE.split('/')[-1]}.ipynb'", timeout=60_000)
    _shut_down_kernels(jupyterlab, f"book/{target}")
