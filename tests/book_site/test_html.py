"""The built HTML files themselves: every page is there, every image has real alt text and an opaque
background, nothing is fetched from another host, and no dead ipywidgets are left behind."""

from __future__ import annotations

import base64
import io
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from .pages import HTML, html_path, require_built_book, toc_pages


class _Tags(HTMLParser):
    """Start tags with their attributes, and the text of inline <style> elements."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)


def _tags(path: Path) -> _Tags:
    parser = _Tags()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


@pytest.fixture(scope="module")
def pages() -> dict[str, _Tags]:
    """Every HTML file of the built site, parsed once."""
    require_built_book()
    return {str(p.relative_to(HTML)): _tags(p) for p in sorted(HTML.rglob("*.html"))
            if "_static" not in p.relative_to(HTML).parts}


def _other_host(url: str) -> bool:
    return bool(re.match(r"^(?:[a-z][a-z0-9+.-]*:)?//", url, re.IGNORECASE)) and not url.startswith("data:")


def test_every_page_of_the_toc_is_built(pages):
    missing = [page for page in toc_pages() if not html_path(page).is_file()]
    assert not missing, f"pages in _toc.yml without HTML: {missing}"


def test_every_image_has_real_alt_text(pages):
    """Docutils falls back to the file name when a figure has no alt text: that does not count."""
    bad = []
    for name, parsed in pages.items():
        for tag, attrs in parsed.tags:
            alt, src = attrs.get("alt", "").strip(), attrs.get("src", "")
            if tag == "img" and (not alt or alt == src or re.search(r"\.(png|jpe?g|gif|svg)$", alt, re.I)):
                bad.append(f"{name}: <img src={src[:60]!r}> alt={alt!r}")
    assert not bad, "images without alt text (figure cells: metadata mystnb.image.alt):\n" + "\n".join(bad)


def _image(src: str, page: Path) -> bytes | None:
    """The bytes of a figure the page shows: inline PNG or WebP (scrubber sheets), or a PNG file."""
    if src.startswith(("data:image/png;base64,", "data:image/webp;base64,")):
        return base64.b64decode(src.split(",", 1)[1])
    if src.lower().endswith(".png") and not _other_host(src) and "_static/" not in src:  # theme logos
        return (page.parent / src).resolve().read_bytes()
    return None


def test_figures_are_opaque_so_they_read_in_the_dark_theme(pages):
    see_through = []
    count = 0
    for name, parsed in pages.items():
        for tag, attrs in parsed.tags:
            data = _image(attrs.get("src", ""), HTML / name) if tag == "img" else None
            if data is None:
                continue
            count += 1
            image = Image.open(io.BytesIO(data))
            if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
                lowest = image.convert("RGBA").getchannel("A").getextrema()[0]
                if lowest < 255:
                    see_through.append(f"{name}: {attrs.get('alt', '')[:60]!r} (alpha down to {lowest})")
    assert not see_through, ("figures with a transparent background (use geron_lib.notebook.plots):\n"
                             + "\n".join(see_through))


def _css_urls(css: str) -> list[str]:
    """Addresses on other hosts that a style sheet loads (url(...) and @import)."""
    urls = re.findall(r"url\(\s*['\"]?([^'\")]+)", css) + re.findall(r"@import\s+['\"]([^'\"]+)", css)
    return [url for url in urls if _other_host(url)]


def test_pages_load_nothing_from_other_hosts(pages):
    loaded_links = {"stylesheet", "preload", "icon", "modulepreload"}
    fetched = []
    for name, parsed in pages.items():
        for tag, attrs in parsed.tags:
            urls = [attrs.get("src", "")]
            if tag == "link" and set(attrs.get("rel", "").split()) & loaded_links:
                urls.append(attrs.get("href", ""))
            fetched += [f"{name}: <{tag}> {url}" for url in urls if _other_host(url)]
        fetched += [f"{name}: <style> {url}" for css in parsed.styles for url in _css_urls(css)]
    for css in HTML.glob("_static/**/*.css"):
        fetched += [f"{css.relative_to(HTML)}: {url}" for url in _css_urls(css.read_text(encoding="utf-8"))]
    assert not fetched, "assets from other hosts (list the exception in README.md or serve it locally):\n" + \
        "\n".join(fetched)


def test_no_dead_widgets_or_widget_loaders(pages):
    """Live widgets are hidden (remove-output) and replaced by scrubbers: no widget view, no widget state
    and no ipywidgets loader scripts may reach the HTML."""
    dead = []
    for name in pages:
        text = (HTML / name).read_text(encoding="utf-8")
        dead += [f"{name}: {marker}" for marker in ("application/vnd.jupyter.widget-view+json",
                                                    "application/vnd.jupyter.widget-state+json",
                                                    "embed-amd.js", "require.min.js") if marker in text]
    assert not dead, "\n".join(dead)


def test_math_pages_use_the_local_mathjax(pages):
    with_math = [name for name, parsed in pages.items()
                 if any("math" in attrs.get("class", "").split() for _, attrs in parsed.tags)]
    assert with_math, "the notation page at least has formulas"
    for name in with_math:
        scripts = [attrs["src"] for tag, attrs in pages[name].tags if tag == "script" and "src" in attrs]
        local = [s for s in scripts if "mathjax/tex-mml-chtml.js" in s]
        assert local, f"{name} has formulas but does not load the local MathJax"
        assert (HTML / name).parent.joinpath(local[0].split("?")[0]).resolve().is_file()


def test_the_colab_install_cell_is_not_in_the_book(pages):
    shown = [name for name in pages if "install geron_lib when it is not importable" in
             (HTML / name).read_text(encoding="utf-8")]
    assert not shown, f"the hidden install cell (tag remove-cell) shows on {shown}"


#: Bookkeeping that must never reach a reader: glue calls (put them in a remove-cell cell), nbval markers
#: (use the cell tags nbval-ignore-output / nbval-skip instead of comments) and raw roles of a failed render.
BOOKKEEPING = re.compile(r"\bglue\(|NBVAL_|\{glue:|\{eval\}")


def _cell_inputs(path: Path) -> list[str]:
    """The text of every code cell input on a page (folded hide-input cells too: a reader can open them)."""
    start = r'<div class="cell_input docutils container">'
    blocks = re.findall(start + r"(.*?)</div>\s*</div>\s*</div>", path.read_text(encoding="utf-8"), re.S)
    return [re.sub(r"<[^>]+>", "", b) for b in blocks]


@pytest.mark.parametrize("docname", toc_pages())
def test_no_bookkeeping_is_shown(docname):
    require_built_book()
    path = html_path(docname)
    shown = [match.group(0) for cell in _cell_inputs(path) for match in BOOKKEEPING.finditer(cell)]
    prose = re.sub(r"<(script|style)\b.*?</\1>", "", path.read_text(encoding="utf-8"), flags=re.S)
    shown += [m for m in ("{glue:", "{eval}", "NBVAL_") if m in re.sub(r"<[^>]+>", "", prose)]
    assert not shown, f"{docname} shows bookkeeping to its readers: {sorted(set(shown))}"
