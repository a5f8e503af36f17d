"""Is there a system font with Chinese characters? If not, the one command that installs it.

The figures carry their own font (the package ``noto-cjk-sans-otc``, ``ui/fonts.py``), but the
text that JupyterLab and the course website show -- the Chinese edition, the glossary's Chinese
column, the Chinese terms in the English lessons -- uses the system's fonts, and a machine without
one shows empty boxes. Lesson 00's environment check and ``make lab`` ask ``missing_cjk_font()``.

Standard library only, and runnable as a script (``python mhsa_helpers/system_fonts.py`` prints
the hint, or nothing when a font is there), so ``make lab`` can ask before torch is imported.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# Fonts every macOS since 10.11 and every Windows since Vista ships; the names a Linux package of
# a Chinese font gives its files.
MACOS_FONTS = (
    "/System/Library/Fonts/PingFang.ttc",
    "/System/Library/Fonts/STHeiti Light.ttc",
    "/System/Library/Fonts/Hiragino Sans GB.ttc",
    "/Library/Fonts/Arial Unicode.ttf",
)
LINUX_FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts", "~/.fonts")
CJK_FILE = re.compile(r"cjk|wqy|droidsansfallback|zenhei|microhei|uming|ukai|sourcehansans", re.I)
INSTALL = {
    "debian": "sudo apt-get install fonts-noto-cjk",
    "fedora": "sudo dnf install google-noto-sans-cjk-fonts",
    "arch": "sudo pacman -S noto-fonts-cjk",
    "suse": "sudo zypper install noto-sans-cjk-fonts",
    "macos": "brew install --cask font-noto-sans-cjk",
}


def linux_family(os_release: str) -> str | None:
    """'debian', 'fedora', 'arch' or 'suse' from /etc/os-release's ID and ID_LIKE."""
    ids = " ".join(re.findall(r"^ID(?:_LIKE)?=\"?([^\"\n]*)", os_release, re.M)).lower().split()
    for name in ids:
        if name in ("debian", "ubuntu", "linuxmint", "pop"):
            return "debian"
        if name in ("fedora", "rhel", "centos"):
            return "fedora"
        if name in ("arch", "manjaro"):
            return "arch"
        if "suse" in name:
            return "suse"
    return None


def _linux_has_cjk_font() -> bool:
    fc_list = shutil.which("fc-list")
    if fc_list:
        try:
            found = subprocess.run(
                [fc_list, ":lang=zh", "family"], capture_output=True, text=True, timeout=30
            )
            return bool(found.stdout.strip())
        except (OSError, subprocess.TimeoutExpired):
            pass
    for folder in LINUX_FONT_DIRS:
        root = Path(os.path.expanduser(folder))
        if root.is_dir() and any(CJK_FILE.search(p.name) for p in root.rglob("*")):
            return True
    return False


def install_command(platform: str | None = None, os_release: str | None = None) -> str:
    platform = platform or sys.platform
    if platform == "darwin":
        return INSTALL["macos"]
    if os_release is None:
        path = Path("/etc/os-release")
        os_release = path.read_text(errors="replace") if path.is_file() else ""
    family = linux_family(os_release)
    if family:
        return INSTALL[family]
    return "install a font with Chinese characters, e.g. Noto Sans CJK (fonts-noto-cjk)"


def missing_cjk_font(platform: str | None = None) -> str | None:
    """None when a system font with Chinese characters is there (or the system always has one);
    otherwise one sentence that names the command installing it."""
    platform = platform or sys.platform
    if platform.startswith("win"):
        return None  # Microsoft YaHei and SimSun ship with every Windows
    if platform == "darwin":
        if any(Path(path).exists() for path in MACOS_FONTS):
            return None
    elif _linux_has_cjk_font():
        return None
    return (
        "no system font with Chinese characters: Chinese text in JupyterLab and on the site "
        f"shows as empty boxes (the figures bring their own font). Install one: "
        f"{install_command(platform)}"
    )


if __name__ == "__main__":
    hint = missing_cjk_font()
    if hint:
        print(f"Note: {hint}")
