"""SwiGLU (门控前馈网络): the feed-forward of Llama, Qwen, Mistral and DeepSeek.

GPT-2's feed-forward widens each token's vector to 4 * d, applies GELU and narrows it back:
``fc_out(gelu(fc_in(x)))``, 2 matrices of 4 * d * d numbers. SwiGLU (Shazeer, 2020) computes two
widened vectors; one of them, through SiLU (``x * sigmoid(x)``), *gates* the other element by
element:

    SwiGLU(x) = down_proj(silu(gate_proj(x)) * up_proj(x))      # Hugging Face's LlamaMLP

Three matrices instead of two: with a hidden width of 2/3 * 4 * d (``swiglu_hidden_dim``) the
block keeps the parameter count of GPT-2's feed-forward (3 * 8/3 = 2 * 4).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..validation import check_flag, check_positive_int

__all__ = ["SwiGLU", "swiglu_hidden_dim"]


def swiglu_hidden_dim(d_model: int, multiple_of: int = 1) -> int:
    """The width rule: ``2/3 * 4 * d_model`` rounded *up* to a multiple of ``multiple_of``.

    Three (d, hidden) matrices of this width hold as many numbers as GPT-2's two (d, 4 d) ones.
    Llama rounds up to a multiple of 256 (``multiple_of=256``) so that the matrices suit the
    hardware; ``swiglu_hidden_dim(4096, 256) == 11008``, Llama 2 7B's ``intermediate_size``.
    """
    d_model = check_positive_int("d_model", d_model)
    multiple_of = check_positive_int("multiple_of", multiple_of)
    hidden = int(2 * 4 * d_model / 3)
    return multiple_of * -(-hidden // multiple_of)  # round up


class SwiGLU(nn.Module):
    """``down_proj(silu(gate_proj(x)) * up_proj(x))``: (..., d_model) -> (..., d_model).

    Args:
        d_model: the width of the tokens' vectors.
        hidden_dim: the width in between (``intermediate_size`` in Hugging Face's configs);
            None: ``swiglu_hidden_dim(d_model)``.
        bias: biases in the three layers (Llama and Qwen: none).

    ``gate_proj`` goes through SiLU, ``up_proj`` does not: swapping them is a different function
    with the same shapes. The layers are created in the order gate, up, down.
    """

    def __init__(self, d_model: int, hidden_dim: int | None = None, bias: bool = False):
        super().__init__()
        self.d_model = check_positive_int("d_model", d_model)
        if hidden_dim is None:
            hidden_dim = swiglu_hidden_dim(self.d_model)
        self.hidden_dim = check_positive_int("hidden_dim", hidden_dim)
        check_flag("bias", bias)
        self.gate_proj = nn.Linear(self.d_model, self.hidden_dim, bias=bias)
        self.up_proj = nn.Linear(self.d_model, self.hidden_dim, bias=bias)
        self.down_proj = nn.Linear(self.hidden_dim, self.d_model, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(..., d_model) -> (..., d_model); a wrong width raises ``ValueError`` naming ``x``."""
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            got = type(x).__name__ if not isinstance(x, torch.Tensor) else f"dtype {x.dtype}"
            raise TypeError(f"x must be a floating-point tensor, got {got}")
        if x.dim() == 0 or x.shape[-1] != self.d_model:
            raise ValueError(
                f"x's last dimension must be d_model={self.d_model}, got x.shape={tuple(x.shape)}"
            )
        gate = F.silu(self.gate_proj(x))  # (..., hidden_dim): silu(z) = z * sigmoid(z)
        return self.down_proj(gate * self.up_proj(x))  # (..., d_model)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, hidden_dim={self.hidden_dim}"
