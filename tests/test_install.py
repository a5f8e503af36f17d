"""Before anything is created, `make` says whether the chosen Python can run the course, and the
install matrix names the package and its Python requirement when the lock does not fit."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAKE = shutil.which("make") or "make"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def _make_venv(tmp_path: Path, fake: Path | None, python: str = sys.executable):
    """Run `make <venv>/bin/python` for a venv under tmp_path; `fake` goes first on PYTHONPATH."""
    venv = tmp_path / "venv"
    env = {**os.environ, "PYTHONPATH": str(fake) if fake else ""}
    result = subprocess.run(
        [MAKE, "--no-print-directory", f"VENV={venv}", f"PYTHON={python}", f"{venv}/bin/python"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return result, venv


def test_make_refuses_a_python_that_is_too_old_before_creating_anything(tmp_path):
    fake = tmp_path / "fake"
    fake.mkdir()
    # The interpreter reports itself as 3.10.13 (sitecustomize runs before any script).
    (fake / "sitecustomize.py").write_text(
        "import sys\nsys.version_info = (3, 10, 13, 'final', 0)\n"
    )
    result, venv = _make_venv(tmp_path, fake)
    message = result.stdout + result.stderr
    assert result.returncode != 0
    assert "The course needs Python 3.11 or newer; this is Python 3.10.13" in message
    assert "Fix: make lab PYTHON=" in message
    assert "Traceback" not in message
    assert not venv.exists()


def test_make_names_the_missing_venv_package_before_creating_anything(tmp_path):
    fake = tmp_path / "fake"
    (fake / "ensurepip").mkdir(parents=True)
    # Debian without python3-venv: the interpreter has no ensurepip.
    (fake / "ensurepip" / "__init__.py").write_text("raise ImportError('no ensurepip')\n")
    result, venv = _make_venv(tmp_path, fake)
    message = result.stdout + result.stderr
    v = sys.version_info
    assert result.returncode != 0
    assert f"Python {v.major}.{v.minor}.{v.micro}" in message
    assert "the module ensurepip is missing" in message
    if Path("/etc/debian_version").exists():
        assert f"Fix: sudo apt-get install python{v.major}.{v.minor}-venv" in message
    else:
        assert "Fix: reinstall Python" in message
    assert "Traceback" not in message
    assert not venv.exists()


def test_make_says_when_the_named_python_does_not_exist(tmp_path):
    result, venv = _make_venv(tmp_path, None, python="python3.99-not-here")
    message = result.stdout + result.stderr
    assert result.returncode != 0
    assert "No 'python3.99-not-here' on PATH" in message and "PYTHON=python3.12" in message
    assert not venv.exists()


def test_a_supported_python_passes_the_check_silently():
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "check_python.py")], capture_output=True, text=True
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_the_message_offers_the_newest_suitable_python_or_says_how_to_get_one(tmp_path):
    check = _load("check_python")
    for name in ("python3.12", "python3.13", "python3.9"):
        exe = tmp_path / name
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    newer = check.newer_pythons_on_path((3, 11), path=str(tmp_path))
    assert newer == ["python3.13", "python3.12"]
    old = check.problem((3, 9, 2), (3, 11), [], "/usr/bin/python3", True, newer)
    assert "this is Python 3.9.2 (/usr/bin/python3)" in old
    assert "Fix: make lab PYTHON=python3.13" in old
    none = check.problem((3, 9, 2), (3, 11), [], "/usr/bin/python3", False, [])
    assert "install Python 3.11 or newer" in none and "make lab PYTHON=" in none
    both = check.problem((3, 12, 1), (3, 11), ["venv", "ensurepip"], "/x/python", True, [])
    assert "the modules venv and ensurepip are missing" in both
    assert "sudo apt-get install python3.12-venv" in both
    assert check.problem((3, 11, 2), (3, 11), [], "/usr/bin/python3", True, []) is None


# What Debian 12's pip (23.0.1, Python 3.11.2) printed for 0.2.0's lock, which pinned
# soupsieve==4.1.3: a conflict that never says why -- and what `pip download` then says.
PIP_CONFLICT = (ROOT / "tests" / "data" / "pip_conflict_debian12.txt").read_text()
PIP_DOWNLOAD = (ROOT / "tests" / "data" / "pip_download_soupsieve_debian12.txt").read_text()


def test_the_matrix_names_the_package_and_its_python_requirement():
    matrix = _load("install_matrix")
    asked = []

    def probe(name, version):
        asked.append((name, version))
        return PIP_DOWNLOAD

    explained = matrix.explain_pip_failure(PIP_CONFLICT, probe)
    assert explained == "soupsieve==4.1.3 requires Python >=3.11.5"
    assert asked == [("soupsieve", "4.1.3")]
    # The same words when pip says it at once (a plain install, no constraints file).
    assert matrix.explain_pip_failure(PIP_DOWNLOAD) == explained
    # A pin ruled out for another reason is still named.
    unknown = matrix.explain_pip_failure(PIP_CONFLICT, lambda name, version: "ERROR: offline")
    assert unknown == "the lock's soupsieve==4.1.3 cannot be installed here"
    # Anything else: pip's own last error lines, never an empty reason.
    other = "ERROR: Cannot install x\nERROR: ResolutionImpossible: see above\n"
    assert "ResolutionImpossible" in matrix.explain_pip_failure(other)


def test_the_matrix_reports_versions_that_leave_the_lock():
    matrix = _load("install_matrix")
    pins = matrix.lockfile.pins()
    env = {"python_full_version": "3.11.7", "python_version": "3.11"}
    assert matrix.compare_with_lock({"torch": "2.13.0+cpu", "mhsa-helpers": "0.3.0"}, env) == []
    problems = matrix.compare_with_lock({"torch": "2.14.0", "left-pad": "1.0"}, env)
    assert problems == [
        "left-pad==1.0 was resolved but the lock has no pin for it",
        f"torch resolved to 2.14.0, the lock pins {pins['torch']}",
    ]


def test_citation_file_is_valid_cff_1_2_and_names_this_release():
    import jsonschema
    import yaml

    schema = json.loads((ROOT / "tests" / "data" / "cff-schema-1.2.0.json").read_text())
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    jsonschema.validate(citation, schema)  # raises with the offending field
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert str(citation["version"]) == project["version"]
    assert citation["title"].startswith("Multi-Head Self-Attention, step by step")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {project['version']} — " in changelog, "CHANGELOG.md has no section for it"
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "Attribution 4.0 International" in (ROOT / "LICENSE-TEXT").read_text(encoding="utf-8")


def test_the_matrix_resolves_for_windows_and_macos_through_uvs_python_platform(
    tmp_path, monkeypatch
):
    """platform_route asks uv for each platform and compares what it resolved with the lock's
    pins under that platform's markers (a stand-in uv writes the resolution it is told to)."""
    matrix = _load("install_matrix")
    assert {target for target, _ in matrix.PLATFORMS.values()} >= {
        "x86_64-pc-windows-msvc",
        "aarch64-apple-darwin",
    }
    windows = matrix.lockfile.pins(
        {
            **matrix.PLATFORMS["Windows x86-64"][1],
            "python_version": "3.11",
            "python_full_version": "3.11.0",
        }
    )
    assert "colorama" in windows  # a Windows-only pin is chosen by the Windows markers
    answer = tmp_path / "answer.txt"
    seen = tmp_path / "argv.txt"
    uv = tmp_path / "uv"
    uv.write_text(
        "#!/bin/sh\n"
        f'echo "$@" > "{seen}"\n'
        'while [ "$1" != "-o" ]; do shift; done\n'
        f'cp "{answer}" "$2"\n'
    )
    uv.chmod(0o755)
    monkeypatch.setattr(matrix, "find_uv", lambda: str(uv))
    answer.write_text("".join(f"{n}=={v}\n" for n, v in windows.items()))
    status, detail = matrix.platform_route("Windows x86-64", "3.11", tmp_path)
    assert status == "PASS", detail
    assert "--python-platform x86_64-pc-windows-msvc" in seen.read_text()
    assert "--python-version 3.11" in seen.read_text()
    answer.write_text(
        "".join(f"{n}=={v}\n" for n, v in windows.items() if n != "torch") + "torch==2.12.0\n"
    )
    status, detail = matrix.platform_route("Windows x86-64", "3.11", tmp_path)
    assert status == "FAIL" and "torch resolved to 2.12.0" in detail
