"""The attention classes: the teaching classes first, then the production variants.

Everything here needs only torch. One functional core, classes that compose it:

* ``functional`` -- the core ``attend`` (mask, scaled softmax, dropout, weighted sum; the
  explicit ``"eager"`` or the fused ``"sdpa"`` implementation), its mask builder
  ``attention_mask`` (causal, padding, KV-cache offset) -- both check nothing, the classes check
  once in ``forward`` -- and the checked public entry ``masked_attention``; split/merge heads;
* ``base`` -- ``AttentionModule`` (every check of ``forward``, once, before any matmul) and
  ``CausalSelfAttentionBase`` (mask buffer, dropout, cache update + core + ``out_proj``);
* teaching classes, in lesson order: ``self_attention`` (V1, V2), ``causal`` (one head),
  ``multihead`` (the wrapper and the split-matrix class);
* production variants: ``efficient`` (fused QKV, SDPA), ``kv_cache``, ``cross``, ``gqa``;
* today's open models: ``modern`` (GQA with RoPE, optional QK-norm and sliding window, no biases:
  Hugging Face's ``LlamaAttention``/``Qwen3Attention``), on the parts in ``mhsa_helpers.layers``.

The argument checks live one layer down, in ``mhsa_helpers.validation``.

Every ``forward`` takes its input positionally and the rest by keyword, with the same names:
``forward(x, *, key_padding_mask=None, return_weights=False[, cache=None])`` for self-attention,
``forward(query, key_value, *, key_padding_mask=None, return_weights=False)`` for cross-attention.
``key_padding_mask`` is bool (b, T_k), True at padding positions (``torch.nn.MultiheadAttention``'s
convention); a query with no visible key gets zero weights and a zero context vector, never NaN.

Shapes: b batch, T tokens (T_q queries, T_k keys), d_in input width, d_out output width,
h = num_heads, head_dim = d_out // num_heads, g = num_kv_groups.
"""

from .causal import CausalAttention
from .cross import CrossMultiHeadAttention
from .efficient import FusedQKVMultiHeadAttention, SDPAMultiHeadAttention
from .functional import causal_mask, masked_attention, merge_heads, split_heads
from .gqa import GroupedQueryAttention
from .kv_cache import KVCache
from .modern import ModernAttention
from .multihead import MultiHeadAttention, MultiHeadAttentionWrapper, multihead_from_wrapper
from .self_attention import SelfAttentionV1, SelfAttentionV2

__all__ = [
    "CausalAttention",
    "CrossMultiHeadAttention",
    "FusedQKVMultiHeadAttention",
    "GroupedQueryAttention",
    "KVCache",
    "ModernAttention",
    "MultiHeadAttention",
    "MultiHeadAttentionWrapper",
    "SDPAMultiHeadAttention",
    "SelfAttentionV1",
    "SelfAttentionV2",
    "causal_mask",
    "masked_attention",
    "merge_heads",
    "multihead_from_wrapper",
    "split_heads",
]
