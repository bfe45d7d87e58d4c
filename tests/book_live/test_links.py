"""Links between chapters, live: in JupyterLab, where jupyterlab-myst renders the prose, a click on a
Markdown link to another chapter (``[Title](02_cross_layer_sharing.ipynb)``, or to a section of it,
``[Title](A2_numpy_to_pytorch.ipynb#a-heading)``) opens that chapter in a tab of the same lab. The link's href
is the raw file (``/files/book/...ipynb``, what jupyterlab-myst writes, as JupyterLab's own Markdown does),
and JupyterLab's link handler takes the click instead. These tests click every such link of the quickstart
and of chapter 6 (its links to chapters 5 and 4 and appendix A2) as a reader does, each in its own page's
panel, any dropdown around it opened and the link scrolled into view first, and check that the lab opens
the chapter: a click that requests the raw file (a navigation, a download or a browser tab of its own)
fails at once. Each source page is open in a fresh
JupyterLab workspace of its own, holding that page alone."""

from __future__ import annotations

import re
import secrets
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import quote

import pytest
from book_site.pages import ROOT, notebook, text_of

#: The pages whose chapter links are clicked: the quickstart, and a chapter linking back to others
SOURCES = ("book/00_quickstart", "book/06_savings_in_training")
# A link to a notebook beside it, or to a heading of one: [text](name.ipynb) or [text](name.ipynb#anchor)
CHAPTER_LINK = re.compile(r"\[[^\]]+\]\(([\w-]+\.ipynb)(?:#[\w-]+)?\)")
OPEN_TIMEOUT = 120  # seconds for a click to make the chapter the current tab
# The open tabs' labels, the current tab's label, and the current notebook's rendered Markdown cells
TABS = """() => ({
  labels: [...document.querySelectorAll('.lm-DockPanel-tabBar .lm-TabBar-tabLabel')].map(t => t.textContent),
  current: document.querySelector('.lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel')
    ?.textContent,
  rendered: document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell .myst').length,
})"""
# The links of one notebook panel (its id) that lead to one notebook (its name), wherever the prose has them:
# their href as written (the bare name, until jupyterlab-myst resolves it to the raw file)
LINKS_TO = """([panel, target]) => [...document.getElementById(panel)
  .querySelectorAll('.jp-MarkdownCell .myst a')].map(a => a.getAttribute('href') || '')
  .filter(href => href.split(/[?#]/)[0].split('/').pop() === target)"""
# How many closed dropdowns (<details>) an element is in
CLOSED_AROUND = """a => { let n = 0;
  for (let d = a.closest('details'); d; d = d.parentElement.closest('details')) n += !d.open;
  return n; }"""


def _links(source: str) -> Counter[str]:
    """A page's links to other chapters: target notebook -> how many links lead to it."""
    targets = CHAPTER_LINK.findall(text_of(source))
    return Counter(target for target in targets if (ROOT / "book" / target).is_file())


def _markdown_cells(docname: str) -> int:
    return sum(c["cell_type"] == "markdown" for c in notebook(docname)["cells"])


def _shut_down_kernels(lab, path: str) -> None:
    for session in lab.api("sessions"):
        if session["path"] == path:
            lab.api(f"sessions/{session['id']}", method="DELETE")


@dataclass
class Source:
    """A page open in JupyterLab whose links the tests click, the id of its notebook panel, its workspace,
    and every request of the browser context that navigates to a raw /files/ URL."""

    docname: str
    page: object
    panel: str
    workspace: str
    raw: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.docname.split("/")[-1] + ".ipynb"


def _open(browser, jupyterlab, docname: str) -> Source:
    """The page open in JupyterLab in a workspace no earlier page used (so that no tab of another page is
    restored beside it), every Markdown cell rendered."""
    workspace = "links-" + re.sub(r"\W", "-", docname) + "-" + secrets.token_hex(4)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    raw: list[str] = []
    # a navigation (in this page or a new one, or a download) to the raw file; the lab reads notebooks
    # through /api/contents, never so
    context.on("request", lambda r: raw.append(r.url) if r.is_navigation_request() and "/files/" in r.url
               else None)
    page.goto(f"{jupyterlab.url}/lab/workspaces/{workspace}/tree/{quote(docname)}.ipynb"
              f"?token={jupyterlab.token}", timeout=120_000)
    page.wait_for_function(f"() => ({TABS})().rendered === {_markdown_cells(docname)}", timeout=300_000,
                           polling=500)
    source = Source(docname, page, "", workspace, raw)
    assert page.evaluate(TABS)["labels"] == [source.name], "the workspace holds another page's tab"
    source.panel = page.evaluate("() => document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)').id")
    return source


@pytest.fixture(scope="session")
def sources(browser, jupyterlab):
    """The source pages this worker has opened, by name: each is opened once for all the links it holds
    (the tests' parameters repeat a page, which pytest would set up again for each), closed at the end."""
    opened: dict[str, Source] = {}
    yield opened
    for source in opened.values():
        source.page.context.close()
        _shut_down_kernels(jupyterlab, f"{source.docname}.ipynb")


@pytest.fixture
def source(browser, jupyterlab, sources, request) -> Source:
    """A page whose links the tests click (request.param), open in JupyterLab."""
    if request.param not in sources:
        sources[request.param] = _open(browser, jupyterlab, request.param)
    return sources[request.param]


def _show(page, name: str) -> None:
    """Makes the tab labelled name the current one."""
    label = page.locator(".lm-TabBar-tabLabel", has_text=re.compile(rf"^{re.escape(name)}$"))
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has=label).click()
    page.wait_for_function(f"() => ({TABS})().current === {name!r}", timeout=60_000)


def _open_the_dropdowns_around(link) -> None:
    """Opens the dropdowns (``<details>``, a ``:class: dropdown`` admonition) the link is in, as a reader
    does: a click on each one's summary, outermost first."""
    handle = link.element_handle()
    while closed := handle.evaluate(CLOSED_AROUND):
        link.locator("xpath=ancestor::details[not(@open)]").first.locator("xpath=./summary").click()
        link.page.wait_for_function(f"a => ({CLOSED_AROUND})(a) < {closed}", arg=handle, timeout=10_000)


def _wait_for_the_lab_to_open(source: Source, target: str) -> None:
    """Until the click has made target the current tab; fails at once if it requested the raw file."""
    deadline = time.monotonic() + OPEN_TIMEOUT
    while not source.raw:
        if source.page.evaluate(TABS)["current"] == target:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"{target} is not the current tab {OPEN_TIMEOUT} s after the click: "
                        f"{source.page.evaluate(TABS)}")
        source.page.wait_for_timeout(250)
    pytest.fail(f"the click opened the raw file, not the lab: {source.raw}")


def _pairs() -> list:
    return [pytest.param(s, t, marks=pytest.mark.xdist_group(f"links-{s}")) for s in SOURCES
            for t in sorted(_links(s))]


@pytest.mark.parametrize("docname", SOURCES)
def test_the_page_links_to_other_chapters(docname):
    assert _links(docname), f"{docname} has no [text](chapter.ipynb) link for the test below to click"


@pytest.mark.parametrize(("source", "target"), _pairs(), indirect=["source"])
def test_every_link_to_a_chapter_opens_that_chapter_in_the_lab(source, jupyterlab, target):
    page, name, count = source.page, source.name, _links(source.docname)[target]
    # every link the prose has to target, in this page's panel, its href resolved by jupyterlab-myst (after it
    # has handed the link to JupyterLab's link handler) to the raw file
    page.wait_for_function(f"args => ({LINKS_TO})(args).length === {count} && ({LINKS_TO})(args).every("
                           f"href => href.includes('/files/book/{target}'))", arg=[source.panel, target],
                           timeout=60_000, polling=250)
    links = page.locator(f"[id='{source.panel}'] .jp-MarkdownCell .myst a[href*='/files/book/{target}']")
    assert links.count() == count
    page.evaluate("() => { window.__before_click = true; }")  # gone if a click leaves the lab
    for i in range(count):
        if i:
            _show(page, name)  # back to the page, so that only the click can make target current
        link = links.nth(i)
        _open_the_dropdowns_around(link)
        link.evaluate("a => a.scrollIntoView({block: 'center'})")  # its cell in view in the page's panel
        link.click()
        _wait_for_the_lab_to_open(source, target)
        assert page.evaluate("() => window.__before_click === true"), f"click {i + 1} of {count} left the lab"
        assert len(page.context.pages) == 1, f"click {i + 1} of {count} opened a browser tab of its own"
        assert page.url.split("?")[0].endswith(f"/lab/workspaces/{source.workspace}/tree/book/{target}")
        tabs = page.evaluate(TABS)
        assert tabs["labels"].count(target) == 1 and name in tabs["labels"], tabs
        if not i:  # the chapter itself, rendered: its Markdown cells, by jupyterlab-myst
            page.wait_for_function(f"() => ({TABS})().rendered === {_markdown_cells('book/' + target[:-6])}",
                                   timeout=300_000, polling=500)
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabCloseIcon").click()
    page.wait_for_function(f"() => ({TABS})().current === {name!r}", timeout=60_000)
    _shut_down_kernels(jupyterlab, f"book/{target}")
