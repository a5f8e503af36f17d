"""The attention classes: the teaching classes first, then the production variants.

Everything here needs only torch. One functional core, classes that compose it:

* ``functional`` -- scores, mask, scaled softmax, dropout, weighted sum; split/merge heads;
  ``causal_attention`` (new queries over cached + new keys, explicit or through SDPA);
* ``validation`` -- the argument and input checks every class runs before any matmul;
* teaching classes, in lesson order: ``self_attention`` (V1, V2), ``causal`` (one head),
  ``multihead`` (the wrapper and the split-matrix class);
* production variants: ``efficient`` (fused QKV, SDPA), ``kv_cache``, ``cross``, ``gqa``.

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
from .functional import causal_attention, causal_mask, masked_attention, merge_heads, split_heads
from .gqa import GroupedQueryAttention
from .kv_cache import KVCache
from .multihead import MultiHeadAttention, MultiHeadAttentionWrapper, multihead_from_wrapper
from .self_attention import SelfAttentionV1, SelfAttentionV2

__all__ = [
    "CausalAttention",
    "CrossMultiHeadAttention",
    "FusedQKVMultiHeadAttention",
    "GroupedQueryAttention",
    "KVCache",
    "MultiHeadAttention",
    "MultiHeadAttentionWrapper",
    "SDPAMultiHeadAttention",
    "SelfAttentionV1",
    "SelfAttentionV2",
    "causal_attention",
    "causal_mask",
    "masked_attention",
    "merge_heads",
    "multihead_from_wrapper",
    "split_heads",
]
