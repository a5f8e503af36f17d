"""tools/install_venv.py, what make lab / make site / make test install through: the pre-flight
note, the CPU-only torch (TORCH=cpu) that stops with one line when it cannot be had and is kept
for later runs, and the extras each make target installs."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load():
    spec = importlib.util.spec_from_file_location("install_venv", ROOT / "tools/install_venv.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tool(tmp_path, monkeypatch):
    module = _load()
    monkeypatch.setattr(module, "venv_dir", lambda: tmp_path)
    monkeypatch.setattr(module, "uv_or_pip", lambda: ["python", "-m", "pip", "install"])
    return module


def test_the_preflight_names_the_cuda_download_and_the_cpu_command_on_linux(tool, monkeypatch):
    monkeypatch.setattr(tool, "installed_torch", lambda: None)
    monkeypatch.setattr(tool.platform, "system", lambda: "Linux")
    monkeypatch.setattr(tool.sys, "platform", "linux")
    note = tool.preflight("lab", cpu=False)
    assert "CUDA" in note and "make lab TORCH=cpu" in note
    assert f"about {tool.SIZES['lab'][0]} MB" in note and "progress bar" in note
    cpu_note = tool.preflight("lab", cpu=True)
    assert "CPU-only" in cpu_note and "CUDA" not in cpu_note


def test_a_cpu_torch_that_cannot_be_had_stops_before_anything_else_and_is_remembered(
    tool, tmp_path, monkeypatch, capsys
):
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        return SimpleNamespace(returncode=1, stderr="ERROR: Could not find a version\n")

    monkeypatch.setattr(tool.subprocess, "run", fake_run)
    monkeypatch.setattr(tool, "installed_torch", lambda: None)
    monkeypatch.setattr(tool.sys, "platform", "linux")
    assert tool.main(["lab", "--torch", "cpu"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "CPU-only torch" in err[0] and "nothing else was installed" in err[0]
    assert len(calls) == 1 and "--index-url" in calls[0] and calls[0][-1].endswith("+cpu")
    assert (tmp_path / ".torch").read_text().strip() == "cpu"
    # A later plain `make lab` (no TORCH=) asks for the CPU build again instead of PyPI's default.
    calls.clear()
    assert tool.main(["lab"]) == 2
    assert len(calls) == 1 and calls[0][-1].endswith("+cpu")


def test_a_cpu_torch_already_there_is_kept_and_the_extra_installs_through_the_lock(
    tool, monkeypatch
):
    calls = []
    monkeypatch.setattr(
        tool.subprocess, "run", lambda cmd, **kw: calls.append(cmd) or SimpleNamespace(returncode=0)
    )
    monkeypatch.setattr(tool, "installed_torch", lambda: "2.13.0+cpu")
    assert tool.main(["lab", "--torch", "cpu"]) == 0
    assert len(calls) == 1  # no second torch install
    assert calls[0][-4:] == ["-c", str(ROOT / "constraints.txt"), "-e", f"{ROOT}[lab]"]


@pytest.mark.parametrize(("target", "extra"), [("lab", "lab"), ("site", "docs"), ("unit", "dev")])
def test_each_make_target_installs_only_its_extra(tmp_path, target, extra):
    make = shutil.which("make")
    assert make, "make is needed for this test"
    # -n: print the recipes, run nothing; -B: as on a fresh clone (every stamp out of date).
    out = subprocess.run(
        [make, "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    installs = [line for line in out.splitlines() if "tools/install_venv.py" in line]
    assert [line.split("install_venv.py ")[1].split()[0] for line in installs] == [extra], out
    if target == "lab":
        assert (
            "--torch cpu"
            in subprocess.run(
                [make, "-n", "-B", "lab", "TORCH=cpu"], cwd=ROOT, capture_output=True, text=True
            ).stdout
        )


def test_the_tool_needs_the_standard_library_only():
    # make runs it with a fresh venv's Python, before anything is installed there.
    imports = {
        line.split()[1].split(".")[0]
        for line in (ROOT / "tools/install_venv.py").read_text().splitlines()
        if line.startswith(("import ", "from "))
    }
    assert imports <= set(sys.stdlib_module_names) | {"__future__"}, imports


def _check_route():
    spec = importlib.util.spec_from_file_location("check_route", ROOT / "tools/check_route.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readmes_routes_without_make_are_the_same_three_steps():
    route = _check_route()
    blocks = route.route_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    posix, powershell = blocks["posix"], blocks["powershell"]
    assert posix[0].endswith("-m venv .venv") and powershell[0].endswith("-m venv .venv")
    lock_install = 'python -m pip install -c constraints.txt -e ".[lab]"'
    assert posix[-2] == ".venv/bin/" + lock_install
    assert powershell[-2] == ".venv\\Scripts\\" + lock_install
    assert posix[-1] == "cd notebooks && ../.venv/bin/jupyter lab"
    assert powershell[-1] == "cd notebooks; ..\\.venv\\Scripts\\jupyter lab"
    route.check_torch_pin(posix)  # the CPU line names the lock's torch


def test_a_route_naming_another_torch_than_the_lock_is_refused():
    route = _check_route()
    with pytest.raises(route.RouteError, match="the lock pins"):
        route.check_torch_pin(["pip install torch==2.1.0+cpu"])


def test_make_test_runs_the_route_without_make():
    out = subprocess.run(
        [shutil.which("make") or "make", "-n", "-B", "test"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "tools/check_route.py" in out


def test_environment_yml_points_at_readme_sections_that_exist():
    import re

    text = (ROOT / "environment.yml").read_text()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    named = re.findall(r'"([^"]+)"', text.split("README", 1)[1].splitlines()[0])
    assert named, "environment.yml names no README section"
    for section in named:
        assert f"## {section}" in readme or f"**{section}" in readme, section
