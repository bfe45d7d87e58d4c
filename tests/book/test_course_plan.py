"""The teachers' page's course plan (assignments/course.yml): every page, explorer and figure it names is in
the book, it hands out every assignment `make assignments` builds, the page shows each week's points as the
spec has them, and bad plans are refused naming what is wrong; its capstone trains new points of the training
grid, exactly those, within its budget at the stored runs' pace, and its analysis reads them back."""

import json
import statistics
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from book_site.pages import ROOT
from page_cells import run_cells

from assignments.course import COURSE, MEASURES, load_course, narrow_run_seconds
from assignments.myst import chapters_with_exercises
from assignments.spec import load_spec
from geron_lib.studies import context_grid as cg
from geron_lib.studies.stored import load

sys.path.append(str(ROOT / "scripts"))  # scripts/context_grid.py, read as a module
from context_grid import OUTPUT, parse  # noqa: E402

COURSE_PLAN = load_course()
CAPSTONE = COURSE_PLAN.capstone
STORED = load(cg.STORED, "scripts/context_grid.py")


def _cell(text: str) -> cg.Cell:
    E, sharing, H = text.split(":")
    return cg.Cell(int(E), sharing, int(H))


def test_every_assignment_is_handed_out_in_one_week():
    handed = [page for week in COURSE_PLAN.weeks for page in week.assignments]
    assert sorted(handed) == sorted(chapters_with_exercises())


def test_the_page_shows_each_weeks_points_from_the_spec():
    spec = load_spec()
    expected = [sum(q.points for page in week.assignments for q in spec.get(page, []))
                for week in COURSE_PLAN.weeks]
    assert run_cells("book/teachers", "teachers-weeks")["week_points"] == expected
    assert sum(expected) == sum(q.points for questions in spec.values() for q in questions)


def _plan(tmp_path, change) -> Path:
    data = yaml.safe_load(COURSE.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "course.yml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("change, message", [
    (lambda d: d["weeks"][0].update(figures=["fig-nowhere"]), "week 1, figures names figures the book does "
                                                              "not have: ['fig-nowhere']"),
    (lambda d: d["weeks"][1].update(explorer="nowhere"), "week 2, explorer names explorers"),
    (lambda d: d["weeks"][2].update(read=["99_nowhere"]), "week 3, read names pages the book does not have"),
    (lambda d: d["weeks"][3].update(assignments=["A3_reading_albert_tables"]),
     "week 4, assignments names pages `make assignments` does not build"),
    (lambda d: d["weeks"][4].update(assignments=["01_factorised_embeddings"]), "handed out in one week only"),
    (lambda d: d.update(weeks=d["weeks"][:5]), "a plan has 6 to 8 weeks, got 5"),
    (lambda d: d["weeks"][0].pop("in_class"), "week 1: a week has exactly the keys"),
    (lambda d: d["weeks"][0].update(topic="rank $E$"), "week 1, topic must be plain Markdown"),
    (lambda d: d["capstone"].update(cells=["64:some:64", "64:ffn:64"]), "capstone, cells must be"),
    (lambda d: d["capstone"].update(seeds=[0]), "capstone, seeds must be two or more"),
    (lambda d: d["capstone"]["primary"].update(against="16:none:64"), "capstone, primary must hold"),
    (lambda d: d["capstone"]["primary"].update(measure="accuracy"), "capstone, primary must hold"),
    (lambda d: d["capstone"].update(budget_hours=0), "capstone, budget_hours must be a positive"),
    (lambda d: d["capstone"]["rubric"][0].update(points=-1), "capstone, rubric must be a list"),
])
def test_a_plan_that_is_not_one_is_refused_naming_it(tmp_path, change, message):
    with pytest.raises(ValueError) as error:
        load_course(_plan(tmp_path, change))
    assert message in str(error.value)


def test_the_capstone_trains_new_points_of_the_grid_and_only_those():
    args, grid, runs = parse(CAPSTONE.command.replace("\\\n", " ").split()[2:])
    cells = {_cell(c) for c in CAPSTONE.cells}
    assert sorted(runs) == sorted((c, s) for c in cells for s in CAPSTONE.seeds)
    assert len(runs) == CAPSTONE.runs
    assert not cells & set(cg.Grid().cells())  # not a cell of the grid the book stores
    assert not cells & {cg.Cell(r["E"], r["sharing"], r["H"]) for r in STORED["runs"]}
    assert args.output.resolve() != OUTPUT.resolve()  # never over the stored grid
    assert {_cell(CAPSTONE.primary["cell"]), _cell(CAPSTONE.primary["against"])} == cells


def test_the_primary_measures_are_the_stored_grids():
    assert set(MEASURES) == {"held_out_loss", *STORED["tasks"]}


def test_the_capstone_fits_its_budget_at_the_stored_runs_pace():
    seconds = narrow_run_seconds(STORED, cg.Grid().narrow)
    narrow = [r for r in STORED["runs"] if r["H"] == cg.Grid().narrow]
    assert len(seconds) == len(narrow) and all(s > r["seconds"] for s, r in zip(seconds, narrow, strict=True))
    assert CAPSTONE.hours(statistics.median(seconds)) <= CAPSTONE.budget_hours
    assert run_cells("book/teachers", "teachers-capstone-numbers")["capstone_hours"] == pytest.approx(
        CAPSTONE.hours(statistics.median(seconds)))


def test_the_capstones_analysis_reads_the_runs_back(tmp_path, monkeypatch, capsys):
    # a grid as the script stores it, per-token held-out losses of each (cell, seed) only
    rng = np.random.default_rng(0)
    losses = {c: rng.normal(3 + i, 0.1, (len(CAPSTONE.seeds), 50)) for i, c in enumerate(CAPSTONE.cells)}
    runs = [{"E": _cell(c).E, "sharing": _cell(c).sharing, "H": _cell(c).H, "seed": seed,
             "held_out_token_losses": losses[c][k].tolist()}
            for c in CAPSTONE.cells for k, seed in enumerate(CAPSTONE.seeds)]
    (tmp_path / "capstone").mkdir()
    grid = {"runs": runs, "tasks": {}, "finetuning": []}
    (tmp_path / "capstone" / "grid.json").write_text(json.dumps(grid), encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the analysis reads capstone/grid.json, where the command writes it
    names: dict = {}
    exec(CAPSTONE.analysis, names)
    p = CAPSTONE.primary
    assert names["d"].mean == pytest.approx(losses[p["cell"]].mean() - losses[p["against"]].mean())
    assert f"{names['d'].mean:+.4f}" in capsys.readouterr().out
