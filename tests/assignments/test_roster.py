"""Per-student numbers without kernels: the roster's rules (a bad roster exits 2 naming the file and the
rule), each student's numbers (drawn from their id, in the spec's ranges, meeting its condition, never the
book's, different from student to student, and so their expected values), the exercises that cannot vary,
the spec's rules for numbers, and whose a submission is. Making and grading with a roster:
test_roster_grading.py."""

import dataclasses
import json
import re
import string

import nbformat
import pytest

from assignments import GradingRefused
from assignments.__main__ import main
from assignments.hidden import make_hidden, matches
from assignments.master import hidden_tests
from assignments.roster import ID_COLUMN, METADATA_KEY, identify, read_roster
from assignments.spec import check_solution, fixed_exercises, load_spec, satisfied
from assignments.students import draw, shared_answers, student_hidden, student_questions

CHAPTER = "01_factorised_embeddings"
IDS = ["ada", "bob", "cyd", "dee", "eve", "s-0042", "x.y_z"]
SPEC = load_spec()
VARYING = [q for questions in SPEC.values() for q in questions if q.vary]


def _roster(tmp_path, text: str, name: str = "roster.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_roster_gives_its_ids_in_order_whatever_its_other_columns(tmp_path):
    text = "name,student_id,email\nAda L,ada,a@x\n\n Bob , bob ,b@x\nCyd,cyd,\n"
    assert read_roster(_roster(tmp_path, "\ufeff" + text)) == ["ada", "bob", "cyd"]  # a BOM, blank lines


@pytest.mark.parametrize(("text", "rule"), [
    (None, "does not exist"),
    ("", "is empty"),
    ("\n\n", "is empty"),
    (f"{ID_COLUMN}\n", "lists no student"),
    ("id,name\nada,Ada\n", f"has no column '{ID_COLUMN}' in its header row (it has ['id', 'name'])"),
    (f"{ID_COLUMN}\nada\nbob\nada\n", "lists the student ids ['ada'] more than once"),
    (f"{ID_COLUMN},name\nada,Ada\n,Nobody\n", "row 3: the student id '' must be"),
    (f"{ID_COLUMN}\n../eve\n", "row 2: the student id '../eve' must be"),
    (f"{ID_COLUMN}\nada lovelace\n", "row 2: the student id 'ada lovelace' must be"),
])
@pytest.mark.parametrize("command", [["make"], ["grade", CHAPTER, "a.ipynb"]])
def test_a_bad_roster_is_refused_with_exit_2_naming_the_file_and_the_rule(tmp_path, capsys, text, rule,
                                                                          command):
    path = tmp_path / "roster.csv" if text is None else _roster(tmp_path, text)
    with pytest.raises(SystemExit) as stopped:
        main([*command, "--roster", str(path), "--out", str(tmp_path / "out")])
    assert stopped.value.code == 2
    message = capsys.readouterr().err
    assert f"the roster {path}" in message and rule in message, message


def test_a_roster_that_is_no_utf8_text_is_refused(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_bytes(f"{ID_COLUMN}\n".encode() + "\u00e9ve\n".encode("latin-1"))
    with pytest.raises(ValueError, match=f"the roster {path} is not UTF-8 text"):
        read_roster(path)


@pytest.mark.parametrize("question", VARYING, ids=[q.label for q in VARYING])
def test_each_student_gets_numbers_of_their_own_in_range_and_never_the_books(question):
    drawn = {student: draw(question, student) for student in IDS}
    assert drawn == {student: draw(question, student) for student in IDS}  # the same on every call
    for numbers in drawn.values():
        assert numbers.keys() == question.vary.keys() and numbers != question.book
        for name, value in numbers.items():
            param = question.vary[name]
            allowed = param.get("choices") or range(param["from"], param["to"] + 1, param.get("step", 1))
            assert value in allowed, (question.label, name, value)
        assert not question.where or satisfied(question.where, numbers, question.label)
    assert len({tuple(n.values()) for n in drawn.values()}) == len(IDS), (question.label, drawn)


@pytest.mark.parametrize("question", VARYING, ids=[q.label for q in VARYING])
def test_each_students_expected_value_is_their_own_and_passes_their_checker(question):
    expected = {}
    for student in IDS[:5]:
        [own] = student_questions([question], student)
        env: dict = {}
        assert check_solution(own, env), (question.label, student)
        expected[student] = env[own.answer]
    for student, value in expected.items():  # no neighbour's answer is right for another student
        others = [s for s in expected if s != student]
        copied = [s for s in others if matches(expected[s], value, question.tolerance)]
        assert not copied, (question.label, student, copied)


@pytest.mark.parametrize("question", VARYING, ids=[q.label for q in VARYING])
def test_each_students_numbers_replace_the_books_where_the_exercise_states_them(question):
    [own] = student_questions([question], "ada")
    for book_words, own_words in question.prose:
        told = own.stated(book_words.format(**question.book))
        assert told == own_words.format(**own.numbers)
        named = {f for _, f, _, _ in string.Formatter().parse(own_words) if f}
        assert all(str(own.numbers[name]) in told for name in named)
    assert question.stated("untouched text") == "untouched text"  # the book's own numbers change nothing


def test_the_exercises_that_cannot_vary_are_listed_with_why():
    fixed = fixed_exercises(SPEC)
    listed = {label for labels in fixed.values() for label in labels}
    assert listed == {q.label for questions in SPEC.values() for q in questions if not q.vary}
    assert listed == {"ex-attention-compiler", "ex-tradeoffs-costlier",
                      "ex-hf-unfactorised", "ex-hf-positions"}
    assert all(reason for labels in fixed.values() for reason in labels.values())
    assert all(student_questions([q], "ada") == [q] for q in SPEC["A1_hugging_face"])  # the book's, for all


QUESTION = ("      - label: ex-embeddings-breakeven\n        answer: e\n"
            "        solution: e = (H * (V - 1) - 1) // (V + H)\n"
            "        check: geron_lib.notebook.exercises.embeddings.check_largest_saving_width(e, V, H)\n"
            "        points: 1\n")
VARY = ("        vary:\n          V: {book: 50265, from: 100, to: 200}\n"
        "          H: {book: 768, choices: [64, 128]}\n")
PROSE = "        prose:\n          - check_largest_saving_width(your_answer, {V}, {H})\n"


@pytest.mark.parametrize(("graded", "rule"), [
    (QUESTION, "gives either 'vary' .* or 'fixed'"),
    (QUESTION + VARY + PROSE + "        fixed: because\n", "gives either 'vary' .* or 'fixed'"),
    (QUESTION + VARY, "'prose' .* goes with 'vary'"),
    (QUESTION + "        fixed: because\n" + PROSE, "'prose' .* goes with 'vary'"),
    (QUESTION + VARY + PROSE.replace("{H}", "{E}"), r"names \['E'\], which vary does not hold"),
    (QUESTION + VARY + PROSE + "        where: V > 60000\n", "the book's numbers do not meet its own"),
    (QUESTION + VARY.replace("from: 100, to: 200", "from: 200, to: 100") + PROSE, "from <= to and step >= 1"),
    (QUESTION + VARY.replace("choices: [64, 128]", "choices: []") + PROSE, "choices must be a non-empty"),
    (QUESTION + VARY.replace("{book: 768, ", "{") + PROSE, "holding a mapping with the book's value"),
])
def test_a_spec_whose_numbers_break_a_rule_is_refused_with_it(tmp_path, graded, rule):
    path = tmp_path / "spec.yml"
    path.write_text("chapters:\n  01_factorised_embeddings:\n    graded:\n" + graded, encoding="utf-8")
    with pytest.raises(ValueError, match=rule):
        load_spec(path)


def test_students_whom_the_draw_gives_one_answer_are_named_for_the_teacher():
    question = next(q for q in VARYING if q.label == "ex-sharing-large-attention")  # L alone: 93 values
    first = draw(question, "ada")
    twin = next(s for s in (f"s{n}" for n in range(10_000)) if draw(question, s) == first)
    answers = {}
    for student in ("ada", "bob", twin):
        [own] = student_questions([question], student)
        env: dict = {}
        check_solution(own, env)
        answers[student] = {question.label: env[own.answer]}
    assert shared_answers(answers, [question]) == [
        f"ex-sharing-large-attention: students ['ada', '{twin}'] have the same answer, so one's copied "
        "answer scores for another"]
    assert shared_answers({s: answers[s] for s in ("ada", "bob")}, [question]) == []


def test_numbers_that_cannot_meet_their_condition_are_refused_when_drawn():
    question = dataclasses.replace(SPEC[CHAPTER][1], where="E > H")
    with pytest.raises(ValueError, match="ex-embeddings-xxlarge: 1000 draws from its ranges met neither"):
        draw(question, "ada")


# Whose a submission is -------------------------------------------------------------------------------------
def _notebook(path, **claim):
    notebook = nbformat.v4.new_notebook()
    if claim:
        notebook.metadata[METADATA_KEY] = claim
    nbformat.write(notebook, path)
    return path


def test_a_submission_is_its_metadatas_student_or_else_its_file_names(tmp_path):
    named = _notebook(tmp_path / "bob.ipynb")
    claimed = _notebook(tmp_path / "handed-in-3.ipynb", chapter=CHAPTER, student="ada")
    both = _notebook(tmp_path / "cyd.ipynb", chapter=CHAPTER, student="cyd")
    broken = tmp_path / "dee.ipynb"
    broken.write_text('{"cells": [', encoding="utf-8")  # no notebook: graded (to zeros) as dee's
    assert identify([named, claimed, both, broken], IDS, CHAPTER) == {
        named: "bob", claimed: "ada", both: "cyd", broken: "dee"}
    assert identify([named, broken], None, CHAPTER) == {}  # no roster, no student's own notebook: the class's


@pytest.mark.parametrize(("files", "rule"), [
    ({"paper.ipynb": {}}, "paper.ipynb holds no student id in its metadata, and its name is no student id"),
    ({"a.ipynb": {"chapter": CHAPTER, "student": "zed"}}, "student 'zed', who is not on the roster"),
    ({"a.ipynb": {"chapter": CHAPTER, "student": ["ada"]}}, "student ['ada'], who is not on the roster"),
    ({"bob.ipynb": {"chapter": CHAPTER, "student": "ada"}}, "named for student 'bob' but is the notebook of "
                                                           "student 'ada'"),
    ({"ada.ipynb": {"chapter": "02_cross_layer_sharing", "student": "ada"}},
     "is chapter 02_cross_layer_sharing's"),
    ({"ada.ipynb": {}, "copy.ipynb": {"chapter": CHAPTER, "student": "ada"}},
     "['ada.ipynb', 'copy.ipynb'] are all the notebook of student 'ada'"),
])
def test_grading_refuses_when_it_cannot_tell_whose_a_submission_is(tmp_path, files, rule):
    paths = [_notebook(tmp_path / name, **claim) for name, claim in files.items()]
    with pytest.raises(GradingRefused, match="cannot tell whose each submission is: .*" + re.escape(rule)):
        identify(paths, IDS, CHAPTER)


def test_a_students_own_notebook_graded_without_the_roster_is_refused_with_exit_2(tmp_path, capsys):
    out = tmp_path / "out"
    make_hidden(SPEC[CHAPTER], hidden_tests(CHAPTER, out))
    own = _notebook(tmp_path / "ada.ipynb", chapter=CHAPTER, student="ada")
    with pytest.raises(SystemExit) as stopped:
        main(["grade", CHAPTER, str(own), "--out", str(out)])
    assert stopped.value.code == 2 and "grade them with --roster" in capsys.readouterr().err
    roster = _roster(tmp_path, f"{ID_COLUMN}\nada\n")
    with pytest.raises(SystemExit) as stopped:  # the roster's student has no hidden tests yet
        main(["grade", CHAPTER, str(own), "--out", str(out), "--roster", str(roster)])
    message, missing = capsys.readouterr().err, student_hidden(hidden_tests(CHAPTER, out), "ada")
    assert stopped.value.code == 2 and f"student 'ada' has no hidden tests ({missing})" in message
    assert json.loads(own.read_text())["metadata"][METADATA_KEY]["student"] == "ada"
