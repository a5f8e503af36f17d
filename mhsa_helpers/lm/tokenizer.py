"""``CharTokenizer``: one token per character (字符级分词器).

The simplest tokenizer there is: the vocabulary (词表) is a sorted list of characters, a
character's id is its index in that list. A Chinese character is one token, and so are the
punctuation marks and the newline. Real models use subword tokenizers (BPE); characters keep the
lesson free of any download and make every token something one can read.

A vocabulary may be capped (``CharTokenizer(text, max_chars=3000)``: the 3,000 most frequent
characters of ``text``); every other character is then read as the unknown-character token
``UNKNOWN`` (□, the mark Chinese editions print for a lost character).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence

import torch

from ..validation import as_int

__all__ = ["UNKNOWN", "CharTokenizer", "check_text"]

UNKNOWN = "□"


def check_text(text: object, name: str = "text") -> str:
    """Return ``text`` if it is a str every character of which is a real character, else raise.

    A lone surrogate (U+D800 .. U+DFFF, e.g. from a Latin-1 file read with
    ``errors="surrogateescape"``) is half of a UTF-16 pair, not a character: it has no encoding,
    so it is refused with ``ValueError`` naming its position instead of a ``UnicodeEncodeError``.
    """
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValueError(
            f"{name} holds a lone surrogate {text[err.start]!r} at position {err.start} (half of "
            "a UTF-16 pair, not a character; e.g. bytes read with errors='surrogateescape'): "
            "decode the file with its real encoding"
        ) from None
    return text


def _code_points(text: str) -> torch.Tensor:
    """The code points of ``text``, int32 (T,)."""
    if not text:
        return torch.zeros(0, dtype=torch.int32)
    return torch.frombuffer(bytearray(text.encode("utf-32-le")), dtype=torch.int32)


class CharTokenizer:
    """Characters <-> ids. ``CharTokenizer(text)`` builds the vocabulary from ``text``.

    ``encode("明月")`` -> ``tensor([id_明, id_月])`` (int64, shape (T,)); ``decode(ids)`` is the
    inverse and accepts a 1-D tensor or a list of ints (numpy integers too).

    With ``max_chars``, only the ``max_chars`` most frequent characters of ``text`` (ties: the
    earlier in Unicode order) get their own id, and ``UNKNOWN`` one more: ``encode`` then maps
    any other character to it. Without it, a character outside the vocabulary raises
    ``ValueError`` naming it.
    """

    def __init__(self, text: str, max_chars: int | None = None):
        check_text(text)
        if not text:
            raise ValueError("text must not be empty: the vocabulary is built from its characters")
        codes, counts = torch.unique(_code_points(text), return_counts=True)  # sorted codes
        if max_chars is None:
            chars = {chr(c) for c in codes.tolist()}
            self.unknown: str | None = None
        else:
            max_chars = as_int("max_chars", max_chars)
            if max_chars < 1:
                raise ValueError(f"max_chars must be >= 1 or None, got max_chars={max_chars}")
            counts = counts.masked_fill(codes == ord(UNKNOWN), -1)  # never counted as known
            # Most frequent first; a stable sort keeps ties in code-point order.
            order = torch.sort(counts, descending=True, stable=True).indices[:max_chars]
            chars = {chr(c) for c, n in zip(codes[order].tolist(), counts[order].tolist()) if n > 0}
            chars.add(UNKNOWN)
            self.unknown = UNKNOWN
        self.chars: list[str] = sorted(chars)
        self._ids = {ch: i for i, ch in enumerate(self.chars)}
        self._codes = torch.tensor([ord(ch) for ch in self.chars], dtype=torch.int32)

    @classmethod
    def from_chars(cls, chars: Sequence[str], unknown: str | None = None) -> CharTokenizer:
        """Rebuild a tokenizer from its ``chars`` list and ``unknown`` (as in a checkpoint)."""
        chars = list(chars)
        if not chars or not all(isinstance(c, str) and len(c) == 1 for c in chars):
            raise ValueError("chars must be a non-empty list of single characters")
        if chars != sorted(set(chars)):
            raise ValueError("chars must be sorted and without repeats, as CharTokenizer makes it")
        if unknown is not None and unknown not in chars:
            raise ValueError(f"unknown={unknown!r} must be one of chars")
        tokenizer = cls("".join(chars))
        tokenizer.unknown = unknown
        return tokenizer

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def __len__(self) -> int:
        return len(self.chars)

    def __repr__(self) -> str:
        unknown = "" if self.unknown is None else f", unknown={self.unknown!r}"
        return f"CharTokenizer(vocab_size={self.vocab_size}{unknown})"

    def __contains__(self, char: object) -> bool:
        return char in self._ids

    def encode(self, text: str) -> torch.Tensor:
        """``text`` -> ids, int64 tensor of shape (len(text),)."""
        check_text(text)
        if not text:
            return torch.zeros(0, dtype=torch.long)
        # Vectorised: the text's code points, looked up in the sorted code points of chars.
        codes = _code_points(text)
        ids = torch.searchsorted(self._codes, codes).clamp(max=len(self.chars) - 1)
        known = self._codes[ids] == codes  # (T,)
        if not bool(known.all()):
            if self.unknown is not None:
                return ids.where(known, self._ids[self.unknown]).long()
            unknown = sorted({ch for ch in text if ch not in self._ids})
            shown = "".join(unknown[:10])
            raise ValueError(
                f"text has {len(unknown)} character(s) outside the vocabulary: {shown!r}"
            )
        return ids.long()  # (T,)

    def decode(self, ids: torch.Tensor | Iterable[int]) -> str:
        """ids (a 1-D tensor or a list of ints, numpy integers included) -> text."""
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1:
                raise ValueError(
                    f"ids must be 1-D (one sequence), got ids.shape={tuple(ids.shape)}; "
                    "decode each row of a batch separately"
                )
            if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
                raise TypeError(f"ids must have an integer dtype, got ids.dtype={ids.dtype}")
            ids = ids.tolist()
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
            raise TypeError(f"ids must be a 1-D tensor or a list of ints, got {type(ids).__name__}")
        values = []
        for value in ids:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"ids must be ints, got {value!r} ({type(value).__name__})")
            index = int(value)
            if not 0 <= index < self.vocab_size:
                raise ValueError(f"ids must be in [0, {self.vocab_size}), got the id {index}")
            values.append(index)
        return "".join(self.chars[i] for i in values)
