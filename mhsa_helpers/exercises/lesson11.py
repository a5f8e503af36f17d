"""Checkers for lesson 11: padded batches and key padding masks (填充掩码).

* ``check_left_padding_mask(answer)`` -- the bool (3, 5) key padding mask, True at padding, of
  three sequences of lengths 3, 1 and 4 left-padded to 5 tokens.
* ``check_masked_softmax(answer)`` -- a function ``masked_softmax(scores, hidden)``: softmax over
  the visible positions of each row, exactly 0 on hidden ones, and a row of zeros (no NaN, not
  even in the gradient) when every position of a row is hidden.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from ..i18n import Text, tr
from ._build import BuildSpec, ContractError, ForwardTexts, build_checker, call_forward
from ._kinds import mask_answer
from ._result import CheckResult, exercise, fail, ok

__all__ = ["check_left_padding_mask", "check_masked_softmax"]

_LENGTHS, _T = torch.tensor([3, 1, 4]), 5
_LEFT = torch.arange(_T) < (_T - _LENGTHS)[:, None]  # (3, 5): pads first, then the real tokens
_RIGHT = torch.arange(_T) >= _LENGTHS[:, None]  # (3, 5): the real tokens first, then pads


_NOWHERE = Text("", "")

_LEFT_PADDING_MASK = tr("left-padding mask", "左填充掩码")


@exercise(_LEFT_PADDING_MASK)
def check_left_padding_mask(answer: object) -> CheckResult:
    """``answer``: bool (3, 5), True at the padding positions of lengths 3, 1, 4 left-padded."""
    name = _LEFT_PADDING_MASK
    got = mask_answer(
        name,
        answer,
        tuple(_LEFT.shape),
        what=tr(
            "a bool (3, 5) tensor, True at padding positions",
            "一个 bool 类型的 (3, 5) 张量，填充位置为 True",
        ),
        shape_hint=tr(
            "one row per sequence, one column per position.",
            "每个序列一行，每个位置一列。",
        ),
        dtype_hint=tr(
            ": compare positions with lengths (the comparison gives bools), or call .bool().",
            "：把位置和长度作比较（比较的结果就是布尔值），或者调用 `.bool()`。",
        ),
    )
    if isinstance(got, CheckResult):
        return got
    answer = got
    if torch.equal(answer, _LEFT):
        return ok(
            name,
            tr(
                "correct: every row has its pads first and its real tokens at the end.",
                "正确：每一行都是先填充，真实的词元在末尾。",
            ),
        )
    if torch.equal(answer, ~_LEFT):
        return fail(
            name,
            tr(
                "inverted: here True marks *padding* (torch.nn.MultiheadAttention's convention); "
                "True for real tokens is what a Hugging Face attention_mask uses.",
                "弄反了：这里 True 标记的是填充（torch.nn.MultiheadAttention 的约定）；"
                "真实词元为 True 是 Hugging Face 的 attention_mask 的用法。",
            ),
        )
    if torch.equal(answer, _RIGHT):
        return fail(
            name,
            tr(
                "that is right padding: with left padding the pads come first.",
                "这是右填充：左填充时，填充在前面。",
            ),
        )
    if torch.equal(answer.sum(dim=1), _T - _LENGTHS):
        return fail(
            name,
            tr(
                "the right number of pads per row, but not at the right places: left padding "
                "puts them at positions 0 .. T - length - 1.",
                "每行填充的个数对了，但位置不对：左填充把它们放在位置 0 .. T - length - 1。",
            ),
        )
    return fail(
        name,
        tr(
            "row i has T - lengths[i] pads at the start: compare torch.arange(T) with "
            "(T - lengths)[:, None].",
            "第 i 行开头有 T - lengths[i] 个填充：把 `torch.arange(T)` 和 "
            "`(T - lengths)[:, None]` 作比较。",
        ),
    )


def _reference_case() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Scores (2, 4, 4), hidden (2, 4, 4) = causal mask | left padding, and the expected weights.

    Sequence 0 has 2 real tokens after 2 pads, so its rows 0 and 1 see no key at all.
    """
    gen = torch.Generator().manual_seed(11)
    scores = 3 * torch.randn(2, 4, 4, generator=gen)  # (b, T_q, T_k)
    causal = torch.ones(4, 4, dtype=torch.bool).triu(1)  # (T, T)
    pad = torch.tensor([[True, True, False, False], [False, False, False, False]])  # (b, T)
    hidden = causal | pad[:, None, :]  # (b, T_q, T_k)
    expected = torch.zeros(2, 4, 4)
    for b in range(2):
        for i in range(4):
            seen = [j for j in range(4) if not hidden[b, i, j]]
            if seen:
                row = scores[b, i, seen].double()
                expected[b, i, seen] = (
                    torch.exp(row - row.max()) / torch.exp(row - row.max()).sum()
                ).float()
    return scores, hidden, expected


def _masked_softmax(scores: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
    """The expected weights, in float64: softmax over the visible keys, 0 rows where none is."""
    empty = hidden.all(dim=-1, keepdim=True)  # (..., T_q, 1)
    filled = scores.double().masked_fill(hidden & ~empty, -torch.inf)
    return torch.softmax(filled, dim=-1).masked_fill(hidden, 0.0).float()


#: Scores of other shapes (and one scale) than the first case, each with its own hidden pattern.
#: Near -1e30 every finite fill (-1000, -1e4, -1e9) lies above the visible scores and takes the
#: weight; only -inf stays below any score.
_FAR_BELOW = tr("scores near -1e30", "接近 -1e30 的分数")


def _more_cases() -> list[tuple[Text, torch.Tensor, torch.Tensor]]:
    gen = torch.Generator().manual_seed(12)
    left = torch.arange(5) < torch.tensor([0, 2, 4])[:, None]  # (3, 5): 0, 2, 4 pads first
    hidden3 = torch.ones(5, 5, dtype=torch.bool).triu(1) | left[:, None, :]  # (3, 5, 5)
    hidden4 = torch.rand(2, 2, 3, 6, generator=gen) < 0.5  # (b, h, T_q, T_k), T_q != T_k
    hidden4[0, 1, 2] = True  # a row with no visible key
    hidden4[1, 0, 0] = False  # a row with every key visible
    _, hidden_first, _ = _reference_case()
    return [
        (
            tr("a (3, 5, 5) batch", "一个 (3, 5, 5) 的批次"),
            2 * torch.randn(3, 5, 5, generator=gen),
            hidden3,
        ),
        (
            tr("heads (2, 2, 3, 6)", "多个头的 (2, 2, 3, 6) 分数"),
            2 * torch.randn(2, 2, 3, 6, generator=gen),
            hidden4,
        ),
        (_FAR_BELOW, torch.full((2, 4, 4), -1e30), hidden_first),
    ]


_FORWARD = ForwardTexts(
    raised=tr("your function raised {kind}: {error}.", "你的函数抛出了 {kind}：{error}。"),
    not_tensor=tr(
        "your function returned {kind}, not a tensor of weights.",
        "你的函数返回的是 {kind}，不是权重张量。",
    ),
    subclass=tr(
        "your function returned a {kind}; return a plain torch.Tensor.",
        "你的函数返回的是 {kind}；请返回普通的 torch.Tensor。",
    ),
    shape=tr("it returned shape {got}, expected {want}.", "它返回的形状是 {got}，应为 {want}。"),
)


def _call(
    fn: Callable[..., object], scores: torch.Tensor, hidden: torch.Tensor, where: Text = _NOWHERE
) -> torch.Tensor:
    """The learner's weights for ``scores`` and ``hidden`` (a copy), through the runner."""
    return call_forward(
        fn, (scores, hidden.clone()), _FORWARD, where=where, want_shape=tuple(scores.shape)
    )


class _NaNWatch(TorchFunctionMode):
    """Whether any torch call made while it is active returned a tensor holding a NaN."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = False

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: object,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        out = func(*args, **(kwargs or {}))
        if not self.seen:
            for item in out if isinstance(out, (tuple, list)) else (out,):
                if (
                    type(item) is torch.Tensor
                    and item.is_floating_point()
                    and not item.is_meta
                    and bool(torch.isnan(item).any())
                ):
                    self.seen = True
        return out


#: The lesson's rule is never to produce a NaN, not to produce one and repair it.
_NAN_REPAIRED = tr(
    "the output is right, but a NaN was computed on the way (softmax of a row that is all -inf is "
    "0 / 0) and replaced afterwards (nan_to_num, torch.where): never produce the NaN. Leave the "
    "rows with no visible key out of the -inf fill (hidden.all(dim=-1)), then zero them.",
    "输出是对的，但中途算出过 NaN（一整行都是 -inf 的 softmax 就是 0 / 0），之后才被替换掉"
    "（`nan_to_num`、`torch.where`）：不要产生这个 NaN。没有可见键的行（`hidden.all(dim=-1)`）"
    "不要填 -inf，之后再把它们置零。",
)


def _judge(got: torch.Tensor, hidden: torch.Tensor, expected: torch.Tensor) -> Text | None:
    """What is wrong with the weights ``got`` for ``hidden``, or None if they are ``expected``."""
    got = got.detach().float().cpu()
    empty = hidden.all(dim=-1)  # (b, T_q): rows with no visible key
    if torch.isnan(got).any():
        return tr(
            "NaN in the output: a row whose positions are all hidden is "
            "softmax([-inf, ..., -inf]) = 0 / 0. Find those rows (hidden.all(dim=-1)) and "
            "keep them out of the -inf fill.",
            "输出里有 NaN：所有位置都被遮住的一行是 softmax([-inf, ..., -inf]) = 0 / 0。"
            "找出这些行（`hidden.all(dim=-1)`），不要对它们填 -inf。",
        )
    if not torch.isfinite(got).all():
        return tr(
            "inf in the output: subtract each row's maximum before exp.",
            "输出里有 inf：在 exp 之前先减去每一行的最大值。",
        )
    if got[hidden].abs().max() > 0:
        if torch.allclose(got[empty], torch.full_like(got[empty], 1 / got.shape[-1])):
            return tr(
                "a fully hidden row came out uniform (1/4 each): a large negative fill such "
                "as -1e9 gives every hidden position the same weight. Those rows must be all "
                "zeros.",
                "完全被遮住的一行变成了均匀分布（每个 1/4）：用 -1e9 这样很大的负数填充，"
                "会让每个被遮住的位置得到相同的权重。这些行必须全是 0。",
            )
        return tr(
            "hidden positions must get weight exactly 0.",
            "被遮住的位置的权重必须恰好为 0。",
        )
    if not torch.allclose(got, expected, atol=1e-5, rtol=0):
        sums = got.sum(dim=-1)
        if not torch.allclose(sums[~empty], torch.ones(int((~empty).sum())), atol=1e-4):
            return tr(
                "rows do not sum to 1 over their visible positions: zeroing weights *after* "
                "a plain softmax does not renormalise. Fill hidden scores with -inf first.",
                "每行在可见位置上的和不是 1：在普通 softmax 之后再把权重置零，"
                "不会重新归一化。请先把被遮住的分数填成 -inf。",
            )
        return tr(
            "the visible weights differ from a softmax over the visible scores.",
            "可见位置的权重与对可见分数做 softmax 的结果不一致。",
        )
    return None


def _reference_case_right(fn: Callable[..., object]) -> None:
    scores, hidden, expected = _reference_case()
    _require(_judge(_call(fn, scores.clone(), hidden), hidden, expected))


def _finite_for_huge_scores(fn: Callable[..., object]) -> None:
    scores, hidden, _ = _reference_case()
    big = _call(fn, 1000 * scores, hidden, tr("with scores x 1000: ", "分数乘以 1000 时："))
    if not torch.isfinite(big).all():
        raise ContractError(
            tr(
                "scores x 1000 overflow: subtract each row's maximum before exp.",
                "分数乘以 1000 时溢出了：在 exp 之前先减去每一行的最大值。",
            )
        )


def _finite_gradient(fn: Callable[..., object]) -> None:
    scores, hidden, _ = _reference_case()
    leaf = scores.clone().requires_grad_(True)
    try:
        out = fn(leaf, hidden.clone())
        (out * torch.arange(16.0).view(1, 4, 4)).sum().backward()  # type: ignore[operator]
    except Exception as error:  # the learner's code may not be differentiable
        kind = type(error).__name__
        raise ContractError(
            tr(
                f"the backward pass raised {kind}: {error}.",
                f"反向传播抛出了 {kind}：{error}。",
            )
        ) from None
    if leaf.grad is None or not torch.isfinite(leaf.grad).all():
        raise ContractError(
            tr(
                "the output is right but the gradient is NaN: a 0 / 0 computed in the forward "
                "pass and replaced afterwards (nan_to_num, torch.where) still poisons the "
                "backward pass. Never divide by the sum of an empty row: leave such rows "
                "unmasked, then zero them.",
                "输出是对的，但梯度是 NaN：前向传播中算出的 0 / 0，即使事后被替换掉"
                "（`nan_to_num`、`torch.where`），仍然会污染反向传播。绝不要除以空行的和："
                "先让这样的行不做掩码，再把它们置零。",
            )
        )


def _never_a_nan(fn: Callable[..., object]) -> None:
    """No NaN is made on the way, not even one replaced afterwards."""
    scores, hidden, _ = _reference_case()
    watch = _NaNWatch()
    with watch:
        _call(fn, scores.clone(), hidden)
    if watch.seen:
        raise ContractError(_NAN_REPAIRED)


def _more_cases_right(fn: Callable[..., object]) -> None:
    for label, more, hidden_more in _more_cases():
        on = tr("on ", "在") + label + tr(": ", "上：")
        got = _call(fn, more.clone(), hidden_more, on)
        hidden_in_seen_rows = ~hidden_more.all(dim=-1, keepdim=True) & hidden_more
        if label is _FAR_BELOW and got.detach()[hidden_in_seen_rows].abs().max() > 0:
            raise ContractError(
                on
                + tr(
                    "hidden positions got weight: a finite fill (-1000, -1e4, -1e9) is not below "
                    "scores this low. Fill hidden scores with -torch.inf (and zero the rows with "
                    "no visible key).",
                    "被遮住的位置得到了权重：有限的填充值（-1000、-1e4、-1e9）并不比这么低的"
                    "分数更小。请把被遮住的分数填成 -torch.inf（再把没有可见键的行置零）。",
                )
            )
        problem = _judge(got, hidden_more, _masked_softmax(more, hidden_more))
        if problem is not None:
            raise ContractError(on + problem)


def _require(problem: Text | None) -> None:
    if problem is not None:
        raise ContractError(problem)


check_masked_softmax = build_checker(
    "check_masked_softmax",
    BuildSpec(
        name=tr("masked softmax without NaN", "不产生 NaN 的掩码 softmax"),
        answer="function",
        function_name="masked_softmax",
        contracts=(
            _reference_case_right,
            _finite_for_huge_scores,
            _finite_gradient,
            _never_a_nan,
            _more_cases_right,
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
