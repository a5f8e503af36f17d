"""The harness the "build it" checkers share: accept the learner's class or function, run it safely.

A build-it exercise hands a checker the learner's own class (lessons 06, 09) or function (lessons
01, 03, 11), which may be unfinished, raise anything, or be passed the wrong way (an instance
instead of the class, a call instead of the function). The mechanical parts are written once here:

* ``class_answer`` / ``function_answer`` -- the answer is a class derived from ``nn.Module`` /
  a function, or a ``[NOT YET]`` result saying what to pass instead;
* ``ContractError`` -- raised at the first broken contract, its text is the hint;
* ``is_view_error`` / ``first_line`` -- recognise a ``.view`` on a non-contiguous tensor (the
  usual slip when merging heads after ``transpose``) and quote torch's message briefly.

What each lesson tests, at which sizes and tolerances, and every hint text stay in its module.
"""

from __future__ import annotations

import torch
from torch import nn

from ._common import CheckResult, fail, missing

__all__ = ["ContractError", "class_answer", "first_line", "function_answer", "is_view_error"]


class ContractError(Exception):
    """Raised inside a build checker to stop at the first failed contract, with its hint."""


def class_answer(
    cls: object, exercise: str, *, missing_what: str, instance_hint: str, not_class_hint: str
) -> CheckResult | None:
    """None if ``cls`` is a class derived from ``nn.Module``, else the ``[NOT YET]`` to return.

    ``not_class_hint`` may use ``{cls!r}`` and ``{kind}`` (the answer's type name).
    """
    if cls is None:
        return missing(exercise, missing_what)
    if isinstance(cls, nn.Module):
        return fail(exercise, instance_hint)
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
        return fail(exercise, not_class_hint.format(cls=cls, kind=type(cls).__name__))
    return None


def function_answer(
    answer: object, exercise: str, name: str, *, reject_classes: bool = False
) -> CheckResult | None:
    """None if ``answer`` is a function to call, else the ``[NOT YET]`` to return.

    ``name`` is the function's name in the notebook (``answer = name``). A tensor is the result of
    a call, not the function; with ``reject_classes`` a class is refused as well.
    """
    if answer is None:
        return missing(exercise, f"your function (write `answer = {name}`, no parentheses)")
    refused: tuple[type, ...] = (torch.Tensor, type) if reject_classes else (torch.Tensor,)
    if isinstance(answer, refused) or not callable(answer):
        return fail(
            exercise,
            f"expected a function, got {type(answer).__name__}: write `answer = {name}` "
            "(the function itself, not a call).",
        )
    return None


def is_view_error(error: BaseException) -> bool:
    """Whether ``error`` is torch's ``.view`` on a tensor whose memory layout does not allow it."""
    return "view size is not compatible" in str(error)


def first_line(text: str) -> str:
    """The first line of an error message, to quote it in a one-line hint."""
    return (text.strip().splitlines() or ["(no message)"])[0]
