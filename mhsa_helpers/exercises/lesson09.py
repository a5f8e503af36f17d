"""Checkers for lesson 09, efficient attention (融合 QKV 投影, FlashAttention / SDPA).

* ``check_longest_context(answer)`` -- the longest T whose float32 attention weights
  (1, 25, T, T) (GPT-2 XL's 25 heads, batch 1) fit in 1 GiB: the memory formula inverted.
* ``check_key_block(answer, fused)`` -- the W_key block (d_out, d_in) cut out of a fused module's
  ``qkv.weight`` (3 * d_out, d_in): the reverse of stacking.
* ``check_memory_growth(prediction)`` -- predict-then-run: how many times more bytes the
  (b, h, T, T) weights take for 8 x the tokens (64).
* ``check_build_fused_multihead(cls)`` -- "build it": the learner's class with one fused
  ``qkv`` projection and ``out_proj``, run through contract tests against
  ``mh.FusedQKVMultiHeadAttention``; a hint names the typical mistake it recognises.
"""

from __future__ import annotations

import math
import traceback
from functools import partial
from itertools import permutations
from typing import Any

import torch
from torch import nn

from ..attention.efficient import FusedQKVMultiHeadAttention
from ..i18n import Text, tr
from ._build import (
    DROP_THE_CALL,
    INPUT_CHANGED,
    MISTAKE_HINTS,
    MISTAKES,
    BuildSpec,
    ContractError,
    ForwardTexts,
    agrees,
    book_forward,
    build_checker,
    call_forward,
    calls_made,
    causal,
    construct,
    drops_something,
    fill,
    gradients_reach,
    is_view_error,
    linear_layer,
    mask_buffer,
    name_mistake,
    rows_sum_to_one,
    written,
)
from ._kinds import Number, number_checker
from ._parse import not_a_tensor
from ._result import CheckResult, exercise, ok

__all__ = [
    "check_build_fused_multihead",
    "check_key_block",
    "check_longest_context",
    "check_memory_growth",
]

_HEADS, _BATCH, _BYTES, _BUDGET = 25, 1, 4, 2**30  # GPT-2 XL's heads, one sequence, float32, 1 GiB


def _longest(per_entry: float, budget: float = _BUDGET) -> int:
    """The largest T with per_entry * T * T <= budget."""
    return math.isqrt(int(budget // per_entry))


_LONGEST_T = _longest(_BATCH * _HEADS * _BYTES)  # 3276
_GB_T = _longest(_BATCH * _HEADS * _BYTES, 10**9)  # a GB (10**9 bytes) instead of a GiB
_LONGEST_BYTES = _BATCH * _HEADS * _LONGEST_T**2 * _BYTES


check_longest_context = number_checker(
    "check_longest_context",
    Number(
        name=tr(
            "longest context whose weights fit in 1 GiB (GPT-2 XL)",
            "权重能放进 1 GiB 的最长上下文（GPT-2 XL）",
        ),
        what=tr("an int: the number of tokens T", "一个整数，即词元数 T"),
        expected=_LONGEST_T,
        right=tr(
            f"correct: T = {_LONGEST_T} takes {_LONGEST_BYTES:,} bytes; one token more and the "
            "weights no longer fit. Three times GPT-2 XL's context, for one layer and one "
            "sequence.",
            f"正确：T = {_LONGEST_T} 时占 {_LONGEST_BYTES:,} 字节，"
            "再多一个词元就放不下了。这只是 GPT-2 XL 上下文的三倍多，"
            "而且只算了一层、一个序列。",
        ),
        wrong={
            _LONGEST_T + 1: tr(
                "one token too many: at that T the weights take a little more than 1 GiB. "
                "The answer is the largest T that still fits.",
                "多了一个词元。这个 T 下权重比 1 GiB 多出一点。答案是仍然放得下的最大 T。",
            ),
            (_longest(_BATCH * _HEADS), _longest(_BATCH * _HEADS) + 1): tr(
                "that counts floats, not bytes: a float32 takes 4 bytes.",
                "这数的是浮点数的个数，不是字节数。一个 float32 占 4 个字节。",
            ),
            (_longest(_BATCH * _BYTES), _longest(_BATCH * _BYTES) + 1): tr(
                "each of the 25 heads has its own (T, T) matrix.",
                "25 个头各有自己的 (T, T) 矩阵。",
            ),
            (_longest(_BATCH * _HEADS * 2), _longest(_BATCH * _HEADS * 2) + 1): tr(
                "that is for 2-byte numbers (float16, bfloat16); the weights here are float32.",
                "这是按 2 字节的数（float16、bfloat16）算的，而这里的权重是 float32。",
            ),
            (_GB_T, _GB_T + 1): tr(
                "1 GiB is 2**30 bytes, not 10**9 (that is a GB).",
                "1 GiB 是 2**30 字节，不是 10**9 字节（那是 GB）。",
            ),
            _BUDGET // (_BATCH * _HEADS * _BYTES): tr(
                "the weights grow with T * T, not with T: there is one weight per pair of tokens.",
                "权重随 T * T 增长，而不是随 T，因为每一对词元都有一个权重。",
            ),
            1024: tr(
                "that is GPT-2 XL's context today; the question is how far it could grow "
                "within the budget.",
                "这是 GPT-2 XL 现在的上下文长度，问的是在这个预算内它最多能涨到多长。",
            ),
        },
        otherwise=tr(
            "the weights take batch * heads * T * T * 4 bytes; find the largest T for which that "
            "is at most 2**30.",
            "权重占 批次 * 头数 * T * T * 4 字节。找出让它不超过 2**30 的最大 T。",
        ),
        whole=True,
        kind=lambda answer: tr(
            f"expected a whole number of tokens, got {answer!r} ({type(answer).__name__}).",
            f"需要一个整数（词元个数），收到的是 {answer!r}（{type(answer).__name__}）。",
        ),
    ),
    "``answer``: an int, the largest T whose float32 (1, 25, T, T) weights fit in 1 GiB.",
)


_KEY_BLOCK = tr("W_key cut out of the fused weight", "从融合权重中切出 W_key")


@exercise(
    _KEY_BLOCK,
    what=tr(
        "a (d_out, d_in) tensor: the W_key weight cut out of fused_ex.qkv.weight",
        "一个 (d_out, d_in) 张量：从 fused_ex.qkv.weight 中切出的 W_key",
    ),
)
def check_key_block(answer: object, fused: nn.Module) -> CheckResult:
    """``answer``: the (d_out, d_in) W_key block of ``fused.qkv.weight`` (rows d_out..2 d_out)."""
    qkv = getattr(fused, "qkv", None)
    if not isinstance(qkv, nn.Linear) or qkv.out_features % 3 != 0:
        raise ContractError(
            tr(
                "the second argument must be the lesson's fused module `fused_ex`.",
                "第二个参数必须是本课的融合模块 `fused_ex`。",
            ),
        )
    if not isinstance(answer, torch.Tensor):
        raise ContractError(not_a_tensor(answer))
    w_query, w_key, w_value = qkv.weight.chunk(3)  # each (d_out, d_in) of (3 d_out, d_in)
    shape, key_shape = tuple(answer.shape), tuple(w_key.shape)
    if shape != key_shape:
        if answer.dim() == 2 and answer.shape[0] == qkv.out_features:
            raise ContractError(
                tr(
                    f"shape {shape}: the blocks are stacked along the ROWS (dim=0) of "
                    f"the (3 * d_out, d_in) weight; W_key is {key_shape}.",
                    f"形状是 {shape}。这三块是沿着 (3 * d_out, d_in) 权重的行（dim=0）"
                    f"堆叠起来的，W_key 的形状是 {key_shape}。",
                ),
            )
        raise ContractError(
            tr(
                f"shape {shape} but expected {key_shape} = (d_out, d_in).",
                f"形状是 {shape}，应为 {key_shape} = (d_out, d_in)。",
            ),
        )
    if torch.equal(answer, w_key):
        return ok(
            _KEY_BLOCK,
            tr(
                "correct: rows d_out .. 2 * d_out - 1 are W_key.",
                "正确：第 d_out 到 2 * d_out - 1 行就是 W_key。",
            ),
        )
    if torch.equal(answer, w_query):
        raise ContractError(
            tr(
                "that is W_query (the first block); the order is query, key, value.",
                "这是 W_query（第一块）。顺序是查询、键、值。",
            ),
        )
    if torch.equal(answer, w_value):
        raise ContractError(
            tr(
                "that is W_value (the last block); the order is query, key, value.",
                "这是 W_value（最后一块）。顺序是查询、键、值。",
            ),
        )
    raise ContractError(
        tr(
            "W_key is the second of the three equal blocks of rows of fused_ex.qkv.weight "
            "(query, key, value, each d_out rows).",
            "W_key 是 `fused_ex.qkv.weight` 三个等大的行块中的第二块"
            "（依次是查询、键、值，每块 d_out 行）。",
        ),
    )


# -- Build it: a fused-QKV multi-head attention class ------------------------------------------

# (d_in, d_out, context_length, num_heads, b, T): the book's size, then two with head_dim 4.
_BUILD_SIZES = ((3, 4, 6, 2, 2, 6), (8, 12, 10, 3, 2, 9), (6, 16, 9, 4, 3, 7))
#: The fused output viewed per head, (b, T, num_heads, 3, head_dim), as some codebases lay it out.
_PER_HEAD_LAYOUT = "per_head_layout"

#: The wrong orders of the fused output's blocks, by name: "K, Q, V" takes the queries from the
#: second block (W_key's), the keys from the first, the values from the third: (1, 0, 2).
_ORDERS = {", ".join("QKV"[i] for i in order): order for order in permutations(range(3))}
del _ORDERS["Q, K, V"]  # the right one


def _reference(module: Any, x: torch.Tensor, num_heads: int, mistake: str = "") -> torch.Tensor:
    """The correct forward pass of ``module``'s layers, or the one with ``mistake``, for naming
    what went wrong.

    ``mistake``: a key of ``_ORDERS`` (the fused output split in another order),
    ``_PER_HEAD_LAYOUT`` or one of ``_build.MISTAKES``.
    """
    fused = module.qkv(x)  # (b, T, 3 * d_out)
    if mistake == _PER_HEAD_LAYOUT:  # viewed as (b, T, h, 3, head_dim): Q, K, V interleaved
        fused = fused.unflatten(-1, (num_heads, 3, -1)).transpose(-3, -2).flatten(-3)
    blocks = fused.chunk(3, dim=-1)  # 3 x (b, T, d_out)
    queries, keys, values = (blocks[i] for i in _ORDERS.get(mistake, (0, 1, 2)))
    named = mistake if mistake in MISTAKES else None
    return book_forward(queries, keys, values, num_heads, module.out_proj, named)


def _hint_for(module: Any, x: torch.Tensor, got: torch.Tensor, sizes: tuple[int, ...]) -> Text:
    """The hint for an output ``got`` that differs from the book's (run under ``no_grad``)."""
    d_in, d_out, _, num_heads = sizes[:4]
    candidates = (*MISTAKES, *_ORDERS, _PER_HEAD_LAYOUT)
    mistake = name_mistake(got, partial(_reference, module, x, num_heads), candidates)
    if mistake == _PER_HEAD_LAYOUT:
        return tr(
            "the fused output was viewed as (b, T, num_heads, 3, head_dim), with Q, K and V "
            "side by side inside each head; this layer's qkv.weight stacks all of W_query, then "
            "W_key, then W_value, so the layout is (b, T, 3, num_heads, head_dim).",
            "融合输出被看成了 (b, T, num_heads, 3, head_dim)，即每个头里 Q、K、V 挨在一起。"
            "这一层的 qkv.weight 先放全部 W_query，再放 W_key，最后放 W_value，"
            "所以布局是 (b, T, 3, num_heads, head_dim)。",
        )
    if mistake in _ORDERS:
        return tr(
            f"the fused output was split in the order {mistake}; qkv.weight stacks "
            "W_query, W_key, W_value, so split(d_out, dim=-1) gives Q, K, V.",
            f"融合输出是按 {mistake} 的顺序拆开的，"
            "qkv.weight 依次堆叠 W_query、"
            "W_key、W_value，所以 `split(d_out, dim=-1)` 得到的是 Q、"
            "K、V。",
        )
    if mistake in ("scale_d_out", "scale_not_sqrt") and (d_out // num_heads) ** 2 == d_out:
        return tr(  # at this size head_dim == sqrt(d_out): the two slips give the same scores
            "the scores are divided by head_dim itself or by sqrt(d_out) (the same number at "
            f"d_out={d_out}, {num_heads} heads); divide by sqrt(head_dim), keys.shape[-1] ** 0.5 "
            "after the split.",
            f"注意力分数除以的是 head_dim 本身或 sqrt(d_out)（d_out={d_out}、"
            f"{num_heads} 个头时两者相等）"
            "，应该除以 sqrt(head_dim)，"
            "即拆分之后的 keys.shape[-1] ** 0.5。",
        )
    if mistake is not None:
        return MISTAKE_HINTS[mistake]
    return tr(
        f"the output at d_in={d_in}, d_out={d_out}, num_heads={num_heads} differs from "
        "mh.FusedQKVMultiHeadAttention with the same weights; check the "
        "order project -> split Q, K, V -> (b, h, T, head_dim) -> scores / sqrt(head_dim) -> "
        "mask -> softmax -> dropout -> @ V -> merge -> out_proj.",
        f"在 d_in={d_in}、d_out={d_out}、num_heads={num_heads} 时，输出"
        "与权重相同的 `mh.FusedQKVMultiHeadAttention` 不一致。请检查顺序："
        "投影 → 拆成 Q、K、V → (b, h, T, head_dim) → 分数 / sqrt(head_dim) → "
        "掩码 → softmax → dropout → @ V → 合并 → out_proj。",
    )


def _built(cls: type, sizes: tuple[int, ...], dropout: float, qkv_bias: bool) -> Any:
    """The learner's class built at ``sizes``, its layers checked (typed Any: they are)."""
    # (d_in, d_out, context_length, dropout, num_heads)
    module = construct(cls, (*sizes[:3], dropout, sizes[3]), {"qkv_bias": qkv_bias})
    _structure(module, sizes[0], sizes[1], qkv_bias)
    return module


def _book_pair(
    cls: type, sizes: tuple[int, ...], dropout: float, qkv_bias: bool = False
) -> tuple[Any, nn.Module]:
    """The learner's module at ``sizes`` (its layers checked) and the book's class, built after
    ``torch.manual_seed(0)``, holding the same weights; both in eval mode."""
    torch.manual_seed(0)
    d_in, d_out, context_length, num_heads = sizes[:4]
    book = FusedQKVMultiHeadAttention(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
    module = _built(cls, sizes, dropout, qkv_bias)
    module.qkv.load_state_dict(book.qkv.state_dict())
    module.out_proj.load_state_dict(book.out_proj.state_dict())
    return module.eval(), book.eval()


def _ones(cls: type, dropout: float) -> Any:
    """The learner's module at the second size with V = 1 everywhere (the value rows of qkv 0,
    their bias 1) and out_proj = identity: each output entry is the sum of one row of weights."""
    d_out = _BUILD_SIZES[1][1]
    ones = _built(cls, _BUILD_SIZES[1], dropout, True)
    with torch.no_grad():
        ones.qkv.weight[2 * d_out :].zero_()
        ones.qkv.bias.copy_(torch.arange(3 * d_out) >= 2 * d_out)  # the value rows' bias 1
    ones.out_proj.load_state_dict({"weight": torch.eye(d_out), "bias": torch.zeros(d_out)})
    return ones


def _input(seed: int, sizes: tuple[int, ...] = _BUILD_SIZES[1], b: int = 0) -> torch.Tensor:
    """An input (b, T, d_in) at ``sizes`` (``b`` rows if given), from a generator of its own."""
    d_in, *_, batch, num_tokens = sizes
    return torch.randn(b or batch, num_tokens, d_in, generator=torch.Generator().manual_seed(seed))


def _view_hint(error: BaseException) -> Text:
    """Name the ``.view`` on a non-contiguous tensor, from the learner's line if it shows."""
    frames = traceback.extract_tb(error.__traceback__)
    line = (frames[-1].line or "") if frames else ""
    said = tr(
        "a .view raised `view size is not compatible with input tensor's size and stride`",
        "`.view` 报错 `view size is not compatible with input tensor's size and stride`",
    )
    if "transpose" in line and "contiguous" not in line:
        return said + tr(
            " while merging the heads: after a transpose the tensor is not contiguous in "
            "memory; make it contiguous before view, or use reshape.",
            "，发生在合并各头时。转置之后张量在内存中不是连续存储的，"
            "请先让它连续再 view，或者改用 reshape。",
        )
    return said + tr(
        ". Either the heads were merged without making the tensor contiguous after the "
        "transpose (view needs contiguous memory; reshape copies when it must), or Q, K, V "
        "were viewed straight to (b, h, T, head_dim): the heads are split off the last "
        "dimension first, (b, T, h, head_dim), and moved before the tokens afterwards.",
        "。要么是合并各头时，转置之后没有先让张量连续"
        "（view 需要连续的内存，reshape 在必要时会复制），"
        "要么是 Q、K、V 被直接 view 成了 (b, h, T, head_dim)。"
        "应先从最后一维拆出各头，得到 (b, T, h, head_dim)，"
        "再把头这一维移到词元之前。",
    )


def _read_runtime_error(error: RuntimeError, args: tuple[object, ...]) -> Text | None:
    return _view_hint(error) if is_view_error(error) else None


_FORWARD = ForwardTexts(
    raised=tr("forward raised {kind}: {error}", "forward 抛出了 {kind}：{error}"),
    runtime=_read_runtime_error,
    input_changed=INPUT_CHANGED,
    tuple_=tr(
        "forward(x) must return one tensor (b, T, d_out), not a tuple.",
        "forward(x) 必须返回一个张量 (b, T, d_out)，而不是元组。",
    ),
    not_tensor=tr(
        "forward(x) returned {kind}, not a tensor.", "forward(x) 返回的是 {kind}，不是张量。"
    ),
    subclass=tr(
        "forward(x) returned a {kind}; return a plain torch.Tensor.",
        "forward(x) 返回的是 {kind}，请返回普通的 torch.Tensor。",
    ),
    dtype=tr(
        "forward returned {got_dtype} on {got_device} for a {dtype} input on {device}: "
        "keep the input's dtype and device (no .double(), no .to(...)).",
        "输入是 {device} 上的 {dtype}，"
        "forward 却返回了 {got_device} 上的 {got_dtype}。"
        "输出要保持输入的 dtype 和设备，不要用 `.double()`，"
        "也不要用 `.to(...)`。",
    ),
    shape=tr(
        "output shape {got} at d_in={d_in}, d_out={d_out}, "
        "num_heads={num_heads}; expected (b, T, d_out) = {want}.",
        "在 d_in={d_in}、d_out={d_out}、"
        "num_heads={num_heads} 时输出形状是 {got}，"
        "应为 (b, T, d_out) = {want}。",
    ),
)


def _run(module: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``module(x)`` (on a copy of x); anything else is a ``ContractError`` naming it."""
    return call_forward(module, (x,), _FORWARD)


def _structure(module: nn.Module, d_in: int, d_out: int, qkv_bias: bool) -> None:
    """The layers: one fused ``qkv`` (``nn.Linear(d_in, 3 * d_out, bias=qkv_bias)``) and
    ``out_proj`` (``nn.Linear(d_out, d_out)``), no other parameter."""
    written(module)
    separate = any(
        isinstance(getattr(module, n, None), nn.Linear) for n in ("W_query", "W_key", "W_value")
    )
    if separate and not isinstance(getattr(module, "qkv", None), nn.Linear):
        raise ContractError(
            tr(
                "three separate W_query/W_key/W_value layers: this exercise wants ONE fused "
                "nn.Linear(d_in, 3 * d_out) named `qkv`.",
                "这里是三个分开的 W_query/W_key/W_value 层。"
                "本练习要的是一个融合的 `nn.Linear(d_in, 3 * d_out)`，"
                "名叫 `qkv`。",
            )
        )
    linear_layer(
        module, "qkv", (d_in, 3 * d_out), qkv_bias, **_QKV_TEXTS, d_in=d_in, wide=3 * d_out
    )
    linear_layer(module, "out_proj", (d_out, d_out), True, **_OUT_PROJ_TEXTS, d_out=d_out)
    names = {name for name, _ in module.named_parameters()}
    unexpected = sorted(names - {"qkv.weight", "qkv.bias", "out_proj.weight", "out_proj.bias"})
    if unexpected:
        raise ContractError(
            tr(
                f"unexpected parameters {unexpected}: the block has only qkv and out_proj.",
                f"多出了参数 {unexpected}，而这个模块只有 qkv 和 out_proj。",
            )
        )


#: The hints of ``linear_layer`` for the fused ``qkv`` layer and for ``out_proj``.
_QKV_TEXTS = {
    "absent": tr(
        "no nn.Linear named `qkv`: create self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias).",
        "没有名叫 `qkv` 的 nn.Linear。"
        "请创建 `self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)`。",
    ),
    "shape": tr(
        "qkv is nn.Linear({fan_in}, {fan_out}); it must map d_in={d_in} to 3 * d_out = {wide}.",
        "qkv 是 nn.Linear({fan_in}, {fan_out})，它必须把 d_in={d_in} 映射到 3 * d_out = {wide}。",
    ),
    "biased": tr(
        "qkv must have a bias exactly when qkv_bias=True: nn.Linear(..., bias=qkv_bias).",
        "qkv 应当恰好在 qkv_bias=True 时有偏置，即 `nn.Linear(..., bias=qkv_bias)`。",
    ),
}
_OUT_PROJ_TEXTS = {
    "absent": tr(
        "forgot out_proj: add self.out_proj = nn.Linear(d_out, d_out) and apply it last.",
        "忘了 out_proj。请加上 `self.out_proj = nn.Linear(d_out, d_out)`，并在最后使用它。",
    ),
    "shape": tr(
        "out_proj must be nn.Linear(d_out, d_out) = nn.Linear({d_out}, {d_out}).",
        "out_proj 必须是 nn.Linear(d_out, d_out) = nn.Linear({d_out}, {d_out})。",
    ),
    "biased": tr(
        "out_proj always has a bias (the book's nn.Linear(d_out, d_out)), even if qkv has none.",
        "out_proj 总是带偏置（书中的 `nn.Linear(d_out, d_out)`），即使 qkv 没有偏置。",
    ),
}


@torch.no_grad()
def _equal_at_sizes(cls: type) -> None:
    """At each size: the layers, the same output as the book's class, and causal."""
    for sizes, dtype in zip(_BUILD_SIZES, (torch.float32, torch.float32, torch.float64)):
        d_in, d_out, _, num_heads, b, num_tokens = sizes
        module, book = (m.to(dtype) for m in _book_pair(cls, sizes, 0.0))
        x = (2.0 * _input(1, sizes)).to(dtype)  # (b, T, d_in)
        named: dict[str, Any] = {"d_in": d_in, "d_out": d_out, "num_heads": num_heads}
        out = call_forward(module, (x,), _FORWARD, want_shape=(b, num_tokens, d_out), **named)
        agrees(out, book(x), partial(_hint_for, module, x, out, sizes))
        later = torch.cat([x[:, :-1], x[:, -1:] + 3.0], dim=1)  # only the last token changed
        causal(_run(module, later), out, num_tokens - 1, _MASK_LEAKS, rtol=0)


_MASK_LEAKS = tr(
    "changing the last token changed earlier outputs: the mask leaks.",
    "只改了最后一个词元，前面的输出却变了，说明掩码泄露了信息。",
)


def _rows_sum_to_one(cls: type) -> None:
    """With V = 1 everywhere (value weights 0, value bias 1) and out_proj = identity, every
    output entry is the sum of one row of weights."""
    rows_sum_to_one(
        _run(_ones(cls, 0.0).eval(), _input(2)),
        tr(
            "attention rows do not sum to 1 (with V = 1 the output should be all ones): mask "
            "with -inf BEFORE softmax, and softmax over the last dim (the keys).",
            "注意力权重的每行之和不是 1（V = 1 时输出应该全是 1）"
            "。要在 softmax 之前用 -inf 做掩码，"
            "并且在最后一维（键）上做 softmax。",
        ),
    )


_DROPOUT_IN_EVAL = tr(
    "with dropout=0.5 in eval() mode the output changes: dropout must be off in eval mode. "
    "nn.Dropout follows .train() and .eval() by itself; F.dropout does not look at them.",
    "dropout=0.5 时，在 eval() 模式下输出变了。评估模式下 dropout 必须关闭。"
    "nn.Dropout 会自己跟随 .train() 和 .eval()，F.dropout 却不看它们。",
)
_SDPA_IN_EVAL = tr(
    "with dropout=0.5 in eval() mode the output changes: F.scaled_dot_product_attention drops "
    "weights whenever dropout_p > 0, it does not look at .training. Pass the dropout rate in "
    "training mode only (self.training tells which).",
    "dropout=0.5 时，在 eval() 模式下输出变了。只要 dropout_p > 0，"
    "F.scaled_dot_product_attention 就会丢弃权重，它不看 .training。"
    "请只在训练模式下传入 dropout 比例（self.training 会告诉你是哪种模式）。",
)
_NO_DROPOUT = tr(
    "with dropout=0.5 in train() mode nothing is dropped: apply self.dropout to the "
    "attention weights before multiplying with V.",
    "dropout=0.5 时，在 train() 模式下什么也没有被丢弃。"
    "请在与 V 相乘之前，对注意力权重使用 `self.dropout`。",
)
_SDPA_NO_DROPOUT = tr(
    "with dropout=0.5 in train() mode nothing is dropped: F.scaled_dot_product_attention drops "
    "weights only through its dropout_p argument; in training mode pass the dropout rate.",
    "dropout=0.5 时，在 train() 模式下什么也没有被丢弃。F.scaled_dot_product_attention "
    "只通过 dropout_p 参数丢弃权重，训练模式下要把 dropout 比例传给它。",
)


@torch.no_grad()
def _dropout(cls: type) -> None:
    """Dropout: off in eval mode, on in train mode, on the weights, rescaled by 1 / (1 - p)."""
    x = _input(2)
    dropping, book = _book_pair(cls, _BUILD_SIZES[1], 0.5)
    out = _run(dropping, x)
    sdpa = "scaled_dot_product_attention" in calls_made(dropping, (x,))
    agrees(out, book(x), _SDPA_IN_EVAL if sdpa else _DROPOUT_IN_EVAL)
    torch.manual_seed(3)
    out_train = _run(dropping.train(), x)
    drops_something(out_train, out, _SDPA_NO_DROPOUT if sdpa else _NO_DROPOUT, rtol=0)
    # Dropout acts on the weights: with V = 1 everywhere and out_proj = identity, every feature of
    # one head then gets the same (dropped, rescaled) row sum; dropout on the output does not.
    ones = _ones(cls, 0.5).train()
    torch.manual_seed(4)
    per_head = _run(ones, x).unflatten(-1, (_BUILD_SIZES[1][3], -1))  # (b, T, h, head_dim)
    if not torch.allclose(per_head, per_head[..., :1].expand_as(per_head), atol=1e-5, rtol=0):
        raise ContractError(
            tr(
                "dropout is applied after the weighted sum (to the context or the output); the "
                "book drops attention WEIGHTS: weights = self.dropout(weights), then weights @ V.",
                "dropout 用在了加权求和之后，即上下文或输出上。"
                "书中丢弃的是注意力权重，先 `weights = self.dropout(weights)`，"
                "再 `weights @ V`。",
            )
        )
    # Dropout rescales the kept weights by 1 / (1 - p): the row sums (V = 1) average about 1.
    torch.manual_seed(6)
    wide_sums = _run(ones, _input(5, b=16))  # (16, T, d_out)
    # The first token sees only itself: its one weight is dropped (0) or kept as 1 / (1 - p) = 2.
    first = wide_sums[:, 0]  # (16, d_out)
    odd = first[((first - 0.0).abs() > 1e-4) & ((first - 2.0).abs() > 1e-4)]
    if odd.numel() or not (first.abs() < 1e-4).any() or not (first > 1.0).any():
        seen = sorted({round(v, 3) for v in first.flatten().tolist()})[:4]
        raise ContractError(
            tr(
                "with dropout=0.5 in train() mode the first token's single weight (it sees only "
                f"itself) should be 0 when dropped or 1 / (1 - 0.5) = 2 when kept; got {seen}. "
                "Use nn.Dropout(dropout), with the dropout argument, on the attention weights.",
                "dropout=0.5 时，在 train() 模式下第一个词元唯一的权重（它只看得见自己）"
                "被丢弃时应为 0，保留时应为 1 / (1 - 0.5) = 2。"
                f"实际得到 {seen}。请对注意力权重使用 `nn.Dropout(dropout)`，"
                "并传入 dropout 参数。",
            )
        )
    mean = wide_sums.mean().item()
    if not abs(mean - 1.0) < 0.2:
        raise ContractError(
            tr(
                f"with dropout=0.5 in train() mode the attention rows sum to {mean:.2f} on "
                "average, not about 1: dropout must scale the kept weights by 1 / (1 - p). "
                "nn.Dropout does that for you; do not multiply by (1 - p) yourself.",
                f"dropout=0.5 时，在 train() 模式下注意力权重每行之和平均为 {mean:.2f}，"
                "而不是 1 左右。dropout 必须把保留下来的权重乘以 1 / (1 - p)。"
                "`nn.Dropout` 会替你做这件事，"
                "不要自己再乘 (1 - p)。",
            )
        )


_TRAIN_DIFFERS = tr(
    "in train() mode with dropout=0.0 the output differs from the book's class, "
    "although it matched in eval() mode: forward must compute the same thing in both "
    "modes; only the dropout layer may behave differently, and it drops nothing with "
    "dropout=0.0: nn.Dropout(dropout), with the argument.",
    "dropout=0.0 时，train() 模式下的输出与书中的类不同，"
    "eval() 模式下却一致。forward 在两种模式下必须计算同样的东西。"
    "只有 dropout 层的行为可以不同，"
    "而 dropout=0.0 时它什么也不丢弃。"
    "请用 `nn.Dropout(dropout)`，"
    "并传入参数。",
)


def _gradients(cls: type) -> None:
    """Gradients reach every parameter; train mode without dropout computes what eval mode does."""
    module, book = _book_pair(cls, _BUILD_SIZES[1], 0.0, qkv_bias=True)
    x = _input(2)
    out = _run(module.train(), x)
    agrees(out, book.train()(x), _TRAIN_DIFFERS)
    out.square().sum().backward()
    grads = {name: p.grad for name, p in module.named_parameters()}
    qkv = grads.pop("qkv.weight")
    named = [(tr(f"{name}", f"参数 {name}"), grad) for name, grad in grads.items()]
    named += zip(_QKV_BLOCKS, [None] * 3 if qkv is None else qkv.chunk(3))
    gradients_reach(named, lambda name: fill(_NO_GRADIENT, name=name))


#: The three blocks of rows of qkv.weight, each checked for a gradient of its own.
_QKV_BLOCKS = (
    tr("the query rows of qkv.weight", "qkv.weight 中查询对应的行"),
    tr("the key rows of qkv.weight", "qkv.weight 中键对应的行"),
    tr("the value rows of qkv.weight", "qkv.weight 中值对应的行"),
)
_NO_GRADIENT = tr(
    "no gradient reaches {name}: every layer must be used in forward (and nothing detached).",
    "梯度没有传到{name}：forward 中必须用到每一层（而且不能 detach 任何东西）。",
)


def _mask_is_a_buffer(cls: type) -> None:
    """The brief's rule: "a causal mask buffer" (named mask, as in lessons 04 and 06)."""
    mask_buffer(_built(cls, _BUILD_SIZES[0], 0.0, False))


check_build_fused_multihead = build_checker(
    "check_build_fused_multihead",
    BuildSpec(
        name=tr("build a fused-QKV MultiHeadAttention", "动手实现融合 QKV 的 MultiHeadAttention"),
        missing_what=tr(
            "your class (the class itself, e.g. `FusedMultiHeadAttention`)",
            "你的类（类本身，例如 `FusedMultiHeadAttention`）",
        ),
        instance_hint=DROP_THE_CALL,
        not_class_hint=tr(
            "expected a class derived from nn.Module, got {kind}.",
            "需要一个继承自 nn.Module 的类，收到的是 {kind}。",
        ),
        contracts=(_equal_at_sizes, _rows_sum_to_one, _dropout, _gradients, _mask_is_a_buffer),
        passed=tr(
            "correct: same outputs as mh.FusedQKVMultiHeadAttention at 3 sizes, causal, rows sum "
            "to 1, dropout only in train mode, gradients reach qkv and out_proj.",
            "正确：在 3 种尺寸下输出都与 `mh.FusedQKVMultiHeadAttention` 相同，满足因果性，"
            "每行之和为 1，dropout 只在训练模式下起作用，梯度能传到 qkv 和 out_proj。",
        ),
    ),
    """Contract tests for a learner's fused-QKV multi-head attention class.

    ``cls(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`` with one
    ``qkv = nn.Linear(d_in, 3 * d_out)`` and ``out_proj``; ``forward(x)`` for x (b, T, d_in) ->
    (b, T, d_out). Checked at three sizes: layers and parameter names, output shape, equality with
    ``mh.FusedQKVMultiHeadAttention`` after copying ``qkv``/``out_proj``, causality, rows summing
    to 1, dropout only in train mode, gradient flow to every parameter. A mismatch is compared
    with the typical mistakes so the hint can name one.
    """,
)


check_memory_growth = number_checker(
    "check_memory_growth",
    Number(
        name=tr(
            "prediction: weights memory for 8x the tokens", "预测：词元数变为 8 倍时权重占用的内存"
        ),
        what=tr(
            "a number: how many times more bytes the (b, h, T, T) weights take",
            "一个数：(b, h, T, T) 的权重占用的字节数变为原来的多少倍",
        ),
        expected=64,
        right=tr(
            "right: the tensor is T x T per head, so 8x the tokens cost 8 * 8 = 64x.",
            "对了：这个张量每个头是 T x T，所以词元数变为 8 倍，开销就变为 8 * 8 = 64 倍。",
        ),
        wrong={
            8: tr(
                "that would be true for (b, h, T, head_dim) tensors; this one has T twice.",
                "对 (b, h, T, head_dim) 的张量这是对的，而这个张量里 T 出现了两次。",
            ),
            (16, 24, 512): tr(
                "count how often T appears in (b, h, T, T): twice, so the factor is 8^2.",
                "数一数 T 在 (b, h, T, T) 里出现了几次。出现了两次，所以倍数是 8^2。",
            ),
        },
        otherwise=tr(
            "write the bytes as b * h * T * T * 4 and replace T by 8 T.",
            "把字节数写成 b * h * T * T * 4，再把 T 换成 8 T。",
        ),
    ),
    "Predict-then-run: 8 x the tokens multiply the (b, h, T, T) weights' bytes by 8^2 = 64.",
)
