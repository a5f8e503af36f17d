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

``causal_attention`` is the causal-mask step every multi-head class runs: ``n`` new queries over
``T_k`` keys (the last ``n`` of them new, the rest from a KV cache), either explicitly through
``masked_attention`` (which returns the weights) or through torch's fused
``scaled_dot_product_attention`` (SDPA, which never stores them).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .validation import check_attention_inputs, check_merge, check_positive_int, check_split

__all__ = [
    "causal_attention",
    "causal_mask",
    "hidden_positions",
    "masked_attention",
    "merge_heads",
    "split_heads",
]


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
    check_attention_inputs(queries, keys, values, mask, dropout)
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


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(b, T, num_heads * head_dim) -> (b, num_heads, T, head_dim)."""
    check_split(x, num_heads)
    b, num_tokens, width = x.shape
    x = x.view(b, num_tokens, num_heads, width // num_heads)  # (b, T, h, head_dim)
    return x.transpose(1, 2)  # (b, h, T, head_dim)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(b, num_heads, T, head_dim) -> (b, T, num_heads * head_dim), heads side by side."""
    check_merge(x)
    b, num_heads, num_tokens, head_dim = x.shape
    x = x.transpose(1, 2)  # (b, T, h, head_dim)
    return x.contiguous().view(b, num_tokens, num_heads * head_dim)  # (b, T, d_out)
