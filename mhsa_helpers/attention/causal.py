"""Causal attention (因果注意力): the book's single-head class, section 3.5.3.

``CausalAttention``: batched input (b, T, d_in), a causal mask registered as a buffer for
``context_length`` (``attention_mask`` takes its top-left (T, T) block), dropout on the attention
weights. Its steps are the multi-head classes' steps with one head and no ``out_proj``: the checks
of ``begin_forward``, three projections, and the attention core ``functional.attend``.
"""

from __future__ import annotations

import torch
from torch import nn

from ..validation import check_flag
from .base import CausalSelfAttentionBase
from .functional import attend

__all__ = ["CausalAttention", "CausalSelfAttentionBase"]


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
        self.begin_forward(x, key_padding_mask, return_weights)
        context_vec, attn_weights = self.forward_unchecked(x, key_padding_mask)  # (b, T, d_out)
        return (context_vec, attn_weights) if return_weights else context_vec

    def forward_unchecked(
        self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``forward`` after its checks: (b, T, d_in) -> context (b, T, d_out), weights (b, T, T).

        ``MultiHeadAttentionWrapper`` calls it for each head, having checked its input once.
        """
        keys = self.W_key(x)  # (b, T, d_out)
        queries = self.W_query(x)  # (b, T, d_out)
        values = self.W_value(x)  # (b, T, d_out)
        context_vec, attn_weights = attend(
            queries,
            keys,
            values,
            causal=self.mask,
            key_padding_mask=key_padding_mask,
            dropout=self.dropout,
        )  # (b, T, d_out), (b, T, T)
        assert attn_weights is not None  # the eager backend returns them
        return context_vec, attn_weights

    def extra_repr(self) -> str:
        return f"d_in={self.d_in}, d_out={self.d_out}, context_length={self.context_length}"
