"""The attention of Llama, Qwen and Mistral: grouped K/V heads, rotary positions, no biases.

``ModernAttention`` is Hugging Face's ``LlamaAttention`` (and, with ``qk_norm=True``,
``Qwen3Attention``; with a ``sliding_window``, Mistral's) on the course's core:

    x (b, n, d_model)
     ├─ q_proj, k_proj, v_proj          no biases; k/v have num_kv_groups heads (GQA)
     ├─ [q_norm, k_norm]                QK-norm: RMSNorm over each head's features (Qwen3, OLMo 2)
     ├─ RoPE on q and k                 at positions offset .. offset + n - 1 (offset = len(cache))
     ├─ [cache.append]                  the cache holds *rotated* keys
     ├─ functional.attend               causal | sliding window | padding
     └─ o_proj                          (b, n, h * head_dim) -> (b, n, d_model), no bias

The parameter names are Hugging Face's (``q_proj``, ``k_proj``, ``v_proj``, ``o_proj``, ``q_norm``,
``k_norm``), and the state_dict holds nothing else (the causal mask and the RoPE tables are
buffers that are not saved), so a ``LlamaAttention``'s weights load by name.

Padding: with a ``key_padding_mask`` the positions count only real tokens (position ids
``cumsum(real) - 1``, what Hugging Face's ``generate`` passes), and the cache remembers how many
real tokens it holds; so a padded sequence -- pads on the left, the right or in the middle -- gets
the outputs it gets alone, through the cache as well.
Sliding window: query i sees keys i - sliding_window + 1 .. i (Hugging Face's convention,
``kv_idx > q_idx - sliding_window``), counted in positions, pads included.
"""

from __future__ import annotations

import torch
from torch import nn

from ..layers.norm import RMSNorm
from ..layers.rope import RotaryEmbedding, apply_rotary_pos_emb, check_head_dim
from ..validation import (
    check_dropout,
    check_flag,
    check_positive_int,
    check_real_in_range,
)
from .base import AttentionModule
from .functional import attend, causal_mask, merge_heads
from .kv_cache import KVCache

__all__ = ["ModernAttention"]


class ModernAttention(AttentionModule):
    """Causal GQA with RoPE (optionally QK-norm and a sliding window): (b, n, d) -> (b, n, d).

    Args:
        d_model: the tokens' width (Hugging Face's ``hidden_size``), in and out.
        context_length: the most positions a sequence may have (the causal mask and RoPE tables).
        num_heads: query heads h.
        num_kv_groups: key/value heads g, dividing h (``num_key_value_heads``).
        head_dim: the width of one head, even; None: ``d_model // num_heads`` (must divide).
        dropout: on the attention weights, in training mode.
        rope_base: RoPE's ``rope_theta``.
        qk_norm: RMSNorm on each head's queries and keys before RoPE (Qwen3).
        sliding_window: None, or how many positions (the token itself included) a query sees.
        eps: the RMSNorms' eps (``rms_norm_eps``).

    ``forward(x, *, key_padding_mask=None, return_weights=False, cache=None)`` as every
    self-attention class of the course; every argument is checked before any matmul.
    """

    use_sdpa = True  # F.scaled_dot_product_attention unless the weights are asked for
    mask: torch.Tensor  # (context_length, context_length), 1 above the diagonal, not saved

    def __init__(
        self,
        d_model: int,
        context_length: int,
        num_heads: int,
        num_kv_groups: int,
        *,
        head_dim: int | None = None,
        dropout: float = 0.0,
        rope_base: float = 10000.0,
        qk_norm: bool = False,
        sliding_window: int | None = None,
        eps: float = 1e-6,
    ):
        super().__init__()
        self.d_in = check_positive_int("d_model", d_model)
        self.context_length = check_positive_int("context_length", context_length)
        self.num_heads = check_positive_int("num_heads", num_heads)
        self.num_kv_groups = check_positive_int("num_kv_groups", num_kv_groups)
        if self.num_heads % self.num_kv_groups:
            raise ValueError(
                "num_heads must be divisible by num_kv_groups (each K/V head serves the same "
                f"number of query heads), got num_kv_groups={self.num_kv_groups}, "
                f"num_heads={self.num_heads}"
            )
        if head_dim is None:
            if self.d_in % self.num_heads:
                raise ValueError(
                    "d_model must be divisible by num_heads when head_dim is not given, got "
                    f"d_model={self.d_in}, num_heads={self.num_heads}"
                )
            head_dim = self.d_in // self.num_heads
        self.head_dim = check_head_dim(head_dim)
        self.dropout = nn.Dropout(check_dropout(dropout))
        self.rope_base = check_real_in_range("rope_base", rope_base, 1.0 + 1e-9, float("inf"))
        self.qk_norm = check_flag("qk_norm", qk_norm)
        if sliding_window is not None:
            sliding_window = check_positive_int("sliding_window", sliding_window)
        self.sliding_window = sliding_window
        eps = check_real_in_range("eps", eps, 0.0, 1.0)
        self.d_out = self.d_in
        width = self.num_heads * self.head_dim
        kv_width = self.num_kv_groups * self.head_dim
        self.q_proj = nn.Linear(self.d_in, width, bias=False)
        self.k_proj = nn.Linear(self.d_in, kv_width, bias=False)
        self.v_proj = nn.Linear(self.d_in, kv_width, bias=False)
        self.o_proj = nn.Linear(width, self.d_in, bias=False)
        self.q_norm = RMSNorm(self.head_dim, eps) if self.qk_norm else None
        self.k_norm = RMSNorm(self.head_dim, eps) if self.qk_norm else None
        self.rotary_emb = RotaryEmbedding(self.head_dim, self.context_length, self.rope_base)
        self.register_buffer("mask", causal_mask(self.context_length), persistent=False)

    def forward(
        self,
        x: torch.Tensor,
        *,
        key_padding_mask: torch.Tensor | None = None,
        return_weights: bool = False,
        cache: KVCache | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """(b, n, d_model) -> (b, n, d_model) [, weights (b, h, n, T_cached + n)].

        With a cache holding ``len(cache)`` tokens, the n tokens are at positions
        ``len(cache) ..``: RoPE rotates them there, and the cache keeps the rotated keys.
        ``key_padding_mask``: bool (b, n), True at padding positions of ``x``.
        """
        self.begin_forward(x, key_padding_mask, return_weights, cache)
        return self.forward_unchecked(
            x, key_padding_mask=key_padding_mask, return_weights=return_weights, cache=cache
        )

    def forward_unchecked(
        self,
        x: torch.Tensor,
        *,
        key_padding_mask: torch.Tensor | None = None,
        return_weights: bool = False,
        cache: KVCache | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """``forward`` without the checks, for a caller that ran ``begin_forward`` on ``x``."""
        b, n, _ = x.shape
        offset = 0 if cache is None else len(cache)  # the first new token's position
        queries = self.q_proj(x).view(b, n, self.num_heads, self.head_dim)  # (b, n, h, hd)
        keys = self.k_proj(x).view(b, n, self.num_kv_groups, self.head_dim)  # (b, n, g, hd)
        values = self.v_proj(x).view(b, n, self.num_kv_groups, self.head_dim)  # (b, n, g, hd)
        if self.q_norm is not None and self.k_norm is not None:  # QK-norm, before RoPE
            queries, keys = self.q_norm(queries), self.k_norm(keys)
        queries = queries.transpose(1, 2)  # (b, h, n, head_dim)
        keys = keys.transpose(1, 2)  # (b, g, n, head_dim)
        values = values.transpose(1, 2)  # (b, g, n, head_dim): never rotated
        position_ids = self.position_ids(key_padding_mask, cache, b, n, x.device)
        cos, sin = self.rotary_emb(queries, offset, position_ids)  # (n | b, 1, n, head_dim)
        queries, keys = apply_rotary_pos_emb(queries, keys, cos, sin)  # (b, h|g, n, hd)
        if cache is not None:
            keys, values, key_padding_mask = cache.append(
                keys, values, key_padding_mask, layer=self
            )  # (b, g, T_k, head_dim) twice, (b, T_k) or None
        context, weights = attend(
            queries,
            keys,
            values,
            causal=self.mask,
            mask=self.window_mask(n, keys.shape[-2], x.device),
            key_padding_mask=key_padding_mask,
            dropout=self.dropout,
            backend="sdpa" if self.use_sdpa and not return_weights else "eager",
        )  # (b, h, n, head_dim), (b, h, n, T_k) or None
        out = self.o_proj(merge_heads(context))  # (b, n, d_model)
        if not return_weights:
            return out
        assert weights is not None  # the eager backend returns them
        return out, weights

    @staticmethod
    def position_ids(
        key_padding_mask: torch.Tensor | None,
        cache: KVCache | None,
        batch: int,
        num_new: int,
        device: torch.device,
    ) -> torch.Tensor | None:
        """Each new token's position among the *real* tokens, (b, n); None without any padding.

        Without padding the positions are ``offset .. offset + n - 1`` (a slice of the tables).
        A pad takes its last real token's position (at least 0): no query sees it as a key.
        """
        cached_pad = None if cache is None else cache.key_padding_mask
        if key_padding_mask is None and cached_pad is None:
            return None
        if key_padding_mask is None:
            real = torch.ones(batch, num_new, dtype=torch.long, device=device)  # (b, n)
        else:
            real = (~key_padding_mask).long()  # (b, n)
        if cached_pad is not None:
            start = (~cached_pad).sum(-1, keepdim=True)  # (b, 1): real tokens in the cache
        else:
            start = torch.full((batch, 1), 0 if cache is None else len(cache), device=device)
        return (start + real.cumsum(-1) - 1).clamp(min=0)  # (b, n)

    def window_mask(
        self, num_queries: int, num_keys: int, device: torch.device
    ) -> torch.Tensor | None:
        """Bool (n, T_k), True at keys older than the window; None when it hides nothing.

        The n queries are the last n of the T_k positions (a KV cache holds the first ones).
        """
        window = self.sliding_window
        if window is None or num_keys <= window:
            return None
        query_pos = torch.arange(num_keys - num_queries, num_keys, device=device)  # (n,)
        key_pos = torch.arange(num_keys, device=device)  # (T_k,)
        return key_pos[None, :] <= query_pos[:, None] - window  # (n, T_k)

    def extra_repr(self) -> str:
        window = "" if self.sliding_window is None else f", sliding_window={self.sliding_window}"
        return (
            f"d_model={self.d_in}, context_length={self.context_length}, "
            f"num_heads={self.num_heads}, num_kv_groups={self.num_kv_groups}, "
            f"head_dim={self.head_dim}, qk_norm={self.qk_norm}{window}"
        )
