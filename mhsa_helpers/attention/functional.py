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

Padding (填充): a batch of sequences of different lengths is padded to one length T. A
``key_padding_mask`` (bool (b, T_k), True at padding positions -- ``torch.nn.MultiheadAttention``'s
convention) hides the padded keys from every query, on top of the causal mask. A query that is left
with no visible key at all (left padding plus the causal mask hides every key of the first padded
rows) would get softmax([-inf, ..., -inf]) = NaN; here such a row gets weights of zero and a zero
context vector instead, and no NaN reaches the output or the gradients.
"""

from __future__ import annotations

import torch
from torch import nn

from .validation import check_positive_int, check_split

__all__ = ["causal_mask", "hidden_positions", "masked_attention", "merge_heads", "split_heads"]


def causal_mask(context_length: int) -> torch.Tensor:
    """Float (context_length, context_length) matrix with 1 above the diagonal, as in the book.

    A 1 marks a *future* position that a token must not attend to. The classes register it as a
    buffer named ``mask`` (so it follows ``.to(device)`` and is saved in ``state_dict``) and slice
    the top-left (T, T) block in ``forward``.
    """
    context_length = check_positive_int("context_length", context_length)
    return torch.triu(torch.ones(context_length, context_length), diagonal=1)


def hidden_positions(
    mask: torch.Tensor | None, key_padding_mask: torch.Tensor, scores_ndim: int
) -> torch.Tensor:
    """Combine a (T_q, T_k) mask and a key padding mask into one bool "hidden" mask.

    Args:
        mask: bool (T_q, T_k), True where attention is forbidden (the causal mask), or None.
        key_padding_mask: bool (b, T_k), True at padding positions; (T_k,) for unbatched input.
        scores_ndim: number of dimensions of the scores it will mask: 2 (T_q, T_k) unbatched,
            3 (b, T_q, T_k) one head, 4 (b, h, T_q, T_k) several heads.

    Returns:
        bool, broadcastable to the scores: (b, 1, ..., T_q or 1, T_k), True = hidden.
    """
    if key_padding_mask.dim() == 1:
        padding = key_padding_mask  # (T_k,) broadcasts over the rows
    else:
        if scores_ndim < 3:
            raise ValueError(
                "a (b, T_k) key_padding_mask needs batched scores (b, ..., T_q, T_k), got "
                f"{scores_ndim}-D scores; pass a (T_k,) mask for one unbatched sequence"
            )
        batch, num_keys = key_padding_mask.shape
        padding = key_padding_mask.view(batch, *([1] * (scores_ndim - 2)), num_keys)
    return padding if mask is None else padding | mask  # (b, 1.., T_q, T_k)


def masked_attention(
    queries: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout: nn.Module | None = None,
    *,
    key_padding_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention, explicit version.

    Args:
        queries: (..., T_q, d_k)
        keys: (..., T_k, d_k)
        values: (..., T_k, d_v)
        mask: bool (T_q, T_k), True where attention is *forbidden*; None for no mask.
        dropout: applied to the weights (an ``nn.Dropout``, active only in training mode).
        key_padding_mask: bool (b, T_k), True at padding positions (keys no query may see), as in
            ``torch.nn.MultiheadAttention``; (T_k,) for unbatched (T, d) inputs; None when no
            sequence is padded.

    Returns:
        ``(context, weights)``: context (..., T_q, d_v); weights (..., T_q, T_k) after softmax and
        *before* dropout, so that inspected weights are the same in train and eval mode. Weights
        are zero on hidden keys; each row sums to 1, except a row whose keys are *all* hidden:
        its weights are all zero and its context vector is zero (no NaN).
    """
    attn_scores = queries @ keys.transpose(-2, -1)  # (..., T_q, T_k)
    if key_padding_mask is None:
        if mask is not None:
            attn_scores = attn_scores.masked_fill(mask, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)  # (..., T_q, T_k)
    else:
        hidden = hidden_positions(mask, key_padding_mask, attn_scores.dim())  # (b, 1.., T_q, T_k)
        no_key = hidden.all(dim=-1, keepdim=True)  # (b, 1.., T_q, 1): nothing left to attend to
        # Leave such rows unmasked (a finite softmax, so no NaN, not even in the gradient), then
        # set their weights to zero.
        attn_scores = attn_scores.masked_fill(hidden & ~no_key, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = attn_weights.masked_fill(no_key, 0.0)  # (..., T_q, T_k)
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
