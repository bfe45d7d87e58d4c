"""Sphinx extension: every page loads what it needs from the built site itself, never from another host.

- MathJax comes from a pinned PyPI package (django-static-mathjax, MathJax 3.2.2, Apache-2.0) and is copied
  to ``_static/mathjax`` instead of Sphinx's default CDN address.
- myst-nb would embed the ipywidgets state of every executed notebook and load require.js and the widget
  manager from CDNs to show it. The book's live widgets are hidden (cell tag ``remove-output``) and the
  static page shows a kernel-free scrubber instead, so the state and those scripts are dropped.
- Inline scripts registered twice are written once: sphinx-thebe 0.3.1 under Sphinx 7 adds its
  ``const THEBE_JS_URL = ...`` script twice, and the second copy throws a SyntaxError on every page.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import mathjax

MATHJAX_SOURCE = Path(mathjax.__file__).parent / "static" / "mathjax"
MATHJAX_ENTRY = "tex-mml-chtml.js"  # the bundle Sphinx uses by default, served locally
# What the bundle loads on demand: TeX extensions, CHTML fonts, the menu and its accessibility tools.
MATHJAX_PARTS = ("input", "output/chtml", "a11y", "ui", "sre", "adaptors")


def use_local_mathjax(app, config) -> None:
    config.mathjax_path = f"mathjax/{MATHJAX_ENTRY}"  # relative to _static


def drop_widget_state(app, doctree) -> None:
    """Forget the ipywidgets state and loader scripts myst-nb registered for this page."""
    js_files = getattr(app.env, "nb_metadata", {}).get(app.env.docname, {}).get("js_files", {})
    for key in [key for key in js_files if key.startswith("ipywidgets")]:
        del js_files[key]


def drop_duplicate_scripts(app, pagename, templatename, context, doctree) -> None:
    """Keep the first of identical script entries (same file or body, same attributes)."""
    scripts, seen = context.get("script_files", []), set()
    unique = []
    for script in scripts:
        key = (script.filename or "", tuple(sorted((k, str(v)) for k, v in script.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique


def copy_mathjax(app, exception) -> None:
    if exception or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / "mathjax"
    source = MATHJAX_SOURCE / "es5"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source / MATHJAX_ENTRY, target / MATHJAX_ENTRY)
    shutil.copy2(MATHJAX_SOURCE / "LICENSE", target / "LICENSE")
    for part in MATHJAX_PARTS:
        shutil.copytree(source / part, target / part, dirs_exist_ok=True)


def setup(app):
    app.connect("config-inited", use_local_mathjax)
    app.connect("doctree-read", drop_widget_state)
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)  # after every extension's
    app.connect("build-finished", copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
