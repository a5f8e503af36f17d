"""The parts a modern decoder block adds to GPT-2's (torch only): RoPE, RMSNorm, SwiGLU.

* ``rope`` -- rotary position embeddings (旋转位置编码, RoPE): ``RotaryEmbedding`` (the cos/sin
  tables, computed once per length and cached), ``rotate_half`` and ``apply_rotary_pos_emb``
  (Hugging Face Llama's rotate-half convention), ``rope_cos_sin`` (the tables for any positions),
  ``interleaved_to_half`` (the permutation between the two pairing conventions);
* ``norm`` -- ``RMSNorm`` (均方根归一化): LayerNorm without the mean and the bias;
* ``feedforward`` -- ``SwiGLU`` (the gated feed-forward of Llama and Qwen: ``gate_proj``,
  ``up_proj``, ``down_proj``) and ``swiglu_hidden_dim`` (the 2/3 * 4 width rule).

``attention.modern.ModernAttention`` composes them with the attention core, and
``mhsa_helpers.blocks.ModernDecoderLayer`` assembles the whole block.

Shapes: b batch, T tokens, d model width, h heads, head_dim the width of one head (even: RoPE
rotates pairs of features), offset the position of the first token (the KV cache's length).
"""

from .feedforward import SwiGLU, swiglu_hidden_dim
from .norm import RMSNorm
from .rope import (
    RotaryEmbedding,
    apply_rotary_interleaved,
    apply_rotary_pos_emb,
    interleaved_to_half,
    rope_cos_sin,
    rotate_half,
)

__all__ = [
    "RMSNorm",
    "RotaryEmbedding",
    "SwiGLU",
    "apply_rotary_interleaved",
    "apply_rotary_pos_emb",
    "interleaved_to_half",
    "rope_cos_sin",
    "rotate_half",
    "swiglu_hidden_dim",
]
