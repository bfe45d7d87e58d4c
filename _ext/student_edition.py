"""Sphinx extension: the student edition, the book without its solutions, made from a normal build.

Inert unless the config value ``student_edition_from`` names the folder of a finished normal build
(``_build``: ``make student-book`` sets it, through scripts/student_book.py). Then the build:

- renders no ``{solution}`` (sphinx-exercise's own ``hide_solutions``);
- executes nothing: each notebook page is read from the notebook that build executed
  (``<from>/jupyter_execute/<page>.ipynb``) in place of its source, so the outputs are that build's; a
  cell tagged ``student-remove-stream`` shows everything but what it printed (its stream outputs), in this
  edition only: for a printed line that gives a graded exercise's answer away, beside a figure that stays;
- shows for each ``{eval}`` the text that build recorded for it (``<from>/eval_values.json``, written by
  ``_ext/eval_values.py``), use by use;
- copies no page sources into the site and offers no download or launch buttons: the sources, and the
  notebooks Binder and Colab open, hold the solutions;
- keeps of a page for teachers alone (``TEACHERS_ONLY``: the teachers' page, whose exam questions, rubrics
  and sample grades give answers away) only its label and title, and a sentence saying where it is.

A page is read again when its executed notebook changes; a page whose executed notebook is missing or older
than its source, or whose {eval} the build did not record, stops the build with what to run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from docutils import nodes
from eval_values import FILE_NAME, note_rendered
from myst_nb.core.variables import VariableOutput, render_variable_outputs
from myst_nb.ext.utils import RoleBase
from sphinx.errors import ExtensionError

#: The tag of a cell whose printed outputs (nbformat's stream outputs) the student edition leaves out
REMOVE_STREAM = "student-remove-stream"
#: The pages for teachers alone, which the student edition shows as their title and TEACHERS_ONLY_TEXT
TEACHERS_ONLY = ("book/teachers",)
TEACHERS_ONLY_TEXT = "This page is for teachers: it is in the book's full edition, not in this one."


def edition_source(app) -> Path | None:
    """The normal build this edition is made from, or None when this is a normal build."""
    return Path(app.srcdir, app.config.student_edition_from) if app.config.student_edition_from else None


def configure(app, config) -> None:
    if not config.student_edition_from:
        return
    config.hide_solutions = True
    config.nb_execution_mode = "off"
    config.html_copy_source = False
    config.html_theme_options = {**config.html_theme_options, "use_download_button": False,
                                 "launch_buttons": {}}


def _stale(what: Path, why: str) -> ExtensionError:
    return ExtensionError(f"student edition: {what} {why}: run `make book` first (the student edition is "
                          "made from the normal build's executed notebooks and recorded {eval} values)")


def title_only(notebook: dict) -> dict:
    """``notebook`` (a page's source) as one Markdown cell: its label and title, then TEACHERS_ONLY_TEXT."""
    first = notebook["cells"][0]
    text = "".join(first["source"]) if isinstance(first["source"], list) else first["source"]
    title = re.match(r"(?:\(\S+\)=\n)?# [^\n]*", text)
    if title is None:
        raise ExtensionError("student edition: a page for teachers must open with its label and title")
    cell = {"cell_type": "markdown", "id": first.get("id", "title"), "metadata": {},
            "source": f"{title[0]}\n\n{TEACHERS_ONLY_TEXT}\n"}
    return {**notebook, "cells": [cell]}


def read_executed(app, docname: str, source: list[str]) -> None:
    """The page's executed notebook in place of its source, its student-remove-stream cells without what they
    printed; a page for teachers alone as its title (:func:`title_only`)."""
    built = edition_source(app)
    page = Path(app.env.doc2path(docname))
    if built is None or page.suffix != ".ipynb":
        return
    if docname in TEACHERS_ONLY:
        source[0] = json.dumps(title_only(json.loads(source[0])))
        return
    executed, values = built / "jupyter_execute" / f"{docname}.ipynb", built / FILE_NAME
    if not executed.is_file():
        raise _stale(executed, "is missing")
    if executed.stat().st_mtime < page.stat().st_mtime:
        raise _stale(executed, f"is older than {page.name}")
    if not values.is_file() or values.stat().st_mtime < executed.stat().st_mtime:
        raise _stale(values, f"is missing or older than {executed.name} (the build did not finish)")
    app.env.note_dependency(str(executed))
    notebook = json.loads(executed.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if REMOVE_STREAM in cell.get("metadata", {}).get("tags", []):
            cell["outputs"] = [o for o in cell["outputs"] if o["output_type"] != "stream"]
    source[0] = json.dumps(notebook)


class RecordedValueRole(RoleBase):
    """``{eval}`` showing, for its n-th use on the page, the n-th text the normal build recorded."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        env = self.document.settings.env
        values = env.temp_data.get("student_values")
        if values is None:
            path = edition_source(env.app) / FILE_NAME
            values = json.loads(path.read_text(encoding="utf-8")).get(env.docname, {})
            env.temp_data["student_values"], env.temp_data["student_uses"] = values, {}
        use = env.temp_data["student_uses"].get(self.text, 0)
        shown = values.get(self.text, [])
        if use >= len(shown):
            raise _stale(edition_source(env.app) / FILE_NAME,
                         f"records no use {use + 1} of {{eval}}`{self.text}` on {env.docname}")
        env.temp_data["student_uses"][self.text] = use + 1
        output = VariableOutput({"text/plain": shown[use]}, {}, self.document["nb_renderer"], "eval")
        rendered = render_variable_outputs([output], self.document, self.line, self.source, inline=True)
        note_rendered(env, self.text, rendered)
        return rendered, []


def use_recorded_values(app, config) -> None:
    if config.student_edition_from:
        app.add_role("eval", RecordedValueRole(), override=True)


def setup(app):
    app.setup_extension("eval_values")  # its {eval} first, then, in the student edition, ours over it
    app.add_config_value("student_edition_from", "", "env", [str])
    app.connect("config-inited", configure)
    app.connect("config-inited", use_recorded_values)
    app.connect("source-read", read_executed)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
