"""Lesson 00 and make lab notice a missing system font with Chinese characters and name the one
command that installs it (mhsa_helpers/system_fonts.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mhsa_helpers import system_fonts

ROOT = Path(__file__).resolve().parent.parent


def _fake_fc_list(tmp_path: Path, output: str) -> str:
    tool = tmp_path / "fc-list"
    tool.write_text(f"#!/bin/sh\nprintf '%s' '{output}'\n")
    tool.chmod(0o755)
    return str(tool)


def test_a_linux_without_a_chinese_font_gets_its_distributions_command(tmp_path, monkeypatch):
    monkeypatch.setattr(system_fonts.shutil, "which", lambda name: _fake_fc_list(tmp_path, ""))
    monkeypatch.setattr(system_fonts, "install_command", lambda platform: "THE COMMAND")
    hint = system_fonts.missing_cjk_font("linux")
    assert hint is not None and hint.endswith("Install one: THE COMMAND")
    monkeypatch.setattr(
        system_fonts.shutil, "which", lambda name: _fake_fc_list(tmp_path, "Noto Sans CJK SC\n")
    )
    assert system_fonts.missing_cjk_font("linux") is None


def test_each_family_gets_its_own_install_command():
    debian = 'PRETTY_NAME="Debian GNU/Linux 12"\nID=debian\n'
    ubuntu = "ID=ubuntu\nID_LIKE=debian\n"
    fedora = "ID=fedora\n"
    rocky = 'ID="rocky"\nID_LIKE="rhel centos fedora"\n'
    assert system_fonts.install_command("linux", debian) == "sudo apt-get install fonts-noto-cjk"
    assert system_fonts.install_command("linux", ubuntu) == "sudo apt-get install fonts-noto-cjk"
    fedora_cmd = "sudo dnf install google-noto-sans-cjk-fonts"
    assert system_fonts.install_command("linux", fedora) == fedora_cmd
    assert system_fonts.install_command("linux", rocky) == fedora_cmd
    assert system_fonts.install_command("darwin", "") == "brew install --cask font-noto-sans-cjk"
    assert "Noto Sans CJK" in system_fonts.install_command("linux", "ID=gentoo\n")


def test_windows_always_has_one_and_a_mac_without_its_fonts_is_told(monkeypatch, tmp_path):
    assert system_fonts.missing_cjk_font("win32") is None
    monkeypatch.setattr(system_fonts, "MACOS_FONTS", (str(tmp_path / "none.ttc"),))
    hint = system_fonts.missing_cjk_font("darwin")
    assert hint is not None and "brew install --cask font-noto-sans-cjk" in hint


def test_the_script_runs_without_importing_the_package_and_make_lab_asks_it():
    result = subprocess.run(
        [sys.executable, "-X", "importtime", str(ROOT / "mhsa_helpers/system_fonts.py")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0
    assert "torch" not in result.stderr  # the import log: no torch before JupyterLab starts
    makefile = (ROOT / "Makefile").read_text()
    lab = makefile.split("\nlab:", 1)[1].split("\n\n", 1)[0]
    assert "mhsa_helpers/system_fonts.py" in lab
