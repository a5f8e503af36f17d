"""Causal attention (因果注意力) and the base class every causal multi-head variant shares.

``CausalAttention`` is the book's single-head class (section 3.5.3): batched input (b, T, d_in),
a causal mask registered as a buffer for ``context_length`` and sliced to (T, T), dropout on the
attention weights.

``CausalSelfAttentionBase`` holds what the multi-head classes have in common -- argument checks,
the ``mask`` buffer, and the steps of ``forward`` around the projections: every check before any
matmul (``begin_forward``), the KV-cache update (``extend_cache``), and causal attention, merging
the heads and ``out_proj`` (``attend_and_project``). So each subclass's ``forward`` shows only its
own idea: how it computes queries, keys and values. It creates *no* parameters: each subclass
creates its layers itself, in the book's order (W_query, W_key, W_value, then out_proj), so that
``torch.manual_seed(123)`` reproduces the book's numbers.
"""

from __future__ import annotations

from typing import cast

import torch
from torch import nn

from .functional import causal_attention, causal_mask, masked_attention, merge_heads
from .kv_cache import KVCache
from .validation import (
    check_dropout,
    check_flag,
    check_forward_options,
    check_heads,
    check_input,
    check_positive_int,
)

__all__ = ["CausalAttention", "CausalSelfAttentionBase"]


class CausalSelfAttentionBase(nn.Module):
    """Shared constructor checks, ``mask`` buffer and input validation (no parameters).

    Sizes may be Python or numpy integers (stored as Python ints), ``dropout`` any real number
    in [0, 1). ``check_finite`` (a class attribute, True here) makes ``check_input`` reject NaN
    and inf input with a ``ValueError`` naming the first bad (batch, token) position; the
    production variants set it to False, because the check reads the tensor on the host.
    """

    check_finite: bool = True
    # True: attend with torch's fused F.scaled_dot_product_attention unless the weights are asked
    # for; False: always the explicit masked_attention (the teaching classes).
    use_sdpa: bool = False
    mask: torch.Tensor  # (context_length, context_length) buffer, 1 above the diagonal
    out_proj: nn.Linear  # created by each multi-head subclass, after W_query/W_key/W_value

    def __init__(
        self, d_in: int, d_out: int, context_length: int, dropout: float, num_heads: int = 1
    ):
        super().__init__()
        self.d_in = check_positive_int("d_in", d_in)
        self.head_dim = check_heads(d_out, num_heads)
        self.d_out = int(d_out)
        self.num_heads = int(num_heads)
        self.context_length = check_positive_int("context_length", context_length)
        self.dropout = nn.Dropout(check_dropout(dropout))
        # A buffer, not a parameter: it moves with .to(device), is saved in state_dict, and never
        # receives gradients. 1 above the diagonal marks the future.
        self.register_buffer("mask", causal_mask(self.context_length))

    def _param_dtype(self) -> torch.dtype:
        return next(self.parameters()).dtype

    def check_input(self, x: torch.Tensor) -> torch.Tensor:
        """Raise ``TypeError``/``ValueError`` for anything ``forward`` cannot take."""
        return check_input(
            x,
            d_in=self.d_in,
            ndim=3,
            context_length=self.context_length,
            dtype=self._param_dtype(),
            device=self.mask.device,
            finite=self.check_finite,
        )

    def causal_mask(self, num_tokens: int) -> torch.Tensor:
        """Bool (num_tokens, num_tokens), True above the diagonal (positions to hide)."""
        return self.mask.bool()[:num_tokens, :num_tokens]

    def begin_forward(
        self,
        x: torch.Tensor,
        key_padding_mask: object,
        return_weights: object,
        cache: KVCache | None = None,
    ) -> torch.Tensor | None:
        """Every check of ``forward``'s arguments, before any matmul; return the padding mask.

        Checks ``x``, then ``return_weights`` and ``key_padding_mask``, then (with a ``cache``)
        that the new tokens fit in the cache and that it belongs to this layer.
        """
        self.check_input(x)
        padding = check_forward_options(x, key_padding_mask, return_weights)
        if cache is not None:
            if not isinstance(cache, KVCache):
                raise TypeError(
                    f"cache must be a KVCache or None, got cache={cache!r} ({type(cache).__name__})"
                )
            cache.check(x, context_length=self.context_length, layer=self)
        return padding

    def extend_cache(
        self,
        keys: torch.Tensor,
        values: torch.Tensor,
        padding: torch.Tensor | None,
        cache: KVCache | None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Append the new keys/values (b, h_kv, T, head_dim) to ``cache``; return all of them.

        Without a cache, returns its arguments. With one, returns the cached keys and values
        (b, h_kv, T_k, head_dim), T_k = len(cache) after the update, and the padding mask of all
        T_k keys (bool (b, T_k), or None if no padding was ever given).
        """
        if cache is None:
            return keys, values, padding
        keys, values = cache.update(keys, values, padding, layer=self)  # (b, h_kv, T_k, hd)
        return keys, values, cache.key_padding_mask  # padding: (b, T_k) or None

    def attend_and_project(
        self,
        queries: torch.Tensor,
        keys: torch.Tensor,
        values: torch.Tensor,
        return_weights: bool = False,
        key_padding_mask: torch.Tensor | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Causal attention with this module's mask and dropout, then merge heads and ``out_proj``.

        queries (b, h, n, head_dim), keys/values (b, h, T_k, head_dim) -> (b, n, d_out), or
        ``(out, weights)`` with weights (b, h, n, T_k) when ``return_weights``. The n queries are
        the last n positions: query i may see keys 0 .. T_k - n + i. ``key_padding_mask``
        (bool (b, T_k), True at padding) hides padded keys as well.
        """
        context_vec, attn_weights = causal_attention(
            queries,
            keys,
            values,
            self.mask,
            self.dropout,
            training=self.training,
            return_weights=return_weights or not self.use_sdpa,
            key_padding_mask=key_padding_mask,
        )  # (b, h, n, head_dim), (b, h, n, T_k) or None
        out = self.out_proj(merge_heads(context_vec))  # (b, n, d_out)
        return (out, cast(torch.Tensor, attn_weights)) if return_weights else out

    def extra_repr(self) -> str:
        return (
            f"d_in={self.d_in}, d_out={self.d_out}, context_length={self.context_length}, "
            f"num_heads={self.num_heads}, head_dim={self.head_dim}"
        )


class CausalAttention(CausalSelfAttentionBase):
    """Single-head causal self-attention, the book's ``CausalAttention``.

    Input (b, num_tokens, d_in) -> output (b, num_tokens, d_out).
    Dropout acts on the attention weights, in training mode only.
    ``key_padding_mask`` (bool (b, num_tokens), True at padding) hides padded keys as well.
    NaN or inf input raises a ``ValueError`` naming the first bad (batch, token) position.
    """

    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        dropout: float,
        qkv_bias: bool = False,
    ):
        super().__init__(d_in, d_out, context_length, dropout, num_heads=1)
        check_flag("qkv_bias", qkv_bias)
        self.W_query = nn.Linear(self.d_in, self.d_out, bias=qkv_bias)
        self.W_key = nn.Linear(self.d_in, self.d_out, bias=qkv_bias)
        self.W_value = nn.Linear(self.d_in, self.d_out, bias=qkv_bias)

    def forward(
        self,
        x: torch.Tensor,
        *,
        key_padding_mask: torch.Tensor | None = None,
        return_weights: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Return context vectors (b, T, d_out), plus weights (b, T, T) if ``return_weights``.

        ``key_padding_mask``: bool (b, T), True at padding positions (the keys no token may attend
        to), as in ``torch.nn.MultiheadAttention``; None when nothing is padded.

        The returned weights are taken after softmax and before dropout; they are zero on future
        and padded keys and each row sums to 1, except a row with no visible key at all (left
        padding: a pad before the first real token), whose weights and context vector are zero.
        """
        padding = self.begin_forward(x, key_padding_mask, return_weights)
        num_tokens = x.shape[1]
        keys = self.W_key(x)  # (b, T, d_out)
        queries = self.W_query(x)  # (b, T, d_out)
        values = self.W_value(x)  # (b, T, d_out)
        context_vec, attn_weights = masked_attention(
            queries,
            keys,
            values,
            self.causal_mask(num_tokens),
            self.dropout,
            key_padding_mask=padding,
        )  # (b, T, d_out), (b, T, T)
        return (context_vec, attn_weights) if return_weights else context_vec

    def extra_repr(self) -> str:
        return f"d_in={self.d_in}, d_out={self.d_out}, context_length={self.context_length}"
