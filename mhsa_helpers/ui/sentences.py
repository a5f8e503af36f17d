"""Example sentences for the explorers: the book's six words and a longer sentence.

The longer sentence gets deterministic toy embeddings (``embed_words``): one fixed random vector
per distinct word, so a repeated word ("the", "mat") gets the same key every time it appears.

In the Chinese lesson language (``mh.setup_lesson(lang="zh")``) the explorers also offer two
Chinese sentences, split into words (词) separated by spaces and embedded the same way:
``ZH_BOOK_SENTENCE`` (the book's sentence in Chinese, six words like the book's) and
``ZH_LONGER_SENTENCE`` (the cat on the mat, 垫子 twice).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import torch

from ..data import load_journey
from ..i18n import check_language, language, say, tr
from ..validation import check_positive_int, check_seed

__all__ = [
    "LONGER_SENTENCE",
    "ZH_BOOK_SENTENCE",
    "ZH_LONGER_SENTENCE",
    "embed_words",
    "example_sentences",
    "sentence_caption",
]

LONGER_SENTENCE = "The cat sat on the mat because the mat was warm"

#: "Your journey starts with one step" in Chinese, one token per word (6, like the book's).
ZH_BOOK_SENTENCE = "你的 旅程 从 一 步 开始"

#: The longer sentence in Chinese, one token per word: "垫子" (mat) appears twice.
ZH_LONGER_SENTENCE = "猫 坐 在 垫子 上 因为 垫子 很 暖和"

# How the dropdown names the course's sentences ("name: words"); other names are shown as given.
_CAPTIONS = {
    "book": tr("book", "书中例句"),
    "longer": tr("longer", "长句"),
    "book_zh": tr("book_zh", "书中例句（中文）"),
    "longer_zh": tr("longer_zh", "长句（中文）"),
}


def embed_words(words: Sequence[str], d_in: int = 3, seed: int = 0) -> torch.Tensor:
    """Deterministic toy embeddings (T, d_in) in [0, 1): one fixed random vector per distinct word.

    The vector of a word depends only on the lowercased word, ``d_in`` and ``seed`` (not on the
    machine or on the global random state), so a repeated word ("the", "mat") gets the same
    embedding every time it appears -- and therefore the same key.
    """
    if isinstance(words, str):
        raise TypeError("words must be a sequence of strings, e.g. sentence.split()")
    d_in = check_positive_int("d_in", d_in)
    seed = check_seed("seed", seed)
    rows = []
    for word in words:
        if not isinstance(word, str):
            raise TypeError(f"words must be strings, got {word!r} ({type(word).__name__})")
        generator = torch.Generator().manual_seed(zlib.crc32(word.lower().encode()) + seed)
        rows.append(torch.rand(d_in, generator=generator))
    if not rows:
        raise ValueError("words must hold at least one word")
    return torch.stack(rows)  # (T, d_in)


def example_sentences(lang: str | None = None) -> dict[str, tuple[list[str], torch.Tensor]]:
    """The explorer's sentences: name -> (words, embeddings (T, 3)).

    ``"book"`` is the book's six words with the book's embeddings; ``"longer"`` is
    ``LONGER_SENTENCE`` (11 words) with ``embed_words`` embeddings. In Chinese (``lang="zh"``;
    the default ``None`` follows the lesson language) two more follow, with ``embed_words``
    embeddings: ``"book_zh"`` (``ZH_BOOK_SENTENCE``, 6 words) and ``"longer_zh"``
    (``ZH_LONGER_SENTENCE``, 9 words).
    """
    lang = language() if lang is None else check_language(lang)
    journey = load_journey()
    d_in = journey.inputs.shape[1]
    words = LONGER_SENTENCE.split()
    sentences = {
        "book": (journey.words, journey.inputs),
        "longer": (words, embed_words(words, d_in=d_in)),
    }
    if lang == "zh":
        for name, sentence in (("book_zh", ZH_BOOK_SENTENCE), ("longer_zh", ZH_LONGER_SENTENCE)):
            zh_words = sentence.split()
            sentences[name] = (zh_words, embed_words(zh_words, d_in=d_in))
    return sentences


def sentence_caption(name: str, words: Sequence[str]) -> str:
    """The dropdown label of sentence ``name``: "book: Your journey starts with one step"."""
    shown = str(_CAPTIONS[name]) if name in _CAPTIONS else name
    return shown + say(": ", "：") + " ".join(words)
