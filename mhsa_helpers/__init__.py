"""mhsa_helpers -- the final classes and helpers of the course
"Multi-Head Self-Attention, step by step" (多头自注意力，一步一步).

Lessons build each class inline, then check that it equals the class exported here, so the
lesson code and the package never drift apart. Names follow the book: ``W_query``, ``W_key``,
``W_value``, ``out_proj``, ``context_length``, ``num_heads``, ``head_dim``, ``d_in``, ``d_out``.
"""

from .causal import CausalAttention
from .checks import CountMatmuls, assert_same_module
from .cross import CrossMultiHeadAttention
from .data import Journey, book_inputs, book_words, load_glossary, load_journey, reference
from .efficient import FusedQKVMultiHeadAttention, SDPAMultiHeadAttention, causal_attention
from .explorer import ExplorerView, attention_explorer
from .functional import causal_mask, masked_attention, merge_heads, split_heads
from .gqa import GroupedQueryAttention
from .inspection import head_entropy
from .kv_cache import KVCache
from .multihead import MultiHeadAttention, MultiHeadAttentionWrapper, multihead_from_wrapper
from .notebook import setup_lesson
from .plotting import plot_attention, plot_attention_grid, plot_attention_heads
from .self_attention import SelfAttentionV1, SelfAttentionV2
from .training import (
    TinyAttentionLM,
    TrainingResult,
    offset_attention,
    train_repeat_task,
    train_shift_task,
)
from .widgets import dropout_explorer, heads_explorer

# -- production variants (issue 4) --
# (isort keeps them in sorted position above: .cross, .efficient, .gqa, .kv_cache)

# -- inspection, widgets & training (issue 5) --
# (isort keeps them in sorted position above: .explorer, .inspection, .training)

__version__ = "0.1.0"

__all__ = [
    "CausalAttention",
    "CountMatmuls",
    "CrossMultiHeadAttention",
    "ExplorerView",
    "FusedQKVMultiHeadAttention",
    "GroupedQueryAttention",
    "Journey",
    "KVCache",
    "MultiHeadAttention",
    "MultiHeadAttentionWrapper",
    "SDPAMultiHeadAttention",
    "SelfAttentionV1",
    "SelfAttentionV2",
    "TinyAttentionLM",
    "TrainingResult",
    "assert_same_module",
    "attention_explorer",
    "book_inputs",
    "book_words",
    "causal_attention",
    "causal_mask",
    "dropout_explorer",
    "head_entropy",
    "heads_explorer",
    "load_glossary",
    "load_journey",
    "masked_attention",
    "merge_heads",
    "multihead_from_wrapper",
    "offset_attention",
    "plot_attention",
    "plot_attention_grid",
    "plot_attention_heads",
    "reference",
    "setup_lesson",
    "split_heads",
    "train_repeat_task",
    "train_shift_task",
    # -- __all__ production variants (issue 4) --
    # (in sorted position above: CrossMultiHeadAttention, FusedQKVMultiHeadAttention,
    #  GroupedQueryAttention, KVCache, SDPAMultiHeadAttention, causal_attention)
    # -- __all__ inspection, widgets & training (issue 5) --
    # (in sorted position above: ExplorerView, TinyAttentionLM, TrainingResult,
    #  attention_explorer, head_entropy, offset_attention, train_repeat_task, train_shift_task)
]
