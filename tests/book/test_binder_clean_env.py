"""Binder runs the road to PyTorch: appendices A1 and A2 execute fully in a clean install of the reader's
environment, binder/requirements.txt alone, as repo2docker installs it (pip run from the repository's root).

Slow (minutes: a fresh venv with torch, transformers, accelerate, jax, JupyterLab and otter, then two
appendices run), so in the slow tier (tests/conftest.py, TIERS). It reuses nothing from the environment that
runs it: a new venv from the base interpreter (no site packages), a copy of the repository's files (no .venv,
no build, no egg-info), its own kernelspec and Jupyter folders, and the executed notebooks read back as JSON.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from book_site.pages import ROOT

APPENDICES = ("A1_hugging_face.ipynb", "A2_numpy_to_pytorch.ipynb")
#: What A1 and A2 print where the hf extra is missing ("not run here: torch, transformers and accelerate (the
#: hf extra) are not all importable", "not run here: transformers is not importable")
NOT_RUN = "not run here"
#: Seconds for one appendix's cells, and for the whole test (the install is most of it)
CELL_TIMEOUT = 900
TEST_TIMEOUT = 3600

RUN = """
import json, sys
import nbformat
from nbclient import NotebookClient

source, target, cwd, timeout = sys.argv[1:]
notebook = nbformat.read(source, as_version=4)
NotebookClient(notebook, timeout=int(timeout), kernel_name="python3",
               resources={"metadata": {"path": cwd}}).execute()
nbformat.write(notebook, target)
"""


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


def outputs_text(cell: dict) -> str:
    """A code cell's outputs as text: streams, every display type (text, HTML, Markdown...), errors."""
    def text(value) -> str:
        return "".join(value) if isinstance(value, list) else value if isinstance(value, str) else ""
    return "".join(text(output.get("text")) + "".join(text(v) for v in output.get("data", {}).values())
                   + text(output.get("evalue")) for output in cell.get("outputs", []))


@pytest.mark.timeout(TEST_TIMEOUT)
def test_a1_and_a2_run_fully_in_a_clean_install_of_binders_environment(tmp_path):
    checkout, venv, home = tmp_path / "repo", tmp_path / "venv", tmp_path / "home"
    for name in repository_files():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, checkout / name)
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = clean_environment(venv, home)

    def run(*args, **kwargs):
        done = subprocess.run([str(python), *args], cwd=checkout, env=env, capture_output=True, text=True,
                              **kwargs)
        assert done.returncode == 0, f"{args[:3]} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        return done

    # as repo2docker, from the root; no bytecode compiled at install (a third of its time): Python compiles
    # what it imports
    run("-m", "pip", "install", "--no-compile", "-r", "binder/requirements.txt")
    run("-m", "pip", "check")
    versions = json.loads(run("-c", "import json, torch, transformers, accelerate; print(json.dumps("
                              "[torch.__version__, torch.version.cuda, transformers.__version__]))").stdout)
    assert versions[0].endswith("+cpu") and versions[1] is None, f"torch is not the CPU build: {versions}"
    library = Path(run("-c", "import geron_lib; print(geron_lib.__file__)").stdout.strip())
    assert checkout in library.parents, f"geron_lib is imported from {library}, not from the clean copy"
    # the kernel is this venv's interpreter, nothing else's
    run("-m", "ipykernel", "install", "--sys-prefix", "--name", "python3")
    specs = json.loads(run("-m", "jupyter", "kernelspec", "list", "--json").stdout)["kernelspecs"]
    assert Path(specs["python3"]["spec"]["argv"][0]).parent == venv / "bin", specs["python3"]

    for name in APPENDICES:
        executed = tmp_path / name
        run("-c", RUN, str(checkout / "book" / name), str(executed), str(checkout / "book"),
            str(CELL_TIMEOUT))
        cells = [c for c in json.loads(executed.read_text())["cells"] if c["cell_type"] == "code"]
        errors = [o for c in cells for o in c.get("outputs", []) if o["output_type"] == "error"]
        assert not errors, f"{name}: {[(e['ename'], e['evalue']) for e in errors]}"
        notices = [outputs_text(c) for c in cells if NOT_RUN in outputs_text(c).lower()]
        assert not notices, f"{name} did not run everything in Binder's environment: {notices}"
        assert all(c.get("execution_count") for c in cells if "".join(c["source"]).strip()), (
            f"{name}: a code cell did not run")
