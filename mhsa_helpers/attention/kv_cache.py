"""A key/value cache (KV 缓存) for autoregressive generation (自回归生成).

When a model generates text one token at a time, the keys and values of the tokens it has already
seen never change (causal attention: a token never looks ahead). Recomputing them for every new
token costs O(T) projections per step; keeping them in a ``KVCache`` costs one projection per
step, at the price of memory: 2 * b * h_kv * T * head_dim numbers per layer.

    cache = KVCache(context_length)
    for token in tokens:                      # token: (b, 1, d_in)
        out = module(token, cache=cache)      # appends token's K/V, attends over all cached ones
    cache.reset()                             # before the next, unrelated sequence

``SDPAMultiHeadAttention`` and ``GroupedQueryAttention`` accept ``cache=``. Feeding a sequence
token by token, or in chunks of any size, through one cache gives the same outputs as one forward
pass over the whole sequence.
"""

from __future__ import annotations

import torch

from .validation import check_positive_int

__all__ = ["KVCache"]


class KVCache:
    """Keys and values of the tokens seen so far, each (b, h_kv, T_cached, head_dim).

    ``len(cache)`` is the number of cached tokens, which is also the position of the next token.
    Appending beyond ``context_length`` raises ``ValueError``; so does a batch size, number of
    K/V heads or head size that differs from the cached one; a dtype mismatch raises ``TypeError``.
    The cache grows by concatenation (simple, and safe for autograd); production servers
    pre-allocate the full ``context_length`` instead.
    """

    def __init__(self, context_length: int):
        self.context_length = check_positive_int("context_length", context_length)
        self.keys: torch.Tensor | None = None  # (b, h_kv, T_cached, head_dim)
        self.values: torch.Tensor | None = None  # (b, h_kv, T_cached, head_dim)

    def __len__(self) -> int:
        return 0 if self.keys is None else self.keys.shape[-2]

    def __repr__(self) -> str:
        if self.keys is None:
            return f"KVCache(empty, context_length={self.context_length})"
        return (
            f"KVCache({len(self)}/{self.context_length} tokens, "
            f"keys/values {tuple(self.keys.shape)}, {self.keys.dtype})"
        )

    @property
    def nbytes(self) -> int:
        """Bytes held by the cached keys and values."""
        if self.keys is None:
            return 0
        return self.keys.nbytes + self.values.nbytes

    def reset(self) -> None:
        """Forget every cached token (start a new sequence)."""
        self.keys = None
        self.values = None

    def check(self, x: torch.Tensor, *, context_length: int | None = None) -> int:
        """Check that the new tokens of ``x`` (b, n, d_in) fit; return the offset ``len(self)``.

        Called by the modules *before* any matmul. ``context_length`` is the module's own limit
        (its mask buffer is that large); the smaller of it and the cache's limit applies.
        """
        batch, num_new = x.shape[0], x.shape[-2]
        limit = (
            self.context_length
            if context_length is None
            else min(self.context_length, context_length)
        )
        offset = len(self)
        if offset + num_new > limit:
            raise ValueError(
                f"the KV cache holds {offset} tokens and x adds {num_new}: {offset + num_new} "
                f"tokens exceed context_length={limit}; call cache.reset() to start a new "
                f"sequence"
            )
        if self.keys is not None:
            if batch != self.keys.shape[0]:
                raise ValueError(
                    f"batch size of x ({batch}, x.shape={tuple(x.shape)}) does not match the "
                    f"cached batch size {self.keys.shape[0]}; use one cache per batch, or "
                    f"cache.reset()"
                )
            if x.dtype != self.keys.dtype:
                raise TypeError(
                    f"x.dtype={x.dtype} does not match the cached keys' dtype {self.keys.dtype}"
                )
            if x.device != self.keys.device:
                raise ValueError(f"x is on {x.device} but the cache is on {self.keys.device}")
        return offset

    def update(self, keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append new keys/values (b, h_kv, n, head_dim); return all cached ones (T_cached + n)."""
        if keys.dim() != 4 or keys.shape != values.shape:
            raise ValueError(
                "keys and values must both have shape (b, h_kv, n, head_dim), got "
                f"keys.shape={tuple(keys.shape)}, values.shape={tuple(values.shape)}"
            )
        num_new = keys.shape[-2]
        if len(self) + num_new > self.context_length:
            raise ValueError(
                f"the KV cache holds {len(self)} tokens; {num_new} more exceed "
                f"context_length={self.context_length}"
            )
        if self.keys is None:
            self.keys, self.values = keys, values
            return self.keys, self.values
        cached = self.keys.shape
        if (keys.shape[0], keys.shape[1], keys.shape[3]) != (cached[0], cached[1], cached[3]):
            raise ValueError(
                f"new keys {tuple(keys.shape)} do not fit the cache {tuple(cached)}: batch size, "
                "number of K/V heads and head_dim must match (one cache per layer and sequence)"
            )
        if keys.dtype != self.keys.dtype:
            raise TypeError(
                f"keys.dtype={keys.dtype} does not match the cached dtype {self.keys.dtype}"
            )
        self.keys = torch.cat([self.keys, keys], dim=-2)  # (b, h_kv, T_cached + n, head_dim)
        self.values = torch.cat([self.values, values], dim=-2)  # (b, h_kv, T_cached + n, hd)
        return self.keys, self.values
