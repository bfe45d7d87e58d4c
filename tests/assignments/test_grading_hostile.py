"""A hostile class: one batch holding a disk tamperer (it appends code to the checker's module that makes
every answer match), a hidden-test reader and a hidden-test writer, a killer (a detached process that kills
graded kernels) and its victim, a classmate-peeker (it finds the submissions through /proc and copies the
majority answer), a grades-writer (it overwrites a classmate's feedback), a bomb (a Decimal of a billion
digits, which the checkers compare at once, and an answer pickled as ``Fraction("1e999999999")``, which
reading back would spend hours expanding, refused at the scoring time limit), a notebook that names
variables `open`, `pickle`, `exec`, `globals` and `Exception`, and a right and a wrong notebook, graded with
the command line (`python -m assignments grade`). Each gets what its honest answers deserve, the bomb's
answers 0. Then the right, the wrong and the bomb are graded again in the same build folder, with other time
limits: no attack lasted past its own run (a changed checker or hidden test would score them otherwise)."""

import csv
import hashlib
import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from book_site.pages import skip_or_fail

import geron_lib.notebook.exercises.embeddings as checkers
from assignments import ROOT, kernel_environment
from assignments.hidden import checksum
from assignments.master import hidden_tests, make
from assignments.scoring import SCORE_TIMEOUT

CHAPTER = "01_factorised_embeddings"
# otter 7.0.0 calls DataFrame.drop(inplace=True), which pandas 3.1 deprecates: not this project's code
# book: the exercises' {eval} numbers; slow: otter and its kernels; one worker grades the batch, once
pytestmark = [pytest.mark.book, pytest.mark.slow, pytest.mark.xdist_group("grading-hostile"),
              pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.drop is deprecated"),
              # eleven kernels, then three: 77 s alone on this 2-core machine, 50 to 100 s in `make test`
              pytest.mark.timeout(1200)]
# By hand (tests/assignments/test_grading.py): 756, and V E + E H + H = 3,840,000 + 524,288 + 4,096
RIGHT = {"largest_width": "756", "factorised_count": "4_368_384"}
WRONG = {"largest_width": "757", "factorised_count": "3_840_000 + 524_288"}
MARKER = "hostile-killer-of-graded-kernels"  # in the killer's command line, to find it after the batch
OVERWRITTEN = "right.ipynb: 0 / 2 (overwritten by a classmate)"

#: Every attack knows where the class's files are: its cell starts with this line
KNOWN = "build_folder, class_folder, grades_folder = {!r}, {!r}, {!r}\n"
TAMPER = f"""with open({str(Path(checkers.__file__))!r}, "a") as f:
    f.write("\\nimport sys\\nfor m in list(sys.modules.values()):\\n"
            "    if getattr(m, '__name__', '').startswith('assignments') and hasattr(m, 'matches'):\\n"
            "        m.matches = lambda *a, **k: True\\n")"""
FIND_HIDDEN = """import glob, hashlib, os, pickle
found = glob.glob(os.path.join(build_folder, "**", "*-hidden.pkl"), recursive=True)
"""
READ = FIND_HIDDEN + """for path in found:
    with open(path, "rb") as f:
        for question in pickle.load(f):
            globals()[question["answer"]] = question["expected"]"""
WRITE = FIND_HIDDEN + """for path in found:
    os.chmod(path, 0o644)
    with open(path, "rb") as f:
        stored = pickle.load(f)
    for question in stored:
        question["expected"] = -1
    data = pickle.dumps(stored, protocol=4)
    with open(path, "wb") as f:
        f.write(data)
    manifest = path.removesuffix(".pkl") + ".sha256"
    os.chmod(manifest, 0o644)
    with open(manifest, "w") as f:
        f.write(hashlib.sha256(data).hexdigest() + "  " + os.path.basename(path) + "\\n")"""
KILL = """import os, signal, sys, time
own, end = int(sys.argv[1]), time.time() + 900
while time.time() < end:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = open(f"/proc/{pid}/cmdline", "rb").read()
            parent = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1]
            launcher = open(f"/proc/{parent}/cmdline", "rb").read()
        except OSError:
            continue
        if b"ipykernel" in command and b"assignments.execution" in launcher and int(pid) != own:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
    time.sleep(0.1)"""
DETACH = f"""import os, subprocess, sys
subprocess.Popen([sys.executable, "-c", {KILL!r}, str(os.getpid()), {MARKER!r}], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)"""
PEEK = """import collections, glob, json, os, re  # PEEKER: the one notebook it skips is its own
folders = {class_folder}
for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
    try:
        args = open(cmdline, "rb").read().decode(errors="replace").split("\\0")
    except OSError:
        continue
    folders |= {os.path.dirname(os.path.abspath(a)) for a in args if a.endswith(".ipynb")}
seen = collections.defaultdict(collections.Counter)
for folder in folders:
    for path in glob.glob(os.path.join(folder, "*.ipynb")):
        try:
            text = open(path, encoding="utf-8").read()
        except OSError:
            continue
        for cell in json.loads(text)["cells"] if "PEEKER" not in text else []:
            answer = re.fullmatch(r"(largest_width|factorised_count) = (.+)", "".join(cell["source"]).strip())
            if answer:
                seen[answer[1]][answer[2]] += 1
for name, counts in seen.items():
    globals()[name] = eval(counts.most_common(1)[0][0])"""
OVERWRITE = f"""import os
os.chdir(grades_folder)
for name in ("right.txt", "wrong.txt", "grades.csv"):
    with open(name, "w") as f:
        f.write({OVERWRITTEN!r})"""
SHADOW = 'open = pickle = exec = globals = Exception = "mine"'
BOMBS = """from decimal import Decimal
from fractions import Fraction
class FractionBomb:  # pickled as Fraction("1e999999999"): reading it back computes 10**999999999
    def __reduce__(self):
        return Fraction, ("1e999999999",)"""
#: name: (answers, a cell before the first answer cell, one after the last cell, its scores on both runs:
#: the two questions', total, possible)
BATCH = {
    "tamperer": (WRONG, TAMPER, "", (0, 0, 0, 2)),
    "wrong": (WRONG, "", "", (0, 0, 0, 2)),
    "reader": (WRONG, "", READ, (0, 0, 0, 2)),
    "writer": (RIGHT, WRITE, "", (1, 1, 2, 2)),
    "killer": (RIGHT, DETACH, "", (1, 1, 2, 2)),
    "victim": (RIGHT, "import time\ntime.sleep(2)", "", (1, 1, 2, 2)),
    "right": (RIGHT, "", "", (1, 1, 2, 2)),
    "peeker": (WRONG, "", PEEK, (0, 0, 0, 2)),
    "grades-writer": (WRONG, OVERWRITE, "", (0, 0, 0, 2)),
    "bomb": ({"largest_width": "FractionBomb()", "factorised_count": "Decimal('1e999999999')"}, BOMBS, "",
             (0, 0, 0, 2)),
    "shadowing": (RIGHT, SHADOW, "", (1, 1, 2, 2)),
}
BOMB_REASON = f"scoring its answer to ex-embeddings-breakeven ran past {SCORE_TIMEOUT} s and was refused"
#: The notebooks graded again after the attacks, in the second run
AGAIN = ("right", "wrong", "bomb")
#: The two runs' time limits: any positive finite number of seconds is one
LIMITS = (["--cell-timeout", "30.5", "--timeout", "180"], ["--cell-timeout", "1e300", "--timeout", "240.5"])


def _digest(*paths) -> list[str]:
    return [hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths]


def _marked() -> list[int]:
    """Processes on this machine whose command line holds MARKER (the killer's detached process)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if MARKER.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def runs(spec, built_book, bubblewrap, submission, tmp_path_factory):
    """Both runs (the whole batch, then AGAIN): [(exit status, {name: grades.csv row}, {name: feedback text},
    the processes left holding MARKER when the run ended)], and what the files the class attacked held before
    (the checker's module, the hidden tests and their checksum) and after."""
    if importlib.util.find_spec("otter") is None:
        skip_or_fail("otter-grader is not installed (requirements.txt pins it)")
    out = tmp_path_factory.mktemp("assignments")
    make(CHAPTER, spec[CHAPTER], out, run_tests=False)
    student = out / CHAPTER / "student" / f"{CHAPTER}.ipynb"
    folder, grades = tmp_path_factory.mktemp("submissions"), out / CHAPTER / "grades"
    hidden = hidden_tests(CHAPTER, out)
    files = [Path(checkers.__file__), hidden, checksum(hidden)]
    before, source = _digest(*files), files[0].read_bytes()
    known = KNOWN.format(str(out), str(folder), str(grades))
    paths = {name: submission(student, folder / f"{name}.ipynb", answers,
                              before=known + first if first else "", after=known + last if last else "")
             for name, (answers, first, last, _) in BATCH.items()}
    results = []
    try:
        for names, limits in zip((list(BATCH), AGAIN), LIMITS, strict=True):
            done = subprocess.run([sys.executable, "-m", "assignments", "grade", CHAPTER,
                                   *(str(paths[name]) for name in names),
                                   "--out", str(out), *limits], cwd=ROOT, env=kernel_environment(),
                                  capture_output=True, text=True, timeout=1500)
            left = _marked()
            for pid in left:  # so that each run is judged alone
                os.kill(pid, signal.SIGKILL)
            with open(grades / "grades.csv", newline="", encoding="utf-8") as f:
                rows = {row["submission"].removesuffix(".ipynb"): row for row in csv.DictReader(f)}
            feedback = {name: (grades / f"{name}.txt").read_text(encoding="utf-8") for name in rows}
            results.append((done.returncode, rows, feedback, left))
    finally:
        after = _digest(*files)
        if after[0] != before[0]:  # never leave the library changed, whatever the test finds
            files[0].write_bytes(source)
        for pid in _marked():
            os.kill(pid, signal.SIGKILL)
    return results, before, after


def _scores(row) -> tuple:
    return (float(row["ex-embeddings-breakeven"]), float(row["ex-embeddings-xxlarge"]), float(row["total"]),
            float(row["possible"]))


@pytest.mark.parametrize("run", [0, 1])
def test_both_runs_grade_every_submission_and_exit_1_for_the_bomb_only(runs, run):
    status, rows, _, _ = runs[0][run]
    assert status == 1
    assert list(rows) == (list(BATCH), list(AGAIN))[run]
    assert {name: row["reason"] for name, row in rows.items() if row["reason"]} == {"bomb": BOMB_REASON}


@pytest.mark.parametrize(("run", "name"), [(0, name) for name in BATCH] + [(1, name) for name in AGAIN])
def test_each_submission_scores_what_its_honest_answers_deserve(runs, run, name):
    _, rows, _, _ = runs[0][run]
    assert _scores(rows[name]) == BATCH[name][3]


def test_the_checkers_module_on_disk_is_unchanged(runs):
    _, before, after = runs
    assert after[0] == before[0]


def test_the_hidden_tests_and_their_checksum_are_unchanged(runs):
    _, before, after = runs
    assert after[1:] == before[1:]


@pytest.mark.parametrize("run", [0, 1])
def test_no_process_a_submission_started_outlives_it(runs, run):
    assert runs[0][run][3] == []


@pytest.mark.parametrize("run", [0, 1])
def test_every_feedback_file_is_the_graders_own(runs, run):
    _, _, feedback, _ = runs[0][run]
    assert feedback["right"].splitlines()[0] == "right.ipynb: 2 / 2"
    assert [name for name, text in feedback.items() if OVERWRITTEN in text] == []
