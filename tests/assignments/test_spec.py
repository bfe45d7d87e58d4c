"""assignments/spec.yml against the chapters and the library, and how the assignments package reads the
chapters (no otter needed here: tests/assignments/test_grading.py grades with it). The tests marked `book`
read the {eval} values the book build recorded."""

import dataclasses
import json
import re

import nbformat
import pytest
import yaml

from assignments import BOOK
from assignments.master import master_notebook
from assignments.myst import Markdown, chapters_with_exercises, exercises
from assignments.spec import check_solution, load_spec


def _questions(spec):
    return [q for questions in spec.values() for q in questions]


QUESTIONS = _questions(load_spec())


def test_the_spec_grades_enough_questions():
    assert len(QUESTIONS) >= 10


# A question whose setup compiles with jax is in the jax tier (make check skips it)
@pytest.mark.parametrize("question", [
    pytest.param(q, id=q.label, marks=[pytest.mark.jax] if "jax" in q.setup else []) for q in QUESTIONS])
def test_every_spec_solution_passes_its_checker_and_an_empty_answer_does_not(question):
    verdict = check_solution(question)
    assert verdict, f"{question.label}: the spec's solution fails its checker: {verdict.message}"
    empty = check_solution(dataclasses.replace(question, solution=f"{question.answer} = ..."))
    assert not empty and empty.message, f"{question.label}: `{question.answer} = ...` passes its checker"


@pytest.mark.book
def test_every_chapter_with_exercises_becomes_one_question_per_exercise(spec, masters):
    chapters = chapters_with_exercises()
    assert set(spec) <= set(chapters) and len(chapters) >= 5 and set(masters) == set(chapters)
    for chapter in chapters:
        book = nbformat.read(BOOK / f"{chapter}.ipynb", as_version=4)
        labels = list(exercises(book))
        master = masters[chapter]
        questions = [yaml.safe_load(c.source) for c in master.cells
                     if c.cell_type == "raw" and c.source.startswith("# BEGIN QUESTION")]
        assert [q["name"] for q in questions] == labels, chapter
        graded = {q.label for q in spec.get(chapter, [])}
        assert {q["name"] for q in questions if q.get("manual")} == set(labels) - graded, chapter
        tests = [c.source for c in master.cells if c.cell_type == "code" and c.source.startswith("def test_")]
        assert len(tests) == len(graded)
        prose = "\n".join(c.source for c in master.cells if c.cell_type == "markdown")
        assert not re.search(r"\{[\w:-]+\}`", prose), f"{chapter}: a MyST role is left in the assignment"


@pytest.mark.book
def test_every_exercise_reaches_the_student_as_the_book_prints_it(masters):
    for chapter, master in masters.items():
        book = nbformat.read(BOOK / f"{chapter}.ipynb", as_version=4)
        md = Markdown(book, chapter)
        prose = "\n".join(c.source for c in master.cells if c.cell_type == "markdown")
        for label, exercise in exercises(book).items():
            assert md(exercise.title) in prose and md(exercise.text) in prose, (chapter, label)


def question_tests(master, label: str) -> list[str]:
    """The test cells otter runs for question ``label`` of a master notebook (between its BEGIN TESTS and END
    TESTS cells)."""
    cells = master.cells
    start = next(i for i, c in enumerate(cells) if c.cell_type == "raw"
                 and c.source.startswith("# BEGIN QUESTION") and yaml.safe_load(c.source)["name"] == label)
    begin = next(i for i in range(start, len(cells)) if cells[i].source == "# BEGIN TESTS")
    end = next(i for i in range(begin, len(cells)) if cells[i].source == "# END TESTS")
    return [c.source for c in cells[begin + 1:end] if c.cell_type == "code"]


@pytest.mark.book
@pytest.mark.parametrize(("chapter", "question"), [
    pytest.param(chapter, q, id=q.label, marks=[pytest.mark.jax] if "jax" in q.setup else [])
    for chapter, questions in load_spec().items() for q in questions])
def test_a_test_cell_passes_the_solution_and_fails_an_unanswered_question_with_its_own_setup(
        masters, chapter, question):
    [test] = question_tests(masters[chapter], question.label)
    defined: dict = {}
    exec(test, defined)  # noqa: S102 - the master's own test, in a namespace without the setup's names
    [check] = [f for name, f in defined.items() if name.startswith("test_")]
    solved: dict = {}
    assert check_solution(question, solved)
    check(solved[question.answer])  # the solution passes, whatever the student's kernel holds
    with pytest.raises(AssertionError, match=r"\w"):  # `...` fails with the checker's message
        check(...)


def _chapter(*markdown: str, outputs=()):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(m) for m in markdown])
    notebook.cells.append(nbformat.v4.new_code_cell("glue(...)", outputs=list(outputs)))
    return notebook


def test_exercises_are_read_by_label_with_their_solutions_whatever_the_fence():
    chapter = _chapter(
        "# Title\n\n````{exercise} ★★ Nested\n:label: ex-a\n"
        "Text with code:\n```python\nx = 1\n```\nend\n````",
        ":::{exercise} Colons\n---\nlabel: ex-b\nclass: hard\n---\nB's text\n:::\n\n"
        "~~~\n```{exercise} Inside a code block, not an exercise\n```\n~~~",
        "```{solution} ex-a\n:class: dropdown\nA's solution\n~~~{literalinclude} x.py\n~~~\n```")
    found = exercises(chapter)
    assert list(found) == ["ex-a", "ex-b"]
    assert found["ex-a"].title == "★★ Nested"
    assert found["ex-a"].text == "Text with code:\n```python\nx = 1\n```\nend"
    assert found["ex-a"].solution == "A's solution\n~~~{literalinclude} x.py\n~~~"
    assert (found["ex-b"].title, found["ex-b"].text, found["ex-b"].solution) == ("Colons", "B's text", None)
    with pytest.raises(ValueError, match="gated directive"):
        exercises(_chapter("```{exercise-start} Gated\n:label: ex-g\n```"))


def test_myst_roles_become_what_the_book_shows():
    prefix = "application/papermill.record/"
    glue = nbformat.v4.new_output("display_data", data={prefix + "text/plain": "1234567"},
                                  metadata={"scrapbook": {"name": "n", "mime_prefix": prefix}})
    md = Markdown(_chapter("# T", outputs=[glue]), "test")
    assert md("{glue:text}`n:,` and {glue}`n`") == "1,234,567 and 1234567"
    cited = '([Lan et al., 2020](bibliography.md "ALBERT"); [Liu et al., 2019](bibliography.md "RoBERTa"))'
    assert md(cited) == "(Lan et al., 2020; Liu et al., 2019)"   # links to the book's pages: their text
    assert md("[Training the encoder by hand](A4_training_by_hand.ipynb), [the exercise](#ex-x)") == (
        "Training the encoder by hand, the exercise")
    assert md("[PyPI](https://pypi.org)") == "[PyPI](https://pypi.org)"   # a link outside the book stays
    assert md("{term}`masks <dynamic masking>`, {term}`pooler`, {math}`x^2`") == "masks, pooler, $x^2$"
    assert md("{ref}`factorised-embeddings`") == "Factorised embeddings"
    with pytest.raises(ValueError, match="glues no 'missing'"):
        md("{glue:text}`missing:.2f`")


def _values_file(tmp_path, pages: dict):
    path = tmp_path / "eval_values.json"
    path.write_text(json.dumps(pages), encoding="utf-8")
    return path


def test_an_eval_shows_the_text_the_book_build_recorded_for_it(tmp_path):
    values = _values_file(tmp_path, {"book/ch": {'f"{n:,}"': ["30,000", "30,000"], "ratio": ["0.5"]}})
    md = Markdown(_chapter("# T"), "ch", values)
    assert md('saves {eval}`f"{n:,}"` at {eval}`ratio`, {math}`x`') == "saves 30,000 at 0.5, $x$"


@pytest.mark.parametrize(("pages", "rule"), [
    (None, r"eval_values.json is missing: run `make book` first"),
    ({"book/other": {"ratio": ["0.5"]}}, r"holds no \{eval\} values of book/ch.ipynb: run `make book` first"),
    ({"book/ch": {"other": ["1"]}}, r"no value of \{eval\}`ratio` in book/ch.ipynb: run `make book` first"),
    ({"book/ch": {"ratio": ["0.5", "0.25"]}}, r"\{eval\}`ratio` as \['0.25', '0.5'\] in different places"),
])
def test_an_eval_the_build_gives_no_single_value_for_is_refused_with_the_rule(tmp_path, pages, rule):
    values = tmp_path / "eval_values.json" if pages is None else _values_file(tmp_path, pages)
    with pytest.raises((FileNotFoundError, ValueError), match=rule):
        Markdown(_chapter("# T"), "ch", values)("the ratio is {eval}`ratio`")


def _spec_file(tmp_path, graded: str) -> object:
    path = tmp_path / "spec.yml"
    path.write_text("chapters:\n  01_factorised_embeddings:\n    graded:\n" + graded, encoding="utf-8")
    return path


QUESTION = ("      - label: ex-embeddings-breakeven\n        answer: e\n        solution: e = 756\n"
            "        points: 1\n")
CHECK = "        check: geron_lib.notebook.exercises.embeddings.check_largest_saving_width({})\n"


@pytest.mark.parametrize(("graded", "rule"), [
    (QUESTION + CHECK.format("50265, 768"), "never passes the answer 'e'"),
    (QUESTION + "        check: print(e)\n", "must call a checker of geron_lib.notebook.exercises"),
    (QUESTION + CHECK.format("e, 50265, 768") + "        pionts: 2\n", r"unknown keys \['pionts'\]"),
    ("      - label: ex-embeddings-breakeven\n        answer: e\n",
     "needs label, answer, check, solution and points"),
])
def test_a_malformed_spec_is_refused_with_the_rule(tmp_path, graded, rule):
    with pytest.raises(ValueError, match=rule):
        load_spec(_spec_file(tmp_path, graded))


def test_a_label_the_chapter_lacks_is_refused_naming_it(spec):
    renamed = [dataclasses.replace(spec["01_factorised_embeddings"][0], label="ex-embeddings-gone")]
    with pytest.raises(ValueError, match=r"grades \['ex-embeddings-gone'\].*ex-embeddings-breakeven"):
        master_notebook("01_factorised_embeddings", renamed)


def test_a_chapter_the_book_lacks_is_refused(tmp_path):
    path = tmp_path / "spec.yml"
    path.write_text("chapters:\n  09_nowhere:\n    graded: []\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no notebook book/09_nowhere.ipynb"):
        load_spec(path)
