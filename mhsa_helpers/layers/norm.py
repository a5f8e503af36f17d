"""RMSNorm (均方根归一化): LayerNorm without the mean and without the bias.

LayerNorm centres each vector (subtracts its mean), divides by its standard deviation, then
scales and shifts it. RMSNorm (Zhang & Sennrich, 2019) only divides by the root mean square and
scales:

    RMSNorm(x) = x / sqrt(mean(x**2) + eps) * weight          # over the last dimension

What keeps training stable is the *size* of the vector, not its centre; dropping the mean saves one
reduction, and the bias is left to the layer that follows. Llama, Qwen, Mistral and Gemma use it.
The arithmetic is done in float32 and cast back (as Hugging Face's ``LlamaRMSNorm``), so bfloat16
input gets float32 statistics. ``torch.nn.RMSNorm`` computes the same function.
"""

from __future__ import annotations

import torch
from torch import nn

from ..validation import check_positive_int, check_real_in_range

__all__ = ["RMSNorm"]


class RMSNorm(nn.Module):
    """``x / sqrt(mean(x**2, -1) + eps) * weight``: (..., d) -> (..., d), ``weight`` (d,) ones.

    Args:
        normalized_shape: d, the width of the last dimension (the name ``torch.nn.RMSNorm`` uses).
        eps: added to the mean square before the square root (Llama: 1e-6), in [0, 1].
    """

    def __init__(self, normalized_shape: int, eps: float = 1e-6):
        super().__init__()
        self.normalized_shape = check_positive_int("normalized_shape", normalized_shape)
        self.eps = check_real_in_range("eps", eps, 0.0, 1.0)
        self.weight = nn.Parameter(torch.ones(self.normalized_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., d) -> (..., d); ``ValueError`` naming ``x`` when its last dimension is not d."""
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            got = type(x).__name__ if not isinstance(x, torch.Tensor) else f"dtype {x.dtype}"
            raise TypeError(f"x must be a floating-point tensor, got {got}")
        if x.dim() == 0 or x.shape[-1] != self.normalized_shape:
            raise ValueError(
                f"x's last dimension must be normalized_shape={self.normalized_shape}, got "
                f"x.shape={tuple(x.shape)}"
            )
        input_dtype = x.dtype
        x32 = x.to(torch.float32)
        mean_square = x32.pow(2).mean(-1, keepdim=True)  # (..., 1)
        normed = x32 * torch.rsqrt(mean_square + self.eps)  # (..., d): root mean square 1
        return self.weight * normed.to(input_dtype)  # (..., d)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"
