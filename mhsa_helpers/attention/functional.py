"""The few tensor operations every attention class in the course shares.

Each class in ``mhsa_helpers`` teaches one idea (separate heads, one split matrix, a fused QKV
projection, grouped K/V ...). The arithmetic underneath -- scores, causal mask, scaled softmax,
dropout, weighted sum of values -- is the same everywhere, so it lives here once, written in the
book's order of operations so that the book's printed numbers are reproduced bit for bit:

    scores = Q @ K^T                       # (..., T_q, T_k)
    scores.masked_fill_(mask, -inf)        # future positions -> -inf (causal / 因果)
    weights = softmax(scores / sqrt(d_k))  # each row sums to 1
    weights = dropout(weights)             # training only
    context = weights @ V                  # (..., T_q, d_v)
"""

from __future__ import annotations

import torch
from torch import nn

from .validation import check_positive_int, check_split

__all__ = ["causal_mask", "masked_attention", "merge_heads", "split_heads"]


def causal_mask(context_length: int) -> torch.Tensor:
    """Float (context_length, context_length) matrix with 1 above the diagonal, as in the book.

    A 1 marks a *future* position that a token must not attend to. The classes register it as a
    buffer named ``mask`` (so it follows ``.to(device)`` and is saved in ``state_dict``) and slice
    the top-left (T, T) block in ``forward``.
    """
    context_length = check_positive_int("context_length", context_length)
    return torch.triu(torch.ones(context_length, context_length), diagonal=1)


def masked_attention(
    queries: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout: nn.Module | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention, explicit version.

    Args:
        queries: (..., T_q, d_k)
        keys: (..., T_k, d_k)
        values: (..., T_k, d_v)
        mask: bool (T_q, T_k), True where attention is *forbidden*; None for no mask.
        dropout: applied to the weights (an ``nn.Dropout``, active only in training mode).

    Returns:
        ``(context, weights)``: context (..., T_q, d_v); weights (..., T_q, T_k) after softmax and
        *before* dropout, so that inspected weights are the same in train and eval mode.
    """
    attn_scores = queries @ keys.transpose(-2, -1)  # (..., T_q, T_k)
    if mask is not None:
        attn_scores = attn_scores.masked_fill(mask, -torch.inf)
    attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)  # (..., T_q, T_k)
    dropped = dropout(attn_weights) if dropout is not None else attn_weights
    context = dropped @ values  # (..., T_q, d_v)
    return context, attn_weights


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(b, T, num_heads * head_dim) -> (b, num_heads, T, head_dim)."""
    check_split(x, num_heads)
    b, num_tokens, width = x.shape
    x = x.view(b, num_tokens, num_heads, width // num_heads)  # (b, T, h, head_dim)
    return x.transpose(1, 2)  # (b, h, T, head_dim)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(b, num_heads, T, head_dim) -> (b, T, num_heads * head_dim), heads side by side."""
    b, num_heads, num_tokens, head_dim = x.shape
    x = x.transpose(1, 2)  # (b, T, h, head_dim)
    return x.contiguous().view(b, num_tokens, num_heads * head_dim)  # (b, T, d_out)
