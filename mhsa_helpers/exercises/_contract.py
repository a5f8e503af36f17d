"""The harness the "build it" checkers share: accept the learner's class or function, run it safely.

A build-it exercise hands a checker the learner's own class (lessons 06, 09) or function (lessons
01, 03, 11), which may be unfinished, raise anything, or be passed the wrong way (an instance
instead of the class, a call instead of the function). The mechanical parts are written once here:

* ``class_answer`` / ``function_answer`` -- the answer is a class derived from ``nn.Module`` /
  a function, or a ``[NOT YET]`` result saying what to pass instead;
* ``ContractError`` -- raised at the first broken contract, its ``text`` (a bilingual ``Text``)
  is the hint;
* ``is_view_error`` / ``first_line`` -- recognise a ``.view`` on a non-contiguous tensor (the
  usual slip when merging heads after ``transpose``) and quote torch's message briefly;
* ``book_forward`` -- the book's causal multi-head forward from projected queries, keys and
  values, or the same with one typical mistake, so that a wrong output can be named.

What each lesson tests, at which sizes and tolerances, and every hint text stay in its module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import torch
from torch import nn

from ..i18n import Text, tr
from ._common import CheckResult, UntranslatedMessage, fail, missing

__all__ = [
    "MISTAKES",
    "ContractError",
    "book_forward",
    "class_answer",
    "first_line",
    "function_answer",
    "is_view_error",
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
