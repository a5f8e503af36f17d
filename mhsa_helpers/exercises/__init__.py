"""Exercise checkers, one module per lesson: ``mhsa_helpers.exercises.check_...(answer)``.

Each checker returns a ``CheckResult``: it displays as ``[PASS] ...`` or ``[NOT YET] ... hint: ...``
and is truthy only for a correct answer. The notebooks ship the learner's cell with
``# YOUR CODE HERE``; ``notebooks/solutions/`` holds worked answers that pass.
"""

from ._common import CheckResult, never_raises

# Each lesson's module adds its checkers below (one import line per lesson module).
from .lesson01 import check_context_vector_5, check_row_sums, check_stable_softmax
from .lesson02 import check_attn_weights_3, check_v2_to_v1
from .lesson03 import check_causal_mask_4, check_one_step_mask
from .lesson04 import check_dropout_scale, check_manual_dropout, check_zero_fraction
from .lesson05 import check_head_output, check_matmul_count, check_wrapper_width
from .lesson06 import check_head_dim, check_mha_parameter_count, check_split_into_heads
from .lesson07 import check_head_entropy, check_row_entropy, check_sharpest_head
from .lesson08 import check_initial_loss, check_offset_attention, check_shift_targets
from .lesson09 import check_attention_matrix_bytes, check_fused_qkv_weight
from .lesson10 import check_chunk_mask, check_gqa_parameter_count, check_kv_cache_bytes
from .lesson12 import check_cache_numbers, check_punctuation_share, check_top_k_probs

__all__ = [
    "CheckResult",
    "check_attention_matrix_bytes",
    "check_attn_weights_3",
    "check_cache_numbers",
    "check_causal_mask_4",
    "check_chunk_mask",
    "check_context_vector_5",
    "check_dropout_scale",
    "check_fused_qkv_weight",
    "check_gqa_parameter_count",
    "check_head_dim",
    "check_head_entropy",
    "check_head_output",
    "check_initial_loss",
    "check_kv_cache_bytes",
    "check_manual_dropout",
    "check_matmul_count",
    "check_mha_parameter_count",
    "check_offset_attention",
    "check_one_step_mask",
    "check_punctuation_share",
    "check_row_entropy",
    "check_row_sums",
    "check_sharpest_head",
    "check_shift_targets",
    "check_split_into_heads",
    "check_stable_softmax",
    "check_top_k_probs",
    "check_v2_to_v1",
    "check_wrapper_width",
    "check_zero_fraction",
]

# Every exported checker is wrapped so that nothing a learner passes makes it raise.
for _name in __all__:
    if _name.startswith("check_"):
        globals()[_name] = never_raises(globals()[_name])
del _name
