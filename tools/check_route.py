"""Run the README's route without make, as written, in a fresh copy of the course.

    .venv/bin/python tools/check_route.py        # make route-test (part of make test, so CI)

The README's Quick start gives the commands for a machine without make: a venv, the locked
install of ``.[lab]``, JupyterLab started in ``notebooks/``. The POSIX form sits in the block
after ``<!-- route:posix -->``; this tool reads that block, so what CI runs is what the README
says. In a temporary copy of the course (no .venv, no build folder) it runs every line but the
last with bash, then starts the last (``jupyter lab``) with ``--no-browser`` on a free port and
checks that

* the server answers and lists lesson 00 and a ``python3`` kernel;
* lesson 00 runs top to bottom in that venv (``jupyter nbconvert --execute``);
* the venv holds none of the maintainer's tools (sphinx, mypy, playwright, pytest, ruff, uv, jieba);
* the torch pin the block names is the lock's, so a lock bump cannot leave the README behind.

It prints one line per step and, on failure, one line saying which and exits 2.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lockfile  # tools/lockfile.py

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAINTAINER_TOOLS = ("sphinx", "mypy", "playwright", "pytest", "ruff", "uv", "jieba", "hypothesis")
SKIP = shutil.ignore_patterns(
    ".git", ".venv*", "build", "node_modules", "__pycache__", "*.egg-info", ".*_cache"
)


class RouteError(Exception):
    """One line for the user; exit 2."""


def route_blocks(text: str) -> dict[str, list[str]]:
    """name -> command lines of each ``<!-- route:NAME -->`` code block (comments dropped)."""
    blocks = {}
    for name, body in re.findall(r"<!-- route:([\w-]+) -->\s*```[^\n]*\n(.*?)```", text, re.S):
        lines = [line.split("  #", 1)[0].strip() for line in body.splitlines()]
        blocks[name] = [line for line in lines if line and not line.startswith("#")]
    return blocks


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get_json(url: str) -> object:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def step(label: str, cmd: str, cwd: Path, env: dict[str, str], timeout: int = 3600) -> str:
    started = time.monotonic()
    result = subprocess.run(
        ["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    if result.returncode != 0:
        said = [line for line in (result.stderr or result.stdout).splitlines() if line.strip()]
        raise RouteError(f"{label} failed: {cmd} ({said[-1].strip() if said else 'no output'})")
    print(f"route: {label} ({time.monotonic() - started:.0f} s): {cmd}", flush=True)
    return result.stdout


def check_torch_pin(lines: list[str]) -> None:
    named = re.findall(r"torch==([\w.]+)", " ".join(lines))
    pinned = lockfile.pins()["torch"]
    if any(version != pinned for version in named):
        raise RouteError(f"the README's route names torch=={named[0]}, the lock pins {pinned}")


def serve_and_check(cmd: str, cwd: Path, env: dict[str, str]) -> None:
    port = free_port()
    token = os.urandom(12).hex()
    extra = (
        f" --no-browser --ip=127.0.0.1 --port={port} --ServerApp.port_retries=0"
        f" --IdentityProvider.token={token}"
        + (" --allow-root" if hasattr(os, "geteuid") and os.geteuid() == 0 else "")
    )
    # The README's last line (cd notebooks && .../jupyter lab) with the server's options appended.
    server = subprocess.Popen(
        ["bash", "-c", cmd + extra],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                status = get_json(f"{base}/api/status?token={token}")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RouteError(f"JupyterLab did not start: {cmd}") from None
                time.sleep(1)
        files = get_json(f"{base}/api/contents?token={token}")
        names = {item["name"] for item in files["content"]}  # type: ignore[index]
        specs = get_json(f"{base}/api/kernelspecs?token={token}")
        if "00_start_here.ipynb" not in names:
            raise RouteError("JupyterLab started, but not in notebooks/ (no 00_start_here.ipynb)")
        if "python3" not in specs["kernelspecs"]:  # type: ignore[index]
            raise RouteError("JupyterLab started without a python3 kernel")
        lab = urllib.request.urlopen(f"{base}/lab?token={token}", timeout=10).status
        print(f"route: JupyterLab answers on {base}/lab ({lab}), {status}", flush=True)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


def main() -> int:
    try:
        lines = route_blocks(README.read_text(encoding="utf-8")).get("posix")
        if not lines:
            raise RouteError("README.md has no <!-- route:posix --> code block")
        check_torch_pin(lines)
        with tempfile.TemporaryDirectory(prefix="mhsa-route-") as tmp:
            course = Path(tmp) / "course"
            shutil.copytree(ROOT, course, ignore=SKIP)
            env = {**os.environ, "MPLCONFIGDIR": str(Path(tmp) / "mplconfig")}
            env.pop("VIRTUAL_ENV", None)
            for number, cmd in enumerate(lines[:-1], start=1):
                step(f"step {number}", cmd, course, env)
            python = course / ".venv" / "bin" / "python"
            listed = json.loads(
                step("installed", f"{python} -m pip list --format=json", course, env)
            )
            names = {item["name"].lower() for item in listed}
            found = sorted(names & set(MAINTAINER_TOOLS))
            if found:
                raise RouteError(f"the route's .venv holds maintainer tools: {', '.join(found)}")
            serve_and_check(lines[-1], course, env)
            out = Path(tmp) / "executed.ipynb"
            step(
                "lesson 00 runs",
                f"{course}/.venv/bin/jupyter nbconvert --to notebook --execute "
                f"--ExecutePreprocessor.timeout=600 --output {out} 00_start_here.ipynb",
                course / "notebooks",
                env,
            )
    except (RouteError, subprocess.TimeoutExpired, OSError) as error:
        print(f"tools/check_route.py: {error}", file=sys.stderr)
        return 2
    print("route: PASS, the README's route without make works in a fresh copy", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
