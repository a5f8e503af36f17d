"""Does a poem rhyme? Line ends grouped by their modern Mandarin final, measured.

In a Tang quatrain or regulated poem the even lines of the poem rhyme: in this corpus, one
couplet a line, the *ends of the couplet-lines* (床前明月光，疑是地上**霜**。/ 举头望明月，低头思故
**乡**。). A rhyme sits 12 (five-character metre) or 16 (seven-character metre) characters after the
last one, far beyond what a count table sees.

The measure, stated once:

* ``rhyme_class(char)`` -- the pinyin final of ``char`` (its most common modern Mandarin reading,
  from ``pypinyin``'s own dictionary), with the medial dropped and grouped as the thirteen rhyme
  groups of modern Mandarin verse (十三辙: 江阳 = ang iang uang, 一七 = i ü and the -i of zhi
  chi shi ri zi ci si, ...). ``None`` for a character with no reading (punctuation, ``□``).
* ``rhyme_pairs(text)`` -- every pair of *adjacent* couplet-line ends of each poem of ``text``
  (poems separated by an empty line), and whether the two share a rhyme group.
* ``rhyme_share(text)`` -- the share of those pairs that rhyme.
* ``chance_rhyme_share(poems, seed)`` -- the same share for line ends of two different poems
  paired at random: what rhyming by luck scores.

This is **modern Mandarin**, not Tang pronunciation. The rhyme books of the Tang (the 切韵
tradition, later the 平水韵 of 106 groups) put some characters elsewhere: 斜 rhymes with 家 and
花 in Tang verse (today xie, not xia), 回 with 来, and the 一七 group joins finals that Tang rhyme
tables keep apart. So real Tang poems score below 100 % here, and the measure is strict for a
model that imitates them: it counts as a rhyme only what still rhymes today.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from ..i18n import say

__all__ = [
    "RHYME_GROUPS",
    "RhymePair",
    "chance_rhyme_share",
    "describe_pair",
    "line_end",
    "rhyme_class",
    "rhyme_pairs",
    "rhyme_share",
    "tone_class",
    "tone_opposition_share",
]

# The thirteen rhyme groups (十三辙) of modern Mandarin verse, by pinyin final (medial included,
# as pypinyin's Style.FINALS writes it; "v" is ü). The group's name is its two example syllables.
RHYME_GROUPS: dict[str, tuple[str, ...]] = {
    "发花": ("a", "ia", "ua"),
    "梭波": ("o", "e", "uo"),
    "乜斜": ("ie", "ve", "ue"),
    "怀来": ("ai", "uai"),
    "灰堆": ("ei", "uei", "ui"),
    "遥条": ("ao", "iao"),
    "油求": ("ou", "iou", "iu"),
    "言前": ("an", "ian", "uan", "van"),
    "人辰": ("en", "in", "uen", "un", "vn"),
    "江阳": ("ang", "iang", "uang"),
    "中东": ("eng", "ing", "ong", "iong", "ueng"),
    "一七": ("i", "v", "er"),
    "姑苏": ("u",),
}
_GROUP_OF = {final: group for group, finals in RHYME_GROUPS.items() for final in finals}
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_END_PUNCTUATION = "。？！，；：、"


@lru_cache(maxsize=8192)
def rhyme_class(char: str) -> str | None:
    """The rhyme group (十三辙) of one Chinese character, or None if it has no reading.

    >>> rhyme_class("光"), rhyme_class("霜"), rhyme_class("乡")
    ('江阳', '江阳', '江阳')
    """
    if not isinstance(char, str):
        raise TypeError(f"char must be a str, got {type(char).__name__}")
    if len(char) != 1:
        raise ValueError(f"char must be one character, got char={char!r} of length {len(char)}")
    if not _CJK.match(char):
        return None
    from pypinyin import Style, lazy_pinyin  # a dictionary of ~40k readings, loaded on first use

    final = lazy_pinyin(char, style=Style.FINALS, strict=True, v_to_u=False)[0]
    return _GROUP_OF.get(final)


def line_end(line: str) -> str | None:
    """The last Chinese character of a couplet-line (before its closing punctuation), or None."""
    if not isinstance(line, str):
        raise TypeError(f"line must be a str, got {type(line).__name__}")
    stripped = line.rstrip(_END_PUNCTUATION + " \t")
    return stripped[-1] if stripped and _CJK.match(stripped[-1]) else None


@dataclass(frozen=True)
class RhymePair:
    """Two adjacent couplet-line ends of one poem and whether they share a rhyme group."""

    first: str
    second: str
    first_class: str | None
    second_class: str | None

    @property
    def rhymes(self) -> bool:
        return self.first_class is not None and self.first_class == self.second_class


def _poems(text: str) -> list[list[str]]:
    """The poems of ``text`` (separated by empty lines), each its non-empty lines."""
    return [
        [line for line in block.split("\n") if line.strip()]
        for block in re.split(r"\n\s*\n", text)
        if block.strip()
    ]


def rhyme_pairs(text: str) -> list[RhymePair]:
    """Every pair of adjacent couplet-line ends within each poem of ``text``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    pairs = []
    for lines in _poems(text):
        ends = [line_end(line) for line in lines]
        for first, second in pairwise(ends):
            if first is not None and second is not None:
                pairs.append(RhymePair(first, second, rhyme_class(first), rhyme_class(second)))
    return pairs


def rhyme_share(text: str) -> float:
    """The share of adjacent couplet-line ends in ``text`` that rhyme (NaN when there are none)."""
    pairs = rhyme_pairs(text)
    return sum(pair.rhymes for pair in pairs) / len(pairs) if pairs else float("nan")


def chance_rhyme_share(poems: Sequence[str], *, seed: int = 0, num_pairs: int = 5000) -> float:
    """The rhyme share of line ends of two *different* poems paired at random (seeded).

    ``poems``: texts of whole poems (one couplet a line). What a writer who ignored rhyme would
    score, given the corpus's own line ends.
    """
    if isinstance(poems, str) or not all(isinstance(p, str) for p in poems):
        raise TypeError("poems must be a sequence of str, one poem each")
    ends = [[e for e in map(line_end, lines) if e is not None] for lines in map(_lines, poems)]
    ends = [e for e in ends if e]
    if len(ends) < 2:
        raise ValueError(f"poems must hold at least 2 poems with a line end, got {len(ends)}")
    rng = random.Random(seed)
    hits = 0
    for _ in range(num_pairs):
        a, b = rng.sample(range(len(ends)), 2)
        hits += _same(rng.choice(ends[a]), rng.choice(ends[b]))
    return hits / num_pairs


def _lines(poem: str) -> list[str]:
    return [line for line in poem.split("\n") if line.strip()]


def _same(first: str, second: str) -> bool:
    group = rhyme_class(first)
    return group is not None and group == rhyme_class(second)


def describe_pair(pair: RhymePair) -> str:
    """``霜 shuang · 乡 xiang: rhymes`` (Chinese: ``霜 shuang · 乡 xiang：押韵``) -- a pair with its
    pinyin, in the lesson's language."""
    from pypinyin import lazy_pinyin

    a, b = (lazy_pinyin(c)[0] for c in (pair.first, pair.second))
    ends = f"{pair.first} {a} · {pair.second} {b}"
    if pair.rhymes:
        return say(f"{ends}: rhymes", f"{ends}：押韵")
    return say(f"{ends}: no rhyme", f"{ends}：不押韵")


@lru_cache(maxsize=8192)
def tone_class(char: str) -> str | None:
    """平 (level: modern tones 1 and 2) or 仄 (oblique: tones 3 and 4) of one character, or None.

    Modern Mandarin again: the Tang's fourth, "entering" tone (入声) is gone, and its characters
    now fall in all four tones, so some 仄 characters of the Tang (白, 国, 一) count as 平 here.
    """
    if not isinstance(char, str) or len(char) != 1:
        raise TypeError(f"char must be one character (a str of length 1), got {char!r}")
    if not _CJK.match(char):
        return None
    from pypinyin import Style, lazy_pinyin

    tone = lazy_pinyin(char, style=Style.TONE3, neutral_tone_with_five=True)[0][-1:]
    return {"1": "平", "2": "平", "3": "仄", "4": "仄"}.get(tone)


def tone_opposition_share(text: str) -> float:
    """The share of couplet-lines whose two halves' second characters have opposite tones.

    The rule of regulated verse, 二四六分明: the second character of a line's two halves is level
    in one and oblique in the other (明 平 / 是 仄 in 床前明月光，疑是地上霜). Measured on the
    couplet-lines of ``text`` with two halves of equal length (NaN when there are none).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    opposed = counted = 0
    for line in text.split("\n"):
        halves = [h for h in re.split(r"[，。？！；：、]", line) if h]
        if len(halves) != 2 or len(halves[0]) != len(halves[1]) or len(halves[0]) < 2:
            continue
        first, second = tone_class(halves[0][1]), tone_class(halves[1][1])
        if first is None or second is None:
            continue
        counted += 1
        opposed += first != second
    return opposed / counted if counted else float("nan")
