"""Exercise checkers, one module per lesson: ``mhsa_helpers.exercises.check_...(answer)``.

Each checker returns a ``CheckResult``: it displays as ``[PASS] ...`` or ``[NOT YET] ... hint: ...``
and is truthy only for a correct answer. The notebooks ship the learner's cell with
``# YOUR CODE HERE``; ``notebooks/solutions/`` holds worked answers that pass.
"""

from ._common import CheckResult

# Each lesson's module adds its checkers below (one import line per lesson module).
from .lesson01 import check_context_vector_5, check_row_sums, check_stable_softmax
from .lesson02 import check_attn_weights_3, check_v2_to_v1
from .lesson03 import check_causal_mask_4, check_one_step_mask
from .lesson09 import check_attention_matrix_bytes, check_fused_qkv_weight
from .lesson10 import check_chunk_mask, check_gqa_parameter_count, check_kv_cache_bytes

__all__ = [
    "CheckResult",
    "check_attention_matrix_bytes",
    "check_attn_weights_3",
    "check_causal_mask_4",
    "check_chunk_mask",
    "check_context_vector_5",
    "check_fused_qkv_weight",
    "check_gqa_parameter_count",
    "check_kv_cache_bytes",
    "check_one_step_mask",
    "check_row_sums",
    "check_stable_softmax",
    "check_v2_to_v1",
]
