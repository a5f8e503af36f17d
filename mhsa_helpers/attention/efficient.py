"""The same multi-head attention, made fast: a fused QKV projection and torch's fused kernel.

* ``FusedQKVMultiHeadAttention`` -- one ``nn.Linear(d_in, 3 * d_out)`` (融合 QKV 投影) computes
  queries, keys and values in a single matmul; its weight is ``[W_query; W_key; W_value]``
  stacked row-wise, so ``from_multihead(mha)`` builds a module that computes what ``mha`` does.
* ``SDPAMultiHeadAttention`` -- the same parameters, with the attention itself done by
  ``torch.nn.functional.scaled_dot_product_attention`` (SDPA). Its kernels (FlashAttention-style
  on CPU and CUDA) never store the (b, h, T, T) weight matrix, so memory grows as T instead of T^2.
  It also accepts a ``KVCache`` for token-by-token generation.

Both compose the steps of ``CausalSelfAttentionBase`` (checks, KV-cache update, causal attention,
``out_proj``); what they change is the projection (``project``) and, for SDPA, ``use_sdpa``
(the ``"sdpa"`` backend of ``functional.attend``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

from ..validation import check_flag
from .base import CausalSelfAttentionBase
from .functional import split_heads
from .multihead import MultiHeadAttention

if TYPE_CHECKING:
    from .kv_cache import KVCache

__all__ = ["FusedQKVMultiHeadAttention", "SDPAMultiHeadAttention"]


class FusedQKVMultiHeadAttention(CausalSelfAttentionBase):
    """Causal multi-head self-attention with one fused QKV projection.

    Same constructor and same function as ``MultiHeadAttention``; the three (d_out, d_in)
    weights live stacked in ``qkv.weight`` (3 * d_out, d_in): rows ``[0, d_out)`` are W_query,
    ``[d_out, 2 d_out)`` W_key, ``[2 d_out, 3 d_out)`` W_value. One matmul instead of three.
    Input (b, num_tokens, d_in) -> output (b, num_tokens, d_out).

    Like every attention class it refuses NaN/inf input with a ``ValueError`` naming the first
    bad (batch, token) position; that check reads the input on the host, and
    ``module.check_finite = False`` skips it where speed matters more (NaN then flows through).
    """

    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        dropout: float,
        num_heads: int,
        qkv_bias: bool = False,
    ):
        super().__init__(d_in, d_out, context_length, dropout, num_heads)
        check_flag("qkv_bias", qkv_bias)
        self.qkv = nn.Linear(self.d_in, 3 * self.d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(self.d_out, self.d_out)

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(b, T, d_in) -> queries, keys, values, each (b, num_heads, T, head_dim)."""
        qkv = self.qkv(x)  # (b, T, 3 * d_out): one matmul for Q, K and V
        queries, keys, values = qkv.split(self.d_out, dim=-1)  # each (b, T, d_out)
        return (
            split_heads(queries, self.num_heads),  # (b, h, T, head_dim)
            split_heads(keys, self.num_heads),  # (b, h, T, head_dim)
            split_heads(values, self.num_heads),  # (b, h, T, head_dim)
        )

    def forward(
        self,
        x: torch.Tensor,
        *,
        key_padding_mask: torch.Tensor | None = None,
        return_weights: bool = False,
        cache: KVCache | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Return (b, T, d_out), or ``(out, weights)`` with weights (b, num_heads, T, T_k).

        ``key_padding_mask``: bool (b, T), True at padding positions (the keys no token may attend
        to), as in ``torch.nn.MultiheadAttention``; None when nothing is padded. Weights are taken
        after softmax and before dropout, as in ``MultiHeadAttention``: zero on future and padded
        keys, rows summing to 1, except a row with no visible key (zero weights, zero context).
        ``cache=KVCache(...)`` works as in ``MultiHeadAttention`` (T_k = len(cache) afterwards).
        """
        self.begin_forward(x, key_padding_mask, return_weights, cache)
        queries, keys, values = self.project(x)  # (b, h, T, head_dim) each
        return self.attend_and_project(
            queries, keys, values, key_padding_mask, cache, return_weights
        )  # (b, T, d_out) [, (b, h, T, T_k)]

    @classmethod
    def from_multihead(cls, mha: MultiHeadAttention):
        """Build a ``cls`` that computes what ``mha`` (a ``MultiHeadAttention``) computes.

        ``qkv.weight`` becomes ``cat([W_query, W_key, W_value])`` (and the biases likewise);
        ``out_proj`` is copied. The result has ``mha``'s sizes, dropout rate, training/eval mode,
        dtype and device. Outputs agree to float rounding (``assert_close``), not bit for bit: a
        (T, d_in) @ (d_in, 3 d_out) matmul may sum in another order than three separate ones.
        """
        if not isinstance(mha, MultiHeadAttention):
            raise TypeError(f"mha must be a MultiHeadAttention, got {type(mha).__name__}")
        qkv_bias = mha.W_query.bias is not None
        reference = mha.W_query.weight
        fused = cls(
            mha.d_in, mha.d_out, mha.context_length, mha.dropout.p, mha.num_heads, qkv_bias
        ).to(device=reference.device, dtype=reference.dtype)
        layers = (mha.W_query, mha.W_key, mha.W_value)
        with torch.no_grad():
            fused.qkv.weight.copy_(torch.cat([lin.weight for lin in layers]))  # (3 d_out, d_in)
            if qkv_bias:
                fused.qkv.bias.copy_(torch.cat([lin.bias for lin in layers]))  # (3 d_out,)
            fused.out_proj.load_state_dict(mha.out_proj.state_dict())
        return fused.train(mha.training)


class SDPAMultiHeadAttention(FusedQKVMultiHeadAttention):
    """Fused-QKV multi-head attention whose attention runs in ``F.scaled_dot_product_attention``.

    Same parameters (``qkv``, ``out_proj``) and ``from_multihead`` as
    ``FusedQKVMultiHeadAttention``. Dropout (rate ``dropout``) is applied inside SDPA in training
    mode only. SDPA never returns the attention weights, so ``return_weights=True`` falls back to
    the explicit path (``masked_attention``, which stores the (b, h, T, T) matrix) -- use it for
    inspection, not for speed.

    ``cache=KVCache(...)`` appends this call's keys/values to the cache and lets the new tokens
    attend to every cached token (autoregressive generation, KV 缓存). A ``key_padding_mask``
    goes to SDPA as a boolean ``attn_mask``; a query with no visible key gets a zero context
    vector (no NaN).

    Like ``FusedQKVMultiHeadAttention`` it skips the NaN/inf input check for speed. Its
    ``forward`` is ``FusedQKVMultiHeadAttention``'s; only the attention step differs.
    """

    use_sdpa = True  # attend_and_project runs F.scaled_dot_product_attention ("sdpa")
