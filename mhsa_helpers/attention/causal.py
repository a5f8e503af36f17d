"""Causal attention (因果注意力) and the base class every causal multi-head variant shares.

``CausalAttention`` is the book's single-head class (section 3.5.3): batched input (b, T, d_in),
a causal mask registered as a buffer for ``context_length`` and sliced to (T, T), dropout on the
attention weights.

``CausalSelfAttentionBase`` holds what the multi-head classes have in common -- argument checks,
the ``mask`` buffer and the input check -- but creates *no* parameters: each subclass creates its
layers itself, in the book's order (W_query, W_key, W_value, then out_proj), so that
``torch.manual_seed(123)`` reproduces the book's numbers.
"""

from __future__ import annotations

import torch
from torch import nn

from .functional import causal_mask, masked_attention
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
    mask: torch.Tensor  # (context_length, context_length) buffer, 1 above the diagonal

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
            finite=self.check_finite,
        )

    def causal_mask(self, num_tokens: int) -> torch.Tensor:
        """Bool (num_tokens, num_tokens), True above the diagonal (positions to hide)."""
        return self.mask.bool()[:num_tokens, :num_tokens]

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
        self.check_input(x)
        padding = check_forward_options(x, key_padding_mask, return_weights)
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
