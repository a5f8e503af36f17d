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
* ``find_cjk_font(chars)`` -- a font that has every character of ``chars``: the course's own
  first, then other Chinese fonts matplotlib knows (WenQuanYi, PingFang, Microsoft YaHei, ...);
  ``char_axis(text)`` -- heatmap labels for a Chinese text (lesson 12's poems, ``lm.char_axis``):
  the characters with such a font, else their positions (punctuation as its ASCII look-alike),
  read with ``char_table(text)``, a printed table of positions and characters.

Without the package (an install with ``--no-deps``) nothing is registered and ``cjk_font()`` is
None: figure text stays English and Chinese token labels become positions -- no warning either
way, and a notebook's text output is the same on every machine. matplotlib is imported only
inside the functions (``import mhsa_helpers.ui.fonts`` itself is light).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import ParamSpec, TypeVar, overload

from ..i18n import Text, language, say
from ..tables import Table

__all__ = [
    "ASCII_LOOKALIKE",
    "CJK_FAMILY",
    "LATIN_FAMILY",
    "CharAxis",
    "can_draw",
    "char_axis",
    "char_table",
    "cjk_font",
    "figure_label",
    "figure_text",
    "find_cjk_font",
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
    _find_cjk_font.cache_clear()


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


@lru_cache(maxsize=64)
def _file_charmap(fname: str) -> frozenset[int] | None:
    """The code points the font file ``fname`` has (a collection's faces share one); None if
    the file cannot be read."""
    from matplotlib import ft2font

    try:
        return frozenset(ft2font.FT2Font(fname).get_charmap())
    except (OSError, RuntimeError, ValueError):  # an unreadable font file
        return None


@lru_cache(maxsize=4)
def _charmap(family: str) -> frozenset[int]:
    """The code points the font matplotlib picks for ``family`` can draw."""
    from matplotlib import font_manager

    return _file_charmap(font_manager.findfont(family)) or frozenset()


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


# Heatmap labels for a Chinese text (lesson 12's poems): ``lm.char_axis``, ``lm.char_table``.

# Font-name fragments of common CJK fonts (Linux, macOS, Windows). Only fonts whose name holds
# one of them are tried: a font's character map alone can lie (matplotlib ships "Last Resort",
# whose map covers every character with a placeholder box).
_CJK_HINTS = (
    "CJK",
    "Noto Sans SC",
    "Noto Serif SC",
    "Noto Sans TC",
    "Noto Serif TC",
    "Source Han",
    "Sarasa",
    "LXGW",
    "WenQuanYi",
    "Droid Sans Fallback",
    "AR PL",
    "PingFang",
    "Hiragino",
    "Heiti",
    "Songti",
    "STHeiti",
    "YaHei",
    "SimHei",
    "SimSun",
    "DengXian",
    "KaiTi",
    "FangSong",
    "JhengHei",
    "MingLiU",
    "Arial Unicode",
)
_NOT_CJK = ("Last Resort",)
# Punctuation drawn in its ASCII look-alike when no Chinese font is available.
ASCII_LOOKALIKE = {
    "，": ",",
    "。": ".",
    "？": "?",
    "！": "!",
    "；": ";",
    "：": ":",
    "、": ",",
    "“": '"',
    "”": '"',
    "《": "<",
    "》": ">",
    "・": "-",
    "\n": "\\n",
}


def _prefer_font(name: str, registered: str | None) -> tuple[bool, bool, str]:
    """Sort key: the course's registered font first, then Simplified Chinese faces, by name."""
    simplified = any(tag in name for tag in (" SC", " GB", " CN", "YaHei", "SimHei", "PingFang SC"))
    return (name != registered, not simplified, name)


@lru_cache(maxsize=32)
def _find_cjk_font(
    needed: frozenset[int], registered: str | None, fonts_id: int, fonts_count: int
) -> str | None:
    """The search of ``find_cjk_font``, cached per font list (``fonts_id``, ``fonts_count``).

    A font added later (``addfont``) or a replaced font list changes the key, so a cached None
    never hides a font registered since.
    """
    from matplotlib import font_manager

    entries = sorted(
        (
            entry
            for entry in font_manager.fontManager.ttflist
            if any(h.lower() in entry.name.lower() for h in _CJK_HINTS)
            and not any(bad.lower() in entry.name.lower() for bad in _NOT_CJK)
        ),
        key=lambda entry: _prefer_font(entry.name, registered),
    )
    for entry in entries:
        charmap = _file_charmap(entry.fname)
        if charmap is not None and needed <= charmap:
            return entry.name
    return None


def find_cjk_font(chars: str) -> str | None:
    """Name of an installed font (as matplotlib knows it) that has every non-ASCII ``chars``.

    The course's own font (Noto Sans CJK SC from ``noto-cjk-sans-otc``, registered here if it
    was not yet) comes first; then other Chinese fonts, Simplified Chinese faces first.
    """
    if not isinstance(chars, str):
        raise TypeError(f"chars must be a str, got {type(chars).__name__}")
    needed = frozenset(ord(c) for c in chars if not c.isascii())
    if not needed:
        return "DejaVu Sans"
    from matplotlib import font_manager

    registered = cjk_font()
    fonts = font_manager.fontManager.ttflist
    return _find_cjk_font(needed, registered, id(fonts), len(fonts))


@dataclass(frozen=True)
class CharAxis:
    """Tick labels for a text and the matplotlib settings to draw them with.

    ``labels``: one per character. ``rc``: for ``plt.rc_context(rc)`` around the plotting and
    ``plt.show()``. ``font``: the Chinese font used, or None (then labels are positions).
    """

    labels: list[str]
    rc: dict = field(default_factory=dict)
    font: str | None = None


def char_axis(text: str, *, font: str | bool | None = True) -> CharAxis:
    """Labels for ``text``: the characters if a font has them all, else positions (0, 1, ...).

    ``font=True`` (default) searches with ``find_cjk_font``; ``font=False`` forces the position
    labels; a font name uses that font. ``"\\n"`` is labelled ``\\n`` either way.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if font is True:
        found = find_cjk_font(text.replace("\n", ""))
    elif font is False or font is None:
        found = None
    elif isinstance(font, str):
        found = font
    else:
        raise TypeError(f"font must be True, False, None or a font name, got {font!r}")
    if found is not None:
        labels = [ASCII_LOOKALIKE["\n"] if ch == "\n" else ch for ch in text]
        return CharAxis(labels, {"font.family": [found, "DejaVu Sans"]}, found)
    labels = [ASCII_LOOKALIKE.get(ch, ch if ch.isascii() else str(i)) for i, ch in enumerate(text)]
    return CharAxis(labels, {}, None)


def char_table(text: str, per_row: int = 16) -> Table:
    """Positions above characters, ``per_row`` per row: the key to position-labelled heatmaps.

    A ``Table`` (``mh.show_table`` shows it; ``str()`` is its text): a row of positions, then
    a row of the characters at them, and so on; a line break is shown as its ASCII look-alike."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if isinstance(per_row, bool) or not isinstance(per_row, int) or per_row < 1:
        raise ValueError(f"per_row must be an int >= 1, got per_row={per_row!r}")
    position, character = say("position", "位置"), say("character", "字符")
    rows: list[list[object]] = []
    for start in range(0, len(text), per_row):
        chunk = text[start : start + per_row]
        rows.append([position, *range(start, start + len(chunk))])
        rows.append(
            [character, *(ASCII_LOOKALIKE.get(ch, ch) if ch.isascii() else ch for ch in chunk)]
        )
    return Table(rows, align="<" + "^" * min(per_row, len(text)) if text else None)
