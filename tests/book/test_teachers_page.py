"""The teachers' page (book/teachers.ipynb): its table plans every chapter; every written exercise of the
chapters has a rubric (assignments/rubrics.yml) and every rubric names a written exercise of the book,
wherever in book/ it lives (an exercise may move from a chapter to an appendix); the page shows them all;
and its Markdown outputs render as tables and lists, not as raw text."""

import ast

import nbformat
import pytest
import yaml
from book_site.pages import ROOT

from assignments.myst import exercises
from assignments.rubrics import CRITERIA, load_rubrics
from assignments.spec import load_spec

BOOK = ROOT / "book"
TEACHERS = nbformat.read(BOOK / "teachers.ipynb", as_version=4)
CHAPTERS = sorted(p.stem for p in BOOK.glob("[0-9][0-9]_*.ipynb"))  # 00_quickstart to the last chapter
EXERCISES = {p.stem: exercises(nbformat.read(p, as_version=4)) for p in sorted(BOOK.glob("*.ipynb"))}
GRADED = {q.label for questions in load_spec().values() for q in questions}
RUBRICS = load_rubrics()


def _cell(cell_id: str):
    return next(c for c in TEACHERS.cells if c.get("id") == cell_id)


def test_the_table_plans_every_chapter():
    # the chapters the rubric check covers are the chapters the table lists
    source = next(c.source for c in TEACHERS.cells if c.cell_type == "code" and "PLAN = {" in c.source)
    plan = next(node.value for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Assign)
                and [getattr(t, "id", None) for t in node.targets] == ["PLAN"])
    assert sorted(ast.literal_eval(plan)) == CHAPTERS


def test_every_written_exercise_of_the_chapters_has_a_rubric():
    written = {label for chapter in CHAPTERS for label in EXERCISES[chapter] if label not in GRADED}
    missing = sorted(written - set(RUBRICS))
    assert written and not missing, f"written exercises with no rubric in assignments/rubrics.yml: {missing}"


def test_every_rubric_names_a_written_exercise_of_the_book():
    in_book = {label for on_page in EXERCISES.values() for label in on_page}
    gone = sorted(set(RUBRICS) - in_book)
    assert not gone, f"assignments/rubrics.yml has rubrics for exercises no page of book/ has: {gone}"
    graded = sorted(set(RUBRICS) & GRADED)
    assert not graded, f"assignments/rubrics.yml has rubrics for exercises spec.yml grades: {graded}"


def test_the_page_shows_every_rubric():
    outputs = _cell("teachers-rubrics-list").outputs
    assert outputs, "the rubrics cell has no stored output: make outputs NB=book/teachers.ipynb"
    shown = "".join(o["data"]["text/markdown"] for o in outputs if "text/markdown" in o.get("data", {}))
    stale = [label for label, rubric in RUBRICS.items()
             if f"(`{label}`)" not in shown
             or not all(text in shown for text in (*rubric.criteria, rubric.mistake))]
    assert not stale, (f"the page's stored rubrics differ from assignments/rubrics.yml for {stale}: "
                       "make outputs NB=book/teachers.ipynb")


def test_markdown_outputs_render_as_tables_and_lists():
    # myst-nb renders a text/markdown output as CommonMark unless the cell says otherwise, and CommonMark
    # has no tables: the chapter table showed as raw | text
    for index, cell in enumerate(TEACHERS.cells):
        if any("text/markdown" in o.get("data", {}) for o in cell.get("outputs", [])):
            fmt = cell.metadata.get("mystnb", {}).get("markdown_format")
            assert fmt == "gfm", f"teachers.ipynb cell {index}: a Markdown output needs markdown_format gfm"


def _write(tmp_path, rubrics):
    path = tmp_path / "rubrics.yml"
    path.write_text(yaml.safe_dump({"rubrics": rubrics}), encoding="utf-8")
    return path


def test_the_loader_reads_a_rubric(tmp_path):
    rubric = {"criteria": ["names the\n  rank", "gives `E`"], "mistake": "answers 768"}
    read = load_rubrics(_write(tmp_path, {"ex-a": rubric}))["ex-a"]
    assert read.label == "ex-a" and read.mistake == "answers 768"
    assert read.criteria == ("names the rank", "gives `E`")  # whitespace folded, as the page shows it


@pytest.mark.parametrize("entry, message", [
    ({"criteria": ["one"], "mistake": "m"}, f"{CRITERIA[0]} to {CRITERIA[1]} items"),
    ({"criteria": ["a", "b", "c", "d", "e"], "mistake": "m"}, f"{CRITERIA[0]} to {CRITERIA[1]} items"),
    ({"criteria": "a, b", "mistake": "m"}, "must be a list"),
    ({"criteria": ["a", "b"]}, "exactly the keys criteria and mistake"),
    ({"criteria": ["a", "b"], "mistake": "m", "points": 2}, "exactly the keys criteria and mistake"),
    ({"criteria": ["a", " "], "mistake": "m"}, "criterion 2 must be a non-empty string"),
    ({"criteria": ["a", "b"], "mistake": None}, "mistake must be a non-empty string"),
    ({"criteria": ["rank $E$", "b"], "mistake": "m"}, "plain Markdown"),
    ({"criteria": ["a", "b"], "mistake": "see {ref}`albert-tables`"}, "plain Markdown"),
])
def test_the_loader_rejects_a_rubric_that_is_not_one(tmp_path, entry, message):
    with pytest.raises(ValueError, match="ex-a") as error:
        load_rubrics(_write(tmp_path, {"ex-a": entry}))
    assert message in str(error.value)


def test_the_loader_rejects_a_file_without_its_rubrics_mapping(tmp_path):
    path = tmp_path / "rubrics.yml"
    path.write_text("ex-a:\n  criteria: [a, b]\n  mistake: m\n", encoding="utf-8")
    with pytest.raises(ValueError, match="one mapping 'rubrics:'"):
        load_rubrics(path)
