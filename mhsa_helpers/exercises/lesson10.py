"""Checkers for lesson 10: cross-attention (交叉注意力), KV cache (KV 缓存), GQA (分组查询注意力).

* ``check_chunk_mask(answer)`` -- the bool mask (True = hidden) of a 2-token chunk at positions
  3 and 4, after 3 cached tokens, over the 5 keys 0..4.
* ``check_kv_cache_bytes(answer)`` -- KV-cache bytes of a large Llama-like model: 80 layers,
  8 K/V heads of size 128, context 4096, batch 1, 2 bytes per number (bfloat16).
* ``check_gqa_parameter_count(answer)`` -- parameters of one ``GroupedQueryAttention`` with
  d_in = d_out = 8192, 64 query heads, 8 K/V groups, no qkv bias (out_proj has a bias).
* ``check_projected_tokens(prediction)`` -- predict-then-run: the token rows that go through the
  projection when 12 tokens are generated after a 4-token prompt without a cache (114).
"""

from __future__ import annotations

import torch

from ._common import CheckResult, fail, mask_answer, missing, number, ok, whole_number

__all__ = [
    "check_chunk_mask",
    "check_gqa_parameter_count",
    "check_kv_cache_bytes",
    "check_projected_tokens",
]

_CACHED, _NEW = 3, 2
_FUTURE = torch.ones(_CACHED + _NEW, _CACHED + _NEW).triu(1).bool()
_CHUNK_MASK = _FUTURE[_CACHED:, :]  # (2, 5): rows = positions 3, 4


def check_chunk_mask(answer: object) -> CheckResult:
    """``answer``: bool (2, 5), True where query (position 3 or 4) must not see key 0..4."""
    name = "causal mask of a chunk after the cache"
    got = mask_answer(
        name,
        answer,
        tuple(_CHUNK_MASK.shape),
        what="a bool (2, 5) tensor, True where attention is hidden",
        shape_hint="one row per new query, one column per key (3 cached + 2 new).",
        dtype_hint=" (use .bool()).",
    )
    if isinstance(got, CheckResult):
        return got
    answer = got
    if torch.equal(answer, _CHUNK_MASK):
        return ok(name)
    if torch.equal(answer, ~_CHUNK_MASK):
        return fail(name, "inverted: in this course True means hidden (SDPA's convention is ~).")
    if torch.equal(answer, torch.ones(_NEW, _CACHED + _NEW).triu(1).bool()):
        return fail(
            name,
            "that is the top-left aligned mask (what is_causal=True builds): the new queries "
            "are positions 3 and 4, so take rows 3..4 of the full 5 x 5 mask.",
        )
    return fail(name, "query at position p may see keys 0..p: build the 5 x 5 mask, keep rows 3:5.")


_LAYERS, _KV_HEADS, _HEAD_DIM, _CONTEXT, _BYTES = 80, 8, 128, 4096, 2
_KV_BYTES = 2 * _LAYERS * _KV_HEADS * _HEAD_DIM * _CONTEXT * _BYTES  # 1.25 GiB


def check_kv_cache_bytes(answer: object) -> CheckResult:
    """``answer``: an int, bytes of keys + values for every layer of one 4096-token sequence."""
    name = "KV-cache bytes (80 layers, GQA with 8 K/V heads)"
    if answer is None:
        return missing(name, "an int: 2 (K and V) * layers * kv_heads * head_dim * T * bytes")
    value = number(answer)
    if value is None:
        return fail(name, f"expected a number of bytes (an int), got {type(answer).__name__}.")
    if value == _KV_BYTES:
        return ok(name, f"correct: {_KV_BYTES:,} bytes = 1.25 GiB per sequence.")
    if value == _KV_BYTES // 2:
        return fail(name, "both keys and values are cached: multiply by 2.")
    if value == _KV_BYTES * 8:
        return fail(name, "that is plain multi-head attention: only the 8 K/V heads are cached.")
    if value == _KV_BYTES // _LAYERS:
        return fail(name, "every one of the 80 layers keeps its own cache.")
    if value in (_KV_BYTES * 2, _KV_BYTES // _BYTES):
        return fail(name, "bfloat16 takes 2 bytes per number.")
    return fail(name, "multiply 2 * 80 layers * 8 heads * 128 * 4096 tokens * 2 bytes.")


_D, _HEADS, _GROUPS = 8192, 64, 8
_KV_WIDTH = _GROUPS * (_D // _HEADS)  # 1024
_GQA_PARAMS = _D * _D + 2 * _D * _KV_WIDTH + _D * _D + _D  # 151_003_136
_MHA_PARAMS = 4 * _D * _D + _D


def check_gqa_parameter_count(answer: object) -> CheckResult:
    """``answer``: an int, ``sum(p.numel() for p in gqa.parameters())`` for that GQA layer."""
    name = "GQA parameter count (d=8192, 64 heads, 8 groups)"
    if answer is None:
        return missing(name, "an int: W_query + W_key + W_value + out_proj (weight and bias)")
    value = number(answer)
    if value is None:
        return fail(name, f"expected a number of parameters (an int), got {type(answer).__name__}.")
    if value == _GQA_PARAMS:
        return ok(name, f"correct: {_GQA_PARAMS:,} parameters ({_MHA_PARAMS:,} with plain MHA).")
    if value == _MHA_PARAMS:
        return fail(name, "that is plain MHA: W_key and W_value map 8192 -> 8 * 128 = 1024 only.")
    if value == _GQA_PARAMS - _D:
        return fail(name, "out_proj has a bias of 8192 numbers as well.")
    return fail(
        name, "W_query 8192x8192, W_key and W_value 1024x8192 each, out_proj 8192x8192 + 8192."
    )


_PROMPT, _NEW_TOKENS = 4, 12
_WITHOUT_CACHE = sum(range(_PROMPT, _PROMPT + _NEW_TOKENS))  # 4 + 5 + ... + 15 = 114
_WITH_CACHE = _PROMPT + _NEW_TOKENS - 1  # 15


def check_projected_tokens(prediction: object) -> CheckResult:
    """Predict-then-run: token rows through the Q/K/V projection, no cache, 12 steps after 4."""
    name = "prediction: tokens projected without a cache"
    if prediction is None:
        return missing(name, "an int: the total number of token rows projected over 12 steps")
    value = whole_number(prediction)
    if value is None:
        return fail(name, f"expected a whole number, got {type(prediction).__name__}.")
    if value == _WITHOUT_CACHE:
        return ok(name, f"right: 4 + 5 + ... + 15 = {_WITHOUT_CACHE} (with a cache: 15).")
    if value == _WITH_CACHE:
        return fail(
            name, "that is the count WITH a cache; without one, every step re-projects all."
        )
    if value == _PROMPT * _NEW_TOKENS:
        return fail(name, "the sequence grows by one token per step: 4, then 5, 6, ...")
    if value in (_WITHOUT_CACHE + _PROMPT + _NEW_TOKENS, sum(range(_PROMPT + 1, 17))):
        return fail(name, "step 1 projects the 4 prompt tokens, step 12 projects 15 (not 16).")
    return fail(name, "step 1 feeds 4 tokens, step 2 feeds 5, ..., step 12 feeds 15: add them up.")
