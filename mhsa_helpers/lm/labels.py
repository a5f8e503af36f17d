"""Heatmap labels for Chinese text that work with or without a Chinese font.

Matplotlib's default font (DejaVu Sans) has no Chinese glyphs: drawing 月 with it shows an empty
box and emits a "Glyph ... missing from font" warning (which also breaks a strictly compared
notebook). So the labels adapt to the machine:

* ``find_cjk_font(chars)`` looks through the Chinese fonts matplotlib knows for one whose
  character map covers every character: first the course's own Noto Sans CJK SC (the
  ``noto-cjk-sans-otc`` package, see ``mhsa_helpers.ui.fonts``), then others (WenQuanYi,
  PingFang, Microsoft YaHei, ...: known names);
* ``char_axis(text)`` returns the labels and the ``plt.rc_context`` settings to draw with: with
  such a font, the characters themselves; without one, the position of each character (and the
  punctuation as its ASCII look-alike), to be read with ``char_table(text)``, a printed table of
  positions and characters (its headings in the lesson language). Either way no warning is
  emitted, and the notebook's text output is the same on every machine.

Matplotlib is imported only inside ``find_cjk_font`` (``import mhsa_helpers`` stays light).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ..i18n import say

__all__ = ["CharAxis", "char_axis", "char_table", "find_cjk_font"]

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


def _prefer(name: str, registered: str | None) -> tuple[bool, bool, str]:
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
    from matplotlib import font_manager, ft2font

    entries = sorted(
        (
            entry
            for entry in font_manager.fontManager.ttflist
            if any(h.lower() in entry.name.lower() for h in _CJK_HINTS)
            and not any(bad.lower() in entry.name.lower() for bad in _NOT_CJK)
        ),
        key=lambda entry: _prefer(entry.name, registered),
    )
    charmaps: dict[str, frozenset[int] | None] = {}  # a collection's faces share one file
    for entry in entries:
        if entry.fname not in charmaps:
            try:
                charmaps[entry.fname] = frozenset(ft2font.FT2Font(entry.fname).get_charmap())
            except (OSError, RuntimeError, ValueError):  # unreadable font file
                charmaps[entry.fname] = None
        charmap = charmaps[entry.fname]
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

    from ..ui.fonts import cjk_font

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


def char_table(text: str, per_row: int = 16) -> str:
    """Positions above characters, ``per_row`` per row: the key to position-labelled heatmaps."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if isinstance(per_row, bool) or not isinstance(per_row, int) or per_row < 1:
        raise ValueError(f"per_row must be an int >= 1, got per_row={per_row!r}")
    # Both headings 10 columns wide (a Chinese character takes two columns).
    position = say("position  ", "位置      ")
    character = say("character ", "字符      ")
    rows = []
    for start in range(0, len(text), per_row):
        chunk = text[start : start + per_row]
        positions = "".join(f"{start + i:>3} " for i in range(len(chunk)))
        # A Chinese character is two columns wide in a monospace font; pad ASCII to match.
        chars = "".join(
            f" {ch} " if not ch.isascii() else f" {ASCII_LOOKALIKE.get(ch, ch):>2} " for ch in chunk
        )
        rows.append(f"{position}{positions}\n{character}{chars}")
    return "\n".join(rows)
