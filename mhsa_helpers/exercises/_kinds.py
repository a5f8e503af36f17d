"""The kinds of exercise check, each written once: a number (with a catalog of known wrong values
and their hints), a tensor, a boolean mask (``Mask``, with such a catalog too), and a prediction
(a guess judged before or after the experiment that settles it).

A lesson states a check as data -- the expected answer, the wrong answers it recognises, the texts
in both languages -- and one of these functions does the rest (the missing answer, the wrong kind,
the wrong shape, the order of the tests).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ..i18n import Text, tr
from ._parse import (
    A_NUMBER,
    A_WHOLE_NUMBER,
    expected_kind,
    got,
    number,
    tensor_kind_hint,
    whole_number,
    wrong_shape,
)
from ._result import CheckResult, ContractError, PredictionNoted, fail, missing, ok, spec_checker
from ._result import shown as show

__all__ = [
    "Mask",
    "Near",
    "Number",
    "Prediction",
    "PredictionBeforeRun",
    "TensorMatch",
    "mask_checker",
    "number_checker",
    "prediction_checker",
    "tensor_answer",
]


@dataclass(frozen=True)
class Near:
    """A known wrong answer with a tolerance of its own: within ``tol`` of ``value``."""

    value: float
    tol: float

    def __call__(self, value: float) -> bool:
        return math.isclose(value, self.value, abs_tol=self.tol)


#: A known wrong answer: one value, several values, or a test on the value (``Near`` is one).
Match = float | Sequence[float] | Callable[[float], bool]
#: The hint for a known wrong answer: a text, or a function of the value (its match then a test).
Hint = Text | Callable[[float], Text]


def pairs(catalog: Mapping[Any, Any] | Sequence[tuple[Any, Any]]) -> tuple[tuple[Any, Any], ...]:
    """A catalog of known wrong answers as ``(match, hint)`` pairs, in order: a spec states it as
    a mapping ``{match: hint}`` (a tensor matches by its values, not as a key) or as pairs."""
    return tuple(catalog.items()) if isinstance(catalog, Mapping) else tuple(catalog)


def _equal(value: float, target: float, tol: float | None) -> bool:
    """Whether an answer ``value`` is ``target``: ``==`` (``tol`` None) or within ``tol``."""
    return value == target if tol is None else math.isclose(value, target, abs_tol=tol)


class _Catalog:
    """A spec whose ``wrong`` may be stated as a mapping: kept as ``(match, hint)`` pairs."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "wrong", pairs(self.wrong))  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Number(_Catalog):
    """A numeric exercise: ``expected`` passes with ``right``; each ``(match, hint)`` of ``wrong``
    is tried in order; anything else gets ``otherwise`` (a text, or a function of the value).

    ``whole``: the answer must be a whole number (``whole_number``), else any finite number
    (``number``). ``tol``: None compares with ``==``; a float compares with that absolute
    tolerance. ``kind`` is the hint for an answer that is not a number at all (default:
    "expected a number / a whole number, got <type>"). ``screen``: a test on the answer as given,
    before it is read as a number, that returns a hint (e.g. for a NaN) or None.
    """

    name: Text
    what: Text
    expected: float
    right: Text
    wrong: Mapping[Any, Hint] | tuple[tuple[Match, Hint], ...]
    otherwise: Hint
    whole: bool = False
    tol: float | None = None
    kind: Callable[[object], Text] | None = field(default=None)
    screen: Callable[[object], Text | None] | None = field(default=None)

    def _matches(self, value: float, match: Match) -> bool:
        if callable(match):
            return bool(match(value))
        if isinstance(match, (int, float)):
            return _equal(value, match, self.tol)
        return any(_equal(value, m, self.tol) for m in match)

    def check(self, answer: object) -> CheckResult:
        if answer is None:
            return missing(self.name, self.what)
        screened = self.screen(answer) if self.screen is not None else None
        if screened is not None:
            return fail(self.name, screened)
        value = whole_number(answer) if self.whole else number(answer)
        if value is None:
            kind = A_WHOLE_NUMBER if self.whole else A_NUMBER
            return fail(self.name, self.kind(answer) if self.kind else expected_kind(kind, answer))
        if _equal(value, self.expected, self.tol):
            return ok(self.name, self.right)
        hint = next((h for m, h in pairs(self.wrong) if self._matches(value, m)), self.otherwise)
        return fail(self.name, hint(value) if callable(hint) else hint)


def number_checker(python_name: str, spec: Number, doc: str) -> Callable[[object], CheckResult]:
    """The checker function ``python_name(answer)`` for the numeric exercise ``spec``."""
    return spec_checker(python_name, spec, doc, keep_as="spec")


#: A known wrong tensor answer: the tensor it equals, or a test of the answer (float64, CPU).
TensorMatch = torch.Tensor | Callable[[torch.Tensor], bool]


def tensor_answer(
    exercise: Text,
    answer: Any,
    expected: torch.Tensor,
    *,
    what: Text,
    hint: Callable[[torch.Tensor], Text] | Text,
    atol: float = 1e-4,
    shapes: Mapping[tuple[int, ...], Text] | Sequence[tuple[tuple[int, ...], Text]] = (),
    wrong: Mapping[Any, Text] | Sequence[tuple[TensorMatch, Text]] = (),
) -> CheckResult:
    """Compare a tensor answer with ``expected``: shape first, then values (to ``atol``).

    ``shapes``: known wrong shapes (e.g. the whole matrix instead of one row of it), each
    ``{shape: hint}`` tried, for any tensor, before the other tests; a known wrong shape that is
    also the expected one (at some sizes two layouts share a shape) is left to the values.
    ``wrong``: known wrong answers, each ``{tensor or test: hint}`` tried in order for an answer
    of the right shape whose values differ (a tensor matches to ``atol``); anything else gets
    ``hint`` (a text, or a function of the answer).
    """
    if answer is None:
        return missing(exercise, what)
    for shape, shape_hint in pairs(shapes):
        if isinstance(answer, torch.Tensor) and tuple(answer.shape) == shape != expected.shape:
            return fail(exercise, shape_hint)
    kind_hint = tensor_kind_hint(answer)
    if kind_hint is not None:
        return fail(exercise, kind_hint)
    if tuple(answer.shape) != tuple(expected.shape):
        return fail(exercise, wrong_shape(tuple(answer.shape), tuple(expected.shape)))
    if not answer.is_floating_point():
        return fail(
            exercise,
            tr(
                f"expected a floating-point tensor, got dtype {answer.dtype}.",
                f"需要浮点张量，收到的 dtype 是 {answer.dtype}。",
            ),
        )
    got = answer.detach().to(torch.float64).cpu()
    if _tensor_matches(got, expected, atol):
        return ok(exercise)
    for match, wrong_hint in pairs(wrong):
        if _tensor_matches(got, match, atol):
            return fail(exercise, wrong_hint)
    return fail(exercise, hint(answer) if callable(hint) else hint)


def _tensor_matches(got: torch.Tensor, match: TensorMatch, atol: float) -> bool:
    """Whether ``got`` (float64, CPU) passes the test ``match``, or equals it to ``atol``."""
    if callable(match) and not isinstance(match, torch.Tensor):
        return bool(match(got))
    known = match.detach().to(torch.float64).cpu()
    return known.shape == got.shape and torch.allclose(got, known, atol=atol, rtol=0)


_NOTHING = Text("", "")


@dataclass(frozen=True)
class Mask(_Catalog):
    """A boolean-mask exercise: the answer is read (``_read_mask``: missing, not a plain tensor,
    wrong shape -- then ``shape_hint`` -- or dtype -- then ``dtype_hint``); ``expected`` passes
    with ``right``; each ``(tensor, hint)`` of ``wrong`` is tried in order (``torch.equal``);
    then ``diagnose`` (a test of its own on the mask, None when it has nothing to say); anything
    else gets ``otherwise``.

    ``read``: a reading of the answer other than ``_read_mask`` (given the spec and the answer,
    it returns the ``[NOT YET]`` result or the mask to compare).
    """

    name: Text
    what: Text
    expected: torch.Tensor
    right: Text
    wrong: Mapping[torch.Tensor, Text] | tuple[tuple[torch.Tensor, Text], ...]
    otherwise: Text
    shape_hint: Text = _NOTHING
    dtype_hint: Text = _NOTHING
    diagnose: Callable[[torch.Tensor], Text | None] | None = None
    read: Callable[[Mask, Any], CheckResult | torch.Tensor] | None = None

    def check(self, answer: object) -> CheckResult:
        got = (self.read or _read_mask)(self, answer)
        if isinstance(got, CheckResult):
            return got
        if torch.equal(got, self.expected):
            return ok(self.name, self.right)
        for wrong, hint in pairs(self.wrong):
            if torch.equal(got, wrong):
                return fail(self.name, hint)
        said = self.diagnose(got) if self.diagnose is not None else None
        return fail(self.name, said if said is not None else self.otherwise)


def _read_mask(spec: Mask, answer: Any) -> CheckResult | torch.Tensor:
    """The first checks of a boolean-mask answer, ``Mask``'s reading unless it names its own.

    Returns the ``[TO DO]`` result for a missing answer; refuses a non-tensor, a subclass or meta
    tensor, a wrong shape (``spec.shape_hint`` says what rows and columns are) or a dtype other
    than bool (``spec.dtype_hint`` follows the dtype); otherwise the answer on the CPU, ready to
    compare.
    """
    if answer is None:
        return missing(spec.name, spec.what)
    kind_hint = tensor_kind_hint(answer)
    if kind_hint is not None:
        raise ContractError(kind_hint)
    shape, want = tuple(answer.shape), tuple(spec.expected.shape)
    if shape != want:
        raise ContractError(wrong_shape(shape, want) + tr(" ", "") + spec.shape_hint)
    if answer.dtype != torch.bool:
        raise ContractError(
            tr(
                f"expected dtype torch.bool, got {answer.dtype}",
                f"需要 dtype torch.bool，收到的是 {answer.dtype}",
            )
            + spec.dtype_hint
        )
    return answer.cpu()


def mask_checker(python_name: str, spec: Mask, doc: str) -> Callable[[object], CheckResult]:
    """The checker function ``python_name(answer)`` for the mask exercise ``spec``."""
    return spec_checker(python_name, spec, doc, keep_as="mask_spec")


# -- predict, then run ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Prediction:
    """A predict-then-run moment: a guess at a number, written down first (``reveal=False``:
    nothing about the answer is said) and judged after the experiment (``reveal=True``).

    ``actual()`` is the number the experiment gives (computed when checked); ``shows(actual)``
    says what the output shows, ``explain`` why for a wrong guess. A guess is ``whole`` (a count)
    or any number, within ``between`` (else it is not of the kind ``what`` describes), and right
    when equal to the actual number (``tol``: to that absolute tolerance).
    """

    name: Text
    what: Text
    actual: Callable[[], float]
    shows: Callable[[float], Text]
    explain: Text
    whole: bool = False
    between: tuple[float, float] = (-math.inf, math.inf)
    tol: float | None = None

    def check(self, prediction: object, reveal: object = False) -> CheckResult:
        name, what, actual = self.name, self.what, self.actual()
        output = self.shows(actual)
        value = whole_number(prediction) if self.whole else number(prediction)
        if not isinstance(reveal, bool):  # a ContractError is the hint (``exercise``)
            raise ContractError(
                tr(
                    f"reveal must be True or False, got {reveal!r}.",
                    f"reveal 只能是 True 或 False，收到的是 {reveal!r}。",
                )
            )
        if prediction is None:
            if not reveal:
                return CheckResult(
                    False,
                    name,
                    tr(
                        "no prediction yet -- replace the `None` with ",
                        "还没有预测。请把 `None` 换成",
                    )
                    + what
                    + tr(
                        ", then run the next cell to see if you were right.",
                        "，然后运行下一个单元格，看看你猜得对不对。",
                    ),
                    todo=True,
                )
            raise ContractError(
                tr(
                    "no prediction was written; the output above shows ",
                    "没有写下预测。上面的输出显示：",
                )
                + output
                + tr(
                    ". Next time write your guess first: what surprises you is what you learn.",
                    "。下次先写下你的猜测，再看结果，印象会更深。",
                )
            )
        shown = show(prediction)
        low, high = self.between
        if value is not None and not low <= value <= high:
            raise ContractError(
                tr(
                    f"expected a prediction between {low:g} and {high:g}, got {shown}.",
                    f"预测应在 {low:g} 到 {high:g} 之间，收到的是 {shown}。",
                )
            )
        if value is None:
            raise ContractError(tr("expected ", "这里需要") + what + got(prediction))
        if not reveal:
            return PredictionNoted(
                False,
                name,
                tr(
                    f"your prediction {shown} is written down. Run the next cell.",
                    f"你的预测 {shown} 已经记下。运行下一个单元格吧。",
                ),
            )
        if _equal(value, actual, self.tol):
            return ok(
                name,
                tr(
                    f"you predicted {shown}, and the output shows ",
                    f"你预测的是 {shown}，输出显示：",
                )
                + output
                + tr(".", "。"),
            )
        raise ContractError(
            tr(f"you predicted {shown}, but the output shows ", f"你预测的是 {shown}，但输出显示：")
            + output
            + tr(". ", "。")
            + self.explain
        )


@dataclass(frozen=True)
class PredictionBeforeRun:
    """A guess at a number judged in the prediction cell itself (no ``reveal`` step): ``right``
    or ``wrong``; the next cell shows why. ``whole``: a count (an int), else any number; right
    when equal to ``expected`` (``tol``: to that absolute tolerance)."""

    name: Text
    expected: float
    right: Text
    wrong: Text
    whole: bool = False
    tol: float | None = None

    def check(self, prediction: object) -> CheckResult:
        if prediction is None:
            guess = tr("an int", "一个整数") if self.whole else A_NUMBER
            return CheckResult(
                False,
                self.name,
                tr("no prediction yet -- write your guess (", "还没有预测。请把你的猜测（")
                + guess
                + tr(
                    ") in place of `None`, run this cell, then run the next one to see what "
                    "happens.",
                    "）写在 `None` 的位置，运行这个单元格，再运行下一个，看看会发生什么。",
                ),
                todo=True,
            )
        value = whole_number(prediction) if self.whole else number(prediction)
        if value is None:
            kind = A_WHOLE_NUMBER if self.whole else A_NUMBER
            return fail(
                self.name, tr("a prediction here is ", "这里的预测应该是") + kind + got(prediction)
            )
        right = _equal(value, self.expected, self.tol)
        return ok(self.name, self.right) if right else fail(self.name, self.wrong)


def prediction_checker(
    python_name: str, spec: Prediction | PredictionBeforeRun, doc: str
) -> Callable[..., CheckResult]:
    """The checker function for the prediction ``spec``: ``python_name(prediction, reveal=False)``
    for a ``Prediction``, ``python_name(prediction)`` for a ``PredictionBeforeRun``."""
    if isinstance(spec, Prediction):
        judged_after = spec

        def after_run(prediction: object, reveal: bool = False) -> CheckResult:
            return judged_after.check(prediction, reveal)

        checker: Callable[..., CheckResult] = after_run
    else:
        judged_now = spec

        def before_run(prediction: object) -> CheckResult:
            return judged_now.check(prediction)

        checker = before_run
    return spec_checker(python_name, spec, doc, keep_as="prediction", checker=checker)
