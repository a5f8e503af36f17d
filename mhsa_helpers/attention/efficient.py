"""The same multi-head attention, made fast: a fused QKV projection and torch's fused kernel.

* ``FusedQKVMultiHeadAttention`` -- one ``nn.Linear(d_in, 3 * d_out)`` (融合 QKV 投影) computes
  queries, keys and values in a single matmul; its weight is ``[W_query; W_key; W_value]``
  stacked row-wise, so ``from_multihead(mha)`` builds a module that computes what ``mha`` does.
* ``SDPAMultiHeadAttention`` -- the same parameters, with the attention itself done by
  ``torch.nn.functional.scaled_dot_product_attention`` (SDPA). Its kernels (FlashAttention-style
  on CPU and CUDA) never store the (b, h, T, T) weight matrix, so memory grows as T instead of T^2.
  It also accepts a ``KVCache`` for token-by-token generation.

``causal_attention`` is the one function both SDPA-based classes (this one and
``GroupedQueryAttention``) use to attend with an optional cache offset and key padding mask;
``attend_and_project`` wraps it with the module's mask, dropout and ``out_proj``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import torch
import torch.nn.functional as F
from torch import nn

from .causal import CausalSelfAttentionBase
from .functional import hidden_positions, masked_attention, merge_heads, split_heads
from .multihead import MultiHeadAttention
from .validation import check_flag, check_forward_options

if TYPE_CHECKING:
    from .kv_cache import KVCache

__all__ = [
    "FusedQKVMultiHeadAttention",
    "SDPAMultiHeadAttention",
    "attend_and_project",
    "causal_attention",
]


def causal_attention(
    queries: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    mask: torch.Tensor,
    dropout: nn.Dropout,
    *,
    training: bool,
    return_weights: bool = False,
    key_padding_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Causal attention of ``n`` new queries over all ``T_k`` keys (the last ``n`` keys are new).

    Args:
        queries: (b, h, n, head_dim), the queries of positions ``T_k - n .. T_k - 1``.
        keys, values: (b, h, T_k, head_dim), positions ``0 .. T_k - 1`` (cached + new).
        mask: the module's float ``mask`` buffer (1 above the diagonal), at least T_k x T_k.
        dropout: the module's ``nn.Dropout``; its rate is used only when ``training``.
        return_weights: use the explicit path (``masked_attention``) and return the weights
            (b, h, n, T_k) taken before dropout; SDPA never materializes them.
        key_padding_mask: bool (b, T_k), True at padded keys (hidden from every query), or None.

    Returns:
        ``(context, weights)``: context (b, h, n, head_dim); weights or None. A query with no
        visible key (all its keys padded) gets a zero context vector (and zero weights).
    """
    num_new, num_keys = queries.shape[-2], keys.shape[-2]
    offset = num_keys - num_new
    # Rows offset..offset+n of the full causal mask: query i (at position offset+i) may see keys
    # 0..offset+i. True = hidden (the course's convention).
    hidden = mask.bool()[offset:num_keys, :num_keys]  # (n, T_k)
    if return_weights:
        return masked_attention(
            queries, keys, values, hidden, dropout, key_padding_mask=key_padding_mask
        )
    dropout_p = dropout.p if training else 0.0
    if key_padding_mask is not None:
        hidden = hidden_positions(hidden, key_padding_mask, queries.dim())  # (b, 1, n, T_k)
        no_key = hidden.all(dim=-1, keepdim=True)  # (b, 1, n, 1): a row with nothing to see
        # SDPA's bool mask means "may attend". A row with no visible key would give NaN, so it
        # may attend to everything (finite), and its context is then set to zero.
        context = F.scaled_dot_product_attention(
            queries, keys, values, attn_mask=~(hidden & ~no_key), dropout_p=dropout_p
        )  # (b, h, n, head_dim)
        return context.masked_fill(no_key, 0.0), None
    if offset == 0:
        # Square causal block: SDPA's is_causal (aligned top-left) is exactly right.
        context = F.scaled_dot_product_attention(
            queries, keys, values, dropout_p=dropout_p, is_causal=True
        )
    elif num_new == 1:
        # One new token sees every cached key: no mask at all.
        context = F.scaled_dot_product_attention(queries, keys, values, dropout_p=dropout_p)
    else:
        # A chunk after cached tokens: is_causal would align top-left (wrong), so pass the mask.
        # SDPA's bool mask means the opposite of ours: True = may attend.
        context = F.scaled_dot_product_attention(
            queries, keys, values, attn_mask=~hidden, dropout_p=dropout_p
        )
    return context, None


def attend_and_project(
    module: CausalSelfAttentionBase,
    queries: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    return_weights: bool = False,
    key_padding_mask: torch.Tensor | None = None,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """``causal_attention`` with ``module``'s mask and dropout, then merge heads and ``out_proj``.

    queries (b, h, n, head_dim), keys/values (b, h, T_k, head_dim) -> (b, n, d_out), or
    ``(out, weights)`` with weights (b, h, n, T_k) when ``return_weights``. ``key_padding_mask``
    (bool (b, T_k), True at padding) hides padded keys.
    """
    context_vec, attn_weights = causal_attention(
        queries,
        keys,
        values,
        module.mask,
        module.dropout,
        training=module.training,
        return_weights=return_weights,
        key_padding_mask=key_padding_mask,
    )  # (b, h, n, head_dim)
    out = cast(nn.Linear, module.out_proj)(merge_heads(context_vec))  # (b, n, d_out)
    if return_weights:
        return out, cast(torch.Tensor, attn_weights)
    return out


class FusedQKVMultiHeadAttention(CausalSelfAttentionBase):
    """Causal multi-head self-attention with one fused QKV projection.

    Same constructor and same function as ``MultiHeadAttention``; the three (d_out, d_in)
    weights live stacked in ``qkv.weight`` (3 * d_out, d_in): rows ``[0, d_out)`` are W_query,
    ``[d_out, 2 d_out)`` W_key, ``[2 d_out, 3 d_out)`` W_value. One matmul instead of three.
    Input (b, num_tokens, d_in) -> output (b, num_tokens, d_out).

    For speed it skips the teaching classes' NaN/inf check (``check_finite = False``): that check
    reads the input on the host. A NaN in the input gives NaN outputs instead of an error.
    """

    check_finite = False

    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        dropout: float,
        num_heads: int,
        qkv_bias: bool = False,
    ):
        super().__init__(d_in, d_out, context_length, dropout, num_heads)
        check_flag("qkv_bias", qkv_bias)
        self.qkv = nn.Linear(self.d_in, 3 * self.d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(self.d_out, self.d_out)

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(b, T, d_in) -> queries, keys, values, each (b, num_heads, T, head_dim)."""
        qkv = self.qkv(x)  # (b, T, 3 * d_out): one matmul for Q, K and V
        queries, keys, values = qkv.split(self.d_out, dim=-1)  # each (b, T, d_out)
        return (
            split_heads(queries, self.num_heads),  # (b, h, T, head_dim)
            split_heads(keys, self.num_heads),  # (b, h, T, head_dim)
            split_heads(values, self.num_heads),  # (b, h, T, head_dim)
        )

    def forward(
        self,
        x: torch.Tensor,
        *,
        key_padding_mask: torch.Tensor | None = None,
        return_weights: bool = False,
        cache: KVCache | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Return (b, T, d_out), or ``(out, weights)`` with weights (b, num_heads, T, T_k).

        ``key_padding_mask``: bool (b, T), True at padding positions (the keys no token may attend
        to), as in ``torch.nn.MultiheadAttention``; None when nothing is padded. Weights are taken
        after softmax and before dropout, as in ``MultiHeadAttention``: zero on future and padded
        keys, rows summing to 1, except a row with no visible key (zero weights, zero context).
        ``cache=KVCache(...)`` works as in ``MultiHeadAttention`` (T_k = len(cache) afterwards).
        """
        self.check_input(x)
        padding = check_forward_options(x, key_padding_mask, return_weights)
        offset = 0
        if cache is not None:
            offset = cache.check(x, context_length=self.context_length, layer=self)
        num_tokens = x.shape[1]
        queries, keys, values = self.project(x)  # (b, h, T, head_dim) each
        if cache is not None:
            keys, values = cache.update(keys, values, padding, layer=self)  # (b, h, T_k, hd)
            padding = cache.key_padding_mask  # (b, T_k) or None
        hidden = self.mask.bool()[offset : offset + num_tokens, : offset + num_tokens]  # (T, T_k)
        context_vec, attn_weights = masked_attention(
            queries, keys, values, hidden, self.dropout, key_padding_mask=padding
        )  # (b, h, T, head_dim), (b, h, T, T_k)
        out = self.out_proj(merge_heads(context_vec))  # (b, T, d_out)
        return (out, attn_weights) if return_weights else out

    @classmethod
    def from_multihead(cls, mha: MultiHeadAttention):
        """Build a ``cls`` that computes what ``mha`` (a ``MultiHeadAttention``) computes.

        ``qkv.weight`` becomes ``cat([W_query, W_key, W_value])`` (and the biases likewise);
        ``out_proj`` is copied. The result has ``mha``'s sizes, dropout rate, training/eval mode,
        dtype and device. Outputs agree to float rounding (``assert_close``), not bit for bit: a
        (T, d_in) @ (d_in, 3 d_out) matmul may sum in another order than three separate ones.
        """
        if not isinstance(mha, MultiHeadAttention):
            raise TypeError(f"mha must be a MultiHeadAttention, got {type(mha).__name__}")
        qkv_bias = mha.W_query.bias is not None
        reference = mha.W_query.weight
        fused = cls(
            mha.d_in, mha.d_out, mha.context_length, mha.dropout.p, mha.num_heads, qkv_bias
        ).to(device=reference.device, dtype=reference.dtype)
        layers = (mha.W_query, mha.W_key, mha.W_value)
        with torch.no_grad():
            fused.qkv.weight.copy_(torch.cat([lin.weight for lin in layers]))  # (3 d_out, d_in)
            if qkv_bias:
                fused.qkv.bias.copy_(torch.cat([lin.bias for lin in layers]))  # (3 d_out,)
            fused.out_proj.load_state_dict(mha.out_proj.state_dict())
        return fused.train(mha.training)


class SDPAMultiHeadAttention(FusedQKVMultiHeadAttention):
    """Fused-QKV multi-head attention whose attention runs in ``F.scaled_dot_product_attention``.

    Same parameters (``qkv``, ``out_proj``) and ``from_multihead`` as
    ``FusedQKVMultiHeadAttention``. Dropout (rate ``dropout``) is applied inside SDPA in training
    mode only. SDPA never returns the attention weights, so ``return_weights=True`` falls back to
    the explicit path (``masked_attention``, which stores the (b, h, T, T) matrix) -- use it for
    inspection, not for speed.

    ``cache=KVCache(...)`` appends this call's keys/values to the cache and lets the new tokens
    attend to every cached token (autoregressive generation, KV 缓存).

    Like ``FusedQKVMultiHeadAttention`` it skips the NaN/inf input check for speed.
    """

    def forward(
        self,
        x: torch.Tensor,
        *,
        key_padding_mask: torch.Tensor | None = None,
        return_weights: bool = False,
        cache: KVCache | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """(b, n, d_in) -> (b, n, d_out) [, weights (b, num_heads, n, T_cached + n)].

        Without a cache, n new tokens are positions 0..n-1. With a cache holding ``len(cache)``
        tokens, they are positions ``len(cache) .. len(cache) + n - 1``.

        ``key_padding_mask``: bool (b, n), True at padding positions of ``x`` (the keys no token
        may attend to), as in ``torch.nn.MultiheadAttention``; the cache keeps the padding of
        cached keys. It goes to SDPA as a boolean ``attn_mask``; a query with no visible key
        gets a zero context vector (no NaN).
        """
        self.check_input(x)
        padding = check_forward_options(x, key_padding_mask, return_weights)
        if cache is not None:
            cache.check(x, context_length=self.context_length, layer=self)
        queries, keys, values = self.project(x)  # (b, h, n, head_dim) each
        if cache is not None:
            # (b, h, T_cached + n, head_dim); the padding of all cached keys (or None)
            keys, values = cache.update(keys, values, padding, layer=self)
            padding = cache.key_padding_mask  # (b, T_cached + n)
        return attend_and_project(self, queries, keys, values, return_weights, padding)
