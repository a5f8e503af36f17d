"""``offset_attention``: how much weight each head puts on the token ``k`` positions back."""

from __future__ import annotations

import torch

from ..attention.validation import as_int
from .model import TinyAttentionLM

__all__ = ["offset_attention"]


def offset_attention(
    weights_or_model: torch.Tensor | TinyAttentionLM,
    k: int,
    ids: torch.Tensor | None = None,
) -> torch.Tensor:
    """Mean weight each head puts on the token ``k`` positions back: tensor (num_heads,).

    Args:
        weights_or_model: attention weights (h, T, T) or (b, h, T, T), or a ``TinyAttentionLM``
            (then its weights on ``ids`` are used).
        k: the offset, 0 <= k < T (0 is the token itself, 1 the previous token, ...).
        ids: (b, T) token ids for a model; default: 256 random sequences of full length drawn
            from a generator seeded with 0 (the same every call).

    Returns the mean of ``weights[..., t, t - k]`` over the batch and over queries ``t >= k``.
    """
    k = as_int("k", k)
    if isinstance(weights_or_model, TinyAttentionLM):
        model = weights_or_model
        if ids is None:
            generator = torch.Generator().manual_seed(0)
            ids = torch.randint(
                0, model.vocab_size, (256, model.context_length), generator=generator
            )
        was_training = model.training
        model.eval()
        with torch.no_grad():
            _, weights = model(ids, return_weights=True)  # (b, h, T, T)
        model.train(was_training)
    elif isinstance(weights_or_model, torch.Tensor):
        if ids is not None:
            raise ValueError("ids is only used with a model; got weights and ids")
        weights = weights_or_model
    else:
        raise TypeError(
            "offset_attention expects attention weights (a torch.Tensor) or a TinyAttentionLM, "
            f"got {type(weights_or_model).__name__}"
        )
    if not weights.is_floating_point():
        raise TypeError(f"weights must be floating point, got weights.dtype={weights.dtype}")
    if weights.dim() == 3:
        weights = weights.unsqueeze(0)  # (1, h, T, T)
    if weights.dim() != 4 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(
            "weights must have shape (num_heads, T, T) or (batch, num_heads, T, T), "
            f"got weights.shape={tuple(weights.shape)}"
        )
    if not weights.is_meta and not bool(torch.isfinite(weights.detach()).all()):
        raise ValueError("weights contain NaN or inf; attention weights must be finite")
    num_tokens = weights.shape[-1]
    if not 0 <= k < num_tokens:
        raise ValueError(f"k must be in [0, {num_tokens}) for T={num_tokens}, got k={k}")
    diagonal = torch.diagonal(weights.detach(), offset=-k, dim1=-2, dim2=-1)  # (b, h, T - k)
    return diagonal.mean(dim=(0, 2))  # (h,)
