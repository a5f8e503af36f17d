"""``import mhsa_helpers as mh``: what is public is in ``__all__``, and every name there works."""

from __future__ import annotations

import re
import subprocess
import sys
import types
from pathlib import Path

import mhsa_helpers as mh

ROOT = Path(__file__).resolve().parents[1]


def test_nothing_public_outside_all():
    """No helper of ``__init__`` (importlib, version, annotations ...) leaks as a public name."""
    leaked = [
        name
        for name in dir(mh)
        if not name.startswith("_")
        and name not in mh.__all__
        and not isinstance(getattr(mh, name), types.ModuleType)  # mh.attention, mh.ui ...
    ]
    assert leaked == []
    for name in ("annotations", "importlib", "version", "PackageNotFoundError"):
        assert not hasattr(mh, name), name


def test_every_name_in_all_resolves_and_is_listed_once():
    assert len(mh.__all__) == len(set(mh.__all__)) == len(mh._PUBLIC)
    for name in mh.__all__:
        value = getattr(mh, name)
        assert getattr(value, "__name__", name) == name, name


def test_lazy_names_are_not_loaded_by_the_import():
    lazy = sorted(n for n, module in mh._PUBLIC.items() if module not in mh._EAGER)
    code = f"import mhsa_helpers as mh; print(sorted(n for n in {lazy!r} if n in vars(mh)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_every_name_the_lessons_use_exists():
    scripts = [*ROOT.glob("notebooks/scripts/*.py"), *ROOT.glob("notebooks/zh/scripts/*.py")]
    used = set()
    for script in scripts:
        used |= set(re.findall(r"\bmh\.([A-Za-z_]\w*)", script.read_text(encoding="utf-8")))
    missing = sorted(name for name in used if not hasattr(mh, name))
    assert missing == []
    assert {"MultiHeadAttention", "head_entropy", "offset_attention", "masked_attention"} <= used
