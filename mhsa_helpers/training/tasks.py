"""Two toy next-token tasks whose answer is a pattern of attention.

* repeat: each row repeats one random id; the next token equals the previous one.
* shift: random ids; ``target[t] = ids[t - k]``. Only a head that looks exactly ``k`` positions
  back can solve it, so a head specialises (专门化) on that offset.

Each batch function draws from the ``generator`` it is given, never from the global RNG.
"""

from __future__ import annotations

import torch

from ..validation import check_positive_int

__all__ = ["IGNORE_INDEX", "make_repeat_batch", "make_shift_batch"]

IGNORE_INDEX = -100  # cross_entropy's default ignore_index: positions without a target


def make_repeat_batch(
    batch_size: int, context_length: int, vocab_size: int, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows that repeat one random id: ids (b, T) and next-token targets (b, T), all equal."""
    batch_size, context_length, vocab_size = _sizes(batch_size, context_length, vocab_size)
    first = torch.randint(0, vocab_size, (batch_size, 1), generator=generator)  # (b, 1)
    seq = first.expand(batch_size, context_length + 1)  # (b, T + 1)
    return seq[:, :-1].clone(), seq[:, 1:].clone()  # (b, T), (b, T)


def make_shift_batch(
    batch_size: int,
    context_length: int,
    vocab_size: int,
    k: int,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random ids (b, T) and targets (b, T) with ``target[t] = ids[t - k]`` (ignored for t < k)."""
    batch_size, context_length, vocab_size = _sizes(batch_size, context_length, vocab_size)
    k = check_positive_int("k", k)
    if k >= context_length:
        raise ValueError(f"k must be smaller than context_length={context_length}, got k={k}")
    ids = torch.randint(0, vocab_size, (batch_size, context_length), generator=generator)
    targets = torch.full_like(ids, IGNORE_INDEX)  # (b, T)
    targets[:, k:] = ids[:, :-k]
    return ids, targets


def _sizes(batch_size: object, context_length: object, vocab_size: object) -> tuple[int, int, int]:
    return (
        check_positive_int("batch_size", batch_size),
        check_positive_int("context_length", context_length),
        check_positive_int("vocab_size", vocab_size),
    )
