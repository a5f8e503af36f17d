"""Reading a learner's answer: a number, a whole number, a plain tensor; and the hints for the
wrong kind of answer, each written once in both languages.

``number`` / ``whole_number`` return the parsed value or None; the checkers then say
``expected_kind(what, answer)``: "expected <what>, got <type>." in the lesson language.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import torch

from .. import validation
from ..i18n import Text, tr
from ._result import shown as show_value

__all__ = [
    "A_NUMBER",
    "A_PARAMETER_COUNT",
    "A_PER_HEAD_TENSOR",
    "A_WHOLE_NUMBER",
    "expected_kind",
    "got",
    "is_bool",
    "not_a_tensor",
    "not_a_whole_number",
    "number",
    "plain_tensor",
    "tensor_kind_hint",
    "whole_number",
    "wrong_shape",
]


def plain_tensor(answer: object) -> bool:
    """Whether ``answer`` is a plain ``torch.Tensor`` (or ``nn.Parameter``), not a subclass.

    A subclass can override any torch function (``allclose`` included) through
    ``__torch_function__``, so the checkers compare only plain tensors.
    """
    return type(answer) in (torch.Tensor, torch.nn.Parameter)


def is_bool(answer: object) -> bool:
    """A boolean answer: what ``validation.is_bool`` accepts, or a bool tensor (never a number)."""
    if isinstance(answer, torch.Tensor):
        return answer.dtype == torch.bool
    return validation.is_bool(answer)


def _scalar(answer: object) -> object:
    """A plain one-element tensor as its Python value; any other tensor as None."""
    if isinstance(answer, torch.Tensor):
        if not plain_tensor(answer) or answer.numel() != 1 or answer.is_meta:
            return None
        return answer.item()
    return answer


def number(answer: object) -> float | None:
    """``answer`` as a float if it is a finite real number (or a one-element tensor), else None.

    Numpy scalars count. ``True``/``False`` (a bool tensor too) are not numbers here, nor are
    strings, lists, NaN, infinity or an int too large for a float.
    """
    scalar = None if is_bool(answer) else _scalar(answer)
    if isinstance(scalar, numbers.Real):
        try:
            value = float(scalar)
        except OverflowError:
            return None
        return value if math.isfinite(value) else None
    return None


def whole_number(answer: object) -> int | None:
    """``answer`` as an int if it is a whole number (int, integral float, one-element tensor).

    Numpy integers and floats count; bools (a bool tensor too) do not.
    """
    scalar = None if is_bool(answer) else _scalar(answer)
    if isinstance(scalar, numbers.Integral):
        return int(scalar)
    value = number(scalar)  # a float: whole when it has no fraction
    return int(value) if value is not None and value.is_integer() else None


# -- what kind of answer was expected ------------------------------------------------------------

A_NUMBER = tr("a number", "一个数")
A_WHOLE_NUMBER = tr("a whole number", "一个整数")
A_PARAMETER_COUNT = tr("a number of parameters (an int)", "一个参数个数（整数）")
A_PER_HEAD_TENSOR = tr("a (num_heads,) tensor", "一个 (num_heads,) 张量")


def got(answer: object, *, show: str = "repr") -> Text:
    """ ", got <the answer>." (``show="type"``: its type): how a wrong-kind hint ends."""
    shown = show_value(answer) if show == "repr" else type(answer).__name__
    return tr(f", got {shown}.", f"，收到的是 {shown}。")


def expected_kind(what: Text, answer: object, *, show: str = "type") -> Text:
    """ "expected <what>, got <answer's type>." (``show="repr"``: the answer itself)."""
    return tr("expected ", "需要") + what + got(answer, show=show)


def not_a_whole_number(answer: object) -> Text:
    """ "expected a whole number, got <the answer>." (the answer shown as written)."""
    return expected_kind(A_WHOLE_NUMBER, answer, show="repr")


def not_a_tensor(answer: object) -> Text:
    """The hint for an answer that should have been a tensor."""
    return expected_kind(tr("a torch.Tensor", "一个 torch.Tensor"), answer)


def wrong_shape(got: object, expected: object) -> Text:
    """The hint for a tensor of the wrong shape (``got`` and ``expected`` are shape tuples)."""
    return tr(f"shape {got} but expected {expected}.", f"形状是 {got}，应为 {expected}。")


def tensor_kind_hint(answer: Any) -> Text | None:
    """The hint for a non-tensor, a tensor subclass or a meta tensor; None for a plain tensor."""
    if not isinstance(answer, torch.Tensor):
        return not_a_tensor(answer)
    if not plain_tensor(answer):
        kind = type(answer).__name__
        return tr(
            f"expected a plain torch.Tensor, got the subclass {kind}.",
            f"需要普通的 torch.Tensor，收到的是它的子类 {kind}。",
        )
    if answer.is_meta:
        return tr(
            "a meta tensor has a shape but no values: compute real numbers.",
            "`meta` 设备上的张量只有形状，没有数值。请算出真正的数。",
        )
    return None
