"""One course, two languages (English / 简体中文): the lesson language and bilingual texts.

Why: the English and the Chinese lessons run the very same code cells, so whatever the package
says to a learner -- checker hints, widget labels, figure titles -- must exist in both languages
and follow the language the lesson asked for with ``mh.setup_lesson(lang="zh")``. English is the
default. The language is sticky: it changes only where it is named (``setup_lesson(lang=...)``,
``set_language``, ``using_language``), so a later ``setup_lesson(seed=789)`` keeps it.
``tools/zh_edition.py check`` fails on a Chinese lesson that names another language.

* ``Text(en, zh)`` (or ``tr(en, zh)``) -- one message in both languages; ``str(text)`` is the one
  of the current language. ``+`` joins texts (a plain ``str`` is added to both languages).
* ``say(en, zh)`` -- the string of the current language at once (widget labels, figure titles).
* ``set_language``, ``language``, ``using_language`` -- the process-wide lesson language.
* ``pad(text, width, align)`` -- ``text`` padded to ``width`` columns as a monospace font shows
  it (a Chinese character takes two), so that printed tables line up in both languages.

A test reads every ``tr``/``say``/``Text`` call in the package and requires a Chinese string
that holds Chinese characters and the same ``{placeholders}`` as the English one.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = [
    "LANGUAGES",
    "Text",
    "language",
    "listed",
    "pad",
    "say",
    "set_language",
    "tr",
    "using_language",
]

#: The languages of the course: English (default) and Simplified Chinese.
LANGUAGES = ("en", "zh")

_current = {"lang": "en"}


def check_language(lang: object, name: str = "lang") -> str:
    """``lang`` if it is one of ``LANGUAGES``, else a ``ValueError``/``TypeError`` naming it."""
    if not isinstance(lang, str):
        raise TypeError(f"{name} must be one of {LANGUAGES}, got {type(lang).__name__} {lang!r}")
    if lang not in LANGUAGES:
        raise ValueError(f"{name} must be one of {LANGUAGES}, got {lang!r}")
    return lang


def set_language(lang: str) -> None:
    """Make ``lang`` ("en" or "zh") the language of every later message, label and title."""
    _current["lang"] = check_language(lang)


def language() -> str:
    """The current lesson language: "en" (default) or "zh"."""
    return _current["lang"]


@contextmanager
def using_language(lang: str) -> Iterator[None]:
    """Use ``lang`` inside the block, then restore the language before it."""
    before = language()
    set_language(lang)
    try:
        yield
    finally:
        _current["lang"] = before


@dataclass(frozen=True)
class Text:
    """One message in English and Chinese; ``str()`` gives the current language's."""

    en: str
    zh: str

    def __post_init__(self) -> None:
        for lang in LANGUAGES:
            value = getattr(self, lang)
            if not isinstance(value, str):
                raise TypeError(f"Text.{lang} must be a str, got {type(value).__name__}")

    def get(self, lang: str) -> str:
        """The message in ``lang``."""
        return getattr(self, check_language(lang))

    def __str__(self) -> str:
        return self.get(language())

    def __add__(self, other: object) -> Text:
        if isinstance(other, Text):
            return Text(self.en + other.en, self.zh + other.zh)
        if isinstance(other, str):
            return Text(self.en + other, self.zh + other)
        return NotImplemented

    def __radd__(self, other: object) -> Text:
        if isinstance(other, str):
            return Text(other + self.en, other + self.zh)
        return NotImplemented

    def __bool__(self) -> bool:
        return bool(self.en or self.zh)


def tr(en: str, zh: str) -> Text:
    """``Text(en, zh)``: a message kept in both languages, shown in the current one."""
    return Text(en, zh)


def say(en: str, zh: str) -> str:
    """The string of the current language, now (for labels and titles drawn at once)."""
    return Text(en, zh).get(language())


def listed(items: Iterable[object]) -> Text:
    """``items`` as a list in each language: "a, b, c" in English, "a、b、c" (the enumeration
    comma) in Chinese."""
    names = [str(item) for item in items]
    return Text(", ".join(names), "、".join(names))


def display_width(text: str) -> int:
    """Columns ``text`` takes in a monospace font: a wide (Chinese) character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: object, width: int, align: str = "<") -> str:
    """``str(text)`` padded with spaces to ``width`` display columns: ``f"{text:<{width}}"``
    (``align`` "<", ">" or "^") for Chinese text too, whose characters take two columns."""
    text = str(text)
    if align not in ("<", ">", "^"):
        raise ValueError(f'align must be "<", ">" or "^", got {align!r}')
    space = max(0, width - display_width(text))
    if align == "<":
        return text + " " * space
    if align == ">":
        return " " * space + text
    return " " * (space // 2) + text + " " * (space - space // 2)
