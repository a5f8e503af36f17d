"""The install files agree with each other and keep their promises (pins, torch CPU wheel, CI)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONDA_TO_PIP = {"pytorch": "torch"}


def pyproject_pins() -> dict[str, str]:
    text = (ROOT / "pyproject.toml").read_text()
    deps = re.findall(r'^\s*"([A-Za-z0-9_.\-]+)==([^"]+)",?\s*$', text, flags=re.M)
    return {name.lower(): version for name, version in deps}


def conda_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "environment.yml").read_text().splitlines():
        match = re.match(r"^\s{2}- ([A-Za-z0-9_.\-]+)=([0-9][^\s#]*)\s*$", line)
        if match and match.group(1) != "python":
            name = match.group(1).lower()
            pins[CONDA_TO_PIP.get(name, name)] = match.group(2)
    return pins


def test_every_dependency_is_pinned_exactly():
    text = (ROOT / "pyproject.toml").read_text()
    block = text.split("dependencies = [", 1)[1].split("[tool.setuptools", 1)[0]
    entries = re.findall(r'^\s*"([^"]+)",?\s*$', block, flags=re.M)
    assert entries, "no dependencies found"
    unpinned = [e for e in entries if "==" not in e]
    assert unpinned == [], f"unpinned dependencies: {unpinned}"


def test_torch_is_pinned_to_the_cpu_wheel_on_disk():
    assert pyproject_pins()["torch"] == "2.13.0"


def test_environment_yml_lists_the_same_packages_and_versions():
    assert conda_pins() == pyproject_pins()


def test_environment_yml_installs_the_package_itself():
    assert "--editable ." in (ROOT / "environment.yml").read_text()


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme
    assert re.search(r"^\s*make test\b", ci, flags=re.M), ci
    assert "nbval-lax" not in ci and "--ignore" not in ci and "-k " not in ci


def test_makefile_runs_strict_nbval_over_every_notebook():
    makefile = (ROOT / "Makefile").read_text()
    assert "--nbval " in makefile and "--nbval-current-env" in makefile
    assert "nbval-lax" not in makefile
    assert re.search(r"^test: .*lint.*unit.*notebooks-test.*ui-test", makefile, flags=re.M)
    assert "torch==2.13.0" in (ROOT / "pyproject.toml").read_text()


def test_readme_quick_start_shows_the_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```\n(.*?)```", quick, flags=re.S)
    assert [b.strip() for b in blocks] == ["make lab", "make test"]


def test_readme_glossary_is_rendered_from_the_data_file():
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "render_glossary.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout
