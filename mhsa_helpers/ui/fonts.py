"""A font with Chinese characters for the figures, and a clean fallback without one.

Why: matplotlib's default font (DejaVu Sans) has no CJK glyphs, so a Chinese title or token label
would show empty boxes and warn "Glyph ... missing from font". The course depends on
``noto-cjk-sans-otc`` (Noto Sans CJK, SIL Open Font Licence), a PyPI package that only carries
the font file.

* ``use_cjk_font()`` registers the file with matplotlib (once; later calls cost microseconds) and
  puts "Noto Sans CJK SC" after DejaVu Sans in ``font.family``: Latin text keeps its look, and
  matplotlib's per-glyph fallback draws every Chinese character in Noto. ``mh.setup_lesson()``
  calls it, and so does every figure function of the package (decorated ``@with_cjk_font``), so
  that a figure drawn outside a lesson (a test, a script) never lacks the font it needs.
* ``figure_text(en, zh)`` -- figure text (titles, axis labels, legends) in the lesson language,
  resolved when the figure is drawn; English when Chinese is asked for but no CJK font is there.
  ``figure_label(title)`` does the same for a title a caller passes (a ``str`` or an
  ``i18n.Text``).
* ``token_labels(labels)`` -- the labels as given if every character can be drawn, else the
  positions 1..T (a Chinese sentence on a machine without the font).

Without the package (an install with ``--no-deps``) nothing is registered and ``cjk_font()`` is
None: figure text stays English and Chinese token labels become positions -- no warning either
way (``mhsa_helpers.lm.char_axis`` does the same for the Tang poems' characters).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import ParamSpec, TypeVar, overload

from ..i18n import Text, language

__all__ = [
    "CJK_FAMILY",
    "LATIN_FAMILY",
    "can_draw",
    "cjk_font",
    "figure_label",
    "figure_text",
    "token_labels",
    "use_cjk_font",
    "with_cjk_font",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")

#: The family name matplotlib gives the Simplified Chinese face of the collection.
CJK_FAMILY = "Noto Sans CJK SC"
#: matplotlib's default font, kept first so that Latin text looks as it always did.
LATIN_FAMILY = "DejaVu Sans"


def _font_file() -> Path | None:
    """The collection file of ``noto-cjk-sans-otc``, or None when the package is missing."""
    try:  # imported by name: the package ships no type information
        package = importlib.import_module("noto_cjk_sans_otc")
    except ImportError:
        return None
    path = Path(str(package.FONT_PATH))
    return path if path.is_file() else None


@lru_cache(maxsize=1)
def _register() -> str | None:
    """Add the collection's faces to matplotlib's font list (once); the SC family, or None."""
    path = _font_file()
    if path is None:
        return None
    from matplotlib import font_manager

    manager = font_manager.fontManager
    faces = [entry for entry in manager.ttflist if Path(entry.fname) == path]
    if not any(entry.name == CJK_FAMILY for entry in faces):  # not added yet
        try:
            manager.addfont(str(path))
        except (OSError, RuntimeError, ValueError):  # an unreadable file: as if missing
            return None
        faces = [entry for entry in manager.ttflist if Path(entry.fname) == path]
    regular = [entry for entry in faces if entry.name == CJK_FAMILY]
    if not regular:
        return None
    # The package has the Regular weight only. matplotlib looks every family of font.family up
    # for every text, and warns "Failed to find font weight bold for Noto Sans CJK SC" when a
    # bold text (even a Latin one) finds no bold face: the Regular face stands in for the other
    # weights (Chinese characters of bold text are drawn regular; Latin bold stays DejaVu Bold).
    weights = {entry.weight for entry in regular}
    missing = [w for w in range(100, 1000, 100) if w not in weights]
    if missing:
        manager.ttflist.extend(dataclasses.replace(regular[0], weight=w) for w in missing)
        cached = getattr(manager, "_findfont_cached", None)  # as addfont does after adding
        if cached is not None:
            cached.cache_clear()
    return CJK_FAMILY


def _clear_caches() -> None:
    """Forget what was registered and measured (tests that simulate a missing package)."""
    _register.cache_clear()
    _charmap.cache_clear()


def cjk_font() -> str | None:
    """The registered CJK family name, or None when no CJK font package is installed."""
    return _register()


def use_cjk_font() -> str | None:
    """Register the CJK font and make it matplotlib's fallback after DejaVu Sans (idempotent).

    Returns the family name, or None without the font package (then nothing changes).
    """
    family = _register()
    if family is None:
        return None
    import matplotlib as mpl

    current = list(mpl.rcParams["font.family"])
    if family not in current:
        kept = [name for name in current if name != "sans-serif"]
        mpl.rcParams["font.family"] = [*(kept or [LATIN_FAMILY]), family]
    return family


def with_cjk_font(draw: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorate a figure function: ``use_cjk_font()`` before it creates any text.

    matplotlib fixes a text's font family when the text object is made (an axes' title when the
    axes is), so the fallback must be in ``font.family`` before the figure exists, not only when
    the first Chinese string is set. ``mh.setup_lesson()`` does it for a lesson; this does it for
    a figure drawn anywhere else (a test, a script). Costs microseconds after the first call.
    """

    @functools.wraps(draw)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        use_cjk_font()
        return draw(*args, **kwargs)

    return wrapper


def figure_text(en: str, zh: str) -> str:
    """Figure text in the lesson language; English when Chinese is asked for but no CJK font."""
    if language() == "zh" and use_cjk_font() is not None:
        return zh
    return en


@overload
def figure_label(label: str | Text) -> str: ...
@overload
def figure_label(label: None) -> None: ...
def figure_label(label: str | Text | None) -> str | None:
    """A title or label a caller passed: a ``Text`` resolved like ``figure_text``, else as is."""
    if isinstance(label, Text):
        return label.zh if language() == "zh" and use_cjk_font() is not None else label.en
    return label


@lru_cache(maxsize=4)
def _charmap(family: str) -> frozenset[int]:
    """The code points the font matplotlib picks for ``family`` can draw."""
    from matplotlib import font_manager

    return frozenset(font_manager.get_font(font_manager.findfont(family)).get_charmap())


def _drawn(char: str) -> bool:
    """Whether ``char`` needs a glyph (not a space, a newline or another control character)."""
    return not (char.isspace() or unicodedata.category(char).startswith("C"))


def can_draw(text: str) -> bool:
    """Whether DejaVu Sans, or the CJK font where one is installed, has every glyph of ``text``."""
    needed = {ord(c) for c in text if not c.isascii() and _drawn(c)}
    if not needed:
        return True
    needed -= _charmap(LATIN_FAMILY)
    if not needed:
        return True
    family = use_cjk_font()
    return family is not None and needed <= _charmap(family)


def token_labels(labels: Iterable[object]) -> list[str]:
    """``labels`` as strings if every one can be drawn, else the positions "1", "2", ...

    A Chinese sentence keeps its words where the CJK font is installed; without it the axis is
    numbered like an unlabelled one, instead of showing empty boxes and warning.
    """
    texts = [str(label) for label in labels]
    if all(can_draw(text) for text in texts):
        return texts
    return [str(i) for i in range(1, len(texts) + 1)]
