"""Self-attention with trainable weights (自注意力, 可训练权重), book section 3.4.

Two versions of the same idea, for one unbatched sequence ``x`` of shape (num_tokens, d_in):

* ``SelfAttentionV1`` keeps W_query, W_key, W_value as raw ``nn.Parameter(torch.rand(d_in, d_out))``
  matrices, exactly as the step-by-step calculation does, so ``torch.manual_seed(123)`` gives the
  book's context_vector_2 = [0.3061, 0.8210].
* ``SelfAttentionV2`` uses ``nn.Linear`` layers (better initialisation, optional bias). An
  ``nn.Linear`` stores the *transpose* of V1's matrix: ``linear.weight == W.T``.
"""

from __future__ import annotations

import torch
from torch import nn

from .validation import check_flag, check_input, check_positive_int

__all__ = ["SelfAttentionV1", "SelfAttentionV2"]


class SelfAttentionV1(nn.Module):
    """Scaled dot-product self-attention with raw parameter matrices.

    Input (num_tokens, d_in) -> output (num_tokens, d_out). No mask, no dropout. NaN or inf
    input raises a ``ValueError`` naming the first bad token.
    """

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.d_in = check_positive_int("d_in", d_in)
        self.d_out = check_positive_int("d_out", d_out)
        # Book order: query, key, value -- the seed then reproduces the book's numbers.
        self.W_query = nn.Parameter(torch.rand(self.d_in, self.d_out))
        self.W_key = nn.Parameter(torch.rand(self.d_in, self.d_out))
        self.W_value = nn.Parameter(torch.rand(self.d_in, self.d_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_input(x, d_in=self.d_in, ndim=2, dtype=self.W_query.dtype, finite=True)
        keys = x @ self.W_key  # (T, d_out)
        queries = x @ self.W_query  # (T, d_out)
        values = x @ self.W_value  # (T, d_out)
        attn_scores = queries @ keys.T  # (T, T)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)  # (T, T)
        return attn_weights @ values  # (T, d_out)

    def extra_repr(self) -> str:
        return f"d_in={self.d_in}, d_out={self.d_out}"


class SelfAttentionV2(nn.Module):
    """Scaled dot-product self-attention with ``nn.Linear`` projections.

    Input (num_tokens, d_in) -> output (num_tokens, d_out). No mask, no dropout. NaN or inf
    input raises a ``ValueError`` naming the first bad token.
    """

    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False):
        super().__init__()
        self.d_in = check_positive_int("d_in", d_in)
        self.d_out = check_positive_int("d_out", d_out)
        check_flag("qkv_bias", qkv_bias)
        self.W_query = nn.Linear(self.d_in, self.d_out, bias=qkv_bias)
        self.W_key = nn.Linear(self.d_in, self.d_out, bias=qkv_bias)
        self.W_value = nn.Linear(self.d_in, self.d_out, bias=qkv_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_input(x, d_in=self.d_in, ndim=2, dtype=self.W_query.weight.dtype, finite=True)
        keys = self.W_key(x)  # (T, d_out)
        queries = self.W_query(x)  # (T, d_out)
        values = self.W_value(x)  # (T, d_out)
        attn_scores = queries @ keys.T  # (T, T)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)  # (T, T)
        return attn_weights @ values  # (T, d_out)
