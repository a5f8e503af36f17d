"""The text the course's character model learns from: the Tang 300 (唐诗三百首), shipped in data/.

``data/tang300.txt`` holds 313 poems, each a block of a title line 《...》, an author line
作者：... and the poem's lines, blocks separated by an empty line (source and licence:
data/SOURCES.md).

* ``load_tang300()`` -- the poems, as ``Poem(title, author, lines)``;
* ``poem_text(poems)`` -- what the model reads: the poems' lines only, one poem after another
  with an empty line between them (titles and authors are left out: they are mostly rare names);
* ``split_poems(poems)`` -- a fixed train / validation split by whole poems, so the validation
  loss measures poems the model has never seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..data import data_file

__all__ = ["PUNCTUATION", "Poem", "load_tang300", "poem_text", "split_poems"]

TANG300_FILE = "tang300.txt"
# Punctuation of the poems' lines (full-width, as written in Chinese text).
PUNCTUATION = frozenset("，。？！；：、“”《》・")


@dataclass(frozen=True)
class Poem:
    """One poem: its title (without 《》), its author and its lines."""

    title: str
    author: str
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        """The poem's lines, each ending with a newline."""
        return "".join(line + "\n" for line in self.lines)


@lru_cache(maxsize=1)
def _read() -> str:
    path = data_file(TANG300_FILE)
    if not path.is_file():
        raise FileNotFoundError(
            f"course data file {TANG300_FILE!r} is missing: reinstall the package (pip install .)"
        )
    return path.read_text(encoding="utf-8")


def load_tang300() -> list[Poem]:
    """The 313 poems of data/tang300.txt, in the file's order."""
    poems = []
    for block in _read().strip().split("\n\n"):
        title, author, *lines = block.split("\n")
        poems.append(Poem(title.strip("《》"), author.removeprefix("作者："), tuple(lines)))
    return poems


def poem_text(poems: list[Poem]) -> str:
    """The lines of ``poems``, one poem after another, an empty line after each poem."""
    if not isinstance(poems, (list, tuple)) or not all(isinstance(p, Poem) for p in poems):
        raise TypeError(f"poems must be a list of Poem, got {type(poems).__name__}")
    return "".join(poem.text + "\n" for poem in poems)


def split_poems(poems: list[Poem], every: int = 20) -> tuple[list[Poem], list[Poem]]:
    """(train, validation): every ``every``-th poem (the 20th, 40th, ...) goes to validation."""
    if isinstance(every, bool) or not isinstance(every, int) or every < 2:
        raise ValueError(f"every must be an int >= 2, got every={every!r}")
    train = [p for i, p in enumerate(poems) if (i + 1) % every]
    validation = [p for i, p in enumerate(poems) if not (i + 1) % every]
    return train, validation
