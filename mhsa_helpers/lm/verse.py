"""Does a text have the shape of regular verse? ``verse_shape(text, training_text)``, measured.

Regular verse (近体诗) has lines of two halves (上句 and 下句) of five or seven characters each,
``床前明月光，疑是地上霜。``. Three numbers say how close a generated text comes:

* ``half_lines`` -- the share of half-lines (the pieces between punctuation marks) that have 5 or
  7 characters;
* ``couplets`` -- the share of lines that are two equal halves of 5 or 7 characters, the second
  ending with 。？ or ！;
* ``copied`` -- the share of the text's 8-character pieces (no newline inside) that occur verbatim
  in the training text: a model that memorised would score near 1.

A line that the text ends in the middle of (no newline after it) is not counted, nor are empty
lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..i18n import say
from .analysis import copied_share

__all__ = ["VerseShape", "verse_lines", "verse_shape"]

_HALF = re.compile(r"[，。？！；：、]")
_COUPLET = re.compile(
    r"^([^，。？！；：、\n]{5}，[^，。？！；：、\n]{5}|[^，。？！；：、\n]{7}，[^，。？！；：、\n]{7})[。？！]$"
)


@dataclass(frozen=True)
class VerseShape:
    """The three shares of ``verse_shape`` and what they were counted over."""

    half_lines: float
    couplets: float
    copied: float
    num_half_lines: int
    num_lines: int

    def __repr__(self) -> str:
        return say(
            f"half-lines of 5 or 7 characters: {self.half_lines:.0%} of {self.num_half_lines}\n"
            f"lines of two equal halves:       {self.couplets:.0%} of {self.num_lines}\n"
            f"8-character pieces copied:       {self.copied:.0%}",
            f"5 或 7 个字的句占 {self.half_lines:.0%}（共 {self.num_half_lines} 句）\n"
            f"上下句等长的联占 {self.couplets:.0%}（共 {self.num_lines} 联）\n"
            f"照抄训练文本的 8 字片段占 {self.copied:.0%}",
        )


def verse_lines(text: str) -> list[str]:
    """The complete, non-empty lines of ``text`` (a last line without its newline is dropped)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    lines = text.split("\n")[:-1]  # the part after the last newline is unfinished
    return [line for line in lines if line]


def verse_shape(text: str, training_text: str) -> VerseShape:
    """Measure how much ``text`` looks like regular verse, and how much it copies."""
    if not isinstance(training_text, str):
        raise TypeError(f"training_text must be a str, got {type(training_text).__name__}")
    lines = verse_lines(text)
    if not lines:
        raise ValueError("text has no complete line (a line ends with a newline)")
    halves = [piece for line in lines for piece in _HALF.split(line) if piece]
    half_share = sum(len(piece) in (5, 7) for piece in halves) / max(1, len(halves))
    couplets = sum(bool(_COUPLET.match(line)) for line in lines) / len(lines)
    copied = copied_share("\n".join(lines) + "\n", training_text, n=8)
    return VerseShape(half_share, couplets, copied, len(halves), len(lines))
