"""The text the course's character model learns from: Tang regular verse, shipped in data/.

``data/tang_verse.txt.xz`` (xz-compressed UTF-8, written by tools/build_poetry_corpus.py from the
npm package ``chinese-poetry`` 2.0.1; source and licence in data/SOURCES.md) holds 35,132 poems of
the Complete Tang Poems (全唐诗) that are regular verse (近体诗): quatrains (绝句, 4 lines) and
regulated verse (律诗, 8 lines) whose lines are two halves of 5 or 7 characters. One couplet a
line (``床前明月光，疑是地上霜。``), an empty line after each poem, in a training and a
validation section; no training poem shares a line with a validation poem.

* ``load_verse()`` -- ``Verse(train, validation)``: the poems, each a ``Poem(lines)``;
* ``poem_text(poems)`` -- what the model reads: the poems' lines, an empty line after each poem;
* ``load_song_ci()`` -- the Song ci (宋词) of the same package, for "train it on another text";
* ``load_ablation()`` -- the records of tools/ablation_char_lm.py (data/char_lm_ablation.json).
"""

from __future__ import annotations

import json
import lzma
from dataclasses import dataclass
from functools import lru_cache

from ..data import data_file

__all__ = [
    "PUNCTUATION",
    "Poem",
    "Verse",
    "load_ablation",
    "load_song_ci",
    "load_verse",
    "poem_text",
]

VERSE_FILE = "tang_verse.txt.xz"
ABLATION_FILE = "char_lm_ablation.json"
SONG_CI_FILE = "song_ci.txt.xz"
# Punctuation of the poems' lines (full-width, as written in Chinese text).
PUNCTUATION = frozenset("，。？！；：、“”《》・")


@dataclass(frozen=True)
class Poem:
    """One poem: its lines (couplets such as ``床前明月光，疑是地上霜。``)."""

    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        """The poem's lines, each ending with a newline."""
        return "".join(line + "\n" for line in self.lines)


@dataclass(frozen=True)
class Verse:
    """The corpus: training poems and held-out validation poems."""

    train: tuple[Poem, ...]
    validation: tuple[Poem, ...]


@lru_cache(maxsize=2)
def _read_xz(name: str) -> str:
    path = data_file(name)
    if not path.is_file():
        raise FileNotFoundError(
            f"course data file {name!r} is missing: reinstall the package (pip install .)"
        )
    with path.open("rb") as handle:
        return lzma.decompress(handle.read()).decode("utf-8")


def _poems(section: str) -> tuple[Poem, ...]:
    return tuple(Poem(tuple(block.split("\n"))) for block in section.strip().split("\n\n"))


@lru_cache(maxsize=1)
def load_verse() -> Verse:
    """The poems of data/tang_verse.txt.xz: ``Verse(train, validation)``, in the file's order."""
    train, validation = _read_xz(VERSE_FILE).removeprefix("# train\n").split("# validation\n")
    return Verse(_poems(train), _poems(validation))


def load_song_ci() -> str:
    """The Song ci of data/song_ci.txt.xz: one ci's lines after another, an empty line between."""
    return _read_xz(SONG_CI_FILE)


def poem_text(poems: tuple[Poem, ...] | list[Poem]) -> str:
    """The lines of ``poems``, one poem after another, an empty line after each poem."""
    if not isinstance(poems, (list, tuple)) or not all(isinstance(p, Poem) for p in poems):
        raise TypeError(f"poems must be a list of Poem, got {type(poems).__name__}")
    return "".join(poem.text + "\n" for poem in poems)


def load_ablation() -> list[dict]:
    """The rows of data/char_lm_ablation.json: name, validation loss, config, parameters, time."""
    path = data_file(ABLATION_FILE)
    if not path.is_file():
        raise FileNotFoundError(
            f"course data file {ABLATION_FILE!r} is missing: run tools/ablation_char_lm.py"
        )
    return list(json.loads(path.read_text(encoding="utf-8"))["rows"])
