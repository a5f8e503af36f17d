"""The input check the figures of ``heads`` and ``production`` share."""

from __future__ import annotations

import torch

__all__ = ["float_tensor"]


def float_tensor(name: str, value: object, ndim: int = 2) -> torch.Tensor:
    """``value`` as a detached float CPU tensor with ``ndim`` dimensions, else a clear error."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if value.dim() != ndim:
        raise ValueError(
            f"{name} must have {ndim} dimensions, got {name}.shape={tuple(value.shape)}"
        )
    if value.is_meta:
        raise ValueError(f"{name} is a meta tensor (a shape without values); it cannot be drawn")
    if value.numel() == 0:
        raise ValueError(f"{name} is empty ({name}.shape={tuple(value.shape)}); nothing to draw")
    values = value.detach().float().cpu()
    if not bool(torch.isfinite(values).all()):
        raise ValueError(f"{name} holds NaN or inf; only finite values can be drawn")
    return values
