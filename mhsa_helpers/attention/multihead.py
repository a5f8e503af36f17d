"""Multi-head attention (多头注意力), the book's two versions and the bridge between them.

* ``MultiHeadAttentionWrapper`` -- ``num_heads`` separate ``CausalAttention`` heads run one after
  another and concatenated side by side (多个头并排拼接).
  One matmul per head and per projection.
* ``MultiHeadAttention`` -- one big W_query/W_key/W_value, split into heads by ``view`` +
  ``transpose``, one batched matmul for all heads (拆分成多个头),
  then ``out_proj``.
* ``multihead_from_wrapper`` -- builds the split-matrix module that computes exactly what a given
  wrapper computes, which is the proof that the two are the same function.

Watch the width convention, which readers often get wrong: in the wrapper, ``d_out`` is the width
of *each head*, so its output is ``num_heads * d_out`` wide; in ``MultiHeadAttention``, ``d_out`` is
the *total* width and each head gets ``head_dim = d_out // num_heads``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import torch
from torch import nn
from torch.nn import functional as F

from ..validation import check_dropout, check_flag, check_positive_int
from .base import AttentionModule, CausalSelfAttentionBase
from .causal import CausalAttention
from .functional import split_heads

if TYPE_CHECKING:
    from .kv_cache import KVCache

__all__ = ["MultiHeadAttention", "MultiHeadAttentionWrapper", "multihead_from_wrapper"]


class MultiHeadAttentionWrapper(AttentionModule):
    """``num_heads`` independent causal heads, outputs concatenated on the last dimension.

    Each head is a ``CausalAttention(d_in, d_out, ...)`` of width ``d_out``, so the output is
    (b, num_tokens, **num_heads * d_out**) -- e.g. d_out=2 and 2 heads give the book's (2, 6, 4).
    This is the book's convention; ``MultiHeadAttention`` instead splits a total ``d_out``.
    NaN or inf input raises a ``ValueError`` naming the first bad (batch, token) position.
    """

    context_length: int

    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        dropout: float,
        num_heads: int,
        qkv_bias: bool = False,
    ):
        super().__init__()
        self.d_in = check_positive_int("d_in", d_in)
        self.d_out = check_positive_int("d_out", d_out)
        self.context_length = check_positive_int("context_length", context_length)
        self.num_heads = check_positive_int("num_heads", num_heads)
        dropout = check_dropout(dropout)
        check_flag("qkv_bias", qkv_bias)
        self.heads = nn.ModuleList(
            [
                CausalAttention(self.d_in, self.d_out, self.context_length, dropout, qkv_bias)
                for _ in range(self.num_heads)
            ]
        )

    def forward(
        self,
        x: torch.Tensor,
        *,
        key_padding_mask: torch.Tensor | None = None,
        return_weights: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """(b, T, d_in) -> (b, T, num_heads * d_out): one head after another, then concatenated.

        ``key_padding_mask``: bool (b, T), True at padding positions (the keys no token may attend
        to), as in ``torch.nn.MultiheadAttention``; every head gets it. With ``return_weights``,
        also returns the heads' weights stacked as (b, num_heads, T, T).
        """
        self.begin_forward(x, key_padding_mask, return_weights)  # once, not once per head
        outputs = [
            cast(CausalAttention, head).forward_unchecked(x, key_padding_mask)
            for head in self.heads
        ]  # per head: (b, T, d_out), (b, T, T)
        context = torch.cat([out for out, _ in outputs], dim=-1)  # (b, T, h * d_out)
        if not return_weights:
            return context
        return context, torch.stack([w for _, w in outputs], dim=1)  # + (b, h, T, T)

    def extra_repr(self) -> str:
        return (
            f"d_in={self.d_in}, d_out={self.d_out} per head, num_heads={self.num_heads} "
            f"-> output width {self.num_heads * self.d_out}"
        )


class MultiHeadAttention(CausalSelfAttentionBase):
    """Causal multi-head self-attention with split matrices, the book's ``MultiHeadAttention``.

    Input (b, num_tokens, d_in) -> output (b, num_tokens, d_out), with
    ``head_dim = d_out // num_heads`` (``d_out`` must be divisible by ``num_heads``).
    NaN or inf input raises a ``ValueError`` naming the first bad (batch, token) position.
    """

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
        self.W_query = nn.Linear(self.d_in, self.d_out, bias=qkv_bias)
        self.W_key = nn.Linear(self.d_in, self.d_out, bias=qkv_bias)
        self.W_value = nn.Linear(self.d_in, self.d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(self.d_out, self.d_out)  # mixes the heads' outputs

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
        to), as in ``torch.nn.MultiheadAttention``; None when nothing is padded. Real tokens then
        get the outputs they would get alone, without the padding.

        The returned weights are taken after softmax and *before* dropout, so they are the same in
        train and eval mode; they are zero on future and padded keys and each row sums to 1,
        except a row with no visible key at all (left padding: a pad before the first real
        token), whose weights are zero and whose context vector is zero (its output is then
        ``out_proj.bias``; outputs at padding positions carry no meaning).

        ``cache=KVCache(...)`` appends this call's keys and values to the cache and lets the T new
        tokens (positions ``len(cache) .. len(cache) + T - 1``) attend to every cached token too,
        so T_k = len(cache) after the call. Feeding a sequence token by token through one cache
        gives the outputs of one call over the whole sequence. With a cache, ``key_padding_mask``
        describes the T new tokens; the cache keeps the padding of the cached ones.
        """
        self.begin_forward(x, key_padding_mask, return_weights, cache)
        if self.use_sdpa and not return_weights:  # training's fast path: one matmul, as c_attn
            fused = F.linear(x, self._qkv_weight(), self._qkv_bias())  # (b, T, 3 * d_out)
            queries, keys, values = (
                split_heads(part, self.num_heads) for part in fused.split(self.d_out, dim=-1)
            )  # (b, h, T, head_dim) each
        else:
            keys = split_heads(self.W_key(x), self.num_heads)  # (b, h, T, head_dim)
            queries = split_heads(self.W_query(x), self.num_heads)  # (b, h, T, head_dim)
            values = split_heads(self.W_value(x), self.num_heads)  # (b, h, T, head_dim)
        # [cache update,] causal attention (query i sees keys 0 .. T_k - T + i), merge, out_proj
        return self.attend_and_project(
            queries, keys, values, key_padding_mask, cache, return_weights
        )  # (b, T, d_out) [, (b, h, T, T_k)]

    def _qkv_weight(self) -> torch.Tensor:
        """W_query, W_key and W_value stacked (3 * d_out, d_in): one matmul for all three.
        The same parameters (the gradient flows back into each); only the product's order of
        summation may differ, by float rounding."""
        return torch.cat([self.W_query.weight, self.W_key.weight, self.W_value.weight])

    def _qkv_bias(self) -> torch.Tensor | None:
        if self.W_query.bias is None:
            return None
        return torch.cat([self.W_query.bias, self.W_key.bias, self.W_value.bias])


def multihead_from_wrapper(wrapper: MultiHeadAttentionWrapper) -> MultiHeadAttention:
    """Build the split-matrix ``MultiHeadAttention`` that computes what ``wrapper`` computes.

    Head i's W_query/W_key/W_value weights (and biases) become rows
    ``[i * head_dim, (i + 1) * head_dim)`` of the big matrices, and ``out_proj`` is the identity
    with zero bias, so the concatenation is passed through unchanged. The result has the wrapper's
    dropout rate and is in the wrapper's training/eval mode, dtype and device.

    Outputs agree to float32 rounding for any sizes; on small inputs such as the book's example
    they are bit-identical (``torch.equal``). Bitwise equality is not promised in general because
    a (T, d_in) @ (d_in, h * head_dim) matmul may sum in a different order than h separate
    (T, d_in) @ (d_in, head_dim) matmuls.
    """
    if not isinstance(wrapper, MultiHeadAttentionWrapper):
        raise TypeError(
            f"wrapper must be a MultiHeadAttentionWrapper, got {type(wrapper).__name__}"
        )
    first = cast(CausalAttention, wrapper.heads[0])
    qkv_bias = first.W_query.bias is not None
    num_heads, head_dim = wrapper.num_heads, wrapper.d_out
    reference = first.W_query.weight
    split = MultiHeadAttention(
        wrapper.d_in,
        num_heads * head_dim,
        wrapper.context_length,
        first.dropout.p,
        num_heads,
        qkv_bias=qkv_bias,
    ).to(device=reference.device, dtype=reference.dtype)
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            big = cast(nn.Linear, getattr(split, name))
            heads = [cast(nn.Linear, getattr(head, name)) for head in wrapper.heads]
            big.weight.copy_(torch.cat([h.weight for h in heads], dim=0))  # (h * head_dim, d_in)
            if qkv_bias:
                big.bias.copy_(torch.cat([h.bias for h in heads], dim=0))  # (h * head_dim,)
        split.out_proj.weight.copy_(torch.eye(num_heads * head_dim))
        split.out_proj.bias.zero_()
    return split.train(wrapper.training)
