"""``CharTokenizer``: one token per character (字符级分词器).

The simplest tokenizer there is: the vocabulary (词表) is the sorted set of characters of a text,
a character's id is its index in that list. A Chinese character is one token, and so are the
punctuation marks and the newline. Real models use subword tokenizers (BPE); characters keep the
lesson free of any download and make every token something one can read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

__all__ = ["CharTokenizer"]


class CharTokenizer:
    """Characters <-> ids. ``CharTokenizer(text)`` builds the vocabulary from ``text``.

    ``encode("明月")`` -> ``tensor([id_明, id_月])`` (int64, shape (T,)); ``decode(ids)`` is the
    inverse and accepts a 1-D tensor or a list of ints. A character outside the vocabulary, or an
    id outside ``[0, vocab_size)``, raises ``ValueError`` naming it.
    """

    def __init__(self, text: str):
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not text:
            raise ValueError("text must not be empty: the vocabulary is built from its characters")
        self.chars: list[str] = sorted(set(text))
        self._ids = {ch: i for i, ch in enumerate(self.chars)}

    @classmethod
    def from_chars(cls, chars: Sequence[str]) -> CharTokenizer:
        """Rebuild a tokenizer from its ``chars`` list (as stored in a checkpoint)."""
        chars = list(chars)
        if not chars or not all(isinstance(c, str) and len(c) == 1 for c in chars):
            raise ValueError("chars must be a non-empty list of single characters")
        if chars != sorted(set(chars)):
            raise ValueError("chars must be sorted and without repeats, as CharTokenizer makes it")
        return cls("".join(chars))

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def __len__(self) -> int:
        return len(self.chars)

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size})"

    def __contains__(self, char: object) -> bool:
        return char in self._ids

    def encode(self, text: str) -> torch.Tensor:
        """``text`` -> ids, int64 tensor of shape (len(text),)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        unknown = sorted({ch for ch in text if ch not in self._ids})
        if unknown:
            shown = "".join(unknown[:10])
            raise ValueError(
                f"text has {len(unknown)} character(s) outside the vocabulary: {shown!r}"
            )
        return torch.tensor([self._ids[ch] for ch in text], dtype=torch.long)  # (T,)

    def decode(self, ids: torch.Tensor | Iterable[int]) -> str:
        """ids (a 1-D tensor or a list of ints) -> text."""
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1:
                raise ValueError(
                    f"ids must be 1-D (one sequence), got ids.shape={tuple(ids.shape)}; "
                    "decode each row of a batch separately"
                )
            if ids.is_floating_point() or ids.dtype == torch.bool:
                raise TypeError(f"ids must have an integer dtype, got ids.dtype={ids.dtype}")
            ids = ids.tolist()
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
            raise TypeError(f"ids must be a 1-D tensor or a list of ints, got {type(ids).__name__}")
        values = list(ids)
        for value in values:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"ids must be ints, got {value!r} ({type(value).__name__})")
            if not 0 <= value < self.vocab_size:
                raise ValueError(f"ids must be in [0, {self.vocab_size}), got the id {value}")
        return "".join(self.chars[i] for i in values)
