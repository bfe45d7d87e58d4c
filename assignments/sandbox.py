"""The sandbox a submission runs in: bubblewrap (``bwrap``, Debian's ``bubblewrap``) with namespaces of its
own of every kind (user, PID, network, IPC, UTS, cgroup) and a file system of its own, holding only

- read-only: the system (``/usr``, ``/etc`` and the ``/bin``, ``/lib`` links), this Python and its venv,
  the library (``geron_lib``, the checkers included) and the grader's ``execution`` module;
- private and temporary (tmpfs, gone when the run ends): ``/tmp`` and the home folder ``/home/student``,
  whose ``work/`` is the working folder; it holds the student's notebook (read-only) and nothing else;
- ``/grading``, the one folder shared with the grader: the run's record and answers (which the
  submission's code can write too: the grader reads them as data only, within size and time limits);
- a ``/proc`` of its own PID namespace (no other process can be seen or signalled), a minimal ``/dev``, and
  no network but its own loopback.

Nothing else of the machine is there: not the hidden tests, the other submissions, the grades folder, the
rest of the repository or the teacher's home. Every process started inside, the kernel's included, is in
the PID namespace, which ends with its init, bwrap's process 1: :func:`end` kills it and waits until every
process of the namespace has ended (bwrap itself may end first), and ``--die-with-parent`` ends it if the
grader dies. The environment holds only the variables below (the locale and thread counts are passed
through).
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import geron_lib

from . import ROOT, GradingRefused

HOME = "/home/student"
#: The working folder: the student's notebook, alone
WORK = f"{HOME}/work"
#: The folder shared with the grader
SHARED = "/grading"
#: What is seen of the system, read-only (a symbolic link as the same link)
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
#: The grader's environment variables passed into the sandbox: the locale, the time zone, thread counts
KEPT = re.compile(r"LANG|LANGUAGE|LC_\w+|TZ|\w+_NUM_THREADS")
#: Seconds the check that the sandbox works may take (it starts Python once)
PROBE_TIMEOUT = 120
#: Seconds :func:`end` waits for a sandbox's processes to end once its init is killed
ENDING_TIMEOUT = 30
#: Largest account of its sandbox bwrap writes (--info-fd: its init's pid and namespaces, as JSON), bytes
INFO_LIMIT = 4096


def read_only() -> list[tuple[Path, Path]]:
    """(what, where) of every read-only bind beyond the system: this Python, its venv, the library and the
    grader's execution module, each at its own path (and a venv reached through a link at both)."""
    binds = []
    for prefix in dict.fromkeys((sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix)):
        real, seen = Path(prefix).resolve(), Path(prefix).absolute()
        binds += [(real, real)] + ([(real, seen)] if seen != real else [])
    library = Path(geron_lib.__file__).resolve().parent
    grader = [ROOT / "assignments" / "__init__.py", ROOT / "assignments" / "execution.py"]
    return binds + [(library, library)] + [(path, path) for path in grader]


def environment() -> dict[str, str]:
    """The sandbox's environment: this venv's commands first, the library importable, Jupyter's folders in
    the private home and /tmp, and the locale and thread counts of the grader's."""
    kept = {k: v for k, v in os.environ.items() if KEPT.fullmatch(k)}
    return {**kept, "HOME": HOME, "TMPDIR": "/tmp", "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
            "JUPYTER_PREFER_ENV_PATH": "1", "JUPYTER_PLATFORM_DIRS": "1",
            "JUPYTER_RUNTIME_DIR": "/tmp/jupyter-runtime", "MPLCONFIGDIR": "/tmp/matplotlib"}


def command(inner: list[str], notebook: Path, shared: Path, info_fd: int | None = None) -> list[str]:
    """``inner`` run by bwrap in the sandbox, with ``notebook`` at WORK/submission.ipynb and the folder
    ``shared`` at SHARED; bwrap writes its account of the sandbox to the file descriptor ``info_fd``."""
    args = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--die-with-parent", "--new-session"]
    args += [] if info_fd is None else ["--info-fd", str(info_fd)]
    for path in SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for what, where in read_only():
        args += ["--ro-bind", str(what), str(where)]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", HOME, "--dir", WORK,
             "--ro-bind", str(notebook), f"{WORK}/submission.ipynb", "--bind", str(shared), SHARED,
             "--chdir", WORK]
    return [*args, "--", *inner]


def start(inner: list[str], notebook: Path, shared: Path, **popen) -> tuple[subprocess.Popen, int | None]:
    """``inner`` started in the sandbox (see :func:`command`; ``popen``: subprocess.Popen's other arguments),
    and a pidfd of the sandbox's init, whose end is the PID namespace's (None when it has ended already)."""
    read, write = os.pipe()
    try:
        process = subprocess.Popen(command(inner, notebook, shared, info_fd=write), env=environment(),
                                   pass_fds=(write,), **popen)
    finally:
        os.close(write)
    with os.fdopen(read, "rb") as info:
        written = info.read(INFO_LIMIT)  # bwrap writes it, and closes it, as soon as its init has started
    try:
        told = json.loads(written)
        init = os.pidfd_open(told["child-pid"])
    except (ValueError, KeyError, TypeError, OSError):  # bwrap failed before its init started, or it ended
        return process, None
    try:  # the pid is the init's still, not a process's that took it after the init ended
        if os.stat(f"/proc/{told['child-pid']}/ns/pid").st_ino == told["pid-namespace"]:
            return process, init
    except (OSError, KeyError):
        pass
    os.close(init)
    return process, None


def end(init: int | None) -> None:
    """End the sandbox whose init's pidfd is ``init`` (:func:`start`'s; None: nothing to end): kill its
    init, and with it every process of its PID namespace, and wait until all have ended."""
    if init is None:
        return
    try:
        signal.pidfd_send_signal(init, signal.SIGKILL)
    except ProcessLookupError:
        pass
    select.select([init], [], [], ENDING_TIMEOUT)  # readable once the init has ended: the namespace is empty
    os.close(init)


def check_sandbox(hidden: list[Path]) -> None:
    """GradingRefused unless the sandbox can be had here (bwrap installed, user namespaces allowed: it
    starts Python inside) and hides every path of ``hidden`` (no read-only bind holds one)."""
    system = [Path(path).resolve() for path in SYSTEM if os.path.isdir(path)]
    for what in [*system, *(what for what, _ in read_only())]:
        for path in hidden:
            if path.resolve() == what or what in path.resolve().parents:
                raise GradingRefused(f"the sandbox would show {path}: it lies in {what}, which the kernels "
                                     "read; move it elsewhere")
    advice = ("Install bubblewrap (Debian: `apt-get install bubblewrap`) where user namespaces are allowed, "
              "or grade with --unsafe, as a user, in an account or container, that may run the submissions' "
              "code with its rights")
    if shutil.which("bwrap") is None:
        raise GradingRefused(f"the sandbox cannot be had: bwrap is not installed. {advice}")
    with tempfile.TemporaryDirectory(prefix="sandbox-check-") as tmp:
        notebook = Path(tmp) / "submission.ipynb"
        notebook.write_text("{}", encoding="utf-8")
        probe = command([sys.executable, "-c", "import assignments.execution"], notebook, Path(tmp))
        try:
            done = subprocess.run(probe, env=environment(), capture_output=True, text=True,
                                  timeout=PROBE_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise GradingRefused(f"the sandbox cannot be had: starting Python in it took over "
                                 f"{PROBE_TIMEOUT} s. {advice}") from None
    if done.returncode:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise GradingRefused(f"the sandbox cannot be had: {why}. {advice}")
