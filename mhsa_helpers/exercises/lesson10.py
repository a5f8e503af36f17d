"""Checkers for lesson 10: cross-attention (交叉注意力), KV cache (KV 缓存), GQA (分组查询注意力).

* ``check_chunk_mask(answer)`` -- a sliding-window cache (window 4: a query sees itself and the 3
  positions before it) holds positions 2..4; the chunk at positions 5 and 6 needs its bool mask
  (True = hidden) over the keys 2..6.
* ``check_kv_cache_bytes(answer)`` -- the most K/V groups (a divisor of 40) whose float16 caches
  for 12 conversations of 6000 tokens fit into 24 GiB, for 48 layers of 40 query heads of size
  128 (10).
* ``check_gqa_parameter_count(answer)`` -- parameters of a Qwen2-7B-like attention layer:
  d = 3584, 28 query heads, 4 K/V groups, biases on Q/K/V and none on the output projection
  (the package's class, and the lesson's formula, give out_proj a bias).
* ``check_projected_tokens(prediction)`` -- predict-then-run: the token rows that go through the
  projection when 12 tokens are generated after a 4-token prompt without a cache (114).
* ``check_kv_cache_step(MyKVCache)`` -- build it: a cache class whose ``append_and_attend(q, k, v)``
  appends the new keys and values and attends with the causal mask at the cache offset.
* ``check_repeat_kv(repeat_kv)`` -- build it: GQA's key/value sharing, (b, g, T, d) ->
  (b, g * n_rep, T, d) with ``repeat_interleave`` semantics.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from itertools import accumulate, pairwise
from typing import Any

import torch

from ..i18n import Text, tr
from ._build import (
    DROP_THE_CALL,
    BuildSpec,
    ContractError,
    ForwardTexts,
    agrees,
    attempt,
    build_checker,
    call_forward,
    name_mistake,
    never_calls,
    tested,
)
from ._kinds import Mask, Number, mask_checker, number_checker
from ._parse import A_PARAMETER_COUNT, expected_kind

__all__ = [
    "check_chunk_mask",
    "check_gqa_parameter_count",
    "check_kv_cache_bytes",
    "check_kv_cache_step",
    "check_projected_tokens",
    "check_repeat_kv",
]

# Exercise 1: a sliding window of 4 (the query and the 3 positions before it); the cache keeps
# positions 2, 3, 4 and the chunk brings positions 5 and 6, so the keys are positions 2..6.
_WINDOW, _FIRST_KEY, _FIRST_NEW, _LAST = 4, 2, 5, 6
#: (2, 5): how many positions each key (2..6) lies before each new query (5, 6).
_BEHIND = torch.arange(_FIRST_NEW, _LAST + 1)[:, None] - torch.arange(_FIRST_KEY, _LAST + 1)
_AHEAD = _BEHIND < 0  # (2, 5): the plain causal mask, no window
_CHUNK_MASK = _AHEAD | (_BEHIND >= _WINDOW)  # (2, 5)
_WINDOW_3 = _AHEAD | (_BEHIND >= _WINDOW - 1)
_TOP_LEFT = torch.ones(2, 5).triu(1).bool()


check_chunk_mask = mask_checker(
    "check_chunk_mask",
    Mask(
        name=tr("mask of a chunk after a sliding-window cache", "滑动窗口缓存之后一段新词元的掩码"),
        what=tr(
            "the chunk's mask in `answer`: a bool tensor, one row per new token, one column per "
            "key, True where attention is hidden",
            "这段新词元的掩码，写进 `answer`。它是一个 bool 张量，每个新词元一行，每个键一列，"
            "被遮住的位置为 True",
        ),
        expected=_CHUNK_MASK,
        shape_hint=tr(
            "one row per new query (positions 5, 6), one column per key (positions 2..6).",
            "每个新查询一行（位置 5、6），每个键一列（位置 2..6）。",
        ),
        dtype_hint=tr(" (use .bool()).", "（用 `.bool()`）。"),
        right=tr(
            "correct: position 5 sees keys 2..5, position 6 sees keys 3..6.",
            "正确。位置 5 看到键 2..5，位置 6 看到键 3..6。",
        ),
        wrong={
            ~_CHUNK_MASK: tr(
                "inverted: in this course True means hidden (SDPA's convention is ~).",
                "弄反了。本课程中 True 表示遮住（SDPA 的约定正好相反，要用 ~ 取反）。",
            ),
            _AHEAD: tr(
                "that is the plain causal mask: the window also hides keys more than 3 "
                "positions back, and key 2 is 4 positions before query 6.",
                "这是普通的因果掩码。窗口还会遮住比查询早 4 个位置及更早的键，"
                "而键 2 正好在查询 6 之前 4 个位置。",
            ),
            _WINDOW_3: tr(
                "that window holds 3 positions; a window of 4 counts the query itself and "
                "the 3 positions before it.",
                "这个窗口只有 3 个位置。大小为 4 的窗口包含查询自己和它之前的 3 个位置。",
            ),
            _TOP_LEFT: tr(
                "that is the top-left aligned mask (what is_causal=True builds): the first "
                "column is key position 2, not 0; compare the positions of query and key.",
                "这是左上角对齐的掩码（is_causal=True 构建的就是它）。第一列是位置 2 的键，"
                "不是位置 0，请比较查询和键的位置。",
            ),
        },
        otherwise=tr(
            "write down each column's key position (2..6) and each row's query position (5, 6): "
            "hide a key after the query, or 4 or more positions before it.",
            "先写出每一列键的位置（2..6）和每一行查询的位置（5、6）。键在查询之后，"
            "或者在查询之前 4 个位置及更早，就遮住它。",
        ),
    ),
    """``answer``: bool (2, 5), True where query 5 or 6 must not see key 2..6 (window of 4).""",
)


# Exercise 2: 24 GiB of KV cache must hold 12 conversations of 6000 tokens at once; 48 layers,
# 40 query heads of 128, float16 (2 bytes). The answer is the largest number of K/V groups (a
# divisor of 40) whose caches fit: 14.56 groups' worth fit, so 10 (14 does not divide 40).
_LAYERS, _Q_HEADS, _HEAD_DIM, _TOKENS, _CONVERSATIONS, _BYTES = 48, 40, 128, 6000, 12, 2
_BUDGET = 24 * 2**30
_DIVISORS = tuple(g for g in range(1, _Q_HEADS + 1) if _Q_HEADS % g == 0)


def _cache_bytes(groups: int, factor: int = 2, layers: int = _LAYERS, nbytes: int = _BYTES) -> int:
    return factor * layers * groups * _HEAD_DIM * _TOKENS * nbytes * _CONVERSATIONS


def _most_groups(budget: float = _BUDGET, divisor: bool = True, **slip: int) -> int:
    """The most K/V groups that fit; with ``divisor=False`` any whole count (maybe above 40).
    ``slip``: ``_cache_bytes``' factor, layers or nbytes as a mistake has them."""
    most = int(budget // _cache_bytes(1, **slip))
    return max(g for g in _DIVISORS if g <= most) if divisor else most


_GROUPS_FIT = _most_groups()  # 10
_NOT_A_DIVISOR = _most_groups(divisor=False)  # 14


def _gb(groups: int) -> str:
    return f"{_cache_bytes(groups) / 1e9:.1f}"


check_kv_cache_bytes = number_checker(
    "check_kv_cache_bytes",
    Number(
        name=tr(
            "K/V groups whose caches fit into 24 GiB",
            "24 GiB 放得下的 K/V 组数",
        ),
        what=tr(
            "the number of key-value groups, an int, in `answer`",
            "K/V 组数（一个整数），写进 `answer`",
        ),
        expected=_GROUPS_FIT,
        right=tr(
            f"correct: {_GROUPS_FIT} groups, {_gb(_GROUPS_FIT)} GB of the "
            f"{_BUDGET / 1e9:.1f} GB in 24 GiB. {_NOT_A_DIVISOR} would fit too, but 40 heads do "
            f"not split into {_NOT_A_DIVISOR} equal groups; the next divisor, 20, needs "
            f"{_gb(20)} GB.",
            f"正确：{_GROUPS_FIT} 组，占 {_gb(_GROUPS_FIT)} GB，24 GiB 共有 "
            f"{_BUDGET / 1e9:.1f} GB。{_NOT_A_DIVISOR} 组也放得下，但 40 个头分不成 "
            f"{_NOT_A_DIVISOR} 个一样大的组。下一个约数 20 需要 {_gb(20)} GB。",
        ),
        wrong={
            20: tr(
                f"20 groups do not fit: 12 caches of 6000 tokens take {_gb(20)} GB, more than "
                f"the {_BUDGET / 1e9:.1f} GB in 24 GiB. Are both keys and values counted?",
                f"20 组放不下。12 个 6000 词元的缓存要占 {_gb(20)} GB，"
                f"超过了 24 GiB 的 {_BUDGET / 1e9:.1f} GB。键和值都算进去了吗？",
            ),
            _Q_HEADS: tr(
                f"40 groups is plain MHA, one K/V head per query head: {_gb(40)} GB, far more "
                "than 24 GiB. Count all 48 layers and all 12 conversations.",
                f"40 组就是普通 MHA，每个查询头一个 K/V 头，要占 {_gb(40)} GB，"
                "远超 24 GiB。48 层和 12 个对话都要算上。",
            ),
            8: tr(
                "8 groups is the lesson's setting. It fits, with room to spare: a larger "
                "divisor of 40 fits too.",
                "8 组是本课用的设置。它放得下，还有富余，更大的某个 40 的约数也放得下。",
            ),
            (_most_groups(nbytes=4), _most_groups(nbytes=4, divisor=False)): tr(
                "float16 takes 2 bytes per number, not 4.",
                "float16 每个数占 2 个字节，不是 4 个。",
            ),
            _most_groups(factor=1, divisor=False): tr(
                "both keys and values are cached, two tensors per layer.",
                "键和值都要缓存，每层两个张量。",
            ),
            (
                _most_groups(layers=1, divisor=False),
                _most_groups(budget=_BUDGET * _CONVERSATIONS, divisor=False),
            ): tr(
                "every one of the 48 layers keeps its own cache, for each of the 12 conversations.",
                "48 层中的每一层都有自己的缓存，12 个对话各有一份。",
            ),
            _most_groups(budget=24e9, divisor=False): tr(
                "a GiB is 2**30 bytes, not 10**9; and the count must divide 40.",
                "1 GiB 是 2**30 字节，不是 10**9 字节。组数还要能整除 40。",
            ),
            _NOT_A_DIVISOR: tr(
                f"{_NOT_A_DIVISOR} groups would fit, but 40 query heads do not split into "
                f"{_NOT_A_DIVISOR} equal groups: take a divisor of 40.",
                f"{_NOT_A_DIVISOR} 组放得下，但 40 个查询头分不成 {_NOT_A_DIVISOR} 个"
                "一样大的组。要取 40 的约数。",
            ),
            lambda v: v > _Q_HEADS: tr(
                "there are at most 40 groups, one per query head.",
                "组数最多是 40，每个查询头一组。",
            ),
            lambda v: v >= 1 and _Q_HEADS % v != 0: tr(
                "every group serves the same number of query heads, so the count must divide 40.",
                "每组服务的查询头一样多，所以组数要能整除 40。",
            ),
            lambda v: v in _DIVISORS and v < _GROUPS_FIT: tr(
                "that many groups fit, but so do more: look for the largest divisor of 40 "
                "that fits.",
                "这么多组放得下，但更多组也放得下。要找放得下的最大的 40 的约数。",
            ),
        },
        otherwise=tr(
            "work out the bytes one K/V group adds to the caches of all 12 conversations, then "
            "how many groups fit into 24 GiB, then take a divisor of 40.",
            "先算出一个 K/V 组给 12 个对话的缓存一共增加多少字节，再看 24 GiB 能放下多少组，"
            "最后取 40 的约数。",
        ),
        whole=True,
    ),
    "``answer``: an int, the most K/V groups (a divisor of 40) whose caches for 12 conversations "
    "of 6000 tokens fit into 24 GiB.",
)


# Exercise 3: a Qwen2-7B-like attention layer: d = 3584, 28 query heads of 128, 4 K/V groups,
# biases on W_query, W_key and W_value, none on the output projection. The package's
# GroupedQueryAttention always gives out_proj a bias, so building it counts d too many.
_D, _HEADS, _GROUPS = 3584, 28, 4
_KV_WIDTH = _GROUPS * (_D // _HEADS)  # 512
_WEIGHTS = _D * _D + 2 * _D * _KV_WIDTH + _D * _D
_GQA_PARAMS = _WEIGHTS + _D + 2 * _KV_WIDTH  # + the Q/K/V biases, no output bias
_PACKAGE = _GQA_PARAMS + _D  # GroupedQueryAttention(..., qkv_bias=True): out_proj has a bias
_MHA_PARAMS = 4 * _D * _D + 3 * _D


check_gqa_parameter_count = number_checker(
    "check_gqa_parameter_count",
    Number(
        name=tr(
            "parameters of a GQA layer with Q/K/V biases and no output bias",
            "有 Q/K/V 偏置、无输出偏置的 GQA 层的参数量",
        ),
        what=tr(
            "the layer's number of parameters, an int, in `answer`",
            "这一层的参数个数（一个整数），写进 `answer`",
        ),
        expected=_GQA_PARAMS,
        right=tr(
            f"correct: {_GQA_PARAMS:,} parameters; the package's GroupedQueryAttention with "
            f"qkv_bias=True has {_PACKAGE:,} (its out_proj has a bias).",
            f"正确：{_GQA_PARAMS:,} 个参数。包里带 qkv_bias=True 的 GroupedQueryAttention 有 "
            f"{_PACKAGE:,} 个（它的 out_proj 有偏置）。",
        ),
        wrong={
            _PACKAGE: tr(
                "that counts a bias on the output projection, as the package's class has; "
                "this layer's output projection has none.",
                "这个数包含了输出投影的偏置，包里的类确实有它。但这一层的输出投影没有偏置。",
            ),
            (_WEIGHTS, _WEIGHTS + _D): tr(
                "the biases of W_query, W_key and W_value are missing: one number per output "
                "of each.",
                "缺少 W_query、W_key 和 W_value 的偏置。每个输出各有一个偏置。",
            ),
            (_WEIGHTS + 3 * _D, _WEIGHTS + 4 * _D): tr(
                "a bias has one number per output: W_key and W_value output only the K/V "
                "width (4 groups of 128).",
                "偏置的长度等于输出的维度。W_key 和 W_value 只输出 K/V 的宽度（4 组，每组 128）。",
            ),
            (_MHA_PARAMS, _MHA_PARAMS + _D): tr(
                "that is plain MHA: W_key and W_value map 3584 to the K/V width only.",
                "这是普通 MHA 的结果。W_key 和 W_value 只映射到 K/V 的宽度。",
            ),
        },
        otherwise=tr(
            "count each of the four Linear layers: its weight (outputs x inputs) and, where it "
            "has one, its bias (one number per output).",
            "逐个数四个 Linear 层。权重是输出数乘输入数。有偏置的层，每个输出再加一个偏置。",
        ),
        kind=lambda answer: expected_kind(A_PARAMETER_COUNT, answer),
    ),
    "``answer``: an int, the parameters of a Qwen2-7B-like attention layer (d = 3584, 28 heads, "
    "4 K/V groups, Q/K/V biases, no output bias).",
)


_PROMPT, _NEW_TOKENS = 4, 12
_WITHOUT_CACHE = sum(range(_PROMPT, _PROMPT + _NEW_TOKENS))  # 4 + 5 + ... + 15 = 114
_WITH_CACHE = _PROMPT + _NEW_TOKENS - 1  # 15


check_projected_tokens = number_checker(
    "check_projected_tokens",
    Number(
        name=tr("prediction: tokens projected without a cache", "预测：没有缓存时被投影的词元数"),
        what=tr(
            "your guess in `prediction`, an int: the token rows projected in total",
            "你的猜测（一个整数），写进 `prediction`，即总共被投影的词元行数",
        ),
        expected=_WITHOUT_CACHE,
        right=tr(
            f"right: 4 + 5 + ... + 15 = {_WITHOUT_CACHE} (with a cache: 15).",
            f"对了：4 + 5 + ... + 15 = {_WITHOUT_CACHE}（有缓存时是 15）。",
        ),
        wrong={
            _WITH_CACHE: tr(
                "that is the count WITH a cache; without one, every step re-projects all.",
                "这是有缓存时的数目。没有缓存时，每一步都要把所有词元重新投影一遍。",
            ),
            _PROMPT * _NEW_TOKENS: tr(
                "the sequence grows by one token per step: 4, then 5, 6, ...",
                "序列每一步增长一个词元，先是 4，然后是 5、6、……",
            ),
            (_WITHOUT_CACHE + _PROMPT + _NEW_TOKENS, sum(range(_PROMPT + 1, 17))): tr(
                "step 1 projects the 4 prompt tokens, step 12 projects 15 (not 16).",
                "第 1 步投影提示中的 4 个词元，第 12 步投影 15 个（不是 16 个）。",
            ),
        },
        otherwise=tr(
            "step 1 feeds 4 tokens, step 2 feeds 5, ..., step 12 feeds 15: add them up.",
            "第 1 步输入 4 个词元，第 2 步输入 5 个，……，第 12 步输入 15 个。把它们加起来。",
        ),
        whole=True,
    ),
    "Predict-then-run: token rows through the Q/K/V projection, no cache, 12 steps after 4.",
)


# -- build it: a KV cache that appends and attends -------------------------------------------------

#: The slips of a cached attention step that ``_cached_attention`` reproduces.
_KV_MISTAKES = (
    "top_left_mask",
    "no_mask",
    "no_cache",
    "cache_queries",
    "values_are_keys",
    "no_scaling",
)

#: Each slip's hint; None: the outputs are wrong in another way.
_KV_HINTS: dict[str | None, Text] = {
    "top_left_mask": tr(
        "the causal mask ignores the cache offset: the n new queries sit at positions "
        "offset .. offset + n - 1, so take rows offset:offset + n of the full (T, T) mask, "
        "not the top-left (n, T) block.",
        "因果掩码没有考虑缓存的偏移量。n 个新查询位于 offset .. offset + n - 1，"
        "所以要取完整 (T, T) 掩码的第 offset:offset + n 行，而不是左上角的 (n, T) 块。",
    ),
    "no_mask": tr(
        "one token at a time works, but a chunk of several new tokens sees its own future: "
        "mask the keys after each query (rows offset:offset + n of the full causal mask).",
        "一次一个词元时没问题，但一次送入几个新词元时，它们能看到自己的未来。"
        "请遮住每个查询之后的键（完整因果掩码的第 offset:offset + n 行）。",
    ),
    "no_cache": tr(
        "the new queries attend only to the new keys: append k and v to self.keys and "
        "self.values (torch.cat along the token dim), then attend to everything cached.",
        "新查询只关注了新的键。请把 k 和 v 追加到 self.keys 和 self.values 上"
        "（沿词元维度 torch.cat），再对缓存里的全部内容计算注意力。",
    ),
    "cache_queries": tr(
        "the cache holds the queries: cache the keys k (and the values v); a query is used once, "
        "at its own step, and never needs to be kept.",
        "缓存里存的是查询。应该缓存键 k（和值 v）。查询只在自己那一步用一次，不需要保存。",
    ),
    "values_are_keys": tr(
        "self.values holds the keys: cache v there; the weights multiply the cached values.",
        "self.values 里存的是键。这里应该存 v，注意力权重乘的是缓存的值。",
    ),
    "no_scaling": tr(
        "the scores are not scaled: divide q @ keys.transpose(-2, -1) by sqrt(head_dim).",
        "注意力分数没有缩放。请把 q @ keys.transpose(-2, -1) 除以 sqrt(head_dim)。",
    ),
    None: tr(
        "fed chunk by chunk, the outputs differ from one causal attention over the whole "
        "sequence: append k and v along the token dim, then softmax(q K^T / sqrt(d)) "
        "with the causal mask at the cache offset, times V.",
        "分段送入时，输出与对整个序列做一次因果注意力的结果不同。请沿词元维度追加 k 和 v，"
        "再计算带缓存偏移因果掩码的 softmax(q K^T / sqrt(d))，乘以 V。",
    ),
}


def _cached_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, chunks: tuple[int, ...], mistake: str = ""
) -> torch.Tensor:
    """The outputs (b, h, T, d) of feeding q, k, v (b, h, T, d) chunk by chunk through a cache,
    right or with ``mistake`` (one of ``_KV_MISTAKES``; "" for none)."""
    outputs = []
    for start, end in _spans(chunks):
        first = start if mistake == "no_cache" else 0
        keys = (q if mistake == "cache_queries" else k)[:, :, first:end]  # (b, h, T_k, d)
        values = (k if mistake == "values_are_keys" else v)[:, :, first:end]  # (b, h, T_k, d)
        offset = 0 if mistake == "top_left_mask" else start - first  # of the first new query
        hidden = torch.ones(end - start, end - first, dtype=torch.bool).triu(offset + 1)  # (n, T_k)
        scale = 1.0 if mistake == "no_scaling" else q.shape[-1] ** 0.5
        scores = q[:, :, start:end] @ keys.transpose(-2, -1) / scale  # (b, h, n, T_k)
        hidden &= mistake != "no_mask"  # that slip hides nothing
        outputs.append(torch.softmax(scores.masked_fill(hidden, -torch.inf), dim=-1) @ values)
    return torch.cat(outputs, dim=-2)  # (b, h, T, d)


def _spans(chunks: tuple[int, ...], start: int = 0) -> Iterator[tuple[int, int]]:
    """(start, end) of each of ``chunks``, fed one after the other after ``start`` tokens."""
    return pairwise(accumulate(chunks, initial=start))


#: (b, h, head_dim, chunks): max_len is the sum of the chunks (the lesson uses other sizes).
_KV_SIZES = ((2, 3, 4, (3, 1, 2, 1, 1)), (1, 2, 5, (1, 1, 4, 1)))


_CAT_DIM = re.compile(r"Sizes of tensors must match except in dimension (\d+)")


def _cat_reading(error: RuntimeError, args: tuple[object, ...]) -> Text | None:
    """torch.cat along another dim than the tokens' fails on chunks of different lengths."""
    found = _CAT_DIM.search(str(error))
    if found is None or found.group(1) == "2":
        return None
    return tr(
        f"torch.cat joined the cache along dim {found.group(1)} and failed: keys and values are "
        "(b, h, T, head_dim) and the tokens are dim 2, so concatenate with torch.cat(..., dim=-2).",
        f"torch.cat 沿第 {found.group(1)} 维拼接缓存，失败了。键和值的形状是 (b, h, T, head_dim)，"
        "词元在第 2 维，所以要用 torch.cat(..., dim=-2) 拼接。",
    )


_KV_TEXTS = ForwardTexts(
    call=tr("append_and_attend", "函数 append_and_attend"),
    tuple_=tr(
        "append_and_attend returned a tuple; return only the output (b, h, n, d).",
        "append_and_attend 返回了一个元组。只返回输出 (b, h, n, d) 即可。",
    ),
    input_changed=tr(
        "append_and_attend changed its argument q in place; compute new tensors instead.",
        "append_and_attend 原地修改了参数 q。请改为计算新的张量。",
    ),
    dtype=tr(
        "the output is {got_dtype} on {got_device}; keep the inputs' {dtype} on {device}.",
        "输出是 {got_device} 上的 {got_dtype}，应该保持输入的 {dtype}（{device}）。",
    ),
    shape=tr(
        "the output has shape {got}; the new tokens' output is {want}: one row per new query.",
        "输出的形状是 {got}，新词元的输出应该是 {want}，每个新查询一行。",
    ),
    runtime=_cat_reading,
    not_written=tr(
        "append_and_attend is not written yet (it raises NotImplementedError).",
        "append_and_attend 还没有写（它抛出 NotImplementedError）。",
    ),
)


def _new_cache(cls: type, max_len: int) -> Any:
    cache = attempt(
        lambda: cls(max_len),
        tr("{cls}({max_len}) raised {kind}: {said}", "{cls}({max_len}) 抛出了 {kind}：{said}"),
        cls=cls.__name__,
        max_len=max_len,
    )
    if not callable(getattr(cache, "append_and_attend", None)):
        raise ContractError(
            tr(
                f"{cls.__name__} has no method `append_and_attend` yet: write it under "
                "`# YOUR CODE HERE`, then run the cell again.",
                f"{cls.__name__} 还没有 `append_and_attend` 方法。"
                "请在 `# 在这里写代码` 下面写好它，"
                "再运行这个单元格。",
            ),
            todo=True,
        )
    return cache


#: (the attribute, what it holds instead) -> the hint.
_HOLDS_WRONG: dict[tuple[str, str], Text] = {
    ("keys", "queries"): tr(
        "self.keys holds the queries: cache the keys k there; a query is used once, at its own "
        "step.",
        "self.keys 里存的是查询。这里应该缓存键 k，查询只在自己那一步用一次。",
    ),
    ("keys", "values"): tr(
        "self.keys holds the values: cache the keys k there.",
        "self.keys 里存的是值。这里应该缓存键 k。",
    ),
    ("values", "queries"): tr(
        "self.values holds the queries: cache the values v there.",
        "self.values 里存的是查询。这里应该缓存值 v。",
    ),
    ("values", "keys"): tr(
        "self.values holds the keys: cache the values v there.",
        "self.values 里存的是键。这里应该缓存值 v。",
    ),
}


def _cached_tensors(
    cache: Any, seen: dict[str, torch.Tensor], unless: Sequence[torch.Size] = ()
) -> None:
    """``cache.keys`` and ``cache.values`` (each when it is a tensor, of no shape in ``unless``)
    must equal ``seen``'s, of the queries, keys and values of the tokens so far; name what one
    holds instead."""
    for name in ("keys", "values"):
        held = getattr(cache, name, None)
        if not isinstance(held, torch.Tensor) or held.shape in unless:
            continue
        got, shape = tuple(held.shape), tuple(seen[name].shape)
        grown = [d for d in range(len(got)) if len(got) == len(shape) and got[d] != shape[d]]
        if grown == [2] and got[2] < shape[2]:
            raise ContractError(_KV_HINTS["no_cache"])
        if grown:
            raise ContractError(
                tr(
                    f"after the step self.{name} has shape {got}, not {shape} "
                    f"(b, h, T_cached, head_dim): it grew along dim {grown[0]}; concatenate "
                    "along the token dim, torch.cat(..., dim=-2).",
                    f"这一步之后 self.{name} 的形状是 {got}，不是 {shape}"
                    f"（b, h, T_cached, head_dim）。它在第 {grown[0]} 维上增长了。"
                    "应该沿词元维度拼接，torch.cat(..., dim=-2)。",
                )
            )
        if got != shape:
            raise ContractError(
                tr(
                    f"after the step self.{name} has shape {got}, not {shape} "
                    "(b, h, T_cached, head_dim): append the new tokens along the token dim, "
                    "torch.cat(..., dim=-2).",
                    f"这一步之后 self.{name} 的形状是 {got}，不是 {shape}"
                    "（b, h, T_cached, head_dim）。"
                    "应该沿词元维度追加新词元，torch.cat(..., dim=-2)。",
                )
            )
        if not torch.allclose(held, seen[name]):
            for other, tensor in seen.items():
                if torch.allclose(held, tensor):
                    raise ContractError(_HOLDS_WRONG[name, other])


_NOWHERE = Text("", "")

#: The hints of ``_step`` beside ``_KV_TEXTS``: k or v written to, the chunk that fills the
#: cache refused.
_KV_IN_PLACE = tr(
    "append_and_attend changed its argument k or v in place; store new "
    "tensors (torch.cat makes one).",
    "append_and_attend 原地修改了参数 k 或 v。请保存新的张量（torch.cat 会生成新张量）。",
)
_FULL_REFUSED = tr(
    "append_and_attend raised ValueError for the chunk that fills the cache to exactly max_len "
    "tokens: the limit is off by one. The cache may hold exactly max_len tokens; refuse new "
    "tokens only when the cached ones plus the new ones exceed max_len.",
    "这一段新词元正好把缓存填满到 max_len 个，append_and_attend 却抛出了 ValueError，"
    "上限差了一个。缓存可以正好放下 max_len 个词元。"
    "只有已缓存的词元加上新词元超过 max_len 时，才拒绝新词元。",
)


def _step(
    cache: Any, qkv: Sequence[torch.Tensor], start: int, end: int, where: Text
) -> torch.Tensor:
    """The cache's output (b, h, n, d) for the tokens ``start:end`` of ``qkv`` (b, h, T, d)
    each: it must leave its k and v as they were and then hold the keys and values of the tokens
    so far. The cache is made for the T tokens of ``qkv`` (max_len = T): it has room for every
    chunk. ``where``, the test setting (or nothing), ends the hints in a bracket (``tested``)."""
    q, k, v = (x[:, :, start:end] for x in qkv)  # (b, h, n, d) each
    given = (k.clone(), v.clone())  # fresh tensors: version 0 until written to
    seen = dict(zip(("queries", "keys", "values"), (x[:, :, :end] for x in qkv), strict=True))
    try:
        out = call_forward(
            cache.append_and_attend, (q, *given), _KV_TEXTS, where=where, want_shape=tuple(q.shape)
        )
    except ContractError as error:
        # a cache grown along another dim is a clearer hint than the error it caused
        _cached_tensors(cache, seen, [seen["keys"][:, :, :t].shape for t in (start, end)])
        # the learner's exception is the one call_forward was handling when it raised
        if isinstance(error.__context__, ValueError) and end == qkv[0].shape[-2]:
            raise ContractError(tested(_FULL_REFUSED, where)) from None
        raise
    if any(x._version for x in given) or not all(map(torch.equal, given, (k, v))):
        raise ContractError(tested(_KV_IN_PLACE, where))
    _cached_tensors(cache, seen)
    return out


def _same_as_full_attention(cls: type) -> None:
    for (b, h, d, chunks), dtype in zip(_KV_SIZES, (torch.float32, torch.float64), strict=True):
        T = sum(chunks)
        q, k, v = (torch.randn(b, h, T, d, dtype=dtype) for _ in range(3))  # (b, h, T, d) each
        cache = _new_cache(cls, T)
        where = tr(
            f"b={b}, h={h}, head_dim={d}, chunks {chunks}",
            f"b={b}，h={h}，head_dim={d}，分段 {chunks}",
        )
        got = torch.cat([_step(cache, (q, k, v), *span, where) for span in _spans(chunks)], dim=-2)
        mistake = name_mistake(
            got, partial(_cached_attention, q, k, v, chunks), ("", *_KV_MISTAKES)
        )
        if mistake != "":  # a known slip, or None: another one
            raise ContractError(tested(_KV_HINTS[mistake], where))


#: (max_len, chunks taken first, the chunk refused, chunks taken after): chunks that cross
#: max_len from an empty cache, from a half-full one and from a full one.
_BOUND_CASES = ((5, (3,), 4, (2,)), (5, (3, 2), 1, ()), (1, (), 2, (1,)))


def _refuses(cache: Any, cls: type, max_len: int, held: int, size: tuple[int, ...]) -> None:
    """The cache holding ``held`` tokens must refuse new ones of ``size`` with ``ValueError``."""
    n = size[2]
    try:
        cache.append_and_attend(*(torch.randn(size) for _ in range(3)))
    except ValueError:
        return
    except Exception as error:  # the learner's code may raise anything
        raise ContractError(
            tr(
                f"{n} token(s) beyond max_len raised {type(error).__name__}; raise a ValueError "
                "that says the cache is full, before changing anything.",
                f"超出 max_len 的 {n} 个词元抛出了 {type(error).__name__}。请抛出 ValueError，"
                "说明缓存已满，而且要在改动任何东西之前抛出。",
            )
        ) from None
    raise ContractError(
        tr(
            f"{cls.__name__}({max_len}) holding {held} token(s) took {n} more: {held + n} "
            f"exceed max_len. Before appending, raise ValueError when the cached tokens plus "
            "the new ones exceed max_len (not only when the cache is already full).",
            f"{cls.__name__}({max_len}) 已有 {held} 个词元，又接受了 {n} 个，共 {held + n} 个，"
            "超过了 max_len。追加之前，如果已缓存的词元加上新词元超过 max_len，就抛出 "
            "ValueError（不只是在缓存已满时）。",
        )
    )


_KEPT_REFUSED = tr(
    "the refused tokens were still appended: after the ValueError the cache must be as before, "
    "so check the length before appending (torch.cat or list.append).",
    "被拒绝的词元仍然被留在了缓存里。抛出 ValueError 之后缓存必须保持原样，"
    "所以要在追加（torch.cat 或 list.append）之前检查长度。",
)


def _bounded(cls: type) -> None:
    """The bound, through the public behaviour: a chunk that crosses max_len is refused, and
    the cache then behaves as if it had never been offered (the later outputs are those of one
    causal attention over the taken tokens, and it takes exactly up to max_len)."""
    b, h, d = 1, 2, 3
    for max_len, before, refused, after in _BOUND_CASES:
        cache = _new_cache(cls, max_len)
        q, k, v = (torch.randn(b, h, sum(before + after), d) for _ in range(3))  # (b, h, T, d) each
        outs = [_step(cache, (q, k, v), *span, _NOWHERE) for span in _spans(before)]
        _refuses(cache, cls, max_len, sum(before), (b, h, refused, d))
        for start, end in _spans(after, sum(before)):
            new = [x[:, :, start:end] for x in (q, k, v)]  # (b, h, n, d) each
            out = attempt(partial(cache.append_and_attend, *new), _KEPT_REFUSED)
            if not isinstance(out, torch.Tensor) or tuple(out.shape) != (b, h, end - start, d):
                raise ContractError(_KEPT_REFUSED)
            outs.append(out)
        # the later queries must not attend to the refused keys
        agrees(torch.cat(outs, dim=-2), _cached_attention(q, k, v, before + after), _KEPT_REFUSED)
        if sum(before + after) == max_len:  # full now: one more token is refused too
            _refuses(cache, cls, max_len, max_len, (b, h, 1, d))


check_kv_cache_step = build_checker(
    "check_kv_cache_step",
    BuildSpec(
        name=tr(
            "build it: a KV cache that appends and attends",
            "动手实现：先追加、再算注意力的 KV 缓存",
        ),
        missing_what=tr(
            "your class once it is written (`answer = MyKVCache`, the class itself)",
            "写好的类（`answer = MyKVCache`，类本身）",
        ),
        instance_hint=DROP_THE_CALL,
        not_class_hint=tr(
            "expected the class itself (write `answer = MyKVCache`, no parentheses), got {kind}.",
            "需要类本身（写 `answer = MyKVCache`，不带括号），收到的是 {kind}。",
        ),
        modules_only=False,
        contracts=(_same_as_full_attention, _bounded),
        passed=tr(
            "correct: fed in uneven chunks at two sizes, your cache gives the outputs of one "
            "causal attention over the whole sequence, and refuses a token beyond max_len.",
            "正确。在两种尺寸下分段送入不均匀的块，你的缓存给出的输出与对整个序列做一次"
            "因果注意力相同，而且拒绝超出 max_len 的词元。",
        ),
        seed=10,
    ),
    """Contract tests for a learner's KV cache class.

    ``cls(max_len)`` keeps ``self.keys`` / ``self.values`` (b, h, T_cached, head_dim);
    ``append_and_attend(q, k, v)`` takes the new tokens' projected queries, keys and values
    (b, h, n, head_dim), appends k and v, and returns (b, h, n, head_dim): causal attention of
    the new queries over every cached key. Checked at two sizes in uneven chunks against one
    causal pass, the cached tensors, inputs left unchanged, and a ``ValueError`` beyond max_len.
    """,
)


# -- build it: GQA's key/value sharing -----------------------------------------------------------


#: (b, g, T, d, n_rep): other sizes than the lesson's, n_rep = 1 included.
_REPEAT_SIZES = ((2, 3, 5, 4, 2), (1, 2, 3, 6, 4), (2, 4, 2, 3, 1))

_REPEAT_TEXTS = ForwardTexts(
    call=tr(
        "repeat_kv(x, n_rep={n_rep}) with x {shape}",
        "repeat_kv(x, n_rep={n_rep})（x 的形状是 {shape}）",
    ),
    input_changed=tr(
        "repeat_kv changed its input x in place; return a new tensor (a view is fine).",
        "repeat_kv 原地修改了输入 x。请返回新的张量（视图也可以）。",
    ),
    dtype=tr(
        "the output is {got_dtype} on {got_device}; keep x's {dtype} on {device}.",
        "输出是 {got_device} 上的 {got_dtype}，应该保持 x 的 {dtype}（{device}）。",
    ),
    not_written=tr(
        "repeat_kv is not written yet (it raises NotImplementedError).",
        "repeat_kv 还没有写（它抛出 NotImplementedError）。",
    ),
)


def _repeat_shape_hint(got: tuple[int, ...], b: int, g: int, T: int, d: int, n: int) -> Text:
    where = {
        (b * n, g, T, d): tr("dim 0 (the batch)", "dim=0（批次）"),
        (b, g, T * n, d): tr("dim 2 (the tokens)", "dim=2（词元）"),
        (b, g, T, d * n): tr("dim 3 (head_dim)", "dim=3（每个头的宽度 head_dim）"),
    }.get(tuple(got))  # type: ignore[arg-type]
    want = (b, g * n, T, d)
    if where is not None:
        return (
            tr(f"the output has shape {got}: it repeats along ", f"输出的形状是 {got}，它沿着")
            + where
            + tr(
                f" instead of the heads; repeat along dim 1 to get {want}.",
                f"重复，而不是沿着头。应该沿 dim=1（头）重复，得到 {want}。",
            )
        )
    if got == (b, g, T, d):
        return tr(
            f"the output is x's shape {got}: each K/V head must appear n_rep = {n} times, {want}.",
            f"输出仍是 x 的形状 {got}。每个 K/V 头要出现 n_rep = {n} 次，得到 {want}。",
        )
    return tr(
        f"the output has shape {got}; (b, g, T, d) = {(b, g, T, d)} with n_rep = {n} must "
        f"give {want}.",
        f"输出的形状是 {got}。(b, g, T, d) = {(b, g, T, d)}，n_rep = {n} 时应该得到 {want}。",
    )


#: One dtype per size: "dtype kept" is tried where a new float32 tensor would show.
_REPEAT_DTYPES = (torch.float32, torch.bfloat16, torch.float64)


def _repeats_heads(fn: Callable[..., object]) -> None:
    for (b, g, T, d, n), dtype in zip(_REPEAT_SIZES, _REPEAT_DTYPES, strict=True):
        x = torch.randn(b, g, T, d).to(dtype)  # (b, g, T, d)
        out = call_forward(fn, (x, n), _REPEAT_TEXTS, n_rep=n, shape=tuple(x.shape))
        if tuple(out.shape) != (b, g * n, T, d):
            raise ContractError(_repeat_shape_hint(tuple(out.shape), b, g, T, d, n))
        if torch.equal(out, x.repeat_interleave(n, dim=1)):
            continue
        if torch.equal(out, x.repeat(1, n, 1, 1)):
            raise ContractError(
                tr(
                    "the heads are grouped wrongly: your output's heads are the K/V heads "
                    f"{list(range(g)) * n}, the whole set tiled n_rep times, but GQA gives each "
                    "K/V head n_rep consecutive query heads (0, 0, 1, 1, ...): where the axis "
                    "of copies sits before the reshape decides which heads end up side by side.",
                    f"头的分组不对。你的输出依次是 K/V 头 {list(range(g)) * n}，"
                    "即整组平铺了 n_rep 次，"
                    "而 GQA 让每个 K/V 头服务 n_rep 个相邻的查询头（0、0、1、1……）。"
                    "reshape 之前，副本所在的新轴放在哪里，决定了哪些头相邻。",
                )
            )
        raise ContractError(
            tr(
                f"with n_rep = {n}, output head i must equal x[:, i // n_rep] (b, g, T, d) = "
                f"{(b, g, T, d)}.",
                f"n_rep = {n} 时，输出的第 i 个头必须等于 x[:, i // n_rep]（(b, g, T, d) = "
                f"{(b, g, T, d)}）。",
            )
        )


def _without_repeat_interleave(fn: Callable[..., object]) -> None:
    """The brief's rule: "this time without repeat_interleave" (expand and reshape instead)."""
    x = torch.randn(2, 2, 3, 4)  # (b, g, T, d)
    never_calls(
        fn,
        (x, 3),
        {"repeat_interleave"},
        tr(
            "the heads are right, but the exercise asks for them without repeat_interleave "
            "(one way: add a new axis, expand it, a view with no copy, then reshape).",
            "头是对的，但题目要求不用 repeat_interleave（一种做法：先加一个新轴，用 expand "
            "扩展它，这是视图，不复制数据，再 reshape）。",
        ),
    )


check_repeat_kv = build_checker(
    "check_repeat_kv",
    BuildSpec(
        name=tr(
            "build it: repeat_kv, GQA's key/value sharing", "动手实现 repeat_kv（GQA 的键/值共享）"
        ),
        answer="function",
        function_name="repeat_kv",
        reject_classes=True,
        contracts=(_repeats_heads, _without_repeat_interleave),
        passed=tr(
            "correct: at three sizes (n_rep = 1 too) each K/V head serves n_rep consecutive "
            "query heads, as in mh.GroupedQueryAttention.",
            "正确。在三种尺寸下（包括 n_rep = 1），每个 K/V 头都服务 n_rep 个相邻的查询头，"
            "与 mh.GroupedQueryAttention 一致。",
        ),
        seed=10,
    ),
    """Contract tests for a learner's ``repeat_kv(x, n_rep)``: (b, g, T, d) -> (b, g * n_rep, T, d),
    output head i = x[:, i // n_rep] (repeat_interleave on dim 1), input unchanged, dtype kept.
    """,
)
