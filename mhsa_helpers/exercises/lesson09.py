"""Checkers for lesson 09, efficient attention (融合 QKV 投影, FlashAttention / SDPA).

* ``check_fused_qkv_weight(answer, mha)`` -- the (3 * d_out, d_in) weight of a fused QKV
  projection that computes what ``mha``'s W_query, W_key and W_value compute.
* ``check_attention_matrix_bytes(answer)`` -- bytes of one layer's float32 attention-weight
  matrix (b, h, T, T) for GPT-2 XL: 25 heads, context 1024, batch 1.
"""

from __future__ import annotations

import torch

from ..attention.multihead import MultiHeadAttention
from ._common import CheckResult, fail, missing, number, ok

__all__ = ["check_attention_matrix_bytes", "check_fused_qkv_weight"]

_NAMES = ("W_query", "W_key", "W_value")


def check_fused_qkv_weight(answer: object, mha: MultiHeadAttention) -> CheckResult:
    """``answer``: a tensor (3 * d_out, d_in) whose rows are W_query's, then W_key's, W_value's."""
    name = "fused QKV weight"
    if answer is None:
        return missing(name, "a (3 * d_out, d_in) tensor built from mha's three weight matrices")
    if not isinstance(mha, MultiHeadAttention):
        return fail(name, "the second argument must be the lesson's MultiHeadAttention `mha`.")
    if not isinstance(answer, torch.Tensor):
        return fail(name, f"expected a torch.Tensor, got {type(answer).__name__}.")
    weights = [getattr(mha, n).weight.detach() for n in _NAMES]  # each (d_out, d_in)
    want = torch.cat(weights, dim=0)  # (3 d_out, d_in)
    got = answer.detach()
    if tuple(got.shape) == tuple(want.T.shape) and tuple(got.shape) != tuple(want.shape):
        return fail(
            name,
            f"shape {tuple(got.shape)} is transposed: nn.Linear stores (out_features, "
            f"in_features), so the fused weight is (3 * d_out, d_in) = {tuple(want.shape)}.",
        )
    if tuple(got.shape) != tuple(want.shape):
        return fail(
            name,
            f"shape {tuple(got.shape)} but expected {tuple(want.shape)}: stack the three "
            "(d_out, d_in) matrices along dim=0 (torch.cat([...], dim=0)).",
        )
    if torch.equal(got, want):
        return ok(name)
    blocks = got.split(mha.d_out, dim=0)
    if all(any(torch.equal(b, w) for w in weights) for b in blocks):
        return fail(name, "right blocks, wrong order: the fused layer expects query, key, value.")
    return fail(
        name, "values differ: use mha.W_query.weight, mha.W_key.weight, mha.W_value.weight."
    )


_HEADS, _T, _BATCH, _BYTES = 25, 1024, 1, 4
_ATTENTION_BYTES = _BATCH * _HEADS * _T * _T * _BYTES  # 104_857_600


def check_attention_matrix_bytes(answer: object) -> CheckResult:
    """``answer``: an int, the bytes of a float32 (1, 25, 1024, 1024) attention-weight tensor."""
    name = "attention-matrix bytes (GPT-2 XL, T=1024)"
    if answer is None:
        return missing(name, "an int: batch * heads * T * T * bytes per float32")
    value = number(answer)
    if value is None:
        return fail(name, f"expected a number of bytes (an int), got {type(answer).__name__}.")
    if value == _ATTENTION_BYTES:
        return ok(name, f"correct: {_ATTENTION_BYTES:,} bytes = 100 MiB per layer.")
    if value == _ATTENTION_BYTES // _BYTES:
        return fail(name, "that is the number of floats; a float32 takes 4 bytes.")
    if value == _ATTENTION_BYTES // _HEADS:
        return fail(name, "each of the 25 heads has its own (T, T) matrix.")
    if value in (_BATCH * 1600 * _T * _BYTES, _ATTENTION_BYTES // 2):
        return fail(name, "the matrix is (T, T) per head: T * T entries, not T * d or half of it.")
    return fail(name, "count batch * heads * T * T entries, then multiply by 4 bytes (float32).")
