"""Prove that the lock installs on every Python the README promises, on this machine.

    .venv/bin/python tools/install_matrix.py        # make install-matrix (CI runs it)

For every interpreter it finds -- Debian's system ``python3``, pyenv's versions, ``python3.N`` on
PATH -- it prints one line:

* ``SKIP`` (named, with the reason) when the version is below ``requires-python`` or the
  interpreter cannot make a venv;
* ``PASS`` when, in a throw-away venv with that interpreter's own pip, ``pip install --dry-run -c
  constraints.txt ".[every extra]"`` resolves and every resolved version is the one the lock pins
  for that interpreter (nothing resolved outside the lock);
* ``FAIL`` naming the package and its Python requirement (``soupsieve==4.1.3 requires Python
  >=3.11.5``) or the version that differs from the lock.

The oldest supported interpreter also gets a full install (from a copy of the sources) and the
import check ``tools/check_install.py`` run from another folder; when ``uv`` is installed (the dev
extra), uv resolves the same lock for that interpreter too. Then uv resolves the lock, with every
extra, for the platforms this machine cannot run (``uv pip compile --python-platform``: Linux
x86-64, Windows x86-64 and macOS 14+ on Apple silicon, each for Python 3.11 and 3.13): the wheels
must exist there and every version must be the lock's pin under that platform's markers. Exit 0
only if nothing failed and at least one interpreter passed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _toolkit  # tools/_toolkit.py: one line and exit 2 on an expected failure
import lockfile  # tools/lockfile.py

ROOT = Path(__file__).resolve().parent.parent


@cache
def project() -> dict:
    """pyproject.toml's [project] table, or a ``ToolError`` naming the file."""
    path = ROOT / "pyproject.toml"
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
        SpecifierSet(table["requires-python"])
    except tomllib.TOMLDecodeError as err:
        raise _toolkit.ToolError(f"{path} is not valid TOML ({err})") from None
    except (KeyError, TypeError, InvalidSpecifier) as err:
        raise _toolkit.ToolError(f"{path}: no valid [project] requires-python ({err!r})") from None
    return table


def requires() -> SpecifierSet:
    return SpecifierSet(project()["requires-python"])


def extras() -> str:
    return ",".join(sorted(project().get("optional-dependencies", {})))


PROBE = "import sys; print('%d.%d.%d' % tuple(sys.version_info[:3])); print(sys.executable)"
# Sources a wheel is built from (the same list as tests/test_environment.py's wheel test).
SOURCES = ("pyproject.toml", "README.md", "mhsa_helpers", "data")


@dataclass(frozen=True)
class Interpreter:
    path: str  # what was found
    executable: str  # the real file it runs
    version: Version
    origin: str

    @property
    def label(self) -> str:
        return f"Python {self.version} {self.executable} ({self.origin})"


def candidates() -> list[str]:
    found = ["/usr/bin/python3"]
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if folder and Path(folder).is_dir():
            for entry in sorted(Path(folder).iterdir()):
                if re.fullmatch(r"python3(\.\d+)?", entry.name):
                    found.append(str(entry))
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if pyenv.is_dir():
        for version in sorted(pyenv.iterdir()):
            for name in ("python3", "python"):
                if (version / "bin" / name).exists():
                    found.append(str(version / "bin" / name))
                    break
    return found


def origin(executable: str) -> str:
    pyenv = str(Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")))
    if executable.startswith(pyenv):
        return "pyenv"
    if executable.startswith("/usr/bin/"):
        return "system python3" + (", Debian" if Path("/etc/debian_version").exists() else "")
    return "on PATH"


def discover() -> list[Interpreter]:
    seen: dict[str, Interpreter] = {}
    for path in candidates():
        if not os.access(path, os.X_OK):
            continue
        try:
            out = subprocess.run([path, "-c", PROBE], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        lines = out.stdout.split()
        if out.returncode != 0 or len(lines) != 2:
            continue
        executable = os.path.realpath(lines[1])
        if executable not in seen:
            seen[executable] = Interpreter(path, executable, Version(lines[0]), origin(executable))
    return sorted(seen.values(), key=lambda i: (i.version, i.executable))


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kwargs)


def requires_python_of(download_stderr: str, name: str, version: str) -> str | None:
    """From ``pip download NAME==VERSION``'s error: the Requires-Python that ruled it out."""
    ignored = re.search(r"require a different python version: (.*)", download_stderr)
    for item in ignored.group(1).split(";") if ignored else []:
        parts = item.strip().split(" Requires-Python ")
        if len(parts) == 2 and parts[0].strip() == version:
            return parts[1].strip()
    return None


def explain_pip_failure(output: str, probe=None) -> str:
    """Name the package and its Python requirement from pip's resolver output.

    pip reports a lock that cannot install as a conflict with "The user requested (constraint)
    NAME==VERSION" (or, without constraints, "satisfies the requirement NAME==VERSION");
    ``probe(name, version)`` returns what ``pip download --no-deps NAME==VERSION`` printed with
    the same interpreter, which names the Requires-Python that rules the version out.
    """
    named = re.findall(r"\(constraint\) ([\w.-]+)==([\w.+!-]+)", output)
    named += re.findall(r"satisfies the requirement ([\w.-]+)==([\w.+!-]+)", output)
    reasons = []
    for name, version in dict.fromkeys(named):
        need = requires_python_of(output, name, version)
        if need is None and probe is not None:
            need = requires_python_of(probe(name, version), name, version)
        if need:
            reasons.append(f"{name}=={version} requires Python {need}")
        else:
            reasons.append(f"the lock's {name}=={version} cannot be installed here")
    if reasons:
        return "; ".join(reasons)
    errors = [line for line in output.splitlines() if line.startswith("ERROR")]
    return " | ".join(errors[-3:]) or output.strip()[-400:]


def compare_with_lock(resolved: dict[str, str], env: dict[str, str]) -> list[str]:
    pins = lockfile.pins(env)
    problems = []
    for name, version in sorted(resolved.items()):
        if name == canonicalize_name(project()["name"]):
            continue
        bare = version.split("+")[0]
        if name not in pins:
            problems.append(f"{name}=={bare} was resolved but the lock has no pin for it")
        elif Version(bare) != Version(pins[name]):
            problems.append(f"{name} resolved to {bare}, the lock pins {pins[name]}")
    return problems


def make_venv(interpreter: Interpreter, where: Path) -> str | None:
    """The venv's python, or None with the reason printed by the caller."""
    result = run([interpreter.executable, "-m", "venv", str(where)], timeout=300)
    if result.returncode != 0:
        return None
    return str(where / "bin" / "python")


def _prober(python: str, scratch: Path):
    def probe(name: str, version: str) -> str:
        where = scratch / "probe"
        cmd = [python, "-m", "pip", "download", "--no-deps", "-d", str(where)]
        result = run([*cmd, f"{name}=={version}"], timeout=600)
        return result.stdout + result.stderr

    return probe


def dry_run(interpreter: Interpreter, scratch: Path) -> tuple[str, str]:
    """(status, detail) for one interpreter."""
    if interpreter.version not in requires():
        return "SKIP", f"older than requires-python {requires()}"
    python = make_venv(interpreter, scratch / "venv")
    if python is None:
        fix = f"python{interpreter.version.major}.{interpreter.version.minor}-venv"
        return "SKIP", f"cannot create a venv (no venv/ensurepip: install {fix})"
    pip_version = run([python, "-m", "pip", "--version"]).stdout.split()[1]
    report = scratch / "report.json"
    cmd = [python, "-m", "pip", "install", "--dry-run", "--report", str(report)]
    result = run([*cmd, "-c", str(ROOT / "constraints.txt"), f"{ROOT}[{extras()}]"], timeout=1800)
    if result.returncode != 0:
        return "FAIL", explain_pip_failure(result.stdout + result.stderr, _prober(python, scratch))
    data = json.loads(report.read_text())
    resolved = {
        canonicalize_name(item["metadata"]["name"]): item["metadata"]["version"]
        for item in data["install"]
    }
    problems = compare_with_lock(resolved, data["environment"])
    if problems:
        return "FAIL", "; ".join(problems)
    return "PASS", f"lock + [{extras()}] resolve with pip {pip_version} ({len(resolved)} packages)"


def full_install(interpreter: Interpreter, scratch: Path) -> tuple[str, str]:
    """Install the package with the lock into a fresh venv, then use it from another folder."""
    python = make_venv(interpreter, scratch / "venv-full")
    if python is None:
        return "FAIL", "cannot create a venv"
    source = scratch / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)
    cmd = [python, "-m", "pip", "install", "-c", str(ROOT / "constraints.txt")]
    result = run([*cmd, f"{source}[lab]"], timeout=3600)
    if result.returncode != 0:
        output = result.stdout + result.stderr
        return "FAIL", "full install: " + explain_pip_failure(output, _prober(python, scratch))
    elsewhere = scratch / "elsewhere"
    elsewhere.mkdir()
    # A font cache of its own: this venv is deleted afterwards, and a shared cache that points
    # into it would leave every later matplotlib without its fonts.
    env = {**os.environ, "MPLCONFIGDIR": str(scratch / "mplconfig")}
    check = run(
        [python, str(ROOT / "tools" / "check_install.py")], cwd=elsewhere, env=env, timeout=600
    )
    if check.returncode != 0:
        return "FAIL", "import check: " + (check.stdout + check.stderr).strip()[-600:]
    return "PASS", "full install with the lock, then tools/check_install.py from another folder"


def uv_route(interpreter: Interpreter, scratch: Path) -> tuple[str, str]:
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if uv is None:
        return "SKIP", "uv is not installed (it comes with the dev extra)"
    venv = scratch / "uv-venv"
    made = run([uv, "venv", "--quiet", "--python", interpreter.executable, str(venv)], timeout=300)
    if made.returncode != 0:
        return "FAIL", "uv venv: " + made.stderr.strip()[-400:]
    cmd = [uv, "pip", "install", "--dry-run", "--python", str(venv / "bin" / "python")]
    result = run([*cmd, "-c", str(ROOT / "constraints.txt"), f"{ROOT}[{extras()}]"], timeout=1800)
    if result.returncode != 0:
        return "FAIL", "uv: " + result.stderr.strip()[-600:]
    resolved = dict(
        (canonicalize_name(name), version)
        for name, version in re.findall(r"^ \+ ([\w.-]+)==(\S+)", result.stderr, re.M)
    )
    if not resolved:
        return "FAIL", "uv resolved nothing: " + result.stderr.strip()[-400:]
    env = {
        "python_full_version": str(interpreter.version),
        "python_version": f"{interpreter.version.major}.{interpreter.version.minor}",
    }
    problems = compare_with_lock(resolved, env)
    if problems:
        return "FAIL", "uv: " + "; ".join(problems)
    uv_version = run([uv, "--version"]).stdout.split()[1]
    return "PASS", f"uv {uv_version} resolves the lock + [{extras()}] ({len(resolved)} packages)"


# Platforms this machine cannot run, resolved by uv for them (--python-platform): the wheels must
# exist there and every resolved version must be the lock's pin under that platform's markers.
# torch 2.13.0 ships macOS wheels for Apple silicon from macOS 14 only (none for Intel Macs).
PLATFORMS = {
    "Linux x86-64": (
        "x86_64-manylinux_2_28",
        {
            "sys_platform": "linux",
            "platform_system": "Linux",
            "platform_machine": "x86_64",
            "os_name": "posix",
        },
    ),
    "Windows x86-64": (
        "x86_64-pc-windows-msvc",
        {
            "sys_platform": "win32",
            "platform_system": "Windows",
            "platform_machine": "AMD64",
            "os_name": "nt",
        },
    ),
    "macOS 14+ Apple silicon": (
        "aarch64-apple-darwin",
        {
            "sys_platform": "darwin",
            "platform_system": "Darwin",
            "platform_machine": "arm64",
            "os_name": "posix",
        },
    ),
}
MACOS_TARGET = "14.0"
PLATFORM_PYTHONS = ("3.11", "3.13")


def find_uv() -> str | None:
    return shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")


def platform_route(name: str, python: str, scratch: Path) -> tuple[str, str]:
    """uv resolves the lock with every extra for one platform and Python it does not run on."""
    uv = find_uv()
    if uv is None:
        return "SKIP", "uv is not installed (it comes with the dev extra)"
    target, markers = PLATFORMS[name]
    out = scratch / f"platform-{target}-{python}.txt"
    cmd = [uv, "pip", "compile", str(ROOT / "pyproject.toml"), "--all-extras", "--quiet"]
    cmd += ["-c", str(ROOT / "constraints.txt"), "--python-platform", target]
    cmd += ["--python-version", python, "--no-header", "--no-annotate", "-o", str(out)]
    env = {**os.environ, "MACOSX_DEPLOYMENT_TARGET": MACOS_TARGET}
    result = run(cmd, env=env, timeout=1800)
    if result.returncode != 0:
        said = [line.strip() for line in result.stderr.splitlines() if line.strip()]
        return "FAIL", "uv: " + " ".join(said[-2:])[-600:]
    resolved = dict(
        (canonicalize_name(n), v)
        for n, v in re.findall(r"^([\w.-]+)==(\S+)", out.read_text(), re.M)
    )
    env_markers = {**markers, "python_version": python, "python_full_version": f"{python}.0"}
    problems = compare_with_lock(resolved, env_markers)
    if problems:
        return "FAIL", "; ".join(problems)
    return "PASS", f"uv --python-platform {target}: lock + [{extras()}] ({len(resolved)} packages)"


def main() -> int:
    project()  # a broken pyproject.toml or constraints.txt: a message now, not after the venvs
    lockfile.pins()
    interpreters = discover()
    if not interpreters:
        print("install matrix: no Python interpreter found")
        return 1
    print(
        f"install matrix: requires-python {requires()}, extras [{extras()}], "
        f"{len(interpreters)} found"
    )
    with tempfile.TemporaryDirectory(prefix="mhsa-matrix-") as tmp:
        scratch = Path(tmp)
        jobs = {}
        for number, interpreter in enumerate(interpreters):
            folder = scratch / f"py{number}"
            folder.mkdir()
            jobs[interpreter] = folder
        # Resolution waits on the network more than on the CPU: a few at a time.
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = dict(
                zip(jobs, pool.map(lambda item: dry_run(*item), jobs.items()), strict=True)
            )
            platform_jobs = [(n, p) for n in PLATFORMS for p in PLATFORM_PYTHONS]
            platform_results = list(
                pool.map(lambda job: platform_route(*job, scratch), platform_jobs)
            )
        supported = [i for i in interpreters if results[i][0] == "PASS"]
        extra: list[tuple[str, Interpreter, tuple[str, str]]] = []
        if supported:
            oldest = supported[0]
            extra.append(("full", oldest, full_install(oldest, jobs[oldest])))
            extra.append(("uv", oldest, uv_route(oldest, jobs[oldest])))
    width = max(len(i.label) for i in interpreters)
    for interpreter in interpreters:
        status, detail = results[interpreter]
        print(f"{status}  {interpreter.label:<{width}}  {detail}")
    for _, interpreter, (status, detail) in extra:
        print(f"{status}  {interpreter.label:<{width}}  {detail}")
    for (name, python), (status, detail) in zip(platform_jobs, platform_results, strict=True):
        print(f"{status}  {f'{name}, Python {python}':<{width}}  {detail}")
    statuses = [s for s, _ in results.values()] + [r[0] for _, _, r in extra]
    statuses += [status for status, _ in platform_results]
    failed = statuses.count("FAIL")
    passed = sum(1 for s, _ in results.values() if s == "PASS")
    skipped = statuses.count("SKIP")
    print(
        f"install matrix: {passed} of {len(interpreters)} interpreters pass; "
        f"{failed} fail; {skipped} skipped"
    )
    if failed or not passed:
        return 1
    return 0


if __name__ == "__main__":
    _toolkit.run(main, "install_matrix")
