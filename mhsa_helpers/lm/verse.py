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

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from ..i18n import say
from ..tables import Table
from ..validation import check_flag
from .analysis import copied_share
from .generation import generate
from .model import CharTransformer
from .rhyme import line_end, rhyme_pairs, rhyme_share
from .tokenizer import UNKNOWN, CharTokenizer

__all__ = [
    "PoemScore",
    "VerseShape",
    "WrittenPoem",
    "copied_lines",
    "fresh_char_bans",
    "fresh_char_rule",
    "fresh_rhyme_bans",
    "fresh_rhyme_rule",
    "poem_form",
    "repeated_char_share",
    "repeated_rhyme_share",
    "score_poems",
    "score_table",
    "verse_lines",
    "verse_shape",
    "write_poems",
]

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


# A whole poem of this corpus: 2 or 4 couplet-lines of one metre (5+5 or 7+7), nothing else.
_LINE = {
    metre: re.compile(
        rf"^[^，。？！；：、\n□]{{{metre}}}，[^，。？！；：、\n□]{{{metre}}}[。？！]$"
    )
    for metre in (5, 7)
}


def poem_form(poem: str) -> str | None:
    """The form of one poem (its couplet-lines, no empty line): ``"5x2"``, ``"5x4"``, ``"7x2"``
    or ``"7x4"`` (metre x couplet-lines: a five- or seven-character quatrain or regulated poem),
    or None if it is not one whole poem of this corpus's shape."""
    if not isinstance(poem, str):
        raise TypeError(f"poem must be a str, got {type(poem).__name__}")
    lines = poem.strip("\n").split("\n")
    if len(lines) not in (2, 4):
        return None
    for metre, pattern in _LINE.items():
        if all(pattern.match(line) for line in lines):
            return f"{metre}x{len(lines)}"
    return None


@dataclass(frozen=True)
class WrittenPoem:
    """One poem a model (or a count table) wrote, started as a new poem.

    ``text``: its lines up to the empty line that ends a poem (each line with its newline; a
    line the window ended in the middle of is dropped);
    ``ended``: whether it wrote that empty line before the window was full; ``form``:
    ``poem_form(text)``.
    """

    text: str
    ended: bool
    form: str | None

    @property
    def complete(self) -> bool:
        """Ended, and 2 or 4 couplet-lines of one metre, each 5+5 or 7+7: a whole poem."""
        return self.ended and self.form is not None

    @classmethod
    def from_text(cls, text: str) -> WrittenPoem:
        """The first poem of generated ``text`` (what follows the prompt's newline)."""
        text = text.lstrip("\n")
        end = text.find("\n\n")
        if end < 0:  # the window filled up first: keep its complete lines
            poem, ended = text[: text.rfind("\n") + 1], False
        else:
            poem, ended = text[: end + 1], True
        return cls(poem, ended, poem_form(poem) if ended else None)


_MARKS = "，。？！；：、"
_OPEN_LINE = re.compile(rf"^([^{_MARKS}]+)，([^{_MARKS}]*)$")


def fresh_rhyme_bans(text: str) -> str:
    """The characters a fresh-rhyme writer may not write next, after ``text``: a sampling rule.

    The next character *ends a couplet-line* when the line being written holds one comma, a
    first half of m characters before it (5 or 7 in this corpus), and m - 1 characters after
    it: the next character completes the second half to the first half's length, so a whole
    couplet-line would close with it (the model writes 。 after it, or the line is not one of
    equal halves and is no whole poem's line anyway). There, and only there, every character
    that already ends a couplet-line of the same poem (the lines since the last empty line,
    ``rhyme.line_end``) is banned; anywhere else nothing is. Returned in order of use, each
    once; ``""`` when nothing is banned.

    >>> fresh_rhyme_bans("\n床前明月光，疑是地上霜。\n举头望明月，低头思故")
    '霜'
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    *earlier, current = text.rsplit("\n\n", 1)[-1].split("\n")
    match = _OPEN_LINE.match(current)
    if match is None or len(match.group(2)) != len(match.group(1)) - 1:
        return ""
    ends = (line_end(line) for line in earlier if line)
    return "".join(dict.fromkeys(end for end in ends if end is not None))


def fresh_char_bans(text: str) -> str:
    """The characters a fresh-character writer may not write next, after ``text``: a sampling
    rule, stricter than ``fresh_rhyme_bans``.

    Every character of the poem being written (the lines since the last empty line), the
    punctuation aside, is banned everywhere: no character twice in a poem, its rhyme characters
    included. Regulated verse avoids a repeated character (重字) unless it is meant; the rule
    bans the meant ones too (悠悠). Returned in order of use, each once; ``""`` after an empty
    line.

    >>> fresh_char_bans("\n床前明月光，疑是地上")
    '床前明月光疑是地上'
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    poem = text.rsplit("\n\n", 1)[-1]
    return "".join(dict.fromkeys(char for char in poem if char not in _MARKS + "\n"))


def _ban_rule(
    tokenizer: CharTokenizer, bans: Callable[[str], str]
) -> Callable[[torch.Tensor], list[list[int]]]:
    """``bans`` as a ``generate(step_banned=...)`` rule: ids (b, T) -> the banned ids of each
    row, each row read as a text of ``tokenizer`` (the prompt included)."""
    if not isinstance(tokenizer, CharTokenizer):
        raise TypeError(f"tokenizer must be a CharTokenizer, got {type(tokenizer).__name__}")

    def rule(ids: torch.Tensor) -> list[list[int]]:
        texts = (tokenizer.decode(row) for row in ids.cpu())
        return [tokenizer.encode(bans(text)).tolist() for text in texts]

    return rule


def fresh_rhyme_rule(tokenizer: CharTokenizer) -> Callable[[torch.Tensor], list[list[int]]]:
    """``fresh_rhyme_bans`` as a ``generate(step_banned=...)`` rule: ids (b, T) -> the banned
    ids of each row. Each row is read as a text of ``tokenizer`` (the prompt included)."""
    return _ban_rule(tokenizer, fresh_rhyme_bans)


def fresh_char_rule(tokenizer: CharTokenizer) -> Callable[[torch.Tensor], list[list[int]]]:
    """``fresh_char_bans`` as a ``generate(step_banned=...)`` rule, like ``fresh_rhyme_rule``."""
    return _ban_rule(tokenizer, fresh_char_bans)


def write_poems(
    model: CharTransformer,
    tokenizer: CharTokenizer,
    first_chars: str,
    *,
    seed: int = 0,
    temperature: float = 0.8,
    top_k: int | None = 20,
    fresh_rhymes: bool = False,
    fresh_chars: bool = False,
) -> list[WrittenPoem]:
    """One poem per character of ``first_chars``, each started as a new poem.

    The prompt is what the model saw before every poem it learned from: an empty line (a
    newline), then the first character. All poems are drawn in one batch from one seeded
    generator (``generate``), with the unknown character never drawn, until the model's window is
    full; each is cut at the empty line that ends it.

    ``fresh_rhymes=True`` adds a sampling rule, not something the model learned: where the next
    character ends a couplet-line, no character that already ends a couplet-line of the poem
    can be drawn (``fresh_rhyme_bans`` defines the place). ``fresh_chars=True`` is stricter: no
    character already in the poem can be drawn anywhere (``fresh_char_bans``), which bans a
    repeated rhyme too.
    """
    if not isinstance(first_chars, str) or not first_chars:
        raise TypeError("first_chars must be a non-empty str, one first character per poem")
    if not isinstance(tokenizer, CharTokenizer):
        raise TypeError(f"tokenizer must be a CharTokenizer, got {type(tokenizer).__name__}")
    check_flag("fresh_rhymes", fresh_rhymes)
    check_flag("fresh_chars", fresh_chars)
    rule = (
        fresh_char_rule(tokenizer)
        if fresh_chars
        else fresh_rhyme_rule(tokenizer)
        if fresh_rhymes
        else None
    )
    prompts = torch.stack([tokenizer.encode("\n" + char) for char in first_chars])  # (n, 2)
    banned = tokenizer.encode(UNKNOWN) if tokenizer.unknown is not None else ()
    out = generate(
        model,
        prompts,
        model.context_length - 2,
        seed=seed,
        temperature=temperature,
        top_k=top_k,
        banned=banned,
        step_banned=rule,
    )  # (n, context_length)
    return [WrittenPoem.from_text(tokenizer.decode(row[1:])) for row in out]


def copied_lines(poems: list[str], training_text: str) -> float:
    """The share of the couplet-lines of ``poems`` that occur verbatim as a line of
    ``training_text`` (NaN when there are none)."""
    if not isinstance(training_text, str):
        raise TypeError(f"training_text must be a str, got {type(training_text).__name__}")
    lines = [line for poem in poems for line in poem.split("\n") if line]
    if not lines:
        return float("nan")
    known = set(training_text.split("\n"))
    return sum(line in known for line in lines) / len(lines)


def _poem_texts(poems: Sequence[str | WrittenPoem]) -> list[str]:
    if isinstance(poems, (str, WrittenPoem)) or not isinstance(poems, Sequence):
        raise TypeError(f"poems must be a list of str or WrittenPoem, got {type(poems).__name__}")
    for poem in poems:
        if not isinstance(poem, (str, WrittenPoem)):
            raise TypeError(f"poems must hold str or WrittenPoem, got {type(poem).__name__}")
    return [poem.text if isinstance(poem, WrittenPoem) else poem for poem in poems]


def repeated_rhyme_share(poems: Sequence[str | WrittenPoem]) -> float:
    """The share of ``poems`` in which one character ends two couplet-lines (``rhyme.line_end``):
    a rhyme character used twice, which Tang poets avoided. Poems with fewer than two line ends
    are not counted; NaN when none is left."""
    counted = repeated = 0
    for text in _poem_texts(poems):
        ends = [end for end in map(line_end, text.split("\n")) if end is not None]
        if len(ends) >= 2:
            counted += 1
            repeated += len(set(ends)) < len(ends)
    return repeated / counted if counted else float("nan")


def repeated_char_share(poems: Sequence[str | WrittenPoem]) -> float:
    """The share of ``poems`` that write some character twice (punctuation aside): what
    ``fresh_chars`` forbids. NaN for an empty list."""
    texts = _poem_texts(poems)
    repeated = 0
    for text in texts:
        chars = [char for char in text if char not in _MARKS + "\n"]
        repeated += len(set(chars)) < len(chars)
    return repeated / len(texts) if texts else float("nan")


@dataclass(frozen=True)
class PoemScore:
    """What a reader checks first, measured on ``num_poems`` poems (``score_poems``)."""

    name: str
    complete: float
    rhyme: float
    copied: float
    num_poems: int
    num_pairs: int  # the adjacent couplet ends the rhyme share was counted over


def score_poems(name: str, poems: list[WrittenPoem], training_text: str) -> PoemScore:
    """The share of complete poems, of adjacent couplet-line ends that rhyme (``rhyme_share``,
    over every poem's lines), and of couplet-lines copied from ``training_text``."""
    if not poems or not all(isinstance(p, WrittenPoem) for p in poems):
        raise TypeError("poems must be a non-empty list of WrittenPoem")
    texts = [p.text for p in poems]
    joined = "\n".join(texts)
    return PoemScore(
        name,
        sum(p.complete for p in poems) / len(poems),
        rhyme_share(joined),
        copied_lines(texts, training_text),
        len(poems),
        len(rhyme_pairs(joined)),
    )


def score_table(scores: list[PoemScore], chance: float | None = None) -> Table:
    """The scores as a table in the lesson's language: complete poems, rhyming couplet ends (and
    how many pairs of ends that share was counted over), copied couplets; chance last. A
    ``Table``: ``mh.show_table`` shows it, ``str()`` is its text."""
    header = (
        "",
        say("complete", "完整的诗"),
        say("rhyme", "押韵"),
        say("pairs", "韵脚对数"),
        say("copied", "照抄"),
    )
    rows: list[tuple[object, ...]] = []
    for score in scores:
        copied = "—" if math.isnan(score.copied) else f"{score.copied:.0%}"
        rows.append(
            (score.name, f"{score.complete:.0%}", f"{score.rhyme:.0%}", score.num_pairs, copied)
        )
    if chance is not None:
        rows.append(
            (say("chance (ends of two poems)", "随机配对（两首诗的韵脚）"), "", f"{chance:.0%}")
        )
    return Table(rows, header, align="<>>>>")
