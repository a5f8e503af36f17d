"""Example sentences for the explorers: the book's six words and a longer sentence.

The longer sentence gets deterministic toy embeddings (``embed_words``): one fixed random vector
per distinct word, so a repeated word ("the", "mat") gets the same key every time it appears.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import torch

from ..attention.validation import check_positive_int, check_seed
from ..data import load_journey

__all__ = ["LONGER_SENTENCE", "embed_words", "example_sentences"]

LONGER_SENTENCE = "The cat sat on the mat because the mat was warm"


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


def example_sentences() -> dict[str, tuple[list[str], torch.Tensor]]:
    """The explorer's sentences: name -> (words, embeddings (T, 3)).

    ``"book"`` is the book's six words with the book's embeddings; ``"longer"`` is
    ``LONGER_SENTENCE`` (11 words) with ``embed_words`` embeddings.
    """
    journey = load_journey()
    words = LONGER_SENTENCE.split()
    return {
        "book": (journey.words, journey.inputs),
        "longer": (words, embed_words(words, d_in=journey.inputs.shape[1])),
    }
