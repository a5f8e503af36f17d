"""The build-it harness: accept the learner's class or function, run it safely, name its mistake.

A build-it exercise hands a checker the learner's own class (lessons 06, 09) or function (lessons
01, 03, 11), which may be unfinished, raise anything, or be passed the wrong way (an instance
instead of the class, a call instead of the function). The mechanical parts are written once here:

* ``class_answer`` / ``function_answer`` -- the answer is a class derived from ``nn.Module`` /
  a function, or a ``[NOT YET]`` result saying what to pass instead;
* ``ContractError`` -- raised at the first broken contract, its ``text`` (a bilingual ``Text``)
  is the hint;
* ``is_view_error`` / ``first_line`` -- recognise a ``.view`` on a non-contiguous tensor (the
  usual slip when merging heads after ``transpose``) and quote torch's message briefly;
* ``forward_on_copy`` -- run ``module(x)`` on a copy of ``x`` and say whether forward changed
  its input in place (the reference then still runs on the untouched ``x``);
* ``book_forward`` and ``MISTAKE_HINTS`` -- the book's causal multi-head forward from projected
  queries, keys and values, or the same with one typical mistake, and the ONE catalog of hints
  that name those mistakes; ``name_mistake`` finds the mistake an output reproduces.

What each lesson tests, at which sizes and tolerances, stays in its module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import torch
from torch import nn

from ..i18n import Text, tr
from ._result import CheckResult, UntranslatedMessage, fail, missing

__all__ = [
    "INPUT_CHANGED",
    "MISTAKES",
    "MISTAKE_HINTS",
    "ContractError",
    "book_forward",
    "class_answer",
    "first_line",
    "forward_on_copy",
    "function_answer",
    "is_view_error",
    "name_mistake",
]


class ContractError(Exception):
    """Raised inside a build checker to stop at the first failed contract, with its hint.

    ``ContractError(text)`` takes the hint as a ``Text`` (both languages); ``error.text`` gives it
    back for ``fail(name, error.text)``. ``str(error)`` is the English hint.
    """

    def __init__(self, text: Text) -> None:
        if not isinstance(text, Text):
            raise UntranslatedMessage(
                f"ContractError needs a Text (tr(en, zh)), got {type(text).__name__} {text!r}"
            )
        super().__init__(text.en)
        self.text = text


def class_answer(
    cls: object,
    exercise: Text,
    *,
    missing_what: Text,
    instance_hint: Text,
    not_class_hint: Text,
) -> CheckResult | None:
    """None if ``cls`` is a class derived from ``nn.Module``, else the ``[NOT YET]`` to return.

    ``not_class_hint`` (both of its languages) may use ``{cls!r}`` and ``{kind}`` (the answer's
    type name), filled in with ``str.format``.
    """
    if cls is None:
        return missing(exercise, missing_what)
    if isinstance(cls, nn.Module):
        return fail(exercise, instance_hint)
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
        kind = type(cls).__name__
        hint = replace(
            not_class_hint,
            en=not_class_hint.en.format(cls=cls, kind=kind),
            zh=not_class_hint.zh.format(cls=cls, kind=kind),
        )
        return fail(exercise, hint)
    return None


def function_answer(
    answer: object, exercise: Text, name: str, *, reject_classes: bool = False
) -> CheckResult | None:
    """None if ``answer`` is a function to call, else the ``[NOT YET]`` to return.

    ``name`` is the function's name in the notebook (``answer = name``). A tensor is the result of
    a call, not the function; with ``reject_classes`` a class is refused as well.
    """
    if answer is None:
        return missing(
            exercise,
            tr(
                f"your function (write `answer = {name}`, no parentheses)",
                f"你的函数（写 `answer = {name}`，不带括号）",
            ),
        )
    refused: tuple[type, ...] = (torch.Tensor, type) if reject_classes else (torch.Tensor,)
    if isinstance(answer, refused) or not callable(answer):
        kind = type(answer).__name__
        return fail(
            exercise,
            tr(
                f"expected a function, got {kind}: write `answer = {name}` "
                "(the function itself, not a call).",
                f"需要一个函数，收到的是 {kind}：请写 `answer = {name}`"
                "（传入函数本身，而不是调用它的结果）。",
            ),
        )
    return None


def is_view_error(error: BaseException) -> bool:
    """Whether ``error`` is torch's ``.view`` on a tensor whose memory layout does not allow it."""
    return "view size is not compatible" in str(error)


def first_line(text: str) -> str:
    """The first line of an error message, to quote it in a one-line hint."""
    return (text.strip().splitlines() or ["(no message)"])[0]


#: The typical slips of a multi-head forward pass that ``book_forward`` reproduces.
MISTAKES = (
    "no_scaling",
    "scale_d_out",
    "split_no_transpose",
    "split_no_transpose_merge_plain",
    "merge_no_transpose",
    "no_out_proj",
    "transposed_mask",
    "mask_after_softmax",
    "mask_with_zero",
    "no_mask",
    "softmax_wrong_dim",
)


def book_forward(
    queries: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    num_heads: int,
    out_proj: Callable[[torch.Tensor], torch.Tensor],
    mistake: str | None = None,
) -> torch.Tensor:
    """The book's causal multi-head attention after the projections, or with one ``mistake``.

    ``queries``, ``keys``, ``values``: (b, T, d_out) each; ``out_proj`` maps (b, T, d_out) to the
    output. No dropout (the checkers compare in eval mode). ``mistake`` is one of ``MISTAKES``.
    """
    b, T, d_out = queries.shape
    head_dim = d_out // num_heads
    if mistake in ("split_no_transpose", "split_no_transpose_merge_plain"):
        split = [t.reshape(b, num_heads, T, head_dim) for t in (queries, keys, values)]
    else:
        split = [t.view(b, T, num_heads, head_dim).transpose(1, 2) for t in (queries, keys, values)]
    queries, keys, values = split  # (b, h, T, head_dim)
    scores = queries @ keys.transpose(2, 3)  # (b, h, T, T)
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # (T, T)
    if mistake == "transposed_mask":
        future = future.T
    if mistake == "mask_with_zero":
        scores = scores.masked_fill(future, 0.0)
    elif mistake not in ("mask_after_softmax", "no_mask"):
        scores = scores.masked_fill(future, -torch.inf)
    scale = {"no_scaling": 1.0, "scale_d_out": d_out**0.5}.get(mistake or "", head_dim**0.5)
    weights = torch.softmax(scores / scale, dim=-2 if mistake == "softmax_wrong_dim" else -1)
    if mistake == "mask_after_softmax":
        weights = weights.masked_fill(future, 0.0)
    context = weights @ values  # (b, h, T, head_dim)
    if mistake in ("merge_no_transpose", "split_no_transpose_merge_plain"):
        merged = context.reshape(b, T, d_out)
    else:
        merged = context.transpose(1, 2).reshape(b, T, d_out)  # (b, T, d_out)
    if mistake == "no_out_proj":
        return merged
    return out_proj(merged)  # (b, T, d_out)


_SPLIT_NO_TRANSPOSE = tr(
    "the heads are cut with `view(b, num_heads, T, head_dim)` straight away, without a "
    "transpose, which mixes tokens and heads: view to (b, T, num_heads, head_dim), then "
    "transpose(1, 2), as in queries.view(b, T, num_heads, head_dim).transpose(1, 2) (and "
    "transpose back before merging).",
    "直接用 `view(b, num_heads, T, head_dim)` 切分出头、没有转置，会把词元和头混在一起："
    "先 view 成 (b, T, num_heads, head_dim)，再 transpose(1, 2)，即 "
    "queries.view(b, T, num_heads, head_dim).transpose(1, 2)（合并前再转置回来）。",
)

#: The one catalog: each mistake of ``MISTAKES`` and the hint that names it.
MISTAKE_HINTS: dict[str, Text] = {
    "no_scaling": tr(
        "the scores are not scaled: divide them by sqrt(head_dim) before the softmax.",
        "注意力分数没有缩放：在 softmax 之前先除以 sqrt(head_dim)。",
    ),
    "scale_d_out": tr(
        "the scores are divided by sqrt(d_out); each head's dot products are head_dim long, so "
        "divide by sqrt(head_dim) (keys.shape[-1] ** 0.5 after the split).",
        "注意力分数除以的是 sqrt(d_out)；每个头的点积只有 head_dim 长，所以应该除以 "
        "sqrt(head_dim)（拆分之后就是 keys.shape[-1] ** 0.5）。",
    ),
    "split_no_transpose": _SPLIT_NO_TRANSPOSE,
    "split_no_transpose_merge_plain": _SPLIT_NO_TRANSPOSE,
    "merge_no_transpose": tr(
        "the heads are merged without transposing back: (b, h, T, head_dim) must become "
        "(b, T, h, head_dim) with transpose(1, 2) before contiguous().view(b, T, d_out).",
        "合并各个头时没有先转置回来：在 contiguous().view(b, T, d_out) 之前，"
        "要先用 transpose(1, 2) 把 (b, h, T, head_dim) 变成 (b, T, h, head_dim)。",
    ),
    "no_out_proj": tr(
        "the heads are merged but out_proj is never applied: return self.out_proj(context_vec).",
        "各头合并了，却没有经过 out_proj：请返回 self.out_proj(context_vec)。",
    ),
    "transposed_mask": tr(
        "the mask is transposed: it hides the past instead of the future. True/1 must sit ABOVE "
        "the diagonal (torch.triu(..., diagonal=1)), where the key comes after the query.",
        "掩码被转置了：它隐藏的是过去而不是未来。True/1 必须在对角线“以上”"
        "（torch.triu(..., diagonal=1)），也就是键在查询之后的位置。",
    ),
    "mask_after_softmax": tr(
        "the future is masked after the softmax without renormalising, so rows no longer sum to "
        "1: fill the scores with -inf BEFORE the softmax.",
        "在 softmax 之后才遮住未来，又没有重新归一化，所以每行之和不再是 1："
        "请在 softmax “之前”把注意力分数填成 -inf。",
    ),
    "mask_with_zero": tr(
        "the future scores are set to 0, not -inf; exp(0) = 1 still gives the future weight. "
        "Use masked_fill_(mask, -torch.inf).",
        "未来的注意力分数被设成了 0 而不是 -inf；exp(0) = 1 仍然会给未来分配权重。"
        "请用 masked_fill_(mask, -torch.inf)。",
    ),
    "no_mask": tr(
        "there is no causal mask: fill the future scores with -inf before the softmax.",
        "没有因果掩码：在 softmax 之前把未来的注意力分数填成 -inf。",
    ),
    "softmax_wrong_dim": tr(
        "the softmax runs over the wrong dimension: normalise each row, softmax(..., dim=-1).",
        "softmax 作用在了错误的维度上：应该对每一行归一化，softmax(..., dim=-1)。",
    ),
}


def name_mistake(
    out: torch.Tensor,
    forward: Callable[[str], torch.Tensor],
    mistakes: tuple[str, ...] = MISTAKES,
) -> str | None:
    """The first of ``mistakes`` whose output ``forward(mistake)`` equals ``out``, or None."""
    for mistake in mistakes:
        try:
            candidate = forward(mistake)
        except RuntimeError:  # this mistake cannot even run at these sizes
            continue
        if torch.allclose(out, candidate, atol=1e-5, rtol=1e-4, equal_nan=True):
            return mistake
    return None


#: The hint for a forward that writes to the tensor it was given.
INPUT_CHANGED = tr(
    "forward changed its input x in place (an in-place op such as x.clamp_(...), x.add_(...) or "
    "x[...] = ... on the argument): the caller's tensor is then no longer what it passed. Compute "
    "a new tensor instead (x.clamp(...), x + ...).",
    "forward 原地修改了它的输入 x（对参数用了 x.clamp_(...)、x.add_(...) 或 x[...] = ... "
    "这样的原地操作）：调用者的张量就不再是它传进去的那个了。请改为计算一个新张量"
    "（x.clamp(...)、x + ...）。",
)


def forward_on_copy(module: nn.Module, x: torch.Tensor) -> tuple[object, bool]:
    """``module(copy of x)`` and whether forward changed that copy in place.

    The learner's forward gets its own copy, so the reference, run on ``x`` afterwards, sees the
    input the test meant; a write to the copy (even one that keeps its values) is reported.
    """
    given = x.clone()
    version = given._version
    out = module(given)
    changed = given._version != version or not torch.equal(given, x)
    return out, changed
