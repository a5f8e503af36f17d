"""A key/value cache (KV 缓存) for autoregressive generation (自回归生成).

When a model generates text one token at a time, the keys and values of the tokens it has already
seen never change (causal attention: a token never looks ahead). Recomputing them for every new
token costs O(T) projections per step; keeping them in a ``KVCache`` costs one projection per
step, at the price of memory: 2 * b * h_kv * T * head_dim numbers per layer.

    cache = KVCache(context_length)
    for token in tokens:                      # token: (b, 1, d_in)
        out = module(token, cache=cache)      # appends token's K/V, attends over all cached ones
    cache.reset()                             # before the next, unrelated sequence

``MultiHeadAttention``, ``FusedQKVMultiHeadAttention``, ``SDPAMultiHeadAttention`` and
``GroupedQueryAttention`` accept ``cache=``. Feeding a sequence token by token, or in chunks of any
size, through one cache gives the same outputs as one forward pass over the whole sequence.

Padded batches: ``module(x, key_padding_mask=m, cache=cache)`` describes the padding of the *new*
tokens only, ``m`` (b, n); the cache remembers the padding of every cached key
(``cache.key_padding_mask``, (b, T_cached)), so later tokens never attend to an old pad.

Precision: the cache stores keys and values in the dtype the layer computes them in -- its
parameters' dtype, or, inside ``torch.autocast("cpu", dtype=torch.bfloat16)``, bfloat16 (half
the memory; that is how models generate in mixed precision). Every step of one sequence must then
run in that same precision: a step that would add keys of another dtype raises ``TypeError``
before any matmul.

One cache belongs to one layer: the first layer that fills it owns it until ``reset()``; another
layer passing it raises ``ValueError`` instead of silently mixing two layers' keys.
"""

from __future__ import annotations

import weakref

import torch
from torch import nn

from ..i18n import say
from ..validation import autocast_accepts, check_key_padding_mask, check_positive_int

__all__ = ["KVCache"]


class KVCache:
    """Keys and values of the tokens seen so far, each (b, h_kv, T_cached, head_dim).

    ``len(cache)`` is the number of cached tokens, which is also the position of the next token.
    Appending beyond ``context_length`` raises ``ValueError``; so does a batch size, number of
    K/V heads or head size that differs from the cached one, or a layer other than the one that
    filled the cache; a dtype mismatch (new keys vs cached, or values vs keys) raises
    ``TypeError``. ``key_padding_mask`` is None while no padding was ever given, else bool
    (b, T_cached), True at cached padding positions. The cache grows by concatenation (simple,
    and safe for autograd); production servers pre-allocate the full ``context_length`` instead.
    """

    def __init__(self, context_length: int):
        self.context_length = check_positive_int("context_length", context_length)
        self.keys: torch.Tensor | None = None  # (b, h_kv, T_cached, head_dim)
        self.values: torch.Tensor | None = None  # (b, h_kv, T_cached, head_dim)
        self.key_padding_mask: torch.Tensor | None = None  # (b, T_cached), True = padding
        self._layer: weakref.ref[nn.Module] | None = None  # the layer that filled the cache

    def __len__(self) -> int:
        return 0 if self.keys is None else self.keys.shape[-2]

    def __repr__(self) -> str:
        """One line in the lesson language (English by default, like every message of the
        package): ``KVCache(15/32 tokens, keys/values (1, 4, 15, 4), torch.float32)``."""
        limit = self.context_length
        if self.keys is None:
            return say(
                f"KVCache(empty, context_length={limit})", f"KVCache(空，context_length={limit})"
            )
        cached, shape, dtype = len(self), tuple(self.keys.shape), self.keys.dtype
        padded = ""
        if self.key_padding_mask is not None:
            pads = int(self.key_padding_mask.sum())
            padded = say(f", {pads} padded", f"，其中 {pads} 个是填充")
        return say(
            f"KVCache({cached}/{limit} tokens, keys/values {shape}, {dtype}{padded})",
            f"KVCache({cached}/{limit} 个词元，键/值 {shape}，{dtype}{padded})",
        )

    @property
    def nbytes(self) -> int:
        """Bytes held by the cached keys and values."""
        if self.keys is None or self.values is None:
            return 0
        return self.keys.nbytes + self.values.nbytes

    @property
    def layer(self) -> nn.Module | None:
        """The layer whose keys the cache holds (None while empty)."""
        return None if self._layer is None else self._layer()

    def reset(self) -> None:
        """Forget every cached token and the layer that filled the cache (start a new sequence)."""
        self.keys = None
        self.values = None
        self.key_padding_mask = None
        self._layer = None

    def _check_layer(self, layer: nn.Module | None) -> None:
        if layer is None or self._layer is None:
            return
        owner = self._layer()
        if owner is not layer:
            raise ValueError(
                f"this KVCache holds the keys and values of another layer "
                f"({type(owner).__name__ if owner is not None else 'a deleted layer'}); "
                "use one cache per layer, or cache.reset() to start a new sequence"
            )

    def check(
        self,
        x: torch.Tensor,
        *,
        context_length: int | None = None,
        layer: nn.Module | None = None,
        dtype: torch.dtype | None = None,
    ) -> int:
        """Check that the new tokens of ``x`` (b, n, d_in) fit; return the offset ``len(self)``.

        Called by the modules *before* any matmul. ``context_length`` is the module's own limit
        (its mask buffer is that large); the smaller of it and the cache's limit applies. ``layer``
        is the module calling: a cache filled by another layer raises ``ValueError``. ``dtype``
        is the dtype of the keys this call will compute (default ``x.dtype``; inside
        ``torch.autocast`` the autocast dtype, see ``validation.compute_dtype``): one of another
        dtype than the cached keys raises ``TypeError``.
        """
        batch, num_new = x.shape[0], x.shape[-2]
        self._check_layer(layer)
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
            new_dtype = x.dtype if dtype is None else dtype
            if new_dtype != self.keys.dtype:
                raise TypeError(
                    f"this call computes keys of dtype {new_dtype} (x.dtype={x.dtype}"
                    f"{_autocast_note(x)}) but the cache holds keys of dtype {self.keys.dtype}; "
                    "run every step of a sequence in the same precision (all inside one "
                    "torch.autocast, or none), or cache.reset() to start a new sequence"
                )
            if x.device != self.keys.device:
                raise ValueError(f"x is on {x.device} but the cache is on {self.keys.device}")
        return offset

    def update(
        self,
        keys: torch.Tensor,
        values: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
        *,
        layer: nn.Module | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Append new keys/values (b, h_kv, n, head_dim); return all cached ones (T_cached + n).

        ``key_padding_mask`` (bool (b, n), True at padding) marks padded new tokens; afterwards
        ``self.key_padding_mask`` covers every cached key (None if no padding was ever given).
        ``layer`` binds an empty cache to the module that fills it. Every argument is checked
        first; the attention modules, which checked theirs in ``forward``, call ``append``.
        """
        if not isinstance(keys, torch.Tensor) or not isinstance(values, torch.Tensor):
            raise TypeError(
                "keys and values must be torch.Tensors, got "
                f"{type(keys).__name__} and {type(values).__name__}"
            )
        if keys.dim() != 4 or keys.shape != values.shape:
            raise ValueError(
                "keys and values must both have shape (b, h_kv, n, head_dim), got "
                f"keys.shape={tuple(keys.shape)}, values.shape={tuple(values.shape)}"
            )
        if not keys.is_floating_point():
            raise TypeError(f"keys must have a floating-point dtype, got keys.dtype={keys.dtype}")
        if values.dtype != keys.dtype:
            raise TypeError(f"values.dtype={values.dtype} does not match keys.dtype={keys.dtype}")
        if values.device != keys.device:
            raise ValueError(f"values are on {values.device} but keys are on {keys.device}")
        batch, num_new = keys.shape[0], keys.shape[-2]
        check_key_padding_mask(key_padding_mask, num_keys=num_new, batch=batch, device=keys.device)
        self._check_layer(layer)
        if len(self) + num_new > self.context_length:
            raise ValueError(
                f"the KV cache holds {len(self)} tokens; {num_new} more exceed "
                f"context_length={self.context_length}"
            )
        if self.keys is not None:
            cached = self.keys.shape
            if (keys.shape[0], keys.shape[1], keys.shape[3]) != (cached[0], cached[1], cached[3]):
                raise ValueError(
                    f"new keys {tuple(keys.shape)} do not fit the cache {tuple(cached)}: batch "
                    "size, number of K/V heads and head_dim must match (one cache per layer and "
                    "sequence)"
                )
            if keys.dtype != self.keys.dtype:
                raise TypeError(
                    f"keys.dtype={keys.dtype} does not match the cached dtype {self.keys.dtype}"
                )
            if keys.device != self.keys.device:
                raise ValueError(
                    f"keys and values are on {keys.device} but the cache is on "
                    f"{self.keys.device}; move them, e.g. keys.to({str(self.keys.device)!r}), "
                    "or cache.reset() to start a new sequence"
                )
        keys, values, _ = self.append(keys, values, key_padding_mask, layer=layer)
        return keys, values

    def append(
        self,
        keys: torch.Tensor,
        values: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
        *,
        layer: nn.Module | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """``update`` without its checks, for callers that checked (``check``) already.

        Returns every cached key and value (b, h_kv, T_cached + n, head_dim) and the padding mask
        of all of them (bool (b, T_cached + n), or None while no padding was ever given).
        """
        if self.keys is None or self.values is None:
            self.keys, self.values = keys, values
            self.key_padding_mask = key_padding_mask
            self._layer = None if layer is None else weakref.ref(layer)
            return self.keys, self.values, self.key_padding_mask
        if key_padding_mask is not None or self.key_padding_mask is not None:
            batch, num_new = keys.shape[0], keys.shape[-2]
            old = self.key_padding_mask
            if old is None:
                old = torch.zeros(batch, len(self), dtype=torch.bool, device=keys.device)
            new = key_padding_mask
            if new is None:
                new = torch.zeros(batch, num_new, dtype=torch.bool, device=keys.device)
            self.key_padding_mask = torch.cat([old, new], dim=-1)  # (b, T_cached + n)
        self.keys = torch.cat([self.keys, keys], dim=-2)  # (b, h_kv, T_cached + n, head_dim)
        self.values = torch.cat([self.values, values], dim=-2)  # (b, h_kv, T_cached + n, hd)
        return self.keys, self.values, self.key_padding_mask


def _autocast_note(x: torch.Tensor) -> str:
    return ", inside torch.autocast" if autocast_accepts(x) else ""
