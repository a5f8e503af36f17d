"""The install files keep their promises: ranges in pyproject, exact tested versions in
constraints.txt, environment.yml generated from both, and a CI script that runs the README's test
command. That the wheel carries the data and works outside the checkout is ``make install-test``
(part of ``make test``: it builds the wheel, installs it into a second venv and runs
tools/check_install.py from another folder)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
BASH = shutil.which("bash") or "/bin/bash"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _load_tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # tools import each other by name (install_matrix -> lockfile)
    spec.loader.exec_module(module)
    return module


lockfile = _load_tool("lockfile")


def constraints(env: dict[str, str] | None = None) -> dict[str, Version]:
    """The lock's pins for one interpreter (default: this one)."""
    return {name: Version(v) for name, v in lockfile.pins(env).items()}


def requirements() -> list[Requirement]:
    reqs = [Requirement(r) for r in PROJECT["dependencies"]]
    for extra in PROJECT["optional-dependencies"].values():
        reqs += [Requirement(r) for r in extra if not r.startswith(PROJECT["name"])]
    return reqs


def test_pyproject_states_ranges_and_constraints_pin_a_version_inside_each():
    pins = constraints()
    for req in requirements():
        assert "==" not in str(req.specifier), f"{req}: pyproject states ranges, not pins"
        name = req.name.lower().replace("_", "-")
        assert name in pins, f"{req.name} has no exact version in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"constraints.txt pins {req.name}=={pins[name]}, outside pyproject's {req.specifier}"
        )


def test_torch_is_locked_to_the_cpu_wheel_on_disk():
    assert constraints()["torch"] == Version("2.13.0")


# Interpreters the README promises, at the edges where a package's Requires-Python can differ.
PYTHONS = ["3.11.0", "3.11.2", "3.11.4", "3.11.5", "3.11.7", "3.12.0", "3.12.1", "3.13.0", "3.14.0"]


def test_the_lock_pins_each_dependency_exactly_once_for_every_supported_python():
    """One universal lock: the markers pick exactly one version of every dependency for each
    interpreter (a package pinned twice, or not at all, would make pip fail or drift)."""
    missing = []
    for python in PYTHONS:
        env = {"python_full_version": python, "python_version": python.rsplit(".", 1)[0]}
        pins = constraints(env)  # raises if two lines apply to one interpreter
        missing += [(python, r.name) for r in requirements() if _canon(r.name) not in pins]
        assert pins["torch"] == Version("2.13.0"), python
    assert not missing, missing


def _canon(name: str) -> str:
    return name.lower().replace("_", "-")


def test_jupyterlab_is_not_a_runtime_requirement():
    runtime = {Requirement(r).name for r in PROJECT["dependencies"]}
    assert not runtime & {"jupyterlab", "ipykernel", "notebook"}, runtime


def test_the_environment_under_test_is_the_locked_one():
    pins = constraints()
    for req in requirements():
        installed = Version(metadata.version(req.name))
        assert installed.release == pins[req.name.lower().replace("_", "-")].release, req.name


def test_environment_yml_is_generated_from_pyproject_and_constraints():
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "render_environment.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_readme_glossary_is_rendered_from_the_data_file():
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "render_glossary.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout


def test_ci_installs_the_browser_then_runs_make_test(tmp_path):
    """Run .ci/run with stand-ins for make, apt-get, chromium and fc-list that record calls."""
    log = tmp_path / "calls.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("make", "apt-get"):
        stub = bin_dir / tool
        stub.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{log}"\n')
        stub.chmod(0o755)
    # PATH holds only the stand-ins and the one real tool the script needs, so whether this
    # machine has chromium installed does not matter.
    for real in ("dirname", "grep"):
        (bin_dir / real).symlink_to(shutil.which(real))
    fc_list = bin_dir / "fc-list"  # a machine with a Chinese font
    fc_list.write_text('#!/bin/sh\necho "/usr/share/fonts/NotoSansCJK.ttc: Noto Sans CJK SC"\n')
    fc_list.chmod(0o755)
    env = {**os.environ, "PATH": str(bin_dir)}
    # Without chromium on PATH the script installs it (apt-get) and then fails to find it.
    result = subprocess.run([BASH, str(ROOT / ".ci" / "run")], env=env, capture_output=True)
    assert result.returncode != 0
    assert "apt-get install" in log.read_text() and "make" not in log.read_text()
    log.unlink()
    for present in ("chromium", "npm"):
        tool = bin_dir / present
        tool.write_text("#!/bin/sh\n")
        tool.chmod(0o755)
    result = subprocess.run([BASH, str(ROOT / ".ci" / "run")], env=env, capture_output=True)
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == ["make test"]
    # Without npm (the website's JavaScript comes from site/package-lock.json) it installs it.
    log.unlink()
    (bin_dir / "npm").unlink()
    result = subprocess.run([BASH, str(ROOT / ".ci" / "run")], env=env, capture_output=True)
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    assert calls[-1] == "make test" and "apt-get install -y -qq nodejs npm" in calls
    (bin_dir / "npm").write_text("#!/bin/sh\n")
    (bin_dir / "npm").chmod(0o755)
    # Without a Chinese font the script installs one for the Chinese edition's pages.
    log.unlink()
    fc_list.write_text("#!/bin/sh\n")
    result = subprocess.run([BASH, str(ROOT / ".ci" / "run")], env=env, capture_output=True)
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    assert calls[-1] == "make test" and "apt-get install -y -qq fonts-noto-cjk" in calls


@pytest.mark.parametrize("target", ["lab", "test", "install-test", "install-matrix", "lock"])
def test_readme_commands_are_make_targets(target):
    result = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_import_does_not_load_the_ui_stack():
    """Neither ``import mhsa_helpers`` nor lesson 12's model (``mhsa_helpers.lm``, whose label
    names come from ``ui.fonts`` on first use) loads matplotlib, seaborn, pandas or ipywidgets."""
    code = (
        "import sys, mhsa_helpers as mh; mh.MultiHeadAttention(4, 4, 3, 0.0, 2);"
        "from mhsa_helpers import lm; lm.CharTokenizer;"
        "print(sorted(m for m in ('matplotlib', 'seaborn', 'pandas', 'ipywidgets') "
        "if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stdout + result.stderr
