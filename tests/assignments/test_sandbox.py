"""The sandbox a submission runs in (assignments/sandbox.py), seen from inside: a notebook that looks around
runs twice through the grader's execution module in bubblewrap, started and ended as grading does, and its
answers are what it saw. Then grading without the sandbox (--unsafe) where bwrap is missing. No built book
is needed: the notebooks are written here."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import geron_lib
from assignments import ROOT, sandbox
from assignments.grading import grade
from assignments.hidden import make_hidden, read_pickled
from assignments.master import hidden_tests
from assignments.spec import load_spec

pytestmark = pytest.mark.slow  # kernels
#: In the command line of the looks fixture's detached sleeper; the worker's pid in it, so that a worker's
#: fixture, which kills what holds MARKER, never finds (or kills) another worker's sleeper.
MARKER = f"detached-from-a-sandboxed-kernel-of-{os.getpid()}"
#: The marker of the sleepers test_every_process_of_a_sandbox_has_ended_when_it_is_ended starts. It must
#: not hold MARKER: the looks fixture kills what does, and that test's bwrap, running on another worker,
#: holds its sleepers' marker in its command line.
ENDED = "sleeper-of-an-ended-sandbox"
LOOK = f"""import errno, glob, os, socket, subprocess, sys
work, cwd, home = sorted(os.listdir(".")), os.getcwd(), os.environ["HOME"]
left_behind = [os.path.exists(p) for p in (os.path.join(home, "left"), "/tmp/left", "left")]
for p in (os.path.join(home, "left"), "/tmp/left", "left"):
    open(p, "w").close()
commands = [open(f"/proc/{{pid}}/cmdline", "rb").read().replace(b"\\0", b" ").decode()
            for pid in sorted(filter(str.isdigit, os.listdir("/proc")), key=int)]

def refusal(path):
    try:
        open(path, "a").close()
    except OSError as err:
        return errno.errorcode[err.errno]
    return "written"

read_only = [refusal(p) for p in WRITABLE]
seen = [p for p in HIDDEN if os.path.exists(p)]
try:
    socket.create_connection(("1.1.1.1", 80), timeout=5)
    network = "connected"
except OSError as err:
    network = errno.errorcode.get(err.errno, str(err))
interfaces = [name for _, name in socket.if_nameindex()]
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", {MARKER!r}], start_new_session=True)
"""
ANSWERS = ["work", "cwd", "home", "left_behind", "commands", "read_only", "seen", "network", "interfaces"]


def _marked(marker: str) -> list[int]:
    """Processes on this machine whose command line holds ``marker``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def looks(bubblewrap, tmp_path_factory):
    """What the notebook saw on each of its two runs: {answer: value}; and the processes on this machine
    left holding MARKER."""
    tmp = tmp_path_factory.mktemp("sandbox")
    library = Path(geron_lib.__file__).parent
    writable = [library / "notebook" / "exercises" / "embeddings.py", library / "new.py",
                Path(sys.prefix) / "new.py", ROOT / "assignments" / "execution.py"]
    hidden = [tmp, ROOT / "_build", ROOT / "book", ROOT / "README.md", ROOT / "assignments" / "spec.yml"]
    source = f"WRITABLE, HIDDEN = {[str(p) for p in writable]!r}, {[str(p) for p in hidden]!r}\n" + LOOK
    seen = []
    for run in range(2):
        work, shared = tmp / f"work{run}", tmp / f"shared{run}"
        work.mkdir()
        shared.mkdir()
        notebook = work / "submission.ipynb"
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)]), notebook)
        inner = [sys.executable, "-m", "assignments.execution", f"{sandbox.WORK}/submission.ipynb",
                 sandbox.SHARED, "--cell-timeout", "120", "--answers", *ANSWERS]
        process, init = sandbox.start(inner, notebook, shared, cwd=ROOT, stdout=subprocess.DEVNULL)
        assert process.wait(timeout=300) == 0
        sandbox.end(init)
        exported = read_pickled((shared / "answers.pkl").read_bytes())
        seen.append({name: read_pickled(payload) for name, (kind, payload) in exported.items()})
    for path in writable:  # never leave a file in the library or the venv, whatever the test finds
        if path.name == "new.py" and path.exists():
            path.unlink()
    left = _marked(MARKER)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return seen, left


@pytest.mark.parametrize("run", [0, 1])
def test_the_working_folder_holds_only_the_notebook_in_a_private_home(looks, run):
    seen = looks[0][run]
    assert (seen["work"], seen["cwd"], seen["home"]) == (["submission.ipynb"], sandbox.WORK, sandbox.HOME)


def test_home_tmp_and_working_folder_are_temporary(looks):
    assert [seen["left_behind"] for seen in looks[0]] == [[False, False, False], [False, False, False]]


def test_the_library_the_venv_and_the_grader_are_read_only(looks):
    assert looks[0][0]["read_only"] == ["EROFS"] * 4


def test_the_hidden_tests_the_submissions_and_the_rest_of_the_machine_are_not_there(looks):
    assert looks[0][0]["seen"] == []


def test_only_the_sandboxs_own_processes_are_seen(looks):
    commands = looks[0][0]["commands"]
    assert commands[0].split()[0].rsplit("/", 1)[-1] == "bwrap"  # its init, process 1
    assert [c for c in commands[1:] if "assignments.execution" not in c and "ipykernel" not in c] == []


def test_there_is_no_network_but_loopback(looks):
    assert (looks[0][0]["network"], looks[0][0]["interfaces"]) == ("ENETUNREACH", ["lo"])


def test_a_detached_process_ends_with_its_submission(looks):
    assert looks[1] == []


@pytest.mark.parametrize("run", range(10))
def test_every_process_of_a_sandbox_has_ended_when_it_is_ended(bubblewrap, tmp_path, run):
    notebook, shared = tmp_path / "submission.ipynb", tmp_path / "shared"
    notebook.write_text("{}")
    shared.mkdir()
    sleep = [sys.executable, "-c", "import time; time.sleep(600)", f"{ENDED}-{run}"]
    detach = f"import subprocess\nfor _ in range(5):\n    subprocess.Popen({sleep!r}, start_new_session=True)"
    process, init = sandbox.start([sys.executable, "-c", detach], notebook, shared, cwd=ROOT)
    assert process.wait(timeout=60) == 0
    sandbox.end(init)
    left = _marked(f"{ENDED}-{run}")
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []


def test_without_bwrap_unsafe_grading_still_grades(monkeypatch, tmp_path):
    hidden = make_hidden(load_spec()["01_factorised_embeddings"], hidden_tests("01_factorised_embeddings",
                                                                               tmp_path))
    notebook = tmp_path / "right.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "largest_width = 756\nfactorised_count = 4_368_384")]), notebook)
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))  # no bwrap
    [row] = grade(hidden, [notebook], tmp_path / "grades", unsafe=True)
    assert (row["total"], row["reason"]) == (2, "")

