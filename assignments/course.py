"""assignments/course.yml: the teachers' page's course plan (weeks and a capstone), checked when read against
the book (every page, explorer and figure it names exists) and the spec (every assignment is a page
``make assignments`` builds); each page's graded points and written questions come from the spec."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml

from geron_lib.config import SHARING

from . import BOOK, ROOT
from .myst import chapter_title, chapters_with_exercises, exercises
from .rubrics import plain_text
from .spec import load_spec

COURSE = ROOT / "assignments" / "course.yml"
#: How many weeks a plan has
WEEKS = (6, 8)
#: What the capstone's primary comparison may be measured on (geron_lib.studies.context_grid.per_example)
MEASURES = ("held_out_loss", "order", "section")
_WEEK_KEYS = {"topic", "read", "explorer", "figures", "in_class", "assignments"}
_CAPSTONE_KEYS = {"hypothesis", "cells", "seeds", "primary", "budget_hours", "rubric"}
_CELL = re.compile(r"^(?P<E>[1-9]\d*):(?P<sharing>\w+):(?P<H>[1-9]\d*)$")
_SCRUBBER = re.compile(r"\.scrubber\(\s*\"([\w-]+)\"")


@dataclass(frozen=True)
class Week:
    topic: str
    read: tuple[str, ...]
    explorer: str
    figures: tuple[str, ...]
    in_class: str
    assignments: tuple[str, ...]


@dataclass(frozen=True)
class Capstone:
    """A hypothesis about new cells of the training grid, its one primary comparison, the runs' budget and
    the rubric (points, criterion) it is graded with."""

    hypothesis: str
    cells: tuple[str, ...]
    seeds: tuple[int, ...]
    primary: dict
    budget_hours: float
    rubric: tuple[tuple[float, str], ...]

    @property
    def command(self) -> str:
        """scripts/context_grid.py's command line that trains exactly the cells, seed by seed, into a file of
        its own (run again, it resumes), one group of options a line."""
        parts = [c.split(":") for c in self.cells]
        modes = sorted({s for _, s, _ in parts}, key=SHARING.index)
        widths = sorted({int(E) for E, _, _ in parts})
        return " \\\n    ".join([
            ".venv/bin/python scripts/context_grid.py",
            f"--sharing {' '.join(modes)} --embedding-sizes {' '.join(map(str, widths))}",
            f"--cells {' '.join(self.cells)}",
            f"--seeds {' '.join(map(str, self.seeds))} --wide-seeds",
            "--output capstone/grid.json --cache capstone/cache"])

    @property
    def analysis(self) -> str:
        """Code that reads the runs back and computes the primary comparison with its 95 % interval."""
        def cell(text: str) -> str:
            E, sharing, H = text.split(":")
            return f'cg.Cell({E}, "{sharing}", {H})'

        p = self.primary
        return ("from geron_lib.studies import context_grid as cg, intervals\n"
                "from geron_lib.studies.stored import load\n\n"
                'grid = load("capstone/grid.json", "scripts/context_grid.py")\n'
                f'cell = cg.per_example(grid, {cell(p["cell"])}, "{p["measure"]}")\n'
                f'against = cg.per_example(grid, {cell(p["against"])}, "{p["measure"]}")\n'
                "d = intervals.difference(cell, against)\n"
                'print(f"{d.mean:+.4f}, 95 % interval {d.low:+.4f} to {d.high:+.4f}")')

    @property
    def runs(self) -> int:
        return len(self.cells) * len(self.seeds)

    def hours(self, run_seconds: float, workers: int = 2) -> float:
        """The runs' wall-clock hours when each takes ``run_seconds`` and ``workers`` run side by side."""
        return math.ceil(self.runs / workers) * run_seconds / 3600

    @property
    def points(self) -> float:
        return sum(p for p, _ in self.rubric)


@dataclass(frozen=True)
class Course:
    weeks: tuple[Week, ...]
    capstone: Capstone


def questions(page: str, spec: dict | None = None) -> tuple[dict[str, float], list[str]]:
    """A page's exercises as its assignment has them: the graded ones {label: points} and the written ones."""
    spec = load_spec() if spec is None else spec
    graded = {q.label: q.points for q in spec.get(page, [])}
    found = exercises(nbformat.read(BOOK / f"{page}.ipynb", as_version=4))
    return graded, [label for label in found if label not in graded]


def narrow_run_seconds(stored: dict, narrow: int) -> list[float]:
    """Seconds each run of a narrow cell (H = ``narrow``) of a stored grid took: its pretraining and its
    fine-tuning on every task, as scripts/context_grid.py records them."""
    def key(r: dict) -> tuple:
        return r["E"], r["sharing"], r["H"], r["seed"]

    tuned = [r for r in stored["finetuning"] if r["pretrained"]]
    return [r["seconds"] + sum(t["seconds"] for t in tuned if key(t) == key(r))
            for r in stored["runs"] if r["H"] == narrow]


def page_title(page: str) -> str:
    """The title of ``book/<page>`` (a notebook or a Markdown page)."""
    if (BOOK / f"{page}.ipynb").is_file():
        return chapter_title(nbformat.read(BOOK / f"{page}.ipynb", as_version=4))
    return re.search(r"^# (.+)$", (BOOK / f"{page}.md").read_text(encoding="utf-8"), re.MULTILINE)[1].strip()


def shown_on_pages() -> tuple[dict[str, str], dict[str, str]]:
    """({figure name: page}, {scrubber name: page}) over every notebook of the book."""
    figures, scrubbers = {}, {}
    for path in sorted(BOOK.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            name = cell.metadata.get("mystnb", {}).get("figure", {}).get("name")
            if name:
                figures[name] = path.stem
            if cell.cell_type == "code":
                scrubbers.update((m, path.stem) for m in _SCRUBBER.findall(cell.source))
    return figures, scrubbers


def _names(where: str, value, known, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where} must be a list of {what}, got {value!r}")
    if unknown := [v for v in value if v not in known]:
        raise ValueError(f"{where} names {what} the book does not have: {unknown}")
    return tuple(value)


def _week(where: str, entry, figures: dict, scrubbers: dict, built: list[str]) -> Week:
    if not isinstance(entry, dict) or set(entry) != _WEEK_KEYS:
        raise ValueError(f"{where}: a week has exactly the keys {sorted(_WEEK_KEYS)}, got {entry!r}")
    pages = {p.stem for p in BOOK.glob("*.ipynb")} | {p.stem for p in BOOK.glob("*.md")}
    read = _names(f"{where}, read", entry["read"], pages, "pages")
    if not read:
        raise ValueError(f"{where}, read must name at least one page")
    _names(f"{where}, explorer", [entry["explorer"]], scrubbers, "explorers (scrubber names)")
    return Week(plain_text(f"{where}, topic", entry["topic"]), read, entry["explorer"],
                _names(f"{where}, figures", entry["figures"], figures, "figures"),
                plain_text(f"{where}, in_class", entry["in_class"]),
                _names(f"{where}, assignments", entry["assignments"], built,
                       "pages `make assignments` does not build (pages with exercises)"))


def _capstone(where: str, entry) -> Capstone:
    if not isinstance(entry, dict) or set(entry) != _CAPSTONE_KEYS:
        raise ValueError(f"{where}: the capstone has exactly the keys {sorted(_CAPSTONE_KEYS)}, "
                         f"got {entry!r}")
    cells = entry["cells"]
    if (not isinstance(cells, list) or len(cells) < 2 or len(set(cells)) != len(cells)
            or not all(isinstance(c, str) and (m := _CELL.match(c)) and m["sharing"] in SHARING
                       for c in cells)):
        raise ValueError(f"{where}, cells must be two or more distinct cells E:SHARING:H (SHARING one of "
                         f"{SHARING}), got {cells!r}")
    seeds = entry["seeds"]
    if (not isinstance(seeds, list) or len(seeds) < 2 or len(set(seeds)) != len(seeds)
            or not all(type(s) is int and s >= 0 for s in seeds)):
        raise ValueError(f"{where}, seeds must be two or more distinct seeds (ints from 0), got {seeds!r}")
    primary = entry["primary"]
    if (not isinstance(primary, dict) or set(primary) != {"cell", "against", "measure", "sign"}
            or primary["cell"] not in cells or primary["against"] not in cells
            or primary["cell"] == primary["against"] or primary["measure"] not in MEASURES
            or primary["sign"] not in ("positive", "negative")):
        raise ValueError(f"{where}, primary must hold cell and against (two of its cells), measure (one of "
                         f"{MEASURES}) and sign (positive or negative), got {primary!r}")
    budget = entry["budget_hours"]
    if isinstance(budget, bool) or not isinstance(budget, int | float) or not 0 < budget < math.inf:
        raise ValueError(f"{where}, budget_hours must be a positive number of hours, got {budget!r}")
    rubric = entry["rubric"]
    if not isinstance(rubric, list) or not all(isinstance(r, dict) and set(r) == {"points", "criterion"}
                                               and type(r["points"]) in (int, float) and r["points"] > 0
                                               for r in rubric) or not rubric:
        raise ValueError(f"{where}, rubric must be a list of {{points, criterion}} with positive points, "
                         f"got {rubric!r}")
    return Capstone(plain_text(f"{where}, hypothesis", entry["hypothesis"]), tuple(cells), tuple(seeds),
                    dict(primary), float(budget),
                    tuple((r["points"], plain_text(f"{where}, rubric", r["criterion"])) for r in rubric))


def load_course(path: Path = COURSE) -> Course:
    """The course plan, every name in it checked against the book."""
    name, data = Path(path).name, yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or set(data) != {"weeks", "capstone"} or type(data["weeks"]) is not list:
        raise ValueError(f"{name}: expected the mappings 'weeks:' (a list) and 'capstone:'")
    low, high = WEEKS
    if not low <= len(data["weeks"]) <= high:
        raise ValueError(f"{name}: a plan has {low} to {high} weeks, got {len(data['weeks'])}")
    figures, scrubbers = shown_on_pages()
    built = chapters_with_exercises()
    weeks = tuple(_week(f"{name}, week {i}", w, figures, scrubbers, built)
                  for i, w in enumerate(data["weeks"], start=1))
    assigned = [p for w in weeks for p in w.assignments]
    if twice := sorted({p for p in assigned if assigned.count(p) > 1}):
        raise ValueError(f"{name}: a page's assignment is handed out in one week only, got {twice} twice")
    return Course(weeks, _capstone(f"{name}, capstone", data["capstone"]))
