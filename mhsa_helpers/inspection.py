"""Numbers that summarise what each attention head (注意力头) does (lesson 07).

* ``head_entropy(weights)`` -- the entropy (熵) of each head's attention rows, in nats, averaged
  over rows (and over the batch): 0 for a head whose every query looks at exactly one key, larger
  for heads that spread their attention. A uniform causal row i (i + 1 visible keys) has entropy
  log(i + 1), so the most a causal head can reach over T rows is mean_i log(i + 1), not log(T).
* ``uniform_causal_entropy(T)`` -- that maximum, to put a head's entropy on a scale.

Entropy measures *how spread out* a head's attention is, not *how important* the head is: a sharp
head can be useless and a diffuse one essential. Lesson 07 shows it next to the heatmaps, never
instead of them.
"""

from __future__ import annotations

import math

import torch

from .attention.validation import check_positive_int

__all__ = ["head_entropy", "uniform_causal_entropy"]


def head_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Mean row entropy in nats per head: tensor (num_heads,).

    Args:
        weights: attention weights (num_heads, T_q, T_k) or (batch, num_heads, T_q, T_k), each row
            a probability distribution (non-negative, sums to 1), e.g. the weights returned by
            ``MultiHeadAttention(..., return_weights=True)``.

    Each row's entropy is ``-sum_j w_j log w_j`` with ``0 log 0 = 0`` (``torch.special.xlogy``),
    so the masked zeros of a causal row contribute nothing and no ``+ 1e-9`` fudge is needed.
    The result is the mean over rows (and over the batch for 4-D input), in the input's dtype.

    Raises:
        TypeError: ``weights`` is not a floating-point tensor.
        ValueError: wrong number of dimensions, an empty dimension, negative or non-finite values,
            or a row that does not sum to 1 (within 1e-3, or 4 eps of a half-precision dtype;
            the message names the first such row).
            Its "entropy" would be meaningless, even negative for rows summing to more than 1.
    """
    if not isinstance(weights, torch.Tensor):
        raise TypeError(f"weights must be a torch.Tensor, got {type(weights).__name__}")
    if not weights.is_floating_point():
        raise TypeError(
            f"weights must have a floating-point dtype, got weights.dtype={weights.dtype}"
        )
    if weights.dim() not in (3, 4):
        raise ValueError(
            "weights must have shape (num_heads, T_q, T_k) or (batch, num_heads, T_q, T_k), "
            f"got weights.shape={tuple(weights.shape)}"
        )
    if weights.numel() == 0:
        raise ValueError(f"weights must not be empty, got weights.shape={tuple(weights.shape)}")
    weights = weights.detach()
    if not torch.isfinite(weights).all():
        raise ValueError("weights contain NaN or inf; attention weights must be finite")
    if (weights < 0).any():
        raise ValueError("weights contain negative values; attention weights are probabilities")
    row_sums = weights.sum(dim=-1, dtype=torch.float64)  # (..., h, T_q)
    tolerance = max(1e-3, 4 * torch.finfo(weights.dtype).eps)  # bfloat16 rounds to ~3 digits
    off = (row_sums - 1).abs() > tolerance
    if off.any():
        first = tuple(int(i) for i in off.nonzero()[0])
        raise ValueError(
            f"every row of weights must sum to 1 (a probability distribution), but row "
            f"weights[{', '.join(map(str, first))}] sums to {float(row_sums[first]):.4g}; pass "
            "softmax weights, e.g. from MultiHeadAttention(..., return_weights=True)"
        )
    row_entropy = -torch.special.xlogy(weights, weights).sum(dim=-1)  # (..., h, T_q)
    if weights.dim() == 4:
        return row_entropy.mean(dim=(0, 2))  # (h,)
    return row_entropy.mean(dim=1)  # (h,)


def uniform_causal_entropy(num_tokens: int) -> float:
    """Entropy of a causal head that spreads evenly: mean over i < T of log(i + 1), in nats."""
    num_tokens = check_positive_int("num_tokens", num_tokens)
    return sum(math.log(i + 1) for i in range(num_tokens)) / num_tokens
