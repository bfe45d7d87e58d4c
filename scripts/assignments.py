"""Assignments from the book's exercises: per chapter, a student notebook without solutions and an otter
autograder whose tests call the library's checkers, so students get the same hints as in the book.

    python scripts/assignments.py make [CHAPTER ...] [--out DIR] [--no-run-tests]
    python scripts/assignments.py grade CHAPTER SUBMISSION.ipynb ... [--out DIR]

``make`` (what ``make assignments`` runs) reads ``assignments/spec.yml`` and the chapters under ``book/``.
Each exercise is found by its label and shown as the book prints it (MyST roles turned into plain Markdown,
glued numbers read from the chapter's stored outputs, ``{eval}`` numbers evaluated after running the chapter,
as the book build does), without its solution. The exercises the spec lists
become graded questions; every other one becomes a written question, answered in Markdown and not scored.
For every chapter with exercises it writes, under ``_build/assignments/<chapter>/``:

    master/<chapter>.ipynb                 the otter master notebook (config, questions, solutions, tests)
    student/<chapter>.ipynb                what students get: the exercises, answer and check cells
    autograder/<chapter>.ipynb             the same with the solutions, for teachers
    autograder/<chapter>-autograder.zip    what grades a submission

``otter assign`` runs the tests against the solutions unless ``--no-run-tests`` is given.

``grade`` grades submissions with otter's runner without containers, in this environment (where geron_lib
is installed), and writes ``grades/grades.csv`` (a row per submission: score per question, total) and
``grades/<submission>.txt`` (the feedback) beside the autograder.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
SPEC = ROOT / "assignments" / "spec.yml"
OUT = ROOT / "_build" / "assignments"
CHECKERS = "geron_lib.notebook.exercises."
QUESTION_KEYS = {"label", "answer", "check", "solution", "setup", "points"}


@dataclass(frozen=True)
class Exercise:
    """One exercise of a chapter: its label, title and text (MyST), and the text of its solution."""

    label: str
    title: str
    text: str
    solution: str | None


@dataclass(frozen=True)
class Graded:
    """A graded question of the spec: the student assigns ``answer``; ``check`` grades it."""

    label: str
    answer: str
    check: str
    solution: str
    points: float
    setup: str = ""

    @property
    def checker(self) -> tuple[str, str, str]:
        """(module, function, call): ``check`` split into its import and a call of the bare function."""
        call = ast.parse(self.check, mode="eval").body
        parts, func = [], call.func
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        module, _, name = ".".join([func.id, *reversed(parts)]).rpartition(".")
        call.func = ast.Name(name, ast.Load())
        return module, name, ast.unparse(call)


# ---------------------------------------------------------------------------------------------------------
# The spec


def _question(chapter: str, entry) -> Graded:
    where = f"assignments/spec.yml, chapter {chapter}"
    if not isinstance(entry, dict) or not {"label", "answer", "check", "solution", "points"} <= entry.keys():
        raise ValueError(f"{where}: every graded question needs label, answer, check, solution and points; "
                         f"got {entry!r}")
    where += f", {entry['label']}"
    if unknown := entry.keys() - QUESTION_KEYS:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)} (allowed: {sorted(QUESTION_KEYS)})")
    answer = entry["answer"]
    if not isinstance(answer, str) or not answer.isidentifier():
        raise ValueError(f"{where}: answer must be a Python variable name, got {answer!r}")
    points = entry["points"]
    if isinstance(points, bool) or not isinstance(points, int | float) or points <= 0:
        raise ValueError(f"{where}: points must be a positive number, got {points!r}")
    try:
        call = ast.parse(entry["check"], mode="eval").body
    except SyntaxError as err:
        raise ValueError(f"{where}: check is not a Python call: {err}") from None
    func = call.func if isinstance(call, ast.Call) else None
    if func is None or not ast.unparse(func).startswith(CHECKERS):
        raise ValueError(f"{where}: check must call a checker of {CHECKERS}..., got {entry['check']!r}")
    if answer not in {n.id for arg in [*call.args, *call.keywords] for n in ast.walk(arg)
                      if isinstance(n, ast.Name)}:
        raise ValueError(f"{where}: check {entry['check']!r} never passes the answer {answer!r}")
    for key in ("solution", "setup"):
        try:
            ast.parse(entry.get(key, ""))
        except SyntaxError as err:
            raise ValueError(f"{where}: {key} is not Python code: {err}") from None
    return Graded(entry["label"], answer, entry["check"], entry["solution"].strip("\n"), points,
                  entry.get("setup", "").strip("\n"))


def load_spec(path: Path = SPEC) -> dict[str, list[Graded]]:
    """The graded questions of every chapter named in the spec, checked for form (not yet for content)."""
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    chapters = spec.get("chapters") if isinstance(spec, dict) else None
    if not isinstance(chapters, dict):
        raise ValueError(f"{path}: expected a mapping 'chapters:' of chapter name -> {{graded: [...]}}")
    out = {}
    for chapter, entry in chapters.items():
        if not (BOOK / f"{chapter}.ipynb").is_file():
            raise ValueError(f"{path}: chapter {chapter!r} has no notebook book/{chapter}.ipynb")
        if not isinstance(entry, dict) or set(entry) != {"graded"} or not isinstance(entry["graded"], list):
            raise ValueError(f"{path}: chapter {chapter} must hold exactly 'graded:', a list of questions")
        out[chapter] = [_question(chapter, q) for q in entry["graded"]]
        labels = [q.label for q in out[chapter]]
        if len(set(labels)) != len(labels):
            raise ValueError(f"{path}: chapter {chapter} grades an exercise twice: {labels}")
    return out


def check_solution(question: Graded):
    """The checker's verdict (a ``Feedback``) on the spec's own solution, run in this process."""
    module, name, call = question.checker
    env: dict = {}
    exec(question.setup, env)  # noqa: S102 - the spec's own code
    exec(question.solution, env)  # noqa: S102
    exec(f"from {module} import {name}", env)  # noqa: S102
    return eval(call, env)  # noqa: S307


# ---------------------------------------------------------------------------------------------------------
# The chapters: exercises and solutions, MyST turned into plain Markdown

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
                raise ValueError(f"gated directive {{{name}}} {argument}: scripts/assignments.py reads only "
                                 "{exercise} and {solution} directives")
            if name == "exercise":
                found.append((str(options.get("label", f"exercise-{len(found) + 1}")), argument, body))
            elif name == "solution":
                solutions[argument] = body
    labels = [label for label, _, _ in found]
    if len(set(labels)) != len(labels):
        raise ValueError(f"two exercises share a label: {labels}")
    return {label: Exercise(label, title, text, solutions.get(label)) for label, title, text in found}


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


def evaluated(notebook, expressions) -> dict[str, str]:
    """Runs the chapter, as the book build does, then evaluates every ``{eval}`` expression in its kernel:
    {expression: the text the book shows} (a str without its quotes)."""
    from nbclient import NotebookClient

    run = nbformat.from_dict(notebook)
    probe = f"import json as _json\nprint(_json.dumps({{e: str(eval(e)) for e in {sorted(expressions)!r}}}))"
    run.cells.append(nbformat.v4.new_code_cell(probe))
    NotebookClient(run, timeout=600, resources={"metadata": {"path": str(BOOK)}}).execute()
    return json.loads("".join(o.get("text", "") for o in run.cells[-1].outputs if o.get("name") == "stdout"))


class Markdown:
    """Turns a chapter's MyST into Markdown that Jupyter renders: roles become their text, glued values
    their stored value, ``{eval}`` expressions their value (the chapter is run once, when one is met),
    citations (author, year), references the title of their target."""

    ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<content>[^`]*)`")

    def __init__(self, notebook, chapter: str):
        self.chapter, self.glue, self.notebook = chapter, glued(notebook), notebook
        self._bib = self._targets = self._values = None

    def __call__(self, text: str) -> str:
        return self.ROLE.sub(self._role, text)

    def _role(self, m: re.Match) -> str:
        role, content = m["role"], m["content"]
        if role.startswith("glue"):
            return self._glue(content)
        if role == "eval":
            return self._eval(content)
        if role.startswith("cite"):
            return "(" + "; ".join(self._cite(key.strip()) for key in content.split(",")) + ")"
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
            expressions = {m["content"] for c in self.notebook.cells if c.cell_type == "markdown"
                           for m in self.ROLE.finditer(c.source) if m["role"] == "eval"}
            self._values = evaluated(self.notebook, expressions)
        return self._values[expression]

    def _cite(self, key: str) -> str:
        if self._bib is None:
            from pybtex.database import parse_file

            self._bib = parse_file(str(BOOK / "references.bib")).entries
        if key not in self._bib:
            raise ValueError(f"book/{self.chapter}.ipynb cites {key!r}, which book/references.bib lacks")
        entry = self._bib[key]
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        last = "".join(people[0].last_names).translate(str.maketrans("", "", "{}")) if people else key
        return f"{last}{' et al.' if len(people) > 2 else ''}, {entry.fields.get('year', 'n.d.')}"

    def targets(self) -> dict[str, str]:
        """``(label)=`` targets of the book's pages, by label: the heading right below each."""
        if self._targets is None:
            texts = [p.read_text(encoding="utf-8") for p in BOOK.glob("*.md")]
            texts += [c.source for p in BOOK.glob("*.ipynb") for c in nbformat.read(p, as_version=4).cells
                      if c.cell_type == "markdown"]
            self._targets = {m[1]: m[2].strip() for text in texts
                             for m in re.finditer(r"^\(([\w:-]+)\)=\s*\n#+\s+(.+)$", text, re.MULTILINE)}
        return self._targets


# ---------------------------------------------------------------------------------------------------------
# The otter master notebook


def _raw(text: str):
    return nbformat.v4.new_raw_cell(text)


def _graded_cells(question: Graded, heading: str) -> list:
    module, name, call = question.checker
    ident = re.sub(r"\W", "_", question.label)
    setup = "".join(f"    {line}\n" for line in question.setup.splitlines())
    test = (f"def test_{ident}({question.answer}):\n{setup}"
            f"    from {module} import {name}\n"
            f"    feedback = {call}\n"
            "    assert feedback, feedback.message\n")
    points = f"{question.points:g} point{'' if question.points == 1 else 's'}"
    cells = [_raw(f"# BEGIN QUESTION\nname: {question.label}\npoints: {question.points}"),
             nbformat.v4.new_markdown_cell(
                 f"{heading}\n\n*Graded, {points}: assign your answer to `{question.answer}` in the cell "
                 "below, then run the check under it.*")]
    if question.setup:
        cells.append(nbformat.v4.new_code_cell(question.setup))
    return cells + [
        _raw("# BEGIN SOLUTION"),
        nbformat.v4.new_code_cell(f'""" # BEGIN PROMPT\n{question.answer} = ...\n""" # END PROMPT\n'
                                  f"# BEGIN SOLUTION NO PROMPT\n{question.solution}\n# END SOLUTION"),
        _raw("# END SOLUTION"),
        _raw("# BEGIN TESTS"), nbformat.v4.new_code_cell(test), _raw("# END TESTS"),
        _raw("# END QUESTION")]


def _written_cells(exercise: Exercise, heading: str, md: Markdown) -> list:
    solution = md(exercise.solution) if exercise.solution else "(The book gives no solution.)"
    return [_raw(f"# BEGIN QUESTION\nname: {exercise.label}\nmanual: true"),
            nbformat.v4.new_markdown_cell(f"{heading}\n\n*Written: answer in the Markdown cell below; your "
                                          "teacher reads it (the autograder does not score it).*"),
            _raw("# BEGIN SOLUTION"), nbformat.v4.new_markdown_cell(solution), _raw("# END SOLUTION"),
            _raw("# END QUESTION")]


def master_notebook(chapter: str, graded: list[Graded], *, run_tests: bool = True):
    """The otter master notebook of ``chapter``: every exercise as a question, the spec's graded, others
    written."""
    notebook = nbformat.read(BOOK / f"{chapter}.ipynb", as_version=4)
    found, md = exercises(notebook), Markdown(notebook, chapter)
    by_label = {q.label: q for q in graded}
    if missing := [label for label in by_label if label not in found]:
        raise ValueError(f"assignments/spec.yml grades {missing}, but book/{chapter}.ipynb has no exercise "
                         f"labelled so (its labels: {list(found)})")
    config = {"name": chapter, "init_cell": True, "check_all_cell": True, "export_cell": False,
              "run_tests": run_tests, "tests": {"files": False, "ok_format": False},
              "generate": {"pdf": False}}
    title = chapter_title(notebook)
    book = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["title"]
    n_graded, n_written = len(graded), len(found) - len(graded)
    total = f"{sum(q.points for q in graded):g}"
    cells = [_raw("# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False)),
             nbformat.v4.new_markdown_cell(
                 f"# Assignment: {md(title)}\n\n"
                 f"The exercises of the chapter *{md(title)}* of *{book}*, as the book prints them, without "
                 "the solutions. Read the chapter first; run the first code cell before the others.\n\n"
                 f"- **Graded questions** ({n_graded}, {total} points): replace the `...` in the answer cell "
                 "by your answer, then run the `grader.check(...)` cell below it. It grades your answer with "
                 "the checker the book uses, and when the answer is wrong its message says what to look at. "
                 "Check as often as you like.\n"
                 f"- **Written questions** ({n_written}): type your answer into the Markdown cell below the "
                 "question; your teacher reads them.\n\n"
                 "When you are done, restart the kernel and run every cell, save, and hand in this "
                 "notebook.")]
    for number, exercise in enumerate(found.values(), start=1):
        heading = f"## Exercise {number}: {md(exercise.title)}\n\n{md(exercise.text)}"
        cells += (_graded_cells(by_label[exercise.label], heading) if exercise.label in by_label
                  else _written_cells(exercise, heading, md))
    return nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}})


def chapters_with_exercises() -> list[str]:
    return [p.stem for p in sorted(BOOK.glob("*.ipynb")) if exercises(nbformat.read(p, as_version=4))]


def kernel_environment() -> dict[str, str]:
    """The environment for otter and its kernels: this checkout's geron_lib, this environment's kernel."""
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), path) if p),
            "JUPYTER_PREFER_ENV_PATH": "1", "JUPYTER_PLATFORM_DIRS": "1", "PYTHONHASHSEED": "0"}


def make(chapter: str, graded: list[Graded], out: Path = OUT, *, run_tests: bool = True) -> Path:
    """Write ``chapter``'s master notebook and run ``otter assign``; the autograder zip's path."""
    target = out / chapter
    for old in ("master", "student", "autograder"):  # not grades/
        shutil.rmtree(target / old, ignore_errors=True)
    master = target / "master" / f"{chapter}.ipynb"
    master.parent.mkdir(parents=True)
    nbformat.write(master_notebook(chapter, graded, run_tests=run_tests), master)
    command = [sys.executable, "-m", "otter", "assign", "--no-pdfs", str(master), str(target)]
    done = subprocess.run(command + ([] if run_tests else ["--no-run-tests"]), env=kernel_environment(),
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"otter assign failed for {chapter}:\n{done.stdout}\n{done.stderr}")
    [zipped] = (target / "autograder").glob(f"{chapter}-autograder_*.zip")
    return zipped.rename(zipped.with_name(f"{chapter}-autograder.zip"))


# ---------------------------------------------------------------------------------------------------------
# Grading


def grade(autograder: Path, submissions: list[Path], out: Path) -> list[dict]:
    """Grade ``submissions`` with otter's runner (no containers); write grades.csv and one feedback file per
    submission into ``out``. A row per submission: its name, the score of every question, total, possible."""
    from otter.api import grade_submission

    out.mkdir(parents=True, exist_ok=True)
    rows, saved = [], dict(os.environ)
    os.environ.update(kernel_environment())  # the kernels otter starts inherit it
    try:
        for submission in submissions:
            results = grade_submission(str(submission), str(autograder), quiet=True)
            row = {"submission": submission.name}
            row |= {name: results.get_score(name) for name in sorted(results.results)}
            rows.append(row | {"total": results.total, "possible": results.possible})
            (out / f"{submission.stem}.txt").write_text(results.summary(), encoding="utf-8")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for row in rows for k in row)))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    making = commands.add_parser("make", help="student notebooks and autograders (make assignments)")
    making.add_argument("chapters", nargs="*", help="chapter names (default: every chapter with exercises)")
    making.add_argument("--out", type=Path, default=OUT)
    making.add_argument("--no-run-tests", action="store_true", help="skip checking the solutions with otter")
    grading = commands.add_parser("grade", help="grade submissions without containers")
    grading.add_argument("chapter")
    grading.add_argument("submissions", nargs="+", type=Path)
    grading.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)

    if args.command == "make":
        spec = load_spec()
        for chapter in args.chapters or chapters_with_exercises():
            zipped = make(chapter, spec.get(chapter, []), args.out, run_tests=not args.no_run_tests)
            print(f"{chapter}: {args.out / chapter / 'student' / (chapter + '.ipynb')}, {zipped}")
        return 0
    autograder = args.out / args.chapter / "autograder" / f"{args.chapter}-autograder.zip"
    if not autograder.is_file():
        parser.error(f"no autograder at {autograder}: run `make assignments` first")
    for row in grade(autograder, args.submissions, args.out / args.chapter / "grades"):
        print(f"{row['submission']}: {row['total']:g} / {row['possible']:g}")
    print(f"grades and feedback: {args.out / args.chapter / 'grades'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
