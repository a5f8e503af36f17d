"""Browser-test fixtures: a throw-away JupyterLab server and headless Chromium (Playwright).

* The lessons are **copied** into a temporary folder that becomes the server's root, so nothing
  JupyterLab does (autosave, jupytext pairing, checkpoints) can touch ``notebooks/`` in the repo.
* The server listens on 127.0.0.1, on a free port, with a random token; workspaces, settings
  (notebook windowing off: every cell is in the DOM) and the lab config (news toast disabled, no
  update checks) live in temporary folders too.
* Screenshots go to ``$MHSA_ARTIFACTS`` or a temporary folder, never into the repository.
* Chromium is Debian's ``chromium`` launched through ``executable_path``; Playwright never
  downloads a browser. Without ``chromium`` the tests skip, except under ``CI=true``, where they
  fail: CI must run them.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        message = (
            "'chromium' is not installed (Debian: apt-get install chromium); the browser test "
            "cannot run. Playwright must not download a browser here."
        )
        if _in_ci():
            pytest.fail(f"CI=true but {message}")
        pytest.skip(message)
    return path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LabServer:
    url: str
    token: str
    root: Path
    log: Path

    def tree_url(self, notebook: str) -> str:
        """A fresh, empty workspace per call, so no tab of an earlier test is restored."""
        workspace = f"t{secrets.token_hex(4)}"
        return f"{self.url}/lab/workspaces/{workspace}/tree/{notebook}?token={self.token}"


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory, chromium_path) -> Iterator[LabServer]:
    base = tmp_path_factory.mktemp("lab")
    root = base / "notebooks"
    # Copies of the lessons (and nothing else): the repo's notebooks are never opened.
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    config = base / "config"
    (config / "labconfig").mkdir(parents=True)
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    # Render every cell (no virtual scrolling), so widgets far from the viewport are in the DOM.
    tracker = base / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTERLAB_SETTINGS_DIR=str(base / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(base / "workspaces"),
        JUPYTER_RUNTIME_DIR=str(base / "runtime"),
    )
    env.pop("MPLBACKEND", None)  # tests/conftest.py sets Agg; the kernel must use inline
    log = base / "jupyter-lab.log"
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        "--allow-root",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.workspaces_dir={base / 'workspaces'}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.expose_app_in_browser=True",
    ]
    with log.open("w") as log_file:
        process = subprocess.Popen(
            command, cwd=root, env=env, stdout=log_file, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                pytest.fail(f"jupyter lab exited early:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"jupyter lab did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
        yield LabServer(url=url, token=token, root=root, log=log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="session")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory) -> Path:
    """Where screenshots go: ``$MHSA_ARTIFACTS`` if set (CI uploads it), else a temporary folder.

    Never inside the repository, so a test run leaves the checkout as it found it.
    """
    chosen = os.environ.get("MHSA_ARTIFACTS")
    folder = Path(chosen).resolve() if chosen else tmp_path_factory.mktemp("ui-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {folder}")
    return folder
