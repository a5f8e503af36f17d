"""Grouped-query attention (分组查询注意力, GQA) and multi-query attention (多查询注意力, MQA).

Queries keep ``num_heads`` heads, but keys and values get only ``num_kv_groups`` heads; each K/V
head is shared by ``num_heads // num_kv_groups`` consecutive query heads. That shrinks W_key and
W_value, and -- what matters at inference -- the KV cache, by the factor
``num_heads / num_kv_groups``.

* ``num_kv_groups == num_heads``: plain multi-head attention (the same ``state_dict`` keys and
  shapes as ``MultiHeadAttention``, and the same outputs after ``load_state_dict``).
* ``num_kv_groups == 1``: multi-query attention, one K/V head for all query heads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

from ..validation import check_flag, check_positive_int
from .base import CausalSelfAttentionBase
from .functional import split_heads

if TYPE_CHECKING:
    from .kv_cache import KVCache

__all__ = ["GroupedQueryAttention"]


class GroupedQueryAttention(CausalSelfAttentionBase):
    """Causal grouped-query attention: ``num_heads`` query heads, ``num_kv_groups`` K/V heads.

    W_query: d_in -> d_out; W_key, W_value: d_in -> num_kv_groups * head_dim, with
    ``head_dim = d_out // num_heads``; out_proj: d_out -> d_out.
    Input (b, num_tokens, d_in) -> output (b, num_tokens, d_out). Accepts ``cache=KVCache(...)``,
    which then stores only the ``num_kv_groups`` K/V heads.

    Like every attention class it refuses NaN/inf input with a ``ValueError`` naming the first
    bad (batch, token) position; that check reads the input on the host, and
    ``module.check_finite = False`` skips it where speed matters more (NaN then flows through).
    """

    use_sdpa = True  # attend_and_project runs F.scaled_dot_product_attention

    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        dropout: float,
        num_heads: int,
        num_kv_groups: int,
        qkv_bias: bool = False,
    ):
        super().__init__(d_in, d_out, context_length, dropout, num_heads)
        num_kv_groups = check_positive_int("num_kv_groups", num_kv_groups)
        check_flag("qkv_bias", qkv_bias)
        num_heads = self.num_heads
        if num_heads % num_kv_groups != 0:
            raise ValueError(
                "num_heads must be divisible by num_kv_groups (each K/V head serves the same "
                f"number of query heads), got num_kv_groups={num_kv_groups}, "
                f"num_heads={num_heads}"
            )
        self.num_kv_groups = num_kv_groups
        self.group_size = num_heads // num_kv_groups  # query heads per K/V head
        kv_width = num_kv_groups * self.head_dim
        self.W_query = nn.Linear(self.d_in, self.d_out, bias=qkv_bias)
        self.W_key = nn.Linear(self.d_in, kv_width, bias=qkv_bias)
        self.W_value = nn.Linear(self.d_in, kv_width, bias=qkv_bias)
        self.out_proj = nn.Linear(self.d_out, self.d_out)

    def forward(
        self,
        x: torch.Tensor,
        *,
        key_padding_mask: torch.Tensor | None = None,
        return_weights: bool = False,
        cache: KVCache | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """(b, n, d_in) -> (b, n, d_out) [, weights (b, num_heads, n, T_cached + n)].

        With a cache holding ``len(cache)`` tokens, the n tokens are positions
        ``len(cache) .. len(cache) + n - 1``. ``key_padding_mask``: bool (b, n), True at padding
        positions of ``x`` (the keys no token may attend to), as in ``torch.nn.MultiheadAttention``;
        the cache keeps the padding of cached keys. A query with no visible key gets a zero
        context vector and zero weights.
        """
        self.begin_forward(x, key_padding_mask, return_weights, cache)
        queries = split_heads(self.W_query(x), self.num_heads)  # (b, h, n, head_dim)
        keys = split_heads(self.W_key(x), self.num_kv_groups)  # (b, g, n, head_dim)
        values = split_heads(self.W_value(x), self.num_kv_groups)  # (b, g, n, head_dim)
        # The cache stores only the g K/V heads; attend shares K/V head j with query heads
        # j*group_size .. (j+1)*group_size - 1 (repeat_interleave), T_k = T_cached + n.
        return self.attend_and_project(
            queries, keys, values, key_padding_mask, cache, return_weights
        )  # (b, n, d_out) [, (b, h, n, T_k)]

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, num_kv_groups={self.num_kv_groups}"
