"""Checkers for lesson 11: padded batches and key padding masks (填充掩码).

* ``check_blind_rows(answer)`` -- how many query rows see no key at all in a causal layer on
  three sequences of lengths 3, 1 and 4 left-padded to 5 tokens: 7, one per pad.
* ``check_masked_softmax(answer)`` -- a function ``masked_softmax(scores, hidden)``: softmax over
  the visible positions of each row, exactly 0 on hidden ones, and a row of zeros (no NaN, not
  even in the gradient) when every position of a row is hidden.
* ``check_hf_to_additive_mask(answer)`` -- a function ``hf_to_additive(attention_mask, dtype)``:
  a Hugging Face mask (int (b, T), 1 = real token) into the float mask in ``dtype`` that SDPA adds
  to the scores of an encoder (0 at real keys, a finite fill at pads), in float32, float16, bf16.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from itertools import product

import torch
from torch.overrides import TorchFunctionMode

from ..i18n import Text, tr
from ._build import (
    UNWRITTEN_FUNCTION,
    BuildSpec,
    ContractError,
    ForwardTexts,
    attempt,
    build_checker,
    call_forward,
)
from ._kinds import Number, number_checker

__all__ = ["check_blind_rows", "check_hf_to_additive_mask", "check_masked_softmax"]


def _left_padded(pads: torch.Tensor | list[int], t: int) -> torch.Tensor:
    """(b, T, T) hidden of a causal layer on sequences left-padded to ``t`` tokens, ``pads`` of
    them pads: True at a future key or a pad key."""
    left = torch.arange(t) < torch.as_tensor(pads)[:, None]  # (b, T): pads first, then the tokens
    return torch.ones(t, t, dtype=torch.bool).triu(diagonal=1) | left[:, None, :]


_NOWHERE = Text("", "")

#: Lengths 3, 1, 4 left-padded to 5: the (3, 5, 5) hidden, a future key or a pad key.
_HIDDEN = _left_padded(5 - torch.tensor([3, 1, 4]), 5)
_BLIND = int(_HIDDEN.all(dim=-1).sum())  # 7: the pad queries' rows

check_blind_rows = number_checker(
    "check_blind_rows",
    Number(
        name=tr("query rows that see no key", "看不到任何键的查询行"),
        what=tr("a whole number of rows, over the whole batch", "一个整数：整个批次中的行数"),
        expected=_BLIND,
        right=tr(
            "correct: with left padding query i sees keys 0..i, all pads while i is a pad: "
            "2 + 4 + 1 = 7 rows, one per pad (right padding would leave none).",
            "正确：左填充时，查询 i 看得到键 0..i，只要 i 本身是填充，这些键就全是填充。"
            "所以共有 2 + 4 + 1 = 7 行，每个填充一行（右填充则一行也没有）。",
        ),
        wrong={
            0: tr(
                "that holds for right padding; here the pads come first, and a causal query "
                "sees only what lies before it.",
                "右填充时是这样。这里填充在前面，而因果的查询只看得到它之前的位置。",
            ),
            3: tr(
                "one row per sequence is too few: count every query of a sequence whose "
                "visible keys are all pads.",
                "每个序列一行太少了。一个序列里，只要某个查询能看到的键全是填充，这一行就要算上。",
            ),
            4: tr(
                "one row short per sequence: the last pad query sees itself, a pad too.",
                "每个序列少算了一行。最后一个填充位置的查询看到的是它自己，也是填充。",
            ),
            8: tr(
                "that counts the real tokens; a real query always sees at least itself.",
                "这是真实词元的个数。真实词元的查询至少看得到它自己。",
            ),
        },
        otherwise=tr(
            "for each sequence, find the queries whose causal keys are all pads, then add up.",
            "对每个序列，找出那些因果范围内的键全是填充的查询，再加起来。",
        ),
        whole=True,
    ),
    """Lengths 3, 1, 4 left-padded to 5 in a causal layer: 7 query rows see only pads.""",
)


#: The first case: scores (2, 4, 4) and hidden (2, 4, 4) = causal mask | left padding. Sequence
#: 0 has 2 real tokens after 2 pads, so its rows 0 and 1 see no key at all. The learner's
#: function only ever gets copies of them.
_SCORES = 3 * torch.randn(2, 4, 4, generator=torch.Generator().manual_seed(11))  # (b, T_q, T_k)
_PADDED = _left_padded([2, 0], 4)  # (b, T_q, T_k)


def _masked_softmax(scores: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
    """The expected weights, in float64: softmax over the visible keys, 0 rows where none is."""
    empty = hidden.all(dim=-1, keepdim=True)  # (..., T_q, 1)
    filled = scores.double().masked_fill(hidden & ~empty, -torch.inf)
    return torch.softmax(filled, dim=-1).masked_fill(hidden, 0.0).float()


#: Scores of other shapes (and one scale) than the first case, each with its own hidden pattern.
#: Near -1e30 every finite fill (-1000, -1e4, -1e9) lies above the visible scores and takes the
#: weight; only -inf stays below any score.
_FAR_BELOW = tr("scores near -1e30", "接近 -1e30 的分数")

#: The hint on ``_FAR_BELOW`` for weights that are right on usual scores: a finite fill.
_FINITE_FILL = tr(
    "a finite fill (-1000, -1e4, -1e9) is not below scores this low, so the "
    "softmax gives the hidden positions the weight (zeroing them afterwards leaves "
    "rows that do not sum to 1). Fill hidden scores with -torch.inf (and zero the "
    "rows with no visible key).",
    "有限的填充值（-1000、-1e4、-1e9）并不比这么低的分数更小，"
    "所以 softmax 把权重给了被遮住的位置（之后再把它们置零，每行之和就不是 1）。"
    "请把被遮住的分数填成 -torch.inf（再把没有可见键的行置零）。",
)


#: A case of masked softmax: (its label, None for the reference case; scores; hidden).
_Case = tuple[Text | None, torch.Tensor, torch.Tensor]


def _more_cases() -> list[_Case]:
    gen = torch.Generator().manual_seed(12)
    hidden4 = torch.rand(2, 2, 3, 6, generator=gen) < 0.5  # (b, h, T_q, T_k), T_q != T_k
    hidden4[0, 1, 2] = True  # a row with no visible key
    hidden4[1, 0, 0] = False  # a row with every key visible
    return [
        (
            tr("a (3, 5, 5) batch", "一个 (3, 5, 5) 的批次"),
            2 * torch.randn(3, 5, 5, generator=gen),
            _left_padded([0, 2, 4], 5),  # (3, 5, 5): 0, 2, 4 pads first
        ),
        (
            tr("heads (2, 2, 3, 6)", "多个头的 (2, 2, 3, 6) 分数"),
            2 * torch.randn(2, 2, 3, 6, generator=gen),
            hidden4,
        ),
        (_FAR_BELOW, torch.full((2, 4, 4), -1e30), _PADDED),
    ]


_FORWARD = ForwardTexts(
    not_written=UNWRITTEN_FUNCTION,
    input_changed=tr(
        "your function changed the scores it was given in place (masked_fill_, or an "
        "assignment into scores): the caller's scores are then gone, and autograd refuses to "
        "change in place a tensor whose gradient it needs. Use the out-of-place masked_fill, "
        "which returns a new tensor.",
        "你的函数原地修改了传入的分数（用了 masked_fill_，或者给 scores 的某些位置赋值）。"
        "这样调用者的分数就没了，而且 autograd 不允许原地修改需要求梯度的张量。"
        "请用非原地的 masked_fill，它会返回一个新张量。",
    ),
    shape=tr("it returned shape {got}, expected {want}.", "它返回的形状是 {got}，应为 {want}。"),
)


def _call(
    fn: Callable[..., object], scores: torch.Tensor, hidden: torch.Tensor, where: Text = _NOWHERE
) -> torch.Tensor:
    """The learner's weights for (copies of) ``scores`` and ``hidden``, through the runner (a
    write to its copy of the scores is the in-place hint)."""
    args = (scores, hidden.clone())
    return call_forward(fn, args, _FORWARD, where=where, want_shape=tuple(scores.shape))


class _NaNWatch(TorchFunctionMode):
    """Whether any torch call made while it is active returned a tensor holding a NaN."""

    seen = False

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        out = func(*args, **(kwargs or {}))
        for item in out if isinstance(out, (tuple, list)) else (out,):
            if type(item) is torch.Tensor and item.is_floating_point() and not item.is_meta:
                self.seen = self.seen or bool(torch.isnan(item).any())
        return out


def _judge(got: torch.Tensor, hidden: torch.Tensor, expected: torch.Tensor) -> Text | None:
    """What is wrong with the weights ``got`` for ``hidden``, or None if they are ``expected``."""
    got = got.detach().float().cpu()
    empty = hidden.all(dim=-1)  # (b, T_q): rows with no visible key
    if torch.isnan(got).any():
        return tr(
            "NaN in the output: a row whose positions are all hidden is "
            "softmax([-inf, ..., -inf]) = 0 / 0. Find those rows (hidden.all(dim=-1)) and "
            "keep them out of the -inf fill.",
            "输出里有 NaN。所有位置都被遮住的一行是 softmax([-inf, ..., -inf]) = 0 / 0。"
            "找出这些行（`hidden.all(dim=-1)`）"
            "，不要对它们填 -inf。",
        )
    if not torch.isfinite(got).all():
        return tr(
            "inf in the output: subtract each row's maximum before exp.",
            "输出里有 inf。请在 exp 之前先减去每一行的最大值。",
        )
    if got[hidden].abs().max() > 0:
        if torch.allclose(got[empty], torch.full_like(got[empty], 1 / got.shape[-1])):
            return tr(
                "a fully hidden row came out uniform (1/4 each): a large negative fill such "
                "as -1e9 gives every hidden position the same weight. Those rows must be all "
                "zeros.",
                "完全被遮住的一行变成了均匀分布（每个 1/4）"
                "。用 -1e9 这样很大的负数填充，每个被遮住的位置会得到相同的权重。"
                "这些行必须全是 0。",
            )
        return tr(
            "hidden positions must get weight exactly 0.",
            "被遮住的位置的权重必须恰好为 0。",
        )
    if not torch.allclose(got, expected, atol=1e-5, rtol=0):
        sums = got.sum(dim=-1)[~empty]  # (rows with a visible key,)
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-4):
            return tr(
                "rows do not sum to 1 over their visible positions: zeroing weights *after* "
                "a plain softmax does not renormalise. Fill hidden scores with -inf first.",
                "每行在可见位置上的和不是 1。在普通 softmax 之后再把权重置零，"
                "不会重新归一化。请先把被遮住的分数填成 -inf。",
            )
        return tr(
            "the visible weights differ from a softmax over the visible scores.",
            "可见位置的权重与对可见分数做 softmax 的结果不一致。",
        )
    return None


def _right_on(fn: Callable[..., object], cases: list[_Case]) -> None:
    """For each ``(label, scores, hidden)`` of ``cases`` the weights are the masked softmax; else
    the hint, after "on ``label``: " where the case has one."""
    for label, scores, hidden in cases:
        on = _NOWHERE if label is None else tr("on ", "在") + label + tr(": ", "上：")
        problem = _judge(_call(fn, scores, hidden, on), hidden, _masked_softmax(scores, hidden))
        if problem is not None:  # right on usual scores but not near -1e30: a finite fill
            raise ContractError(on + (_FINITE_FILL if label is _FAR_BELOW else problem))


def _finite_for_huge_scores(fn: Callable[..., object]) -> None:
    big = _call(fn, 1000 * _SCORES, _PADDED, tr("with scores x 1000: ", "分数乘以 1000 时："))
    if not torch.isfinite(big).all():
        raise ContractError(
            tr(
                "scores x 1000 overflow: subtract each row's maximum before exp.",
                "分数乘以 1000 时溢出了。请在 exp 之前先减去每一行的最大值。",
            )
        )


def _finite_gradient(fn: Callable[..., object]) -> None:
    leaf = _SCORES.clone().requires_grad_(True)
    probe = torch.arange(16.0).view(1, 4, 4)
    attempt(
        lambda: (fn(leaf, _PADDED.clone()) * probe).sum().backward(),  # type: ignore[operator]
        tr("the backward pass raised {kind}: {error}.", "反向传播抛出了 {kind}：{error}。"),
    )
    if leaf.grad is None or not torch.isfinite(leaf.grad).all():
        raise ContractError(
            tr(
                "the output is right but the gradient is NaN: a 0 / 0 computed in the forward "
                "pass and replaced afterwards (nan_to_num, torch.where) still poisons the "
                "backward pass. Never divide by the sum of an empty row: leave such rows "
                "unmasked, then zero them.",
                "输出是对的，但梯度是 NaN。前向传播中算出的 0 / 0，"
                "即使事后被替换掉（`nan_to_num`、"
                "`torch.where`），仍然会污染反向传播。"
                "绝不要除以空行的和。应该先让这样的行不做掩码，"
                "再把它们置零。",
            )
        )


def _never_a_nan(fn: Callable[..., object]) -> None:
    """No NaN is made on the way, not even one replaced afterwards."""
    with _NaNWatch() as watch:
        _call(fn, _SCORES, _PADDED)
    if watch.seen:
        raise ContractError(
            tr(
                "the output is right, but a NaN was computed on the way (softmax of a row that is "
                "all -inf is "
                "0 / 0) and replaced afterwards (nan_to_num, torch.where): never produce the NaN. "
                "Leave the "
                "rows with no visible key out of the -inf fill (hidden.all(dim=-1)), then zero "
                "them.",
                "输出是对的，但中途算出过 NaN（一整行都是 -inf 的 softmax 就是 0 / 0）"
                "，之后才被替换掉（`nan_to_num`、"
                "`torch.where`）。不要产生这个 NaN。"
                "没有可见键的行（`hidden.all(dim=-1)`）"
                "不要填 -inf，之后再把它们置零。",
            )
        )


check_masked_softmax = build_checker(
    "check_masked_softmax",
    BuildSpec(
        name=tr("masked softmax without NaN", "不产生 NaN 的掩码 softmax"),
        answer="function",
        function_name="masked_softmax",
        contracts=(
            partial(_right_on, cases=[(None, _SCORES, _PADDED)]),
            _finite_for_huge_scores,
            _finite_gradient,
            _never_a_nan,
            partial(_right_on, cases=_more_cases()),
        ),
        passed=tr(
            "correct: softmax over visible keys, zero rows for empty ones, finite grads.",
            "正确：在可见的键上做 softmax，空行全为 0，梯度有限。",
        ),
    ),
    """``answer``: a function ``f(scores, hidden)`` -> weights of the scores' shape.

    ``hidden`` is bool, the scores' shape, True where attention is forbidden. Correct: softmax
    over the visible positions of each row, 0 on hidden ones, all zeros for a fully hidden row
    (never a NaN, not even one replaced afterwards); finite also for huge scores, and finite
    gradients.
    """,
)


# -- exercise 3: a Hugging Face attention_mask into SDPA's additive float mask, in any dtype -----


#: The dtypes tried, float32 first: a mistake that shows at full precision is named there.
_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _hf_cases() -> list[tuple[Text, torch.Tensor]]:
    """Hugging Face masks (int, 1 = real token) of other sizes than the lesson's, b != T first."""
    packed = torch.tensor([[1, 1, 0, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1, 1]])  # (2, 7): a pad inside
    return [
        (
            tr("right padding, lengths 5, 2, 4", "右填充，长度 5、2、4"),
            (torch.arange(5) < torch.tensor([5, 2, 4])[:, None]).long(),  # (3, 5)
        ),
        (
            tr("left padding, lengths 1, 3, 4, 2", "左填充，长度 1、3、4、2"),
            (torch.arange(4) >= 4 - torch.tensor([1, 3, 4, 2])[:, None]).long(),  # (4, 4)
        ),
        (tr("a pad in the middle", "中间有一个填充"), packed),
    ]


def _qkv(b: int, t: int, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    """Fixed q, k, v of shape (b, 2, T, 4) in ``dtype``, scores spread over a few units."""
    gen = torch.Generator().manual_seed(19)
    return tuple((2 * torch.randn(b, 2, t, 4, generator=gen)).to(dtype) for _ in range(3))


def _sdpa_matches_unpadded(attn_mask: torch.Tensor, real: torch.Tensor) -> bool:
    """Whether SDPA with ``attn_mask`` gives each sequence the output it has without its pads."""
    b, t = real.shape
    q, k, v = _qkv(b, t, attn_mask.dtype)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    out = sdpa(q, k, v, attn_mask=attn_mask)  # (b, 2, T, 4)
    for i in range(b):
        keep = real[i]
        alone = sdpa(q[i : i + 1], k[i : i + 1, :, keep], v[i : i + 1, :, keep])  # (1, 2, T, 4)
        if not torch.allclose(out[i : i + 1].float(), alone.float(), atol=2e-2, rtol=2e-2):
            return False
    return True


def _judge_additive(
    got: torch.Tensor, attention_mask: torch.Tensor, dtype: torch.dtype, want: str
) -> Text | None:
    """What is wrong with ``got`` (a plain tensor) as the additive mask in ``dtype`` (named
    ``want``, "float16") for ``attention_mask``, or None."""
    real = attention_mask.bool()  # (b, T): True = a real token
    b, t = real.shape
    full = (b, 2, t, t)  # (b, h, T_q, T_k): what SDPA broadcasts the mask to
    keys = real[:, None, None, :].expand(full)  # True at the real keys
    if got.dtype == torch.bool:
        return tr(
            "a bool mask: SDPA would take it, but this exercise asks for the float mask that "
            "is added to the scores (0 keeps a key, a very negative number hides it), as "
            "Hugging Face builds it.",
            "这是 bool 掩码。SDPA 也接受它，"
            "但本题要的是加到分数上的浮点掩码（0 保留一个键，"
            "很大的负数遮住它），也就是 Hugging Face 构造的那种。",
        )
    if not got.is_floating_point():
        return tr(
            f"dtype {got.dtype}: SDPA takes a bool mask or a float one added to the scores, "
            "not integers. Return a float tensor.",
            f"dtype 是 {got.dtype}。SDPA 接受 bool 掩码或加到分数上的浮点掩码，不接受整数。"
            "请返回浮点张量。",
        )
    if got.dtype != dtype:
        return tr(
            f"dtype {got.dtype}, but {want} was asked for: SDPA adds the mask to scores of "
            "the queries' dtype and refuses a float mask of another one. Build it in the "
            "dtype you are given.",
            f"dtype 是 {got.dtype}，但要求的是 {want}。SDPA 把掩码加到与查询同一 dtype 的分数上，"
            "不接受别的 dtype 的浮点掩码。请用传入的 dtype 来构造它。",
        )
    shape = tuple(got.shape)
    if shape == (b, t) and b != t:
        return tr(
            f"shape {shape}: SDPA lines up the mask's axes from the right, so a (b, T) mask is "
            "read as (T_q, T_k) and meets the batch axis nowhere. Give it the head and query "
            "axes as size-1 axes, so that it broadcasts over heads and queries.",
            f"形状是 {shape}。SDPA 从右边对齐掩码的各个轴，(b, T) 的掩码会被当成 (T_q, T_k)，"
            "批次轴对不上。请给它加上大小为 1 的头轴和查询轴，让它在头和查询上广播。",
        )
    try:
        mask = got.detach().cpu().expand(full)
    except RuntimeError:
        return tr(
            f"shape {shape} does not broadcast to (b, h, T_q, T_k) = {full}: one row of keys "
            "per sequence, with size-1 axes for the heads and the queries.",
            f"形状 {shape} 不能广播成 (b, h, T_q, T_k) = {full}：每个序列一行键，"
            "头轴和查询轴的大小为 1。",
        )
    if torch.isnan(mask).any():
        return tr("NaN in the mask.", "掩码里有 NaN。")
    at_real, at_pads = mask[keys], mask[~keys]
    if bool((at_real == 1).all()) and bool((at_pads == 0).all()):
        return tr(
            "the 0/1 attention_mask itself, as floats: SDPA adds a float mask to the scores, "
            "so adding 1 or 0 hides nothing. The pads need a very negative number, the real "
            "keys 0.",
            "这就是浮点形式的 0/1 attention_mask。SDPA 把浮点掩码加到分数上，"
            "加 1 或加 0 什么也遮不住。填充处要放一个很大的负数，真实的键处为 0。",
        )
    if bool((at_pads == 0).all()) and bool((at_real != 0).all()):
        return tr(
            "inverted: the very negative number stands at the real tokens and 0 at the pads. "
            "In the attention_mask 1 is a real token; it must get 0, a pad the fill.",
            "弄反了。很大的负数放在了真实词元处，0 放在了填充处。"
            "attention_mask 中 1 是真实词元，"
            "它应当得到 0，填充处才放填充值。",
        )
    lower = torch.ones(t, t, dtype=torch.bool).tril()  # (T, T): key j <= query i
    future_real = keys & ~lower
    if future_real.any() and (mask[keys & lower] == 0).all() and (mask[future_real] < 0).all():
        return tr(
            "a causal mask crept in: an encoder lets every query see every real token, "
            "also the later ones. Only the pads are hidden.",
            "混进了因果掩码。编码器让每个查询看到所有真实词元，包括后面的。只有填充被遮住。",
        )
    rows = real[:, None, :, None].expand(full)  # True at the real queries
    if bool((mask[rows] == 0).all()) and bool((mask[~rows] < 0).all()):
        return tr(
            "the mask hides query rows, not key columns: padding is a property of the keys, "
            "so its axis is the last one (T_k), with size 1 for the queries.",
            "这个掩码遮住的是查询的行，而不是键的列。"
            "填充是键的属性，所以它在最后一个轴（T_k）"
            "上，查询轴的大小为 1。",
        )
    if not torch.equal(mask, mask[:, :1, :1, :].expand(full)):
        return tr(
            "the mask differs between heads or between queries: padding hides the same keys "
            "from every query of a sequence.",
            "掩码在不同的头或不同的查询之间不一样。填充对一个序列的每个查询遮住的是同样的键。",
        )
    if bool((at_real != 0).any()) or bool((at_pads >= 0).any()):
        return tr(
            "some keys are hidden or visible at the wrong places: 0 exactly where the "
            "attention_mask holds a 1, a negative fill where it holds a 0.",
            "有些键在错误的位置被遮住或可见。应当恰好在 attention_mask 为 1 的位置为 0，"
            "为 0 的位置放负的填充值。",
        )
    if torch.isinf(at_pads).any():
        if dtype == torch.float32:
            return tr(
                "-inf at the pads: right for this batch, but a row whose keys are all hidden "
                "(left padding under a causal mask) becomes softmax of all -inf = NaN. "
                "Hugging Face fills with a finite number, the lowest the dtype has "
                "(section 7).",
                "填充处是 -inf。这对这个批次是对的，但一行的键全被遮住时（因果掩码下的左填充），"
                "就成了全是 -inf 的 softmax，也就是 NaN。Hugging Face 填的是有限的数，"
                "也就是这个 dtype 最小的数（见第 7 节）。",
            )
        culprit = (
            tr(
                "a constant below it (-1e9, or float32's lowest number -3.4e38) overflows",
                "比它更小的常数（-1e9，或 float32 最小的数 -3.4e38）会溢出",
            )
            if dtype == torch.float16
            else tr(
                "float32's lowest number -3.4e38, just below it, rounds",
                "float32 最小的数 -3.4e38 比它还小一点，会被舍入",
            )
        )
        return (
            tr(
                f"-inf at the pads in {want}: {want}'s lowest finite number is "
                f"{torch.finfo(dtype).min:.6g}, so ",
                f"{want} 中填充处是 -inf。{want} 最小的有限数是 {torch.finfo(dtype).min:.6g}，",
            )
            + culprit
            + tr(
                f" to -inf when it becomes a {want}, and -inf gives NaN for a row with no real "
                f"key. The fill must be the lowest number of {want} itself.",
                f"，转换成 {want} 后就成了 -inf。一行没有真实键时，-inf 会给出 NaN。"
                f"填充值必须是 {want} 自己最小的数。",
            )
        )
    q, k, _ = _qkv(b, t, dtype)
    weights = torch.softmax(q @ k.transpose(-2, -1) + mask, dim=-1)  # (b, 2, T, T) in dtype
    if bool((weights[~keys] != 0).any()):
        return tr(
            f"the pads still get weight in {want}: a fill of {float(at_pads.max()):.4g} is not low "
            "enough to "
            "make exp of the score exactly 0. Hugging Face uses the lowest number of the "
            "dtype (section 7).",
            f"在 {want} 中填充仍然得到了权重。"
            f"填充值 {float(at_pads.max()):.4g} 不够小，不能让分数的 exp 恰好为 0。"
            "Hugging Face 用的是这个 dtype 最小的数（见第 7 节）"
            "。",
        )
    if not _sdpa_matches_unpadded(got.detach().cpu(), real):
        return tr(
            "SDPA computes another output with this mask than with the pads removed.",
            "用这个掩码，SDPA 算出的输出与去掉填充后的不同。",
        )
    return None


#: One call of the learner's ``hf_to_additive``; ``{on}`` names the case and the dtype.
_ADDITIVE_CALL = ForwardTexts(
    raised=tr("{on}your function raised {kind}: {error}.", "{on}你的函数抛出了 {kind}：{error}。"),
    not_written=UNWRITTEN_FUNCTION,
    input_changed=tr(
        "{on}your function changed the attention_mask it was given (an in-place operation); "
        "build a new tensor instead.",
        "{on}你的函数修改了传入的 attention_mask（原地操作），请新建一个张量。",
    ),
    not_tensor=tr(
        "{on}your function returned {kind}, not a tensor.",
        "{on}你的函数返回的是 {kind}，不是张量。",
    ),
    subclass=tr(
        "{on}your function returned a {kind}; return a plain torch.Tensor.",
        "{on}你的函数返回的是 {kind}，请返回普通的 torch.Tensor。",
    ),
)


def _overflow(
    on: Text, dtype: torch.dtype, name: str, error: RuntimeError, args: tuple[object, ...]
) -> Text | None:
    """The reading of an error that says "overflow": a constant that does not fit in ``dtype``
    (``name``; a ``runtime`` reader once ``on``, the case, and the dtype are given)."""
    if "overflow" not in str(error):
        return None
    return on + tr(
        f"your function raised {type(error).__name__}: {error}. A constant such as -1e9 lies "
        f"below {name}'s lowest finite number ({torch.finfo(dtype).min:.6g}) and does not fit "
        f"in a {name}.",
        f"你的函数抛出了 {type(error).__name__}：{error}。像 -1e9 这样的常数比 {name} 最小的有限数"
        f"（{torch.finfo(dtype).min:.6g}）还小，放不进 {name}。",
    )


def _right_on_every_mask_and_dtype(fn: Callable[..., object]) -> None:
    """Every case in every dtype: the right mask, and the input left as it was."""
    for dtype, (label, attention_mask) in product(_DTYPES, _hf_cases()):
        name = str(dtype).removeprefix("torch.")
        on = tr("on ", "测试（") + label + tr(f", {name}: ", f"，{name}）：")
        texts = replace(_ADDITIVE_CALL, runtime=partial(_overflow, on, dtype, name))
        got = call_forward(fn, (attention_mask, dtype), texts, on=on)
        problem = attempt(  # a hostile tensor may break a comparison
            partial(_judge_additive, got, attention_mask, dtype, name),
            tr(
                "{on}the returned tensor could not be read ({kind}).",
                "{on}无法读取返回的张量（{kind}）。",
            ),
            on=on,
        )
        if problem is not None:
            raise ContractError(on + problem)


check_hf_to_additive_mask = build_checker(
    "check_hf_to_additive_mask",
    BuildSpec(
        name=tr(
            "Hugging Face attention_mask -> SDPA's additive mask",
            "Hugging Face 的 attention_mask → SDPA 的加性掩码",
        ),
        answer="function",
        function_name="hf_to_additive",
        contracts=(_right_on_every_mask_and_dtype,),
        passed=tr(
            "correct: 0 at the real tokens, a finite fill that leaves the pads no weight in "
            "float32, float16 and bfloat16, broadcast over heads and queries.",
            "正确：真实词元处为 0，填充处的有限填充值在 float32、float16 和 bfloat16 中"
            "都让填充得不到权重，并在头和查询上广播。",
        ),
    ),
    """``answer``: a function ``hf_to_additive(attention_mask, dtype)`` -> SDPA's float mask.

    ``attention_mask`` is a Hugging Face mask, int (b, T), 1 = real token; the result, in
    ``dtype``, is added to the scores of an encoder (no causal mask): 0 at the real keys, a finite
    fill at the pads that makes their softmax weight exactly 0 in that dtype (Hugging Face's is
    ``torch.finfo(dtype).min``; -inf is refused, it gives NaN for a row with no real key). Any
    shape that broadcasts to (b, h, T, T) with the same keys hidden for every head and query is
    accepted: (b, 1, 1, T) as Hugging Face's encoders build it, or (b, 1, T, T) expanded. Tried in
    float32, float16 and bfloat16 on masks other than the lesson's, with b != T; it must leave its
    input unchanged.
    """,
)
