"""The book live in JupyterLab, as a reader uses it: open each chapter, Run All, and check that no cell fails,
the browser logs no error, every live slider redraws its figure, the prose shows no role or directive
syntax, and its computed numbers are the built HTML book's."""

from __future__ import annotations

import ast
import re
import sys
from html.parser import HTMLParser

from book_site.pages import ROOT, html_path, notebook, require_built_book, text_of

sys.path.insert(0, str(ROOT / "scripts"))  # make screenshots names the pictures, and this file's join them
import screenshots  # noqa: E402

# jupyterlab-myst renders a notebook's Markdown cells one by one, so a reference to a label of a later cell
# logs one of these while the earlier cell renders, and resolves once the later one has: the only console
# errors allowed, and only for a target that the rendered notebook then holds. Every other reference is
# resolved or it is an error (tests/book/test_references.py keeps the sources to what both readers resolve).
NOT_FOUND = re.compile(r'Cross reference target was not found: (.+)'
                       r'|No target for internal reference "#(.+)" was found\.')
# What the rendered prose holds: the ids a reference can point to, and any reference it could not resolve
RENDERED_TARGETS = """() => [...document.querySelectorAll('.jp-Notebook .jp-MarkdownCell .myst [id]')]
  .map(e => e.id)"""
UNRESOLVED = """() => [...document.querySelectorAll(
  '.jp-Notebook .jp-MarkdownCell .myst [title$="Not Found"]')]
  .map(e => `${e.title}: ${e.textContent}`)"""

# Role and directive syntax that must never reach the rendered prose
RAW_SYNTAX = re.compile(r"\{(?:glue|eval)\b|\{(?:exercise|solution|note|warning|admonition)\}|:label:"
                        r"|\{[a-z][\w:-]*\}`")
ROLE = re.compile(r"\{(glue(?::\w+)?|eval)\}`([^`]+)`")
F_STRING = re.compile(r'f"\{(\w+)[^"]*"')  # an {eval} body formatting one name: f"{saved:,}"

# An explorer's figure has been redrawn: its image shows a new picture, loaded
REDRAWN = "([img, before]) => img.src !== before && img.complete && img.naturalWidth > 0"

# The text of the Markdown cells as jupyterlab-myst renders them (textContent: closed solution dropdowns too;
# never the cell's hidden editor, which holds the source), a line break after every block (paragraph, table
# cell, list item, heading...): textContent alone runs one block into the next, so a number that ends a table
# cell read "50The miniature" and lost its word boundary, where a reader sees the cell end
PROSE = """() => [...document.querySelectorAll('.jp-Notebook .jp-MarkdownCell .myst')].map(cell => {
  const copy = cell.cloneNode(true);
  copy.querySelectorAll('p, li, td, th, caption, dt, dd, h1, h2, h3, h4, h5, h6, pre, blockquote, summary, '
                        + 'figcaption, div').forEach(block => block.after('\\n'));
  return copy.textContent;
})"""


def test_run_all_leaves_no_error_output(live):
    page = live.page
    screenshots.OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=screenshots.OUT / f"live-{screenshots.file_name(live.docname)}.png")
    stderr = '[data-mime-type="application/vnd.jupyter.stderr"]'
    errors = page.locator(f".jp-Notebook .jp-OutputArea-output{stderr}")
    assert errors.count() == 0, f"cells show errors or stderr after Run All: {errors.all_inner_texts()[:3]}"
    prompts = page.locator(".jp-Notebook .jp-CodeCell .jp-InputPrompt").all_inner_texts()
    assert [p.strip() for p in prompts] == [f"[{n}]:" for n in range(1, len(prompts) + 1)], (
        "every code cell runs once, in order")


def test_the_browser_logs_no_error(live):
    targets = set(live.page.evaluate(RENDERED_TARGETS))
    errors = []
    for kind, text in live.messages:
        if kind in ("error", "pageerror"):
            found = [NOT_FOUND.fullmatch(line.strip()) for line in text.strip().splitlines()]
            if not (kind == "error" and all(m and (m.group(1) or m.group(2)) in targets for m in found)):
                errors.append(f"{kind}: {text}")
    assert not errors, "\n".join(errors)


def test_every_reference_in_the_prose_resolves(live):
    unresolved = live.page.evaluate(UNRESOLVED)
    assert not unresolved, f"jupyterlab-myst could not resolve: {unresolved}"


def test_every_live_slider_redraws_its_figure(live):
    """Each ipywidgets slider of an explorer, moved a step with the keyboard, changes the figure beside it:
    the explorer's ipywidgets Image (never an Output widget: see geron_lib/notebook/explorer.py), whose
    picture each move replaces."""
    page = live.page
    explorers = page.locator(".jp-Notebook .widget-vbox").filter(has=page.locator(".widget-slider"))
    expected = sum(".widget()" in source for source in _code_sources(live.docname))
    assert explorers.count() == expected, "each explorer.widget() cell shows one live explorer"
    for e in range(explorers.count()):
        explorer = explorers.nth(e)
        assert explorer.locator(".widget-output").count() == 0, f"explorer {e} shows an Output widget"
        figure = explorer.locator("img.widget-image")
        assert figure.count() == 1, f"explorer {e} shows {figure.count()} images, not one"
        handles = explorer.locator(".widget-slider .noUi-handle")
        assert handles.count() >= 1
        for h in range(handles.count()):
            handle = handles.nth(h)
            before = figure.get_attribute("src")
            value, top = (float(handle.get_attribute(a)) for a in ("aria-valuenow", "aria-valuemax"))
            handle.focus()
            page.keyboard.press("ArrowRight" if value < top else "ArrowLeft")
            page.wait_for_function(REDRAWN, arg=[figure.element_handle(), before], timeout=30_000)
            figure.wait_for(state="visible", timeout=30_000)
            assert float(handle.get_attribute("aria-valuenow")) != value, f"slider {h} did not move"
            assert figure.get_attribute("src") != before, f"slider {h} of explorer {e} left the figure alone"


def test_prose_shows_no_role_or_directive_syntax(live):
    prose = _prose(live)
    raw = sorted(set(RAW_SYNTAX.findall(prose)))
    assert not raw, f"raw MyST syntax in the rendered prose: {raw}"
    # an {eval} that was not evaluated (or a glue role) shows its source text, e.g. f"{saved:,}" or saved:,
    # (a body of one or two letters, such as T or E, is a symbol the prose shows anyway: the next test finds
    # its value)
    bodies = {body for _, body in ROLE.findall(text_of(live.docname)) if len(body) > 2}
    unrendered = sorted(body for body in bodies if body in prose)
    assert not unrendered, f"roles shown as their source text instead of a value: {unrendered}"


def test_prose_numbers_are_the_html_books(live):
    """Every number the built page's prose computes ({eval} roles), in order, appears in the live prose;
    measured numbers (timings, which differ from run to run) are left out: those of a role whose name a code
    cell tagged nbval-ignore-output assigns."""
    require_built_book()
    numbers = _computed_numbers_of_built_page(live.docname)
    assert numbers, "the built page shows no computed number"
    names = [(F_STRING.fullmatch(body) or [body, body])[1] for _, body in ROLE.findall(text_of(live.docname))]
    assert len(names) == len(numbers), "the built page shows one value for every role of the notebook"
    measured = _measured_names(live.docname)
    numbers = [number for number, name in zip(numbers, names, strict=True) if name not in measured]
    prose = _prose(live)
    position = 0
    for number in numbers:
        found = re.compile(rf"(?<![\w.,]){re.escape(number)}(?![\w]|[.,]\d)").search(prose, position)
        assert found, f"{number!r} of the HTML book is not in the live prose after {prose[:position][-80:]!r}"
        position = found.end()


def _prose(live) -> str:
    """The rendered prose of every Markdown cell (all of them must be rendered by jupyterlab-myst)."""
    cells = live.page.evaluate(PROSE)
    expected = sum(c["cell_type"] == "markdown" for c in notebook(live.docname)["cells"])
    assert len(cells) == expected, f"jupyterlab-myst rendered {len(cells)} of {expected} Markdown cells"
    return "\n".join(cells)


def _code_sources(docname: str) -> list[str]:
    return ["".join(c["source"]) for c in notebook(docname)["cells"] if c["cell_type"] == "code"]


def _measured_names(docname: str) -> set[str]:
    """The names that code cells tagged nbval-ignore-output assign (measurements, which vary per run)."""
    names = set()
    for c in notebook(docname)["cells"]:
        if c["cell_type"] == "code" and "nbval-ignore-output" in c.get("metadata", {}).get("tags", []):
            source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                               for line in "".join(c["source"]).split("\n"))
            names |= {n.id for n in ast.walk(ast.parse(source))
                      if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names


class _ComputedNumbers(HTMLParser):
    """The texts of the spans myst-nb writes into prose for {eval} (class output text_plain) and glue
    (pasted-text)."""

    def __init__(self):
        super().__init__()
        self.depth, self.values = 0, []

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if self.depth:
            self.depth += 1
        elif tag == "span" and ("pasted-text" in classes or classes == ["output", "text_plain"]):
            self.depth = 1
            self.values.append("")

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.values[-1] += data


def _computed_numbers_of_built_page(docname: str) -> list[str]:
    parser = _ComputedNumbers()
    parser.feed(html_path(docname).read_text(encoding="utf-8"))
    return [value.strip() for value in parser.values]
