"""Count tables (n-gram models, n 元语法模型): the bar a character model must clear.

An n-gram count table predicts the next character from the ``n - 1`` before it by counting, in
the training text, how often each character followed them. ``CountTable(train_ids, order,
vocab_size)`` fits one; ``table.loss(val_ids)`` is its mean next-character loss (cross-entropy,
nats) on held-out text, the same number a model's validation loss is.

A raw count table gives probability 0 to every pair it never saw (an infinite loss), so the
tables here mix orders (Jelinek-Mercer interpolation, 插值平滑):

    p(c | a, b) = l3 * count(a, b, c) / count(a, b) + l2 * count(b, c) / count(b)
                  + l1 * count(c) / N + l0 / vocab_size,

a part whose context was never seen gets weight 0 and the others share its weight. The weights
``l`` are fitted by expectation-maximisation on the last ``tune_share`` of the training text, with
tables counted on the rest (deleted interpolation); the validation text is never looked at.
"""

from __future__ import annotations

import math

import torch

from ..validation import as_float, check_int_in_range, check_positive_int, check_seed

__all__ = ["CountTable"]


def _keys(ids: torch.Tensor, k: int, vocab_size: int) -> torch.Tensor:
    """The k-gram ending at each position t >= k - 1, as one int64 number: (N - k + 1,)."""
    key = torch.zeros(ids.numel() - k + 1, dtype=torch.long)
    for j in range(k):
        key = key * vocab_size + ids[j : ids.numel() - k + 1 + j]
    return key


def _table(keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    unique, counts = torch.unique(keys, return_counts=True)
    return unique, counts.double()


def _look_up(table: tuple[torch.Tensor, torch.Tensor], keys: torch.Tensor) -> torch.Tensor:
    unique, counts = table
    if unique.numel() == 0:
        return torch.zeros(keys.shape, dtype=torch.double)
    where = torch.searchsorted(unique, keys).clamp(max=unique.numel() - 1)
    return torch.where(unique[where] == keys, counts[where], 0.0)


class _Counts:
    """Sorted unique k-gram keys and their counts, k = 1 .. order, and the contexts' counts.

    A context's count is that of the (k-1)-gram among the positions that have a next character,
    so a row of counts always sums to its context's count: the probabilities sum to 1.
    """

    def __init__(self, ids: torch.Tensor, order: int, vocab_size: int):
        self.grams = [_table(_keys(ids, k, vocab_size)) for k in range(1, order + 1)]
        self.contexts = [_table(_keys(ids[:-1], k, vocab_size)) for k in range(1, order)]
        self.total = float(ids.numel())

    def count(self, k: int, keys: torch.Tensor) -> torch.Tensor:
        """Count of each k-gram key in the text (0 when unseen)."""
        return _look_up(self.grams[k - 1], keys)

    def context(self, k: int, keys: torch.Tensor) -> torch.Tensor:
        """Count of each (k-1)-gram key followed by a character; k = 1: the number of ids."""
        if k == 1:
            return torch.full(keys.shape, self.total, dtype=torch.double)
        return _look_up(self.contexts[k - 2], keys)


class CountTable:
    """An interpolated n-gram count table of ``order`` 1 (unigram), 2 (bigram) or 3 (trigram).

    Attributes:
        order: n.
        vocab_size: the number of characters.
        weights: ``(l0, l1, ..., l_order)``, the fitted mixing weights (sum 1).
    """

    def __init__(
        self,
        train_ids: torch.Tensor,
        order: int,
        vocab_size: int,
        *,
        tune_share: float = 0.05,
        iterations: int = 20,
    ):
        self.order = check_int_in_range("order", order, 1, 3)
        self.vocab_size = check_positive_int("vocab_size", vocab_size)
        ids = _check_ids("train_ids", train_ids, self.vocab_size)
        share = as_float("tune_share", tune_share)
        if not 0 < share < 0.5:
            raise ValueError(f"tune_share must be in (0, 0.5), got tune_share={tune_share!r}")
        cut = int(ids.numel() * (1 - share))
        if cut <= self.order or ids.numel() - cut <= self.order:
            raise ValueError(
                f"train_ids is too short ({ids.numel()} ids) to fit an order-{order} table"
            )
        held_out = _Counts(ids[:cut], self.order, self.vocab_size)
        parts = self._parts(held_out, ids[cut:])  # (order + 1, n)
        weights = torch.full((self.order + 1,), 1.0 / (self.order + 1), dtype=torch.double)
        for _ in range(check_positive_int("iterations", iterations)):
            mixed = self._mix(weights, parts)  # (order + 1, n)
            weights = mixed.mean(dim=1)
        self.weights = tuple(float(w) for w in weights)
        self._counts = _Counts(ids, self.order, self.vocab_size)

    def _parts(self, counts: _Counts, ids: torch.Tensor) -> torch.Tensor:
        """Each order's probability of each next id (NaN where its context was never seen)."""
        targets = ids[self.order - 1 :]
        parts = [torch.full(targets.shape, 1.0 / self.vocab_size, dtype=torch.double)]
        for k in range(1, self.order + 1):
            grams = _keys(ids, k, self.vocab_size)[self.order - k :]  # ends at each target
            if k == 1:
                context = torch.zeros_like(grams)
            else:
                context = _keys(ids[:-1], k - 1, self.vocab_size)[self.order - k :]
            seen = counts.context(k, context)
            parts.append(counts.count(k, grams) / seen.where(seen > 0, math.nan))
        return torch.stack(parts)  # (order + 1, n)

    @staticmethod
    def _mix(weights: torch.Tensor, parts: torch.Tensor) -> torch.Tensor:
        """Each part's share of the mixed probability (unseen contexts: weight 0, renormalised)."""
        known = ~parts.isnan()
        weighted = torch.where(known, weights[:, None] * parts.nan_to_num(0.0), 0.0)
        return weighted / weighted.sum(dim=0, keepdim=True)

    def _probs(self, ids: torch.Tensor) -> torch.Tensor:
        """The mixed probability of every id of ``ids`` from position ``order - 1`` on."""
        parts = self._parts(self._counts, ids)
        weights = torch.tensor(self.weights, dtype=torch.double)[:, None]
        known = ~parts.isnan()
        share = torch.where(known, weights, 0.0)
        return (share * parts.nan_to_num(0.0)).sum(dim=0) / share.sum(dim=0)

    def loss(self, ids: torch.Tensor) -> float:
        """Mean next-character loss (nats) on ``ids``, predicting from position ``order - 1``."""
        ids = _check_ids("ids", ids, self.vocab_size)
        if ids.numel() <= self.order:
            raise ValueError(f"ids must have more than order={self.order} ids, got {ids.numel()}")
        return float(-self._probs(ids).log().mean())

    def next_probs(self, context: torch.Tensor) -> torch.Tensor:
        """(vocab_size,) probabilities of the character after ``context`` (its last ids)."""
        context = _check_ids("context", context, self.vocab_size)
        if context.numel() < self.order - 1:
            raise ValueError(
                f"context must have at least order - 1 = {self.order - 1} ids, "
                f"got {context.numel()}"
            )
        tail = context[context.numel() - (self.order - 1) :].tolist() if self.order > 1 else []
        candidates = torch.arange(self.vocab_size)
        parts = [torch.full((self.vocab_size,), 1.0 / self.vocab_size, dtype=torch.double)]
        for k in range(1, self.order + 1):
            key = 0
            for value in tail[len(tail) - (k - 1) :] if k > 1 else []:
                key = key * self.vocab_size + value
            seen = float(self._counts.context(k, torch.tensor([key]))[0])
            if seen == 0:
                parts.append(torch.full((self.vocab_size,), math.nan, dtype=torch.double))
            else:
                parts.append(self._counts.count(k, key * self.vocab_size + candidates) / seen)
        stacked = torch.stack(parts)  # (order + 1, vocab)
        weights = torch.tensor(self.weights, dtype=torch.double)[:, None]
        share = torch.where(~stacked.isnan(), weights, 0.0)
        return ((share * stacked.nan_to_num(0.0)).sum(dim=0) / share.sum(dim=0)).float()

    def sample(self, context: torch.Tensor, num_chars: int, *, seed: int = 0) -> torch.Tensor:
        """``context`` followed by ``num_chars`` characters drawn from the table (seeded)."""
        ids = _check_ids("context", context, self.vocab_size)
        generator = torch.Generator().manual_seed(check_seed("seed", seed) % 2**64)
        for _ in range(check_positive_int("num_chars", num_chars)):
            probs = self.next_probs(ids)  # (vocab,)
            ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)])
        return ids

    def __repr__(self) -> str:
        weights = ", ".join(f"{w:.3f}" for w in self.weights)
        return f"CountTable(order={self.order}, vocab_size={self.vocab_size}, weights=({weights}))"


def _check_ids(name: str, ids: object, vocab_size: int) -> torch.Tensor:
    if not isinstance(ids, torch.Tensor) or ids.dtype not in (torch.long, torch.int32):
        raise TypeError(f"{name} must be a 1-D torch.long tensor of token ids")
    if ids.dim() != 1:
        raise ValueError(f"{name} must be 1-D, got {name}.shape={tuple(ids.shape)}")
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise ValueError(f"{name} must hold ids in [0, {vocab_size})")
    return ids.long()
