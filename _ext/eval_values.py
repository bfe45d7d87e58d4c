"""Sphinx extension: what every ``{eval}`` role of the book shows, per page, in ``_build/eval_values.json``.

The assignments (``python -m assignments``, ``make assignments``) print the book's exercises with the numbers
the book shows in them. Those numbers exist only in the kernel the build runs each notebook in, so the build
records them rather than the assignments running the chapters again. myst-nb's ``{eval}`` role is replaced by
a subclass that, after rendering, notes on the build environment the text of each output it rendered, per
mime type. The environment keeps the notes of a page until the page is read again, so an incremental build
that re-reads nothing still knows every page's values. When the build ends, each output's text is the one of
the mime type the builder shows (myst-nb's priority list for the builder), and an HTML build writes the
file beside its output folder (``_build/html``): it maps ``{docname: {expression: [the text shown, one
per use of the expression, in page order]}}``.
"""

from __future__ import annotations

import json
from pathlib import Path

from myst_nb.core.render import get_mime_priority
from myst_nb.ext.eval import EvalRoleAny

FILE_NAME = "eval_values.json"


class RecordedEvalRole(EvalRoleAny):
    """myst-nb's ``{eval}`` role, noting in ``env.eval_values`` the mime bundle of every output it renders."""

    def run(self):
        rendered, messages = super().run()
        if not messages:  # an expression that failed shows a warning, no value
            note_rendered(self.document.settings.env, self.text, rendered)
        return rendered, messages


def note_rendered(env, expression: str, rendered) -> None:
    """Note in ``env.eval_values`` the mime bundles of one use of an ``{eval}`` of ``expression`` on the page
    being read (``rendered``: the nodes the role returns)."""
    bundles = [{c["mime_type"]: c.astext() for c in bundle.children} for bundle in rendered]
    env.eval_values.setdefault(env.docname, {}).setdefault(expression, []).append(bundles)


def start(app) -> None:
    if not hasattr(app.env, "eval_values"):  # a fresh environment, or one pickled before this extension
        app.env.eval_values = {}


def purge(app, env, docname) -> None:
    env.eval_values.pop(docname, None)


def merge(app, env, docnames, other) -> None:
    env.eval_values.update({d: other.eval_values[d] for d in docnames if d in other.eval_values})


def write(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    priority = get_mime_priority(app.builder.name, app.config.nb_mime_priority_overrides)

    def shown(bundle: dict[str, str]) -> str:
        return next((bundle[mime] for mime in priority if mime in bundle), "")  # none: myst-nb warns

    values = {docname: {expression: ["".join(shown(b) for b in use) for use in uses]
                        for expression, uses in expressions.items()}
              for docname, expressions in sorted(app.env.eval_values.items())}
    path = Path(app.outdir).parent / FILE_NAME
    path.write_text(json.dumps(values, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def setup(app):
    app.setup_extension("myst_nb")  # its role first, then ours over it
    app.add_role("eval", RecordedEvalRole(), override=True)
    app.connect("builder-inited", start)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    app.connect("build-finished", write)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
