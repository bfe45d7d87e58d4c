"""The teachers' page's commands run as a teacher runs them, from a folder of their own with a link to this
checkout's .venv (assignments/walkthrough.py: each with --out into that folder, the one change): they make
the chapter's assignment with exactly the files the page lists, and grade the two sample submissions into
exactly the stored sample the page shows, and again the same with the time limits raised or without the
sandbox; a batch of one rewrites grades.csv with its row alone; the roster commands grade a class of five,
one with a neighbour's answers, into the stored sample the page shows. otter's zip installs otter alone, not
geron_lib, as the page says of Gradescope."""

import importlib.util
import zipfile

import pytest
import yaml
from book_site.pages import skip_or_fail

from assignments.walkthrough import (
    CHAPTER,
    COMMANDS,
    LAYOUT,
    ROSTER_SAMPLE,
    SAMPLE,
    SAMPLE_ANSWERS,
    grade_roster_sample,
    grade_sample,
    run,
)

# otter assign, then two kernels per grading, on a shared machine; one worker walks the page, once
pytestmark = [pytest.mark.book, pytest.mark.slow, pytest.mark.xdist_group("walkthrough"),
              pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def walked(built_book, bubblewrap, tmp_path_factory):
    """(the folder, its grades folder) once the page's commands made the assignment and graded the sample."""
    if importlib.util.find_spec("otter") is None:
        skip_or_fail("otter-grader is not installed (requirements.txt pins it)")
    folder = tmp_path_factory.mktemp("clone")
    return folder, grade_sample(folder)


@pytest.fixture(scope="module")
def class_graded(built_book, bubblewrap, tmp_path_factory):
    """The grades folder once the page's roster commands made the assignment for the class and graded it."""
    if importlib.util.find_spec("otter") is None:
        skip_or_fail("otter-grader is not installed (requirements.txt pins it)")
    return grade_roster_sample(tmp_path_factory.mktemp("class"))


def _same_as_the_sample(grades):
    for name in ("grades.csv", *(f"{s}.txt" for s in SAMPLE_ANSWERS)):
        assert (grades / name).read_bytes() == (SAMPLE / name).read_bytes(), (
            f"{name} differs from the stored sample: python -m assignments.walkthrough writes it again")


def test_the_commands_grade_the_sample_as_the_page_shows(walked):
    _same_as_the_sample(walked[1])


def test_make_writes_what_the_page_lists(walked):
    made = walked[0] / "_build" / "assignments" / CHAPTER
    listed = {path.format(chapter=CHAPTER, submission=s) for path in LAYOUT for s in SAMPLE_ANSWERS}
    assert {str(p.relative_to(made)) for p in made.rglob("*") if p.is_file()} == listed


def test_otters_zip_installs_otter_and_not_the_library(walked):
    zipped = walked[0] / "_build" / "assignments" / CHAPTER / "autograder" / f"{CHAPTER}-autograder.zip"
    with zipfile.ZipFile(zipped) as z:
        environment = yaml.safe_load(z.read("environment.yml"))
        assert "environment.yml" in z.read("setup.sh").decode()  # what Gradescope's image installs
    pip = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert any(p.startswith("otter-grader") for p in pip)
    assert not any("geron" in str(d) for d in [*environment["dependencies"], *pip])


@pytest.mark.parametrize("step", ["limits", "unsafe"])
def test_a_regrade_gives_the_same_marks(walked, step):
    folder, grades = walked
    done = run(COMMANDS[step], folder)
    assert done.returncode == 0, done.stderr
    _same_as_the_sample(grades)


def test_a_batch_of_one_rewrites_grades_csv_with_its_row_alone(walked):
    # last: it leaves the grades folder with one row
    folder, grades = walked
    done = run(COMMANDS["grade"].replace("*.ipynb", "ada.ipynb"), folder)
    assert done.returncode == 0, done.stderr
    header, ada, _ = (SAMPLE / "grades.csv").read_text(encoding="utf-8").splitlines()
    assert (grades / "grades.csv").read_text(encoding="utf-8").splitlines() == [header, ada]
    assert (grades / "ben.txt").read_bytes() == (SAMPLE / "ben.txt").read_bytes()  # its feedback stays


def test_the_roster_commands_grade_the_class_as_the_page_shows(class_graded):
    for written, stored in ROSTER_SAMPLE.items():
        assert (class_graded / written).read_bytes() == (SAMPLE / stored).read_bytes(), (
            f"{written} differs from the stored sample {stored}: python -m assignments.walkthrough writes it "
            "again")
