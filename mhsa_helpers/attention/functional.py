"""The attention core: one function every attention class in the course goes through.

Each class in ``mhsa_helpers`` teaches one idea (separate heads, one split matrix, a fused QKV
projection, grouped K/V, cross-attention ...). What happens after the projections -- the mask,
the scaled softmax, dropout, the weighted sum of values -- is the same everywhere, so it lives
here once, in ``attend``, written in the book's order of operations so that the book's printed
numbers are reproduced bit for bit:

    scores = Q @ K^T                       # (..., T_q, T_k)
    scores.masked_fill_(hidden, -inf)      # future and padded keys -> -inf (因果 / 填充)
    weights = softmax(scores / sqrt(d_k))  # each row sums to 1
    weights = dropout(weights)             # training only
    context = weights @ V                  # (..., T_q, d_v)

``attend`` builds the mask with ``attention_mask`` (causal, padding, KV-cache offset), guards the
rows that see no key, and runs one of two implementations from a small table (``BACKENDS``, as in
Hugging Face's ``ALL_ATTENTION_FUNCTIONS``): ``"eager"`` -- the lines above, which also return
the weights -- or ``"sdpa"`` -- torch's fused ``F.scaled_dot_product_attention``, which never
stores them. ``attend`` checks nothing: the classes check their arguments once, in ``forward``,
before any matmul. ``masked_attention`` is the public, checked entry point to the same core.

Padding (填充): a batch of sequences of different lengths is padded to one length T. A
``key_padding_mask`` (bool (b, T_k), True at padding positions -- ``torch.nn.MultiheadAttention``'s
convention) hides the padded keys from every query, on top of the causal mask. A query that is left
with no visible key at all (left padding plus the causal mask hides every key of the first padded
rows) would get softmax([-inf, ..., -inf]) = NaN; ``attend`` leaves such a row unmasked (a finite
softmax) and then sets its weights and its context vector to zero, so no NaN reaches the output or
the gradients.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from ..validation import check_attention_inputs, check_merge, check_positive_int, check_split

__all__ = [
    "BACKENDS",
    "attend",
    "attention_mask",
    "causal_mask",
    "masked_attention",
    "merge_heads",
    "split_heads",
]


def causal_mask(context_length: int) -> torch.Tensor:
    """Float (context_length, context_length) matrix with 1 above the diagonal, as in the book.

    A 1 marks a *future* position that a token must not attend to. The classes register it as a
    buffer named ``mask`` (so it follows ``.to(device)`` and is saved in ``state_dict``) and
    ``attention_mask`` slices the rows it needs from it.
    """
    context_length = check_positive_int("context_length", context_length)
    return torch.triu(torch.ones(context_length, context_length), diagonal=1)


def attention_mask(
    num_queries: int,
    num_keys: int,
    *,
    causal: torch.Tensor | None = None,
    mask: torch.Tensor | None = None,
    key_padding_mask: torch.Tensor | None = None,
    scores_ndim: int = 4,
) -> torch.Tensor | None:
    """The keys each query may not see: bool, True = hidden; None when nothing is hidden.

    Args:
        num_queries, num_keys: T_q and T_k, the last two dimensions of the scores.
        causal: a causal-mask buffer (1 or True above the diagonal, at least T_k x T_k). The T_q
            queries are the *last* T_q of the T_k positions (with a KV cache, the first
            T_k - T_q keys are cached), so query i sees keys 0 .. T_k - T_q + i: rows
            T_k - T_q .. T_k - 1 of the buffer. A single query (the next token) sees every key.
        mask: any other bool mask broadcastable to the scores, True = hidden.
        key_padding_mask: bool (b, T_k), True at padding positions; (T_k,) for unbatched scores.
        scores_ndim: number of dimensions of the scores: 2 (T_q, T_k), 3 (b, T_q, T_k) or
            4 (b, h, T_q, T_k).

    Returns:
        bool, broadcastable to the scores ((T_q, T_k), or (b, 1.., T_q or 1, T_k) with padding).
    """
    hidden = mask
    if causal is not None and num_queries > 1:
        offset = num_keys - num_queries  # tokens already in the KV cache
        rows = causal[offset:num_keys, :num_keys].bool()  # (T_q, T_k)
        hidden = rows if hidden is None else hidden | rows
    if key_padding_mask is not None:
        padding = key_padding_mask  # (T_k,) broadcasts over the rows
        if key_padding_mask.dim() == 2:
            batch = key_padding_mask.shape[0]
            padding = key_padding_mask.view(batch, *([1] * (scores_ndim - 2)), num_keys)
        hidden = padding if hidden is None else hidden | padding  # (b, 1.., T_q, T_k)
    return hidden


def eager_attention(
    queries: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    hidden: torch.Tensor | None,
    dropout: nn.Module | None,
    is_causal: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The book's lines: (..., T_q, d_v) context and (..., T_q, T_k) weights before dropout.

    ``is_causal`` is only a hint for SDPA; here ``hidden`` says everything.
    """
    attn_scores = queries @ keys.transpose(-2, -1)  # (..., T_q, T_k)
    if hidden is not None:
        attn_scores = attn_scores.masked_fill(hidden, -torch.inf)
    attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)  # (..., T_q, T_k)
    dropped = dropout(attn_weights) if dropout is not None else attn_weights
    context = dropped @ values  # (..., T_q, d_v)
    return context, attn_weights


def sdpa_attention(
    queries: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    hidden: torch.Tensor | None,
    dropout: nn.Module | None,
    is_causal: bool,
) -> tuple[torch.Tensor, None]:
    """Torch's fused kernel; never stores the weights (returns None for them).

    ``is_causal``: the square causal mask, which SDPA applies itself (aligned top-left, the
    fastest kernels; ``attend`` then passes no ``hidden``). Otherwise ``hidden`` goes in as a
    boolean ``attn_mask``, whose True means the opposite of ours: "may attend".
    """
    dropout_p = dropout.p if isinstance(dropout, nn.Dropout) and dropout.training else 0.0
    if is_causal:
        context = F.scaled_dot_product_attention(
            queries, keys, values, dropout_p=dropout_p, is_causal=True
        )
    else:
        context = F.scaled_dot_product_attention(
            queries,
            keys,
            values,
            attn_mask=None if hidden is None else ~hidden,
            dropout_p=dropout_p,
        )
    return context, None  # (..., T_q, d_v)


Backend = Callable[..., tuple[torch.Tensor, torch.Tensor | None]]
# name -> implementation; every one takes (queries, keys, values, hidden, dropout, is_causal).
BACKENDS: dict[str, Backend] = {"eager": eager_attention, "sdpa": sdpa_attention}


def attend(
    queries: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    *,
    causal: torch.Tensor | None = None,
    mask: torch.Tensor | None = None,
    key_padding_mask: torch.Tensor | None = None,
    dropout: nn.Module | None = None,
    backend: str = "eager",
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Attention of projected queries over projected keys and values: the one core.

    Args:
        queries: (..., T_q, d_k); with heads (b, h, T_q, head_dim).
        keys, values: (..., T_k, d_k) and (..., T_k, d_v). Grouped K/V heads (b, g, T_k, hd),
            g dividing h, are shared: K/V head j serves query heads j*h/g .. (j+1)*h/g - 1.
        causal: a causal-mask buffer (see ``attention_mask``): the queries are the last T_q of
            the T_k positions; None for no causal mask (cross-attention, ``SelfAttentionV1/V2``).
        mask: any other bool mask, True = hidden (``masked_attention``'s ``mask``).
        key_padding_mask: bool (b, T_k), True at padded keys ((T_k,) for unbatched input).
        dropout: an ``nn.Dropout`` for the weights (active in training mode only), or None.
        backend: a key of ``BACKENDS``: ``"eager"`` (returns the weights) or ``"sdpa"``.

    Returns:
        ``(context, weights)``: context (..., T_q, d_v); weights (..., T_q, T_k) after softmax
        and *before* dropout (so inspected weights are the same in train and eval mode), or None
        from ``"sdpa"``. Weights are zero on hidden keys and each row sums to 1, except a row
        whose keys are *all* hidden: its weights and its context vector are zero (no NaN).
    """
    if queries.dim() == keys.dim() == 4 and keys.shape[1] != queries.shape[1]:  # grouped K/V
        group_size = queries.shape[1] // keys.shape[1]  # query heads per K/V head
        keys = keys.repeat_interleave(group_size, dim=1)  # (b, h, T_k, head_dim)
        values = values.repeat_interleave(group_size, dim=1)  # (b, h, T_k, head_dim)
    num_queries, num_keys = queries.shape[-2], keys.shape[-2]
    # The square causal block (no cache, no padding, no other mask): SDPA applies it itself
    # (is_causal=True, aligned top-left, its fastest kernels), so no mask tensor is built for it.
    is_causal = (
        causal is not None
        and mask is None
        and key_padding_mask is None
        and 1 < num_queries == num_keys
    )
    if is_causal and backend == "sdpa":  # training's fast path, as nanoGPT's attention
        return BACKENDS[backend](queries, keys, values, None, dropout, is_causal)
    scores_ndim = max(queries.dim(), keys.dim())
    hidden = attention_mask(
        num_queries,
        num_keys,
        causal=causal,
        mask=mask,
        key_padding_mask=key_padding_mask,
        scores_ndim=scores_ndim,
    )  # (..., T_q, T_k) or None
    # Only padding or an explicit mask can hide every key of a row (a causal row always keeps
    # its diagonal). Such rows are left unmasked -- a finite softmax, so no NaN, not even in the
    # gradient -- and set to zero afterwards.
    no_key = None
    if hidden is not None and (key_padding_mask is not None or mask is not None):
        no_key = hidden.all(dim=-1, keepdim=True)  # (..., T_q, 1): nothing left to attend to
        hidden = hidden & ~no_key
    context, weights = BACKENDS[backend](queries, keys, values, hidden, dropout, is_causal)
    if no_key is not None:
        context = context.masked_fill(no_key, 0.0)  # (..., T_q, d_v)
        weights = None if weights is None else weights.masked_fill(no_key, 0.0)
    return context, weights


def masked_attention(
    queries: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout: nn.Module | None = None,
    *,
    key_padding_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention, explicit version, with every argument checked.

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

    Raises ``TypeError``/``ValueError`` naming the argument (a float or integer mask, a mask of the
    wrong shape or batch size, tensors that do not fit together) before any matmul.
    """
    key_padding_mask = check_attention_inputs(
        queries, keys, values, mask, dropout, key_padding_mask
    )
    context, weights = attend(
        queries, keys, values, mask=mask, key_padding_mask=key_padding_mask, dropout=dropout
    )
    assert weights is not None  # the eager backend always returns them
    return context, weights


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
