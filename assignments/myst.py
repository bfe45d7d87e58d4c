"""The chapters as the assignments read them: their exercises and solutions (MyST directives), and their MyST
turned into the Markdown Jupyter renders (roles become the text the book shows)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml

from geron_lib.studies import stored

from . import BOOK, EVAL_VALUES


@dataclass(frozen=True)
class Exercise:
    """One exercise of a chapter: its label, title and text (MyST), and the text of its solution."""

    label: str
    title: str
    text: str
    solution: str | None


_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,}|:{3,})\s*(?P<info>.*?)\s*$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[\w:-]+)\}\s*(?P<argument>.*)$")
_OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")


def _closes(line: str, fence: str) -> bool:
    s = line.strip()
    return len(s) >= len(fence) and set(s) == {fence[0]}


def directives(markdown: str):
    """(name, argument, options, body) of every top-level MyST directive in ``markdown``."""
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence = opening["fence"]
        end = next((j for j in range(i + 1, len(lines)) if _closes(lines[j], fence)), len(lines))
        directive = _DIRECTIVE.match(opening["info"])
        if directive:
            body, options = lines[i + 1:end], {}
            if body and body[0].strip() == "---":
                close = body.index("---", 1)
                options, body = yaml.safe_load("\n".join(body[1:close])) or {}, body[close + 1:]
            while body and (option := _OPTION.match(body[0])):
                options[option["key"]] = option["value"]
                body = body[1:]
            yield directive["name"], directive["argument"], options, "\n".join(body).strip("\n")
        i = end + 1


def exercises(notebook) -> dict[str, Exercise]:
    """The chapter's exercises by label, in the order of the chapter, each with its solution's text."""
    found, solutions = [], {}
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        for name, argument, options, body in directives(cell.source):
            if name in ("exercise-start", "solution-start"):
                raise ValueError(f"gated directive {{{name}}} {argument}: the assignments read only "
                                 "{exercise} and {solution} directives")
            if name == "exercise":
                found.append((str(options.get("label", f"exercise-{len(found) + 1}")), argument, body))
            elif name == "solution":
                solutions[argument] = body
    labels = [label for label, _, _ in found]
    if len(set(labels)) != len(labels):
        raise ValueError(f"two exercises share a label: {labels}")
    return {label: Exercise(label, title, text, solutions.get(label)) for label, title, text in found}


def chapters_with_exercises() -> list[str]:
    return [p.stem for p in sorted(BOOK.glob("*.ipynb")) if exercises(nbformat.read(p, as_version=4))]


def chapter_title(notebook) -> str:
    """The first level-one heading of the chapter."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and (m := re.search(r"^# (.+)$", cell.source, re.MULTILINE)):
            return m[1].strip()
    raise ValueError("the chapter has no '# Title' heading")


def glued(notebook) -> dict[str, dict]:
    """Every value the chapter glues (myst-nb), by name: its mime bundle, from the stored outputs."""
    out = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get("scrapbook")
            if record:
                prefix = record.get("mime_prefix", "")
                out[record["name"]] = {k.removeprefix(prefix): v for k, v in output.get("data", {}).items()}
    return out


def built_eval_values(chapter: str, path: Path = EVAL_VALUES) -> dict[str, list[str]]:
    """What the built book shows for each ``{eval}`` of ``book/<chapter>.ipynb``: {expression: [the text,
    per use on the page, in page order]}, as the book build recorded it (``_ext/eval_values.py``)."""
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `make book` first (the book build records what "
                                "every {eval} in the book shows, and the assignments print those numbers)")
    pages = stored.load(path, "`make book`")
    if f"book/{chapter}" not in pages:
        raise ValueError(f"{path} holds no {{eval}} values of book/{chapter}.ipynb: run `make book` first "
                         "(the last build did not build that chapter, or it had no {eval} then)")
    return pages[f"book/{chapter}"]


class Markdown:
    """Turns a chapter's MyST into Markdown that Jupyter renders: roles become their text, glued values
    their stored value, ``{eval}`` expressions the text the built book shows for them (read from
    ``values``, what the book build records), references the title of their target, and a link to
    another page of the book (a citation, a chapter) its text."""

    ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<content>[^`]*)`")
    # A link to another page of the book (the bibliography, the glossary, a chapter, a label of its own
    # page): the assignment is a notebook of its own, beside none of them, so only its text is kept
    BOOK_LINK = re.compile(r"\[(?P<text>[^\]]+)\]\((?:bibliography\.md|glossary\.md|[\w-]+\.ipynb|)"
                           r"(?:#[^)\s]*)?(?:\s+\"[^\"]*\")?\)")

    def __init__(self, notebook, chapter: str, values: Path = EVAL_VALUES):
        self.chapter, self.glue, self.values_path = chapter, glued(notebook), values
        self._targets = self._values = None

    def __call__(self, text: str) -> str:
        return self.BOOK_LINK.sub(lambda m: m["text"], self.ROLE.sub(self._role, text))

    def _role(self, m: re.Match) -> str:
        role, content = m["role"], m["content"]
        if role.startswith("glue"):
            return self._glue(content)
        if role == "eval":
            return self._eval(content)
        if role == "math":
            return f"${content}$"
        shown = re.match(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", content, re.DOTALL)
        if shown:
            return shown["text"]
        if role in ("ref", "numref"):
            return self.targets().get(content, content)
        return content

    def _glue(self, content: str) -> str:
        from myst_nb.core.variables import format_plain_text

        name, _, spec = content.partition(":")
        if name not in self.glue:
            raise ValueError(f"book/{self.chapter}.ipynb glues no {name!r} in its stored outputs "
                             f"(store them: make outputs NB=book/{self.chapter}.ipynb)")
        data = self.glue[name]
        if "text/markdown" in data and "text/plain" not in data:
            return data["text/markdown"]
        return format_plain_text(data["text/plain"], spec)

    def _eval(self, expression: str) -> str:
        if self._values is None:
            self._values = built_eval_values(self.chapter, self.values_path)
        shown = self._values.get(expression)
        if not shown:
            raise ValueError(f"{self.values_path} holds no value of {{eval}}`{expression}` in "
                             f"book/{self.chapter}.ipynb: run `make book` first (the chapter changed since "
                             "the last build)")
        if len(set(shown)) > 1:
            raise ValueError(f"book/{self.chapter}.ipynb shows {{eval}}`{expression}` as "
                             f"{sorted(set(shown))} in different places (a name reassigned between its "
                             "uses): the assignment cannot tell which one an exercise means; give each value "
                             "its own name")
        return shown[0]

    def targets(self) -> dict[str, str]:
        """``(label)=`` targets of the book's pages, by label: the heading right below each."""
        if self._targets is None:
            texts = [p.read_text(encoding="utf-8") for p in BOOK.glob("*.md")]
            texts += [c.source for p in BOOK.glob("*.ipynb") for c in nbformat.read(p, as_version=4).cells
                      if c.cell_type == "markdown"]
            self._targets = {m[1]: m[2].strip() for text in texts
                             for m in re.finditer(r"^\(([\w:-]+)\)=\s*\n#+\s+(.+)$", text, re.MULTILINE)}
        return self._targets
