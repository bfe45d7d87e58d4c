"""The built book in a real browser: every page of the table of contents loads cleanly from 127.0.0.1 alone,
scrubbers flip frames, each page with its images weighs at most PAGE_BUDGET, solutions open, launch buttons
point to the repository, and search works (`make screenshots` takes every page whole, in both themes, for
the eye: scripts/screenshots.py). Each page is loaded once for all its tests (the `loaded` fixture), which run
in this file's order: those that change the page (a slider moved, a dropdown or menu opened) after those that
need it as it loaded."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from urllib.parse import quote, unquote, urlparse

import ipywidgets as widgets
import numpy as np
import pytest
from PIL import Image

from geron_lib.notebook.explorer import Explorer

from .answers import findings, graded_answers, page_text, shown_labels
from .pages import (
    HTML,
    html_path,
    launch_urls,
    notebook,
    notebook_pages,
    prose_of_built_page,
    scrubber_count,
    solution_count,
    toc_pages,
)

PAGES = toc_pages()

# The state of one scrubber: which sheets are displayed, the frame index it reports, which frame of the shown
# sheet lies in its box (the box's top below the sheet's, in frame heights), the alt text, its value labels.
SCRUBBER_STATE = """root => {
  const sheets = [...root.querySelectorAll('.geron-scrub-sheet')];
  const shown = sheets.filter(s => getComputedStyle(s).display !== 'none');
  const box = root.querySelector('.geron-scrub-view').getBoundingClientRect();
  return {shown: shown.map(s => sheets.indexOf(s)), frame: Number(root.dataset.frame),
          per: Number(root.dataset.perSheet),
          offset: shown.length ? (box.top - shown[0].getBoundingClientRect().top) / box.height : null,
          alt: shown.length ? shown[0].alt : null,
          labels: [...root.querySelectorAll('output')].map(o => o.textContent)};
}"""


@pytest.mark.parametrize("loaded", PAGES, indirect=True)
def test_page_loads_with_no_error_and_nothing_from_other_hosts(loaded):
    v, page = loaded, loaded.page
    if page.locator(".math").count():  # MathJax (served locally) typesets every formula, without errors
        page.wait_for_selector("mjx-container", state="attached", timeout=15_000)
        page.wait_for_load_state("networkidle")
        assert page.locator("mjx-container").count() >= page.locator(".math").count()
        assert page.locator("mjx-merror").count() == 0, "MathJax could not typeset a formula"
    broken = page.eval_on_selector_all(
        "img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src.slice(0, 80))")
    assert not broken, f"images that did not load: {broken}"
    assert not v.problems, "\n".join(v.problems)


def _check_shown(state: dict) -> None:
    """Exactly the sheet holding the reported frame is displayed, with that frame in the box."""
    sheet, k = divmod(state["frame"], state["per"])
    assert state["shown"] == [sheet], f"frame {state['frame']} is in sheet {sheet}, shown: {state['shown']}"
    assert state["offset"] == pytest.approx(k, abs=0.01), f"the box shows the sheet's frame {state['offset']}"


def _slide_through_every_value(page, root) -> None:
    """Move each slider of one scrubber with the keyboard, as a reader would, from its first value to its
    last: every step must display exactly the reported frame, a different picture, the new value and an alt
    text that names it."""
    sliders = root.locator("input[type=range]")
    box = root.locator(".geron-scrub-view")
    assert sliders.count() >= 1
    for k in range(sliders.count()):
        slider = sliders.nth(k)
        name = slider.get_attribute("aria-label")
        values = json.loads(slider.get_attribute("data-values"))
        assert len(values) >= 2, "a slider with a single value cannot change anything"
        slider.focus()
        page.keyboard.press("Home")
        before, picture = root.evaluate(SCRUBBER_STATE), box.screenshot()
        assert before["labels"][k] == values[0]
        for value in values[1:]:
            page.keyboard.press("ArrowRight")
            after, shown = root.evaluate(SCRUBBER_STATE), box.screenshot()
            _check_shown(after)
            assert after["frame"] != before["frame"] and shown != picture, (
                f"moving slider {k} to {value} did not change the picture")
            assert after["labels"][k] == value and f"{name} = {value}" in after["alt"].split(", ")
            before, picture = after, shown


def test_a_geron_lib_scrubber_flips_frames_in_chromium(browser):
    """The scrubber HTML that Explorer.scrubber writes, on its own (the book's pages are checked below): at
    its natural size, its box shows pixel for pixel the PNG the live widget draws at the sliders' setting."""
    def plot(fig, a, b):
        if not fig.axes:
            fig.subplots().plot([0, 1], [0, 0])
            fig.axes[0].set_ylim(0, 10)
        fig.axes[0].lines[0].set_ydata([0, a * b])
        return {"y": a * b}

    explorer = Explorer({"a": widgets.IntSlider(2, 1, 3), "b": widgets.IntSlider(1, 1, 2)}, plot,
                        width=3, height=2, alt="a line")
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(error))
    page.set_content(explorer.scrubber("demo", a=[1, 2, 3], b=[1, 2]).data)
    root = page.locator(".geron-scrubber")
    state = root.evaluate(SCRUBBER_STATE)
    assert state["frame"] == 2 and state["alt"] == "a line, a = 2, b = 1"  # row-major index 1 * 2 + 0
    _check_shown(state)
    _slide_through_every_value(page, root)
    shown = Image.open(io.BytesIO(root.locator(".geron-scrub-view").screenshot())).convert("RGBA")
    explorer.set(a=3, b=2)  # where the sliders ended
    drawn = Image.open(io.BytesIO(explorer.png())).convert("RGBA")
    assert shown.size == drawn.size and np.array_equal(np.asarray(shown), np.asarray(drawn))
    page.close()
    assert not errors


@pytest.mark.parametrize("loaded", PAGES, indirect=True)
def test_every_scrubber_slider_changes_the_displayed_frame(loaded):
    v, docname = loaded, loaded.docname
    scrubbers = v.page.locator(".geron-scrubber")
    assert scrubbers.count() == scrubber_count(docname), "a scrubber of the notebook is missing from the page"
    for s in range(scrubbers.count()):
        _slide_through_every_value(v.page, scrubbers.nth(s))
    assert not v.problems, "\n".join(v.problems)


#: The most a page may weigh in bytes: its HTML document (inline images included) and the image files it
#: loads from the book. The theme's files under _static/ (style sheets, scripts, fonts, the launch buttons'
#: logos) are shared by every page and cached after the first, so they are left out.
PAGE_BUDGET = 1_500_000
# Chromium's Resource Timing for the page: the HTML document's body as received (data: images are inside
# it), each image file an <img> of the page loaded from outside _static/, the addresses of every such <img>
# (so that one the browser did not load, a lazy one, cannot go uncounted) and the inline images' share.
PAGE_WEIGHT = """() => {
  const book = url => !url.startsWith('data:') && !new URL(url).pathname.includes('/_static/');
  const loaded = performance.getEntriesByType('resource')
    .filter(r => r.initiatorType === 'img' && book(r.name));
  const images = [...document.images];
  return {html: performance.getEntriesByType('navigation')[0].encodedBodySize,
          files: Object.fromEntries(loaded.map(r => [r.name, r.encodedBodySize])),
          shown: images.map(i => i.currentSrc || i.src).filter(s => s && book(s)),
          inline: images.filter(i => i.src.startsWith('data:')).reduce((n, i) => n + i.src.length, 0)};
}"""


def _served_file(url: str):
    return HTML / unquote(urlparse(url).path).lstrip("/")


@pytest.mark.parametrize("loaded", PAGES, indirect=True)
def test_every_page_with_its_images_weighs_at_most_the_budget(loaded):
    """What the browser loads for the page, measured in Chromium by Resource Timing: the encodedBodySize of
    the navigation (the HTML, its data: images inside it) plus that of every image file its <img> elements
    loaded from the book (outside _static/), at most PAGE_BUDGET bytes. The test server sends each file
    as it is on disk, uncompressed, so these are the files' sizes, the same on every run: checked, file by
    file, so that a header or a cache cannot change the sum."""
    v, docname = loaded, loaded.docname
    weight = v.page.evaluate(PAGE_WEIGHT)
    assert weight["html"] == html_path(docname).stat().st_size, "the browser did not get the HTML file whole"
    uncounted = sorted(set(weight["shown"]) - set(weight["files"]))
    assert not uncounted, f"images of the page that the browser did not load: {uncounted}"
    for url, size in weight["files"].items():
        assert size == _served_file(url).stat().st_size, f"{url}: {size:,} bytes received, not the file's"
    total = weight["html"] + sum(weight["files"].values())
    heaviest = sorted(weight["files"].items(), key=lambda item: -item[1])[:3]
    assert total <= PAGE_BUDGET, (
        f"{docname} weighs {total:,} bytes, over PAGE_BUDGET = {PAGE_BUDGET:,}: HTML {weight['html']:,} "
        f"(inline images {weight['inline']:,}), {len(weight['files'])} image files "
        f"{sum(weight['files'].values()):,}; heaviest files: "
        + ", ".join(f"{urlparse(url).path.rsplit('/', 1)[-1]} {size:,}" for url, size in heaviest))
    assert not v.problems, "\n".join(v.problems)


@pytest.mark.parametrize("loaded", PAGES, indirect=True)
def test_solution_dropdowns_start_closed_and_open_on_click(loaded):
    v, docname = loaded, loaded.docname
    solutions = v.page.locator(".solution.dropdown")
    assert solutions.count() == solution_count(docname), "each {solution} needs :class: dropdown"
    for i in range(solutions.count()):
        solution = solutions.nth(i)
        body = solution.locator("section").first
        assert not body.is_visible(), "solutions must start closed"
        solution.locator("button.toggle-button").click()  # the "Click to show" chevron
        body.wait_for(state="visible", timeout=5_000)
    assert not v.problems, "\n".join(v.problems)


@pytest.mark.parametrize("loaded", notebook_pages(), indirect=True)
def test_launch_buttons_open_this_notebook_on_binder_and_colab(loaded):
    v, docname = loaded, loaded.docname
    v.page.locator(".dropdown-launch-buttons button").click()
    for name, url in launch_urls(docname).items():
        link = v.page.locator(f'.dropdown-launch-buttons a[href="{url}"]')
        assert link.count() == 1, f"no {name} launch button to {url}"
        assert link.is_visible(), f"the {name} launch button does not show when the launch menu opens"
    assert not v.problems, "\n".join(v.problems)


@pytest.mark.parametrize("word", ["factorised"])
def test_search_finds_every_page_that_uses_a_word(visit, word):
    """The search page (searchtools.js over searchindex.js) lists every page whose prose holds the word."""
    v = visit(f"search.html?q={quote(word)}")
    v.page.wait_for_function(
        "() => /Search finished/.test(document.querySelector('#search-results')?.textContent || '')",
        timeout=15_000)
    found = {re.sub(r"\.html.*$", "", href.split("://", 1)[-1].split("/", 1)[-1])
             for href in v.page.eval_on_selector_all("#search-results ul.search li a",
                                                     "links => links.map(a => a.href)")}
    expected = {page for page in PAGES
                if re.search(rf"\b{word}\b", prose_of_built_page(page), re.IGNORECASE)}
    assert expected, f"no page of the book uses {word!r}"
    assert expected <= found, f"search for {word!r} missed {sorted(expected - found)}"
    assert not v.problems, "\n".join(v.problems)


# Every code block of the article (cell inputs and listings; outputs wrap instead, see _static/book.css),
# hide-input cells unfolded first: (index, pixels its widest line sticks out) for each block that scrolls.
OVERFLOWING_CODE = """() => {
  document.querySelectorAll('details.hide').forEach(d => d.open = true);
  return [...document.querySelectorAll('.bd-article div.highlight pre')]
    .filter(pre => !pre.closest('.cell_output'))
    .map((pre, i) => [i, pre.scrollWidth - pre.clientWidth, pre.textContent.split('\\n')
      .reduce((a, b) => (b.length > a.length ? b : a), '')])
    .filter(([, extra]) => extra > 1);
}"""


@pytest.mark.parametrize("loaded", PAGES, indirect=True)
def test_code_fits_the_column(loaded):
    v, docname = loaded, loaded.docname
    wide = v.page.evaluate(OVERFLOWING_CODE)
    assert not wide, (f"{len(wide)} code blocks of {docname} scroll sideways at 1280 px; widest lines:\n"
                      + "\n".join(f"  +{extra}px: {line!r}" for _, extra, line in wide))


# A diagram figure of the page: its picture (an <img>'s address, or an inline <svg>) and its rendered width.
DIAGRAM_PICTURE = """id => {
  const figure = document.getElementById(id);
  if (!figure) return null;
  const svg = figure.querySelector('svg'), img = figure.querySelector('img');
  const shown = svg || img;
  return {src: img && !svg ? img.src : null, inline: svg ? svg.outerHTML : null,
          width: shown ? shown.getBoundingClientRect().width : 0};
}"""
DIAGRAM_CALL = re.compile(r"\b\w+_diagram\(")
MIN_DIAGRAM_PX = 11  # the smallest a diagram's text may show, in CSS px
TEXT_ROLES = re.compile(r"(label|detail|count|text)-")  # the ids of geron_lib.notebook.diagrams texts
GLYPHS = re.compile(r"scale\(([\d.]+) -\1\)")  # matplotlib's text as paths: 1/100 of the font size


def _diagram_figures(docname: str) -> list[str]:
    """The figures of a notebook's diagram cells (code cells calling a *_diagram function), by name."""
    return [cell["metadata"]["mystnb"]["figure"]["name"] for cell in notebook(docname)["cells"]
            if cell["cell_type"] == "code" and DIAGRAM_CALL.search("".join(cell["source"]))
            and "figure" in cell["metadata"].get("mystnb", {})]


def _text_sizes(svg: str) -> dict[str, float]:
    """Each text's font size (in the SVG's user units) by id: its glyphs' largest scale (a formula's
    subscripts are smaller by design), from matplotlib's text drawn as paths."""
    sizes = {}
    for group in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}g"):
        if TEXT_ROLES.match(group.get("id", "")):
            scales = [float(m.group(1)) for g in group.iter() for m in [GLYPHS.search(g.get("transform", ""))]
                      if m]
            if scales:
                sizes[group.get("id")] = 100 * max(scales)
    return sizes


@pytest.mark.parametrize("loaded", [page for page in notebook_pages() if _diagram_figures(page)],
                         indirect=True)
def test_diagrams_are_svg_and_their_smallest_text_shows_at_11_px(loaded):
    """Every diagram reaches the page as a vector picture, and at the width the browser gives it (the column,
    at 1280 px), its smallest text is at least 11 CSS px: font size x rendered width / the SVG's width."""
    v, docname = loaded, loaded.docname
    for name in _diagram_figures(docname):
        found = v.page.evaluate(DIAGRAM_PICTURE, name)
        assert found and found["width"] > 0, f"no picture in figure #{name}"
        if found["inline"] is None:
            assert found["src"].endswith(".svg"), f"figure #{name} is not an SVG: {found['src'][:60]}"
            response = v.page.request.get(found["src"])
            assert response.ok, f"{found['src']}: HTTP {response.status}"
            svg = response.text()
        else:
            svg = found["inline"]
        root = ET.fromstring(svg)
        view_width = float(root.get("viewBox").split()[2])
        sizes = _text_sizes(svg)
        assert sizes, f"figure #{name}: no diagram texts found in its SVG"
        smallest = min(sizes, key=sizes.get)
        px = sizes[smallest] * found["width"] / view_width
        assert px >= MIN_DIAGRAM_PX, (f"figure #{name}: {smallest} shows at {px:.2f} px "
                                      f"({found['width']:.0f} px wide)")
    assert not v.problems, "\n".join(v.problems)


@pytest.mark.parametrize("loaded", PAGES, indirect=True)
def test_opened_in_full_the_page_shows_every_graded_answer_its_html_gives(loaded):
    """The reading that tests/book_site/test_student_edition_browser.py gives every page of the student
    edition, here on the normal build: each graded answer the page's HTML gives (in a solution, once opened)
    the reading finds too, so the student edition's test reads as much as a student can open. Last in this
    file: it opens every dropdown and hidden cell."""
    v, docname, answers = loaded, loaded.docname, graded_answers()
    text = page_text(html_path(docname).read_text(encoding="utf-8"))
    given = {f.label for a in answers for f in findings(docname, text, a, own_page=a.page == docname)}
    missed = given - shown_labels(v.page, docname, answers)
    assert not missed, f"answers the HTML of {docname} gives that the browser reading did not find: {missed}"
