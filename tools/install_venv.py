"""Install the course into ``.venv`` through the lock, saying first what it will fetch.

    .venv/bin/python tools/install_venv.py lab              # make lab: what the lessons need
    .venv/bin/python tools/install_venv.py lab --torch cpu  # make lab TORCH=cpu
    .venv/bin/python tools/install_venv.py dev              # make test: the maintainer toolchain

``make`` runs it with the venv's own Python (standard library only). It

1. prints one short pre-flight note: which extra, which torch build, roughly how much the first
   run downloads and how large ``.venv`` becomes (sizes measured, see ``SIZES``);
2. with ``--torch cpu`` (or when an earlier run chose it: the choice is kept in ``.venv/.torch``),
   installs torch's CPU-only build from PyTorch's CPU index first and checks that the CPU build is
   what landed; if it cannot be had, it stops with one line and installs nothing else, so a later
   ``make lab`` never falls back to the CUDA build silently;
3. installs ``-c constraints.txt -e ".[EXTRA]"`` with pip's progress bars (uv's, when the venv
   was made by ``uv venv`` and has no pip).

Failures print one line and exit 2.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# Measured on Debian 12 x86-64 with python3 3.11.2 and the CPU-only torch 2.13.0 (README, "Quick
# start"): (MB downloaded by the first run, MB it adds to .venv). lab starts an empty .venv (113
# wheels, 1396 MB installed); docs and dev were measured on top of it (dev holds docs: 1827 MB).
SIZES = {
    "lab": (310, 1400),
    "docs": (90, 285),  # playwright (53 MB wheel, 165 MB installed) draws the diagrams
    "dev": (135, 430),  # docs included
}
WHAT = {
    "lab": "what the lessons need (torch, matplotlib, ipywidgets, JupyterLab)",
    "docs": "the website's build tools (Sphinx, myst-nb, jieba)",
    "dev": "the maintainer toolchain (tests, linters, the website's build tools, uv)",
}


class InstallError(Exception):
    """One line for the user; exit 2."""


def venv_dir() -> Path:
    return Path(sys.prefix)


def torch_pin() -> str:
    for raw in (ROOT / "constraints.txt").read_text().splitlines():
        match = re.match(r"torch==([^\s;#]+)\s*(?:#.*)?$", raw.strip())
        if match:
            return match.group(1).split("+")[0]
    raise InstallError("constraints.txt pins no torch version")


def installed_torch() -> str | None:
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def cpu_suffix_expected() -> bool:
    """PyPI's torch for Linux and Windows can carry CUDA; the CPU index marks its build +cpu.
    macOS has one build (CPU and Apple's MPS), the same on PyPI as on the CPU index."""
    return sys.platform != "darwin"


def uv_or_pip() -> list[str]:
    has_pip = (
        subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode
        == 0
    )
    if has_pip:
        return [sys.executable, "-m", "pip", "install"]
    uv = shutil.which("uv")
    if uv is None:
        raise InstallError(
            f"{venv_dir()} has no pip (was it made by `uv venv`?) and uv is not on PATH: "
            "install uv (https://docs.astral.sh/uv/) or delete the folder and run make again"
        )
    return [uv, "pip", "install", "--python", sys.executable]


def preflight(extra: str, cpu: bool) -> str:
    have = installed_torch()
    lines = [f"Installing .[{extra}] into {venv_dir().name}: {WHAT[extra]}."]
    download, size = SIZES[extra]
    if have:
        lines.append(f"torch {have} is already there and is kept.")
    elif cpu or sys.platform == "darwin":
        lines.append(f"torch {torch_pin()}: the CPU-only build (about 190 MB of the download).")
    elif platform.system() == "Linux":
        lines.append(
            f"torch {torch_pin()}: PyPI's default build for Linux, which brings the CUDA "
            "libraries (15 nvidia-* packages, several GB more than the sizes below). "
            "The lessons need no GPU: stop now (Ctrl-C) and run  make lab TORCH=cpu  instead."
        )
    if extra == "lab" and not have:
        lines.append(
            f"With the CPU build this first run downloads about {download} MB and .venv "
            f"grows to about {size} MB; pip shows a progress bar for each download."
        )
    else:
        lines.append(f"This adds up to about {size} MB to .venv (about {download} MB to download).")
    return "\n".join(lines)


def install_cpu_torch(pip: list[str]) -> None:
    pin = torch_pin()
    have = installed_torch()
    if have and (have.endswith("+cpu") or not cpu_suffix_expected()):
        return
    if have:
        raise InstallError(
            f"{venv_dir()} holds torch {have}, not the CPU-only build: delete the folder "
            "(rm -rf .venv) and run  make lab TORCH=cpu  again"
        )
    wanted = f"torch=={pin}+cpu" if cpu_suffix_expected() else f"torch=={pin}"
    print(f"== torch {pin}, CPU-only, from {CPU_INDEX}", flush=True)
    cmd = [*pip, "--no-deps", "--index-url", CPU_INDEX, wanted]
    result = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        said = [line for line in result.stderr.splitlines() if line.strip()]
        raise InstallError(
            f"the CPU-only torch {pin} could not be installed from {CPU_INDEX} "
            f"({said[-1].strip() if said else 'no message'}); nothing else was installed. "
            "Check the network and run the same command again; to take PyPI's default "
            f"build instead, remove {venv_dir() / '.torch'} and run make lab"
        )
    have = installed_torch()
    if cpu_suffix_expected() and not (have or "").endswith("+cpu"):
        raise InstallError(f"asked for the CPU-only torch but got torch {have}")


def check_inputs() -> None:
    """Before anything is written or fetched: the checkout's pyproject.toml and lock are there,
    and pyproject.toml parses."""
    import tomllib

    for name in ("pyproject.toml", "constraints.txt"):
        if not (ROOT / name).is_file():
            raise InstallError(f"no {name} in {ROOT}: run this from a checkout of the course")
    try:
        tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise InstallError(f"{ROOT / 'pyproject.toml'} is not valid TOML ({err})") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("extra", choices=sorted(WHAT))
    parser.add_argument("--torch", choices=["cpu", "default", ""], default="")
    args = parser.parse_args(argv)
    choice_file = venv_dir() / ".torch"
    try:
        check_inputs()
        if args.torch:
            # Written before anything is fetched: a failed CPU install is retried as CPU.
            tmp = choice_file.with_suffix(".tmp")
            tmp.write_text(args.torch + "\n")
            os.replace(tmp, choice_file)
        cpu = choice_file.is_file() and choice_file.read_text().strip() == "cpu"
        print(preflight(args.extra, cpu), flush=True)
        pip = uv_or_pip()
        if cpu:
            install_cpu_torch(pip)
        cmd = [*pip, "-c", str(ROOT / "constraints.txt"), "-e", f"{ROOT}[{args.extra}]"]
        print("== " + " ".join(cmd[2:] if cmd[1] == "-m" else cmd), flush=True)
        if subprocess.run(cmd).returncode != 0:
            raise InstallError(f"installing .[{args.extra}] failed (pip's message is above)")
    except InstallError as error:
        print(f"tools/install_venv.py: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tools/install_venv.py: interrupted; run make again to go on", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
