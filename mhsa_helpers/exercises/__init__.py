"""Exercise checkers, one module per lesson: ``mhsa_helpers.exercises.check_...(answer)``.

Each checker returns a ``CheckResult``: it displays as ``[PASS] ...`` or ``[NOT YET] ... hint: ...``
and is truthy only for a correct answer. The notebooks ship the learner's cell with
``# YOUR CODE HERE``; ``notebooks/solutions/`` holds worked answers that pass.
"""

from ._result import CheckResult, never_raises

# Each lesson's module adds its checkers below (one import line per lesson module).
from .lesson01 import (
    NEW_TOKEN_EMBEDDING,
    check_attention_received,
    check_context_vector_new_token,
    check_prediction_self_match,
    check_softmax_rows,
)
from .lesson02 import (
    check_attn_weights_3,
    check_build_self_attention,
    check_prediction_saturation,
    check_v1_to_v2,
)
from .lesson03 import check_build_causal_weights, check_local_mask, check_prediction_changed_weights
from .lesson04 import (
    check_causal_attention_class,
    check_dropout_scale,
    check_manual_dropout,
    check_survivor_prediction,
    check_zero_fraction,
)
from .lesson05 import (
    check_head_output,
    check_matmul_count,
    check_matmul_prediction,
    check_wrapper_class,
    check_wrapper_width,
)
from .lesson06 import (
    check_build_multihead,
    check_head_dim,
    check_mha_parameter_count,
    check_split_into_heads,
    check_split_matmul_prediction,
)
from .lesson07 import check_head_entropy, check_row_entropy, check_sharpest_head
from .lesson08 import check_initial_loss, check_offset_attention, check_shift_targets
from .lesson09 import (
    check_build_fused_multihead,
    check_key_block,
    check_longest_context,
    check_memory_growth,
)
from .lesson10 import (
    check_chunk_mask,
    check_gqa_parameter_count,
    check_kv_cache_bytes,
    check_kv_cache_step,
    check_projected_tokens,
    check_repeat_kv,
)
from .lesson11 import check_hf_to_additive_mask, check_left_padding_mask, check_masked_softmax
from .lesson12 import (
    check_cache_numbers,
    check_own_text,
    check_punctuation_share,
    check_top_k_probs,
)

__all__ = [
    "NEW_TOKEN_EMBEDDING",
    "CheckResult",
    "check_attention_received",
    "check_attn_weights_3",
    "check_build_causal_weights",
    "check_build_fused_multihead",
    "check_build_multihead",
    "check_build_self_attention",
    "check_cache_numbers",
    "check_causal_attention_class",
    "check_chunk_mask",
    "check_context_vector_new_token",
    "check_dropout_scale",
    "check_gqa_parameter_count",
    "check_head_dim",
    "check_head_entropy",
    "check_head_output",
    "check_hf_to_additive_mask",
    "check_initial_loss",
    "check_key_block",
    "check_kv_cache_bytes",
    "check_kv_cache_step",
    "check_left_padding_mask",
    "check_local_mask",
    "check_longest_context",
    "check_manual_dropout",
    "check_masked_softmax",
    "check_matmul_count",
    "check_matmul_prediction",
    "check_memory_growth",
    "check_mha_parameter_count",
    "check_offset_attention",
    "check_own_text",
    "check_prediction_changed_weights",
    "check_prediction_saturation",
    "check_prediction_self_match",
    "check_projected_tokens",
    "check_punctuation_share",
    "check_repeat_kv",
    "check_row_entropy",
    "check_sharpest_head",
    "check_shift_targets",
    "check_softmax_rows",
    "check_split_into_heads",
    "check_split_matmul_prediction",
    "check_survivor_prediction",
    "check_top_k_probs",
    "check_v1_to_v2",
    "check_wrapper_class",
    "check_wrapper_width",
    "check_zero_fraction",
]

# Every exported checker is wrapped so that nothing a learner passes makes it raise.
for _name in __all__:
    if _name.startswith("check_"):
        globals()[_name] = never_raises(globals()[_name])
del _name
