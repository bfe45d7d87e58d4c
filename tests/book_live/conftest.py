"""Fixtures: JupyterLab from the project's environment on 127.0.0.1 (free port, token, no browser of its own,
temporary Jupyter config, runtime, data and settings), its root the repository; headless chromium; and each
chapter opened in JupyterLab and run as a reader runs it (Run > Run All Cells), with every console message
recorded. Nothing is saved: autosave is off, and each kernel is shut down when its chapter's tests end."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import pytest
from book_site.pages import ROOT, notebook_pages, skip_or_fail

# Settings of the test's JupyterLab (a reader's own settings are never read):
SETTINGS = {
    # never write the executed notebooks back into the repository
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    # every cell in the DOM, so that the tests see every prompt, output and paragraph
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}
# The news prompt ("Would you like to get notified about official Jupyter news?") is a plugin of its own;
# it fetches from the internet when accepted, and its toast covers the page: turned off.
PAGE_CONFIG = {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}
START_TIMEOUT = 60  # seconds for the server to answer
RUN_TIMEOUT = 180_000  # ms for Run All on one chapter (the longest, 04, runs in about 50 s)


@dataclass
class Lab:
    url: str
    token: str
    log: Path

    def api(self, path: str, method: str = "GET") -> object:
        request = urllib.request.Request(f"{self.url}/api/{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def jupyterlab(tmp_path_factory):
    """JupyterLab serving the repository, for the whole session."""
    missing = [name for name in ("jupyterlab", "jupyterlab_myst") if importlib.util.find_spec(name) is None]
    if missing:
        skip_or_fail(f"{', '.join(missing)} not installed: run `make install`")
    home = tmp_path_factory.mktemp("jupyter")
    for name, values in SETTINGS.items():
        path = home / "settings" / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    (home / "config" / "labconfig").mkdir(parents=True)
    (home / "config" / "labconfig" / "page_config.json").write_text(json.dumps(PAGE_CONFIG), encoding="utf-8")
    port, token = _free_port(), secrets.token_hex(16)
    env = os.environ | {
        "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_DATA_DIR": str(home / "data"), "JUPYTER_PREFER_ENV_PATH": "1", "JUPYTER_PLATFORM_DIRS": "1",
        # kernels import this checkout's geron_lib, and hash deterministically (as `make` runs them)
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "PYTHONHASHSEED": "0",
    }
    log = home / "server.log"
    command = [str(Path(sys.executable).with_name("jupyter-lab")), "--no-browser", "--allow-root",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={ROOT}",
               f"--LabApp.user_settings_dir={home / 'settings'}",
               f"--LabApp.workspaces_dir={home / 'workspaces'}",
               f"--FileCheckpoints.checkpoint_dir={home / 'checkpoints'}",  # none under book/
               "--LabApp.news_url=",  # no announcements feed
               "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate"]
    with log.open("w") as out:
        server = subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    lab = Lab(f"http://127.0.0.1:{port}", token, log)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                lab.api("status")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer within {START_TIMEOUT} s:\n{log.read_text()}")
                time.sleep(0.25)
        yield lab
    finally:
        server.terminate()  # SIGTERM: the server shuts its kernels down, then exits
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@dataclass
class LiveNotebook:
    """A chapter open in JupyterLab after Run All, and every console message and uncaught exception."""

    docname: str
    page: object
    messages: list[tuple[str, str]] = field(default_factory=list)  # (type, text)


# Waits for Run All to finish: each code cell must have shown the running/queued prompt [*] since the
# click (a fresh kernel numbers the cells 1, 2, ... as the stored notebook does, so numbers alone cannot tell)
WATCH_PROMPTS = """() => {
  window.__ran = new Set();
  const cells = () => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell')];
  new MutationObserver(() => cells().forEach((cell, i) => {
    if (cell.querySelector('.jp-InputPrompt')?.textContent.includes('*')) window.__ran.add(i);
  })).observe(document.querySelector('.jp-Notebook'), {subtree: true, childList: true, characterData: true});
}"""
ALL_RAN = """() => {
  const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]
    .map(p => p.textContent);
  const idle = document.querySelector('.jp-Notebook-ExecutionIndicator')?.dataset.status === 'idle';
  return idle && window.__ran.size === prompts.length && prompts.every(t => /\\[\\d+\\]/.test(t));
}"""


def _wait_for_idle_kernel(lab: Lab, docname: str, timeout: float = 60) -> None:
    """Until the server has started the notebook's kernel and the kernel reports idle."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sessions = [s for s in lab.api("sessions") if s["path"] == f"{docname}.ipynb"]
        states = [s["kernel"]["execution_state"] for s in sessions]
        if states == ["idle"]:
            return
        time.sleep(0.25)
    pytest.fail(f"no idle kernel for {docname} after {timeout} s: {lab.api('sessions')}")


def open_and_run_all(browser, lab: Lab, docname: str) -> LiveNotebook:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    live = LiveNotebook(docname, page)
    page.on("console", lambda m: live.messages.append((m.type, m.text)))
    page.on("pageerror", lambda e: live.messages.append(("pageerror", str(e))))
    # a workspace of its own, so that JupyterLab does not reopen the chapters opened before
    workspace = re.sub(r"\W", "-", docname)
    page.goto(f"{lab.url}/lab/workspaces/{workspace}/tree/{quote(docname)}.ipynb?token={lab.token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", state="attached", timeout=60_000)
    _wait_for_idle_kernel(lab, docname)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
    page.locator(".jp-Notebook .jp-Cell").first.click()  # the notebook is the current document
    page.evaluate(WATCH_PROMPTS)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    label = page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$"))
    page.locator(".lm-Menu-item:not(.lm-mod-disabled)", has=label).click(timeout=30_000)
    try:
        page.wait_for_function(ALL_RAN, timeout=RUN_TIMEOUT, polling=250)
    except Exception as error:  # Playwright's TimeoutError: say where the run stood
        state = page.evaluate("""() => ({ran: [...window.__ran], status: document.querySelector(
          '.jp-Notebook-ExecutionIndicator')?.dataset.status, prompts: [...document.querySelectorAll(
          '.jp-Notebook .jp-CodeCell .jp-InputPrompt')].map(p => p.textContent)})""")
        context.close()
        pytest.fail(f"Run All did not finish in {docname}: {error}\n{state}")
    return live


def _shut_down_kernel(lab: Lab, docname: str) -> None:
    for session in lab.api("sessions"):
        if session["path"] == f"{docname}.ipynb":
            lab.api(f"sessions/{session['id']}", method="DELETE")


@pytest.fixture(scope="session")
def opened(browser, jupyterlab):
    """The chapters this worker has opened and run, by name: each is opened once, however its tests are
    ordered among other chapters' on the worker, and closed (its kernel shut down) when the session ends."""
    chapters: dict[str, tuple[LiveNotebook, bytes]] = {}
    yield chapters
    for docname, (notebook, before) in chapters.items():
        notebook.page.context.close()
        _shut_down_kernel(jupyterlab, docname)
        assert (ROOT / f"{docname}.ipynb").read_bytes() == before, f"the live test changed {docname}"


#: The chapters whose Run All failed on this worker, and why
failed: dict[str, BaseException] = {}


@pytest.fixture(scope="module", params=notebook_pages())
def live(request, browser, jupyterlab, opened) -> LiveNotebook:
    """One chapter after Run All, run once for all its tests."""
    docname = request.param
    if docname in failed:  # one Run All that failed fails every test of its chapter, without running again
        pytest.fail(f"Run All failed in {docname} (in an earlier test's setup): {failed[docname]}")
    if docname not in opened:
        before = (ROOT / f"{docname}.ipynb").read_bytes()
        try:
            opened[docname] = (open_and_run_all(browser, jupyterlab, docname), before)
        except BaseException as error:
            failed[docname] = error
            raise
    return opened[docname][0]
