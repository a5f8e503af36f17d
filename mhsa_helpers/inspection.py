"""Numbers that summarise what each attention head (注意力头) does (lessons 07 and 08).

* ``head_entropy(weights)`` -- the entropy (熵) of each head's attention rows, in nats, averaged
  over rows (and over the batch): 0 for a head whose every query looks at exactly one key, larger
  for heads that spread their attention. A uniform causal row i (i + 1 visible keys) has entropy
  log(i + 1), so the most a causal head can reach over T rows is mean_i log(i + 1), not log(T).
* ``uniform_causal_entropy(T)`` -- that maximum, to put a head's entropy on a scale.
* ``offset_attention(weights_or_model, k)`` -- the mean weight each head puts on the token ``k``
  positions back (lesson 08: a head that learned "look one token back").
* ``attention_share(weights, keys)`` -- the mean weight each head puts on the keys a bool
  (T_q, T_k) table marks for each query (lesson 12's ``lm.head_focus``: the previous character,
  the line start, the punctuation, the couplet partner), over the queries that have such a key.

``head_entropy`` and ``offset_attention`` take every weight tensor the attention classes return
with ``return_weights=True``, padded batches included: a row of zeros (a padded query that sees
no key) is no distribution, so it is *skipped* -- left out of the mean -- rather than counted as
entropy 0 or weight 0.

Entropy measures *how spread out* a head's attention is, not *how important* the head is: a sharp
head can be useless and a diffuse one essential. Lesson 07 shows it next to the heatmaps, never
instead of them.
"""

from __future__ import annotations

import math
from typing import cast

import torch
from torch import nn

from .validation import as_int, check_positive_int

__all__ = ["attention_share", "head_entropy", "offset_attention", "uniform_causal_entropy"]


def _check_weights(weights: object, *, square: bool = False) -> torch.Tensor:
    """Check attention weights (T_q, T_k), (h, T_q, T_k) or (b, h, T_q, T_k); return them detached.

    Metadata first (type, dtype, dimensions, empty), then the values (finite, non-negative).
    """
    if not isinstance(weights, torch.Tensor):
        raise TypeError(f"weights must be a torch.Tensor, got {type(weights).__name__}")
    if not weights.is_floating_point():
        raise TypeError(
            f"weights must have a floating-point dtype, got weights.dtype={weights.dtype}"
        )
    if weights.dim() not in (2, 3, 4) or (square and weights.shape[-1] != weights.shape[-2]):
        rows = "T, T" if square else "T_q, T_k"
        raise ValueError(
            f"weights must have shape ({rows}), (num_heads, {rows}) or "
            f"(batch, num_heads, {rows}), got weights.shape={tuple(weights.shape)}"
        )
    if weights.numel() == 0:
        raise ValueError(f"weights must not be empty, got weights.shape={tuple(weights.shape)}")
    weights = weights.detach()
    if weights.is_meta:
        return weights
    if not torch.isfinite(weights).all():
        raise ValueError("weights contain NaN or inf; attention weights must be finite")
    if (weights < 0).any():
        raise ValueError("weights contain negative values; attention weights are probabilities")
    return weights


def _mean_per_head(values: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """Mean of ``values`` ([b,] h, n) -- or (n,) for one head -- per head, over ``rows`` only.

    ``rows`` (bool, like ``values``) marks the rows that count; the others are skipped. With no
    row skipped, this is the plain mean.
    """
    dims = {1: (0,), 2: (1,), 3: (0, 2)}[values.dim()]
    if bool(rows.all()):
        return values.mean(dim=dims).reshape(-1)  # (h,)
    kept = rows.sum(dim=dims)  # (h,)
    if bool((kept == 0).any()):
        raise ValueError(
            "every row of weights is zero (queries that see no key, e.g. a batch of padding "
            "only): there is no attention to measure"
        )
    return ((values * rows).sum(dim=dims) / kept).reshape(-1)  # (h,)


def head_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Mean row entropy in nats per head: tensor (num_heads,).

    Args:
        weights: attention weights (batch, num_heads, T_q, T_k), (num_heads, T_q, T_k) or one
            head's (T_q, T_k), each row a probability distribution (non-negative, sums to 1) --
            e.g. what ``MultiHeadAttention(..., return_weights=True)`` returns. 3-D weights are
            read as (num_heads, T_q, T_k): the (b, T, T) weights of a one-head class
            (``CausalAttention``) give one value per sequence; ``weights[:, None]`` gives one.

    Each row's entropy is ``-sum_j w_j log w_j`` with ``0 log 0 = 0`` (``torch.special.xlogy``),
    so the masked zeros of a causal row contribute nothing and no ``+ 1e-9`` fudge is needed.
    The result is the mean over rows (and over the batch for 4-D input), in the input's dtype.

    Padded batches: a row of zeros -- a query that sees no key (left padding + causal mask), for
    which the classes return zero weights -- is no distribution and is *skipped*: the mean runs
    over the other rows only. If every row is zero, there is nothing to average: ``ValueError``.

    Raises:
        TypeError: ``weights`` is not a floating-point tensor.
        ValueError: wrong number of dimensions, an empty dimension, negative or non-finite values,
            a row that sums neither to 1 (within 1e-3, or 4 eps of a half-precision dtype) nor
            to 0 (the message names the first such row), or no row that sums to 1.
            Its "entropy" would be meaningless, even negative for rows summing to more than 1.
    """
    weights = _check_weights(weights)  # ([b,] [h,] T_q, T_k)
    row_sums = weights.sum(dim=-1, dtype=torch.float64)  # ([b,] [h,] T_q)
    tolerance = max(1e-3, 4 * torch.finfo(weights.dtype).eps)  # bfloat16 rounds to ~3 digits
    rows = (weights != 0).any(dim=-1)  # False for the zero row of a query that sees no key
    off = ((row_sums - 1).abs() > tolerance) & rows
    if off.any():
        first = tuple(int(i) for i in off.nonzero()[0])
        raise ValueError(
            f"every row of weights must sum to 1 (a probability distribution) or be all zero "
            f"(a query that sees no key), but row weights[{', '.join(map(str, first))}] sums "
            f"to {float(row_sums[first]):.4g}; pass softmax weights, e.g. from "
            "MultiHeadAttention(..., return_weights=True)"
        )
    row_entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)  # ([b,] [h,] T_q)
    return _mean_per_head(row_entropy, rows)  # (h,)


def offset_attention(
    weights_or_model: torch.Tensor | nn.Module,
    k: int,
    ids: torch.Tensor | None = None,
) -> torch.Tensor:
    """Mean weight each head puts on the token ``k`` positions back: tensor (num_heads,).

    Args:
        weights_or_model: attention weights (T, T), (h, T, T) or (b, h, T, T), or a
            ``TinyAttentionLM`` (then its weights on ``ids`` are used), or a ``CharTransformer``
            (lesson 12; then the result is (num_layers, num_heads), one row per block).
        k: the offset, 0 <= k < T (0 is the token itself, 1 the previous token, ...).
        ids: (b, T) token ids for a model; default: 256 random sequences of full length drawn
            from a generator seeded with 0 (the same every call).

    Returns the mean of ``weights[..., t, t - k]`` over the batch and over queries ``t >= k``.
    A query whose row is all zero (a padded query that sees no key) is skipped, as in
    ``head_entropy``.
    """
    k = as_int("k", k)
    if isinstance(weights_or_model, nn.Module) and hasattr(weights_or_model, "vocab_size"):
        model = weights_or_model
        if ids is None:
            vocab_size, context_length = (
                cast(int, model.vocab_size),
                cast(int, model.context_length),
            )
            generator = torch.Generator().manual_seed(0)
            ids = torch.randint(0, vocab_size, (256, context_length), generator=generator)
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                _, weights = model(ids, return_weights=True)  # (b, [L,] h, T, T)
        finally:  # the caller's mode, also after the model's own error (bad ids)
            model.train(was_training)
        if not isinstance(weights, torch.Tensor) or weights.dim() not in (4, 5):
            raise TypeError(
                f"offset_attention takes a TinyAttentionLM or a CharTransformer, got a "
                f"{type(model).__name__} whose weights are not (b, h, T, T) or (b, L, h, T, T)"
            )
        if weights.dim() == 5:  # a CharTransformer: (b, L, h, T, T), one row per block
            layers = weights.shape[1]
            return offset_attention(weights.flatten(1, 2), k).reshape(layers, -1)  # (L, h)
    elif isinstance(weights_or_model, torch.Tensor):
        if ids is not None:
            raise ValueError("ids is only used with a model; got weights and ids")
        weights = weights_or_model
    else:
        raise TypeError(
            "offset_attention expects attention weights (a torch.Tensor) or a TinyAttentionLM, "
            f"got {type(weights_or_model).__name__}"
        )
    weights = _check_weights(weights, square=True)
    while weights.dim() < 4:
        weights = weights.unsqueeze(0)  # (b, h, T, T)
    num_tokens = weights.shape[-1]
    if not 0 <= k < num_tokens:
        raise ValueError(f"k must be in [0, {num_tokens}) for T={num_tokens}, got k={k}")
    diagonal = torch.diagonal(weights, offset=-k, dim1=-2, dim2=-1)  # (b, h, T - k)
    if weights.is_meta:
        return diagonal.mean(dim=(0, 2))  # (h,)
    rows = (weights[..., k:, :] != 0).any(dim=-1)  # (b, h, T - k): the queries t >= k
    return _mean_per_head(diagonal, rows)  # (h,)


def uniform_causal_entropy(num_tokens: int) -> float:
    """Entropy of a causal head that spreads evenly: mean over i < T of log(i + 1), in nats."""
    num_tokens = check_positive_int("num_tokens", num_tokens)
    return sum(math.log(i + 1) for i in range(num_tokens)) / num_tokens


def attention_share(weights: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """Mean weight on the keys ``keys`` marks, per head: tensor ``weights.shape[:-2]``.

    Args:
        weights: attention weights (..., T_q, T_k), e.g. (num_layers, num_heads, T, T).
        keys: bool (T_q, T_k): ``keys[t, j]`` is True where key j counts for query t (the
            previous character, the newline that starts t's line, ...).

    For each query, the weight on its marked keys is summed; the result is the mean over the
    queries that have at least one marked key (the others are skipped). NaN everywhere when no
    query has one (the category does not occur in the text).
    """
    if not isinstance(weights, torch.Tensor) or not weights.is_floating_point():
        raise TypeError("weights must be a floating-point torch.Tensor")
    if not isinstance(keys, torch.Tensor) or keys.dtype != torch.bool:
        raise TypeError("keys must be a bool torch.Tensor (T_q, T_k), True where a key counts")
    if weights.dim() < 2 or keys.shape != weights.shape[-2:]:
        raise ValueError(
            f"keys must have shape (T_q, T_k) = {tuple(weights.shape[-2:])} of the weights, got "
            f"keys.shape={tuple(keys.shape)}, weights.shape={tuple(weights.shape)}"
        )
    rows = keys.any(dim=-1)  # (T_q,): queries that have a marked key
    if not rows.any():
        return torch.full(weights.shape[:-2], float("nan"))
    per_query = (weights * keys).sum(dim=-1)[..., rows]  # (..., n_rows)
    return per_query.mean(dim=-1)  # weights.shape[:-2]
