"""Self-attention with trainable weights (自注意力, 可训练权重), book section 3.4.

Two versions of the same idea, for one unbatched sequence ``x`` of shape (num_tokens, d_in) -- the
book's use -- or a batch (b, num_tokens, d_in):

* ``SelfAttentionV1`` keeps W_query, W_key, W_value as raw ``nn.Parameter(torch.rand(d_in, d_out))``
  matrices, exactly as the step-by-step calculation does, so ``torch.manual_seed(123)`` gives the
  book's context_vector_2 = [0.3061, 0.8210].
* ``SelfAttentionV2`` uses ``nn.Linear`` layers (better initialisation, optional bias). An
  ``nn.Linear`` stores the *transpose* of V1's matrix: ``linear.weight == W.T``.

The two differ only in how they compute keys, queries and values (``project``); the checks and the
attention itself (``forward``, in ``_SelfAttention``) are shared.
"""

from __future__ import annotations

import torch
from torch import nn

from ..validation import check_flag, check_positive_int
from .base import AttentionModule
from .functional import attend

__all__ = ["SelfAttentionV1", "SelfAttentionV2"]


class _SelfAttention(AttentionModule):
    """What V1 and V2 share: ``forward`` (checks, then attention); subclasses define ``project``."""

    input_ndim = (2, 3)  # one sequence (T, d_in), the book's use, or a batch (b, T, d_in)
    d_out: int

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(..., T, d_in) -> keys, queries, values, each (..., T, d_out)."""
        raise NotImplementedError

    def forward(
        self,
        x: torch.Tensor,
        *,
        key_padding_mask: torch.Tensor | None = None,
        return_weights: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Return context vectors, or ``(context, weights)`` if ``return_weights``.

        Args:
            x: (num_tokens, d_in) for one sequence (the book's use), or (b, num_tokens, d_in).
            key_padding_mask: bool, True at padding positions (the keys no token may attend to),
                as in ``torch.nn.MultiheadAttention``: (num_tokens,) for unbatched ``x``,
                (b, num_tokens) for batched ``x``; None when nothing is padded.
            return_weights: also return the attention weights.

        Returns:
            context (..., num_tokens, d_out); weights (..., num_tokens, num_tokens), zero on
            padded keys, each row summing to 1 over the real keys. No mask hides the future here,
            so a row is all zero only if every key of its sequence is padding.
        """
        self.begin_forward(x, key_padding_mask, return_weights)
        keys, queries, values = self.project(x)  # (..., T, d_out) each
        # scores = queries @ keys.T, softmax(scores / sqrt(d_out)), weights @ values:
        context_vec, attn_weights = attend(
            queries, keys, values, key_padding_mask=key_padding_mask
        )  # (..., T, d_out), (..., T, T)
        if not return_weights:
            return context_vec
        assert attn_weights is not None  # the eager backend returns them
        return context_vec, attn_weights


class SelfAttentionV1(_SelfAttention):
    """Scaled dot-product self-attention with raw parameter matrices.

    Input (num_tokens, d_in) -> output (num_tokens, d_out) (a leading batch dimension b is
    allowed). No causal mask, no dropout; an optional ``key_padding_mask`` hides padded keys.
    NaN or inf input raises a ``ValueError`` naming the first bad token.
    """

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.d_in = check_positive_int("d_in", d_in)
        self.d_out = check_positive_int("d_out", d_out)
        # Book order: query, key, value -- the seed then reproduces the book's numbers.
        self.W_query = nn.Parameter(torch.rand(self.d_in, self.d_out))
        self.W_key = nn.Parameter(torch.rand(self.d_in, self.d_out))
        self.W_value = nn.Parameter(torch.rand(self.d_in, self.d_out))

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(..., T, d_in) -> keys, queries, values, each (..., T, d_out): ``x @ W``."""
        keys = x @ self.W_key  # (..., T, d_out)
        queries = x @ self.W_query  # (..., T, d_out)
        values = x @ self.W_value  # (..., T, d_out)
        return keys, queries, values

    def extra_repr(self) -> str:
        return f"d_in={self.d_in}, d_out={self.d_out}"


class SelfAttentionV2(_SelfAttention):
    """Scaled dot-product self-attention with ``nn.Linear`` projections.

    Input (num_tokens, d_in) -> output (num_tokens, d_out) (a leading batch dimension b is
    allowed). No causal mask, no dropout; an optional ``key_padding_mask`` hides padded keys.
    NaN or inf input raises a ``ValueError`` naming the first bad token.
    """

    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False):
        super().__init__()
        self.d_in = check_positive_int("d_in", d_in)
        self.d_out = check_positive_int("d_out", d_out)
        check_flag("qkv_bias", qkv_bias)
        self.W_query = nn.Linear(self.d_in, self.d_out, bias=qkv_bias)
        self.W_key = nn.Linear(self.d_in, self.d_out, bias=qkv_bias)
        self.W_value = nn.Linear(self.d_in, self.d_out, bias=qkv_bias)

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(..., T, d_in) -> keys, queries, values, each (..., T, d_out): ``W(x)``."""
        keys = self.W_key(x)  # (..., T, d_out)
        queries = self.W_query(x)  # (..., T, d_out)
        values = self.W_value(x)  # (..., T, d_out)
        return keys, queries, values
