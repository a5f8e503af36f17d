"""``import mhsa_helpers as mh``: what is public is in ``__all__``, and every name there works.

That the import loads no UI stack: ``test_environment.test_import_does_not_load_the_ui_stack``.
"""

from __future__ import annotations

import importlib
import re
import types
from pathlib import Path

import mhsa_helpers as mh

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGES = (
    "attention",
    "exercises",
    "layers",
    "lm",
    "training",
    "ui",
    "ui.figures",
    "ui.explorers",
)


def test_nothing_public_outside_all():
    """No helper of an ``__init__`` (importlib, version, annotations ...) leaks as a public name:
    the package's, and each subpackage's (submodules aside: ``mh.attention``, ``ui.figures``)."""
    packages = [mh, *(importlib.import_module(f"mhsa_helpers.{name}") for name in SUBPACKAGES)]
    leaked = [
        f"{package.__name__}.{name}"
        for package in packages
        for name in dir(package)
        if not name.startswith("_")
        and name not in package.__all__
        and not isinstance(getattr(package, name), types.ModuleType)
    ]
    assert leaked == []
    for name in ("annotations", "importlib", "version", "PackageNotFoundError"):
        assert not hasattr(mh, name), name


def test_every_name_in_all_resolves_and_is_listed_once():
    assert len(mh.__all__) == len(set(mh.__all__)) == len(mh._PUBLIC)
    for name in mh.__all__:
        value = getattr(mh, name)
        assert getattr(value, "__name__", name) == name, name


def test_every_name_the_lessons_use_exists():
    scripts = [*ROOT.glob("notebooks/scripts/*.py"), *ROOT.glob("notebooks/zh/scripts/*.py")]
    used = set()
    for script in scripts:
        used |= set(re.findall(r"\bmh\.([A-Za-z_]\w*)", script.read_text(encoding="utf-8")))
    missing = sorted(name for name in used if not hasattr(mh, name))
    assert missing == []
    assert {"MultiHeadAttention", "head_entropy", "offset_attention", "masked_attention"} <= used


def test_the_heatmap_label_names_of_lm_are_the_ui_font_code():
    """``lm.char_axis`` and friends kept their names when the code moved to ``ui/fonts.py``."""
    from mhsa_helpers import lm
    from mhsa_helpers.ui import fonts

    for name in ("CharAxis", "char_axis", "char_table", "find_cjk_font"):
        assert name in lm.__all__ and name in dir(lm), name
        assert getattr(lm, name) is getattr(fonts, name), name
