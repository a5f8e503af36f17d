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

from ..i18n import tr
from ._kinds import Number, mask_answer, number_checker
from ._parse import A_PARAMETER_COUNT, expected_kind, not_a_byte_count
from ._result import CheckResult, exercise, fail, ok

__all__ = [
    "check_chunk_mask",
    "check_gqa_parameter_count",
    "check_kv_cache_bytes",
    "check_projected_tokens",
]

_CACHED, _NEW = 3, 2
_FUTURE = torch.ones(_CACHED + _NEW, _CACHED + _NEW).triu(1).bool()
_CHUNK_MASK = _FUTURE[_CACHED:, :]  # (2, 5): rows = positions 3, 4


_CHUNK_MASK_NAME = tr("causal mask of a chunk after the cache", "缓存之后一段新词元的因果掩码")


@exercise(_CHUNK_MASK_NAME)
def check_chunk_mask(answer: object) -> CheckResult:
    """``answer``: bool (2, 5), True where query (position 3 or 4) must not see key 0..4."""
    name = _CHUNK_MASK_NAME
    got = mask_answer(
        name,
        answer,
        tuple(_CHUNK_MASK.shape),
        what=tr(
            "a bool (2, 5) tensor, True where attention is hidden",
            "一个 bool 类型的 (2, 5) 张量，注意力被遮住的位置为 True",
        ),
        shape_hint=tr(
            "one row per new query, one column per key (3 cached + 2 new).",
            "每个新查询一行，每个键一列（3 个已缓存 + 2 个新的）。",
        ),
        dtype_hint=tr(" (use .bool()).", "（用 `.bool()`）。"),
    )
    if isinstance(got, CheckResult):
        return got
    answer = got
    if torch.equal(answer, _CHUNK_MASK):
        return ok(name)
    if torch.equal(answer, ~_CHUNK_MASK):
        return fail(
            name,
            tr(
                "inverted: in this course True means hidden (SDPA's convention is ~).",
                "弄反了：本课程中 True 表示遮住（SDPA 的约定与此相反，是 ~）。",
            ),
        )
    if torch.equal(answer, torch.ones(_NEW, _CACHED + _NEW).triu(1).bool()):
        return fail(
            name,
            tr(
                "that is the top-left aligned mask (what is_causal=True builds): the new queries "
                "are positions 3 and 4, so take rows 3..4 of the full 5 x 5 mask.",
                "这是左上角对齐的掩码（is_causal=True 构建的就是它）：新查询位于位置 3 和 4，"
                "所以要取完整 5 x 5 掩码的第 3..4 行。",
            ),
        )
    return fail(
        name,
        tr(
            "query at position p may see keys 0..p: build the 5 x 5 mask, keep rows 3:5.",
            "位置 p 的查询可以看到键 0..p：先构建 5 x 5 的掩码，再保留第 3:5 行。",
        ),
    )


_LAYERS, _KV_HEADS, _HEAD_DIM, _CONTEXT, _BYTES = 80, 8, 128, 4096, 2
_KV_BYTES = 2 * _LAYERS * _KV_HEADS * _HEAD_DIM * _CONTEXT * _BYTES  # 1.25 GiB


check_kv_cache_bytes = number_checker(
    "check_kv_cache_bytes",
    Number(
        name=tr(
            "KV-cache bytes (80 layers, GQA with 8 K/V heads)",
            "KV 缓存的字节数（80 层，GQA，8 个 K/V 头）",
        ),
        what=tr(
            "an int: 2 (K and V) * layers * kv_heads * head_dim * T * bytes",
            "一个 int：2（K 和 V）* 层数 * kv_heads * head_dim * T * 字节数",
        ),
        expected=_KV_BYTES,
        right=tr(
            f"correct: {_KV_BYTES:,} bytes = 1.25 GiB per sequence.",
            f"正确：{_KV_BYTES:,} 字节 = 每个序列 1.25 GiB。",
        ),
        wrong=(
            (
                _KV_BYTES // 2,
                tr("both keys and values are cached: multiply by 2.", "键和值都要缓存：乘以 2。"),
            ),
            (
                _KV_BYTES * 8,
                tr(
                    "that is plain multi-head attention: only the 8 K/V heads are cached.",
                    "这是普通多头注意力的结果：这里只缓存 8 个 K/V 头。",
                ),
            ),
            (
                _KV_BYTES // _LAYERS,
                tr(
                    "every one of the 80 layers keeps its own cache.",
                    "80 层中的每一层都有自己的缓存。",
                ),
            ),
            (
                (_KV_BYTES * 2, _KV_BYTES // _BYTES),
                tr("bfloat16 takes 2 bytes per number.", "bfloat16 每个数占 2 个字节。"),
            ),
        ),
        otherwise=tr(
            "multiply 2 * 80 layers * 8 heads * 128 * 4096 tokens * 2 bytes.",
            "计算 2 * 80 层 * 8 个头 * 128 * 4096 个词元 * 2 字节。",
        ),
        kind=not_a_byte_count,
    ),
    "``answer``: an int, bytes of keys + values for every layer of one 4096-token sequence.",
)


_D, _HEADS, _GROUPS = 8192, 64, 8
_KV_WIDTH = _GROUPS * (_D // _HEADS)  # 1024
_GQA_PARAMS = _D * _D + 2 * _D * _KV_WIDTH + _D * _D + _D  # 151_003_136
_MHA_PARAMS = 4 * _D * _D + _D


check_gqa_parameter_count = number_checker(
    "check_gqa_parameter_count",
    Number(
        name=tr(
            "GQA parameter count (d=8192, 64 heads, 8 groups)",
            "GQA 的参数量（d=8192，64 个头，8 组）",
        ),
        what=tr(
            "an int: W_query + W_key + W_value + out_proj (weight and bias)",
            "一个 int：W_query + W_key + W_value + out_proj（权重和偏置）",
        ),
        expected=_GQA_PARAMS,
        right=tr(
            f"correct: {_GQA_PARAMS:,} parameters ({_MHA_PARAMS:,} with plain MHA).",
            f"正确：{_GQA_PARAMS:,} 个参数（普通 MHA 是 {_MHA_PARAMS:,} 个）。",
        ),
        wrong=(
            (
                _MHA_PARAMS,
                tr(
                    "that is plain MHA: W_key and W_value map 8192 -> 8 * 128 = 1024 only.",
                    "这是普通 MHA 的结果：W_key 和 W_value 只把 8192 映射到 8 * 128 = 1024。",
                ),
            ),
            (
                _GQA_PARAMS - _D,
                tr(
                    "out_proj has a bias of 8192 numbers as well.",
                    "out_proj 还有一个含 8192 个数的偏置。",
                ),
            ),
        ),
        otherwise=tr(
            "W_query 8192x8192, W_key and W_value 1024x8192 each, out_proj 8192x8192 + 8192.",
            "W_query 是 8192x8192，W_key 和 W_value 各是 1024x8192，out_proj 是 8192x8192 + 8192。",
        ),
        kind=lambda answer: expected_kind(A_PARAMETER_COUNT, answer),
    ),
    "``answer``: an int, ``sum(p.numel() for p in gqa.parameters())`` for that GQA layer.",
)


_PROMPT, _NEW_TOKENS = 4, 12
_WITHOUT_CACHE = sum(range(_PROMPT, _PROMPT + _NEW_TOKENS))  # 4 + 5 + ... + 15 = 114
_WITH_CACHE = _PROMPT + _NEW_TOKENS - 1  # 15


check_projected_tokens = number_checker(
    "check_projected_tokens",
    Number(
        name=tr("prediction: tokens projected without a cache", "预测：没有缓存时被投影的词元数"),
        what=tr(
            "an int: the total number of token rows projected over 12 steps",
            "一个 int：12 步中被投影的词元行的总数",
        ),
        expected=_WITHOUT_CACHE,
        right=tr(
            f"right: 4 + 5 + ... + 15 = {_WITHOUT_CACHE} (with a cache: 15).",
            f"对了：4 + 5 + ... + 15 = {_WITHOUT_CACHE}（有缓存时是 15）。",
        ),
        wrong=(
            (
                _WITH_CACHE,
                tr(
                    "that is the count WITH a cache; without one, every step re-projects all.",
                    "这是有缓存时的数目；没有缓存时，每一步都要把所有词元重新投影一遍。",
                ),
            ),
            (
                _PROMPT * _NEW_TOKENS,
                tr(
                    "the sequence grows by one token per step: 4, then 5, 6, ...",
                    "序列每一步增长一个词元：4，然后 5、6、……",
                ),
            ),
            (
                (_WITHOUT_CACHE + _PROMPT + _NEW_TOKENS, sum(range(_PROMPT + 1, 17))),
                tr(
                    "step 1 projects the 4 prompt tokens, step 12 projects 15 (not 16).",
                    "第 1 步投影提示中的 4 个词元，第 12 步投影 15 个（不是 16 个）。",
                ),
            ),
        ),
        otherwise=tr(
            "step 1 feeds 4 tokens, step 2 feeds 5, ..., step 12 feeds 15: add them up.",
            "第 1 步输入 4 个词元，第 2 步输入 5 个，……，第 12 步输入 15 个：把它们加起来。",
        ),
        whole=True,
    ),
    "Predict-then-run: token rows through the Q/K/V projection, no cache, 12 steps after 4.",
)
