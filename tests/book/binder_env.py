"""Binder's environment, clean: a copy of the checkout's files as a clone has them (no .venv, no build, no
egg-info), a new venv from the base interpreter (no site packages) and binder/requirements.txt installed in
it by pip from the copy's root, as repo2docker installs it; then `pip check`. Standard library only, so that
`make test` can run it with the base interpreter while it installs the project's own venv on the other core
(tests/book/test_binder_clean_env.py reads what it made; run alone, the test makes it itself):

    python3.11 tests/book/binder_env.py FOLDER

writes FOLDER/repo, FOLDER/venv, FOLDER/home and, last, FOLDER/status: "ok", or what failed and its output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATUS = "status"


def repository_files() -> list[str]:
    """The checkout's files as a clone has them (tracked, and new ones not ignored), edits included."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, check=True, capture_output=True).stdout.decode()
    return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]


def clean_environment(venv: Path, home: Path) -> dict[str, str]:
    """This process's environment without what points at another Python or Jupyter: the venv's bin first,
    and Jupyter's user folders in ``home`` (else a kernelspec there could run another interpreter)."""
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONSTARTUP")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith(("JUPYTER", "IPYTHON"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["JUPYTER_DATA_DIR"] = str(home / "jupyter-data")
    env["JUPYTER_CONFIG_DIR"] = str(home / "jupyter-config")
    env["JUPYTER_RUNTIME_DIR"] = str(home / "jupyter-runtime")
    env["IPYTHONDIR"] = str(home / "ipython")
    env["MPLCONFIGDIR"] = str(home / "matplotlib")
    # PyTorch's CPU index (binder/requirements.txt) may be unreachable where this runs; pip then falls back
    # on the other indexes, and without retries it does not wait on it once per project
    env["PIP_RETRIES"] = "0"
    env["PIP_NO_CACHE_DIR"] = "1"  # as repo2docker runs pip
    return env


def prepare(folder: Path) -> str:
    """Make the copy, the venv and its install in ``folder`` (see the module docstring); "ok", or what
    failed."""
    checkout, venv, home = folder / "repo", folder / "venv", folder / "home"
    for name in repository_files():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, checkout / name)
    base = getattr(sys, "_base_executable", sys.executable)
    steps = [[base, "-m", "venv", str(venv)],
             # as repo2docker, from the root; no bytecode compiled at install (a third of its time): Python
             # compiles what it imports
             [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-compile", "-r",
              "binder/requirements.txt"],
             [str(venv / "bin" / "python"), "-m", "pip", "check"]]
    for step in steps:
        done = subprocess.run(step, cwd=checkout, env=clean_environment(venv, home), capture_output=True,
                              text=True)
        if done.returncode:
            return f"{' '.join(step[1:4])} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return "ok"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    folder = Path(argv[0]).resolve()
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    try:
        status = prepare(folder)
    except Exception as err:  # noqa: BLE001 - whatever stopped it is the test's failure message
        status = f"preparing failed: {type(err).__name__}: {err}"
    (folder / STATUS).write_text(status, encoding="utf-8")
    return 0 if status == "ok" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
