"""Binder runs the road to PyTorch: appendices A1 and A2 execute fully in a clean install of the reader's
environment, binder/requirements.txt alone, as repo2docker installs it (pip run from the repository's root).

Slow (minutes: a fresh venv with torch, transformers, accelerate, jax, JupyterLab and otter, then two
appendices run), so in the slow tier (tests/conftest.py, TIERS). It reuses nothing from the environment that
runs it: a new venv from the base interpreter (no site packages), a copy of the repository's files (no .venv,
no build, no egg-info), its own kernelspec and Jupyter folders, and the executed notebooks read back as JSON.
tests/book/binder_env.py makes the copy and the venv: `make test` runs it with the base interpreter while it
installs its own venv (BINDER_ENV names the folder, and the test waits for it), and the test runs it here
otherwise.
"""

import json
import os
import subprocess
import time
from pathlib import Path

import binder_env
import pytest

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


def outputs_text(cell: dict) -> str:
    """A code cell's outputs as text: streams, every display type (text, HTML, Markdown...), errors."""
    def text(value) -> str:
        return "".join(value) if isinstance(value, list) else value if isinstance(value, str) else ""
    return "".join(text(output.get("text")) + "".join(text(v) for v in output.get("data", {}).values())
                   + text(output.get("evalue")) for output in cell.get("outputs", []))


def prepared(tmp_path: Path) -> Path:
    """The folder binder_env made: the one `make test` names in BINDER_ENV once done, or one made here."""
    if folder := os.environ.get("BINDER_ENV"):
        status = Path(folder) / binder_env.STATUS
        while not status.is_file():  # the test's timeout bounds the wait
            time.sleep(1)
        return Path(folder)
    binder_env.main([str(tmp_path / "binder")])
    return tmp_path / "binder"


@pytest.mark.timeout(TEST_TIMEOUT)
def test_a1_and_a2_run_fully_in_a_clean_install_of_binders_environment(tmp_path):
    folder = prepared(tmp_path)
    status = (folder / binder_env.STATUS).read_text(encoding="utf-8")
    assert status == "ok", status
    checkout, venv, home = folder / "repo", folder / "venv", folder / "home"
    python = venv / "bin" / "python"
    env = binder_env.clean_environment(venv, home)

    def run(*args, **kwargs):
        done = subprocess.run([str(python), *args], cwd=checkout, env=env, capture_output=True, text=True,
                              **kwargs)
        assert done.returncode == 0, f"{args[:3]} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        return done

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
