"""A font with Chinese characters for the figures, and a clean fallback without one.

Why: matplotlib's default font (DejaVu Sans) has no CJK glyphs, so a Chinese title or token label
would show empty boxes. The course depends on ``noto-cjk-sans-otc`` (Noto Sans CJK, SIL Open Font
Licence), a PyPI package that only carries the font file; ``use_cjk_font()`` registers it with
matplotlib and puts it after DejaVu Sans in ``font.family``, so Latin text keeps its look and
Chinese characters fall back to Noto. Without the package (an install with ``--no-deps``) nothing
is registered and ``cjk_font()`` is None: figure text then stays English
(``figure_text``) and Chinese token labels become positions (``mhsa_helpers.lm.char_axis``).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..i18n import language

__all__ = ["CJK_FAMILY", "cjk_font", "figure_text", "use_cjk_font"]

#: The family name matplotlib gives the Simplified Chinese face of the collection.
CJK_FAMILY = "Noto Sans CJK SC"


def _font_file() -> Path | None:
    try:
        import noto_cjk_sans_otc  # type: ignore[import-untyped]
    except ImportError:
        return None
    path = Path(str(noto_cjk_sans_otc.FONT_PATH))
    return path if path.is_file() else None


@lru_cache(maxsize=1)
def _register() -> str | None:
    path = _font_file()
    if path is None:
        return None
    from matplotlib import font_manager

    font_manager.fontManager.addfont(str(path))
    try:
        from ..lm.labels import _find_cjk_font

        _find_cjk_font.cache_clear()  # it may have searched before the font was there
    except ImportError:  # pragma: no cover - part of the package
        pass
    return CJK_FAMILY


def cjk_font() -> str | None:
    """The registered CJK family name, or None when no CJK font package is installed."""
    return _register()


def use_cjk_font() -> str | None:
    """Register the CJK font and make it matplotlib's fallback after DejaVu Sans (idempotent)."""
    family = _register()
    if family is None:
        return None
    import matplotlib as mpl

    current = [name for name in mpl.rcParams["font.family"] if name != "sans-serif"]
    if family not in current:
        mpl.rcParams["font.family"] = [*(current or ["DejaVu Sans"]), family]
    return family


def figure_text(en: str, zh: str) -> str:
    """Figure text in the lesson language; English when Chinese is asked for but no CJK font."""
    if language() == "zh" and cjk_font() is not None:
        return zh
    return en
