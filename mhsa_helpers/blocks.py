"""The decoder block of today's open models (Llama, Qwen, Mistral), from the course's parts.

GPT-2's block (``lm.model.TransformerBlock``) and the modern one, part by part:

    GPT-2                                  modern (Hugging Face's LlamaDecoderLayer)
    x + attn(LayerNorm(x))                 x + self_attn(RMSNorm(x))        pre-norm in both
    learned positions, added at the input  RoPE inside attention, on q and k
    multi-head attention, biases           GQA, no biases [QK-norm, sliding window]
    x + fc_out(gelu(fc_in(LayerNorm(x))))  x + mlp(RMSNorm(x)), mlp = SwiGLU

The names are Hugging Face's (``input_layernorm``, ``self_attn``, ``post_attention_layernorm``,
``mlp``), so a ``LlamaDecoderLayer``'s or ``Qwen3DecoderLayer``'s weights load by name.
"""

from __future__ import annotations

import torch
from torch import nn

from .attention.kv_cache import KVCache
from .attention.modern import ModernAttention
from .layers.feedforward import SwiGLU
from .layers.norm import RMSNorm

__all__ = ["ModernDecoderLayer"]


class ModernDecoderLayer(nn.Module):
    """``h = x + self_attn(input_layernorm(x))``, then ``h + mlp(post_attention_layernorm(h))``.

    Args: those of ``ModernAttention`` (``d_model``, ``context_length``, ``num_heads``,
    ``num_kv_groups``, keyword-only ``head_dim``, ``dropout``, ``rope_base``, ``qk_norm``,
    ``sliding_window``, ``eps``), and ``hidden_dim``, the SwiGLU's width (None: the 2/3 * 4 rule).

    ``forward(x, *, key_padding_mask=None, return_weights=False, cache=None)``: (b, n, d_model)
    -> (b, n, d_model) [, the attention weights (b, h, n, T_k)]; ``x`` and every argument are
    checked (by the attention's ``begin_forward``) before the first norm.
    """

    def __init__(
        self,
        d_model: int,
        context_length: int,
        num_heads: int,
        num_kv_groups: int,
        *,
        hidden_dim: int | None = None,
        head_dim: int | None = None,
        dropout: float = 0.0,
        rope_base: float = 10000.0,
        qk_norm: bool = False,
        sliding_window: int | None = None,
        eps: float = 1e-6,
    ):
        super().__init__()
        self.self_attn = ModernAttention(
            d_model,
            context_length,
            num_heads,
            num_kv_groups,
            head_dim=head_dim,
            dropout=dropout,
            rope_base=rope_base,
            qk_norm=qk_norm,
            sliding_window=sliding_window,
            eps=eps,
        )
        self.mlp = SwiGLU(d_model, hidden_dim)
        self.input_layernorm = RMSNorm(d_model, eps)
        self.post_attention_layernorm = RMSNorm(d_model, eps)

    def forward(
        self,
        x: torch.Tensor,
        *,
        key_padding_mask: torch.Tensor | None = None,
        return_weights: bool = False,
        cache: KVCache | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """(b, n, d_model) -> (b, n, d_model) [, weights (b, h, n, T_k)]."""
        self.self_attn.begin_forward(x, key_padding_mask, return_weights, cache)
        attended = self.self_attn.forward_unchecked(
            self.input_layernorm(x),
            key_padding_mask=key_padding_mask,
            return_weights=return_weights,
            cache=cache,
        )  # (b, n, d_model) [, (b, h, n, T_k)]
        weights = None
        if isinstance(attended, tuple):
            attended, weights = attended
        h = x + attended  # (b, n, d_model)
        out = h + self.mlp(self.post_attention_layernorm(h))  # (b, n, d_model)
        return out if weights is None else (out, weights)
