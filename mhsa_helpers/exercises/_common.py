"""What every exercise checker returns: a ``CheckResult`` that shows as a clear pass or a hint.

A checker never raises on a wrong or missing answer (the learner's cell ships with
``answer = None  # YOUR CODE HERE`` and must run cleanly); it returns a result whose text says what
to try next. ``bool(result)`` is True only for a correct answer, which is what tests and the
solution notebooks assert.

Also here, shared by the lessons' "predict, then run" moments: ``prediction_result`` (a guess
written down first and judged after the experiment, ``reveal=True``; an unjudged guess shows as
``[NOTED]``) and ``prediction_before_run`` (a guess judged at once, the next cell shows why).
"""

from __future__ import annotations

import contextlib
import functools
import math
import numbers
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from ..i18n import Text, language, tr, using_language

__all__ = [
    "MARKS",
    "WELL_DONE",
    "CheckResult",
    "PredictionNoted",
    "UntranslatedMessage",
    "fail",
    "mask_answer",
    "missing",
    "never_raises",
    "not_a_byte_count",
    "not_a_tensor",
    "number",
    "ok",
    "plain_tensor",
    "prediction_before_run",
    "prediction_result",
    "tensor_answer",
    "whole_number",
    "wrong_shape",
]

#: How a result starts, per language: passed, not yet, a prediction written down.
MARKS = {
    "en": {"pass": "PASS", "not_yet": "NOT YET", "noted": "NOTED", "hint": "hint: "},
    "zh": {"pass": "通过", "not_yet": "还没对", "noted": "已记下", "hint": "提示："},
}


class UntranslatedMessage(BaseException):
    """A checker built a message that is not a ``Text`` (a bug in this package, not the learner's).

    A BaseException so that ``never_raises`` does not turn it into a hint: the test suite must
    see it.
    """


def _text_arg(value: object, what: str) -> Text:
    if not isinstance(value, Text):
        raise UntranslatedMessage(
            f"{what} must be a Text (tr(en, zh)) so that it exists in both languages, "
            f"got {type(value).__name__} {value!r}"
        )
    return value


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one exercise check; ``exercise`` and ``text`` hold both languages."""

    passed: bool
    exercise: Text
    text: Text

    def __post_init__(self) -> None:
        _text_arg(self.exercise, "the exercise name")
        _text_arg(self.text, "the message")

    def __bool__(self) -> bool:
        return self.passed

    @property
    def message(self) -> str:
        """The message in the current lesson language."""
        return str(self.text)

    def _mark(self) -> str:
        return MARKS[language()]["pass" if self.passed else "not_yet"]

    def render(self, lang: str) -> str:
        """The whole result as the learner sees it in ``lang``."""
        with using_language(lang):
            return repr(self)

    def __repr__(self) -> str:
        colon = "：" if language() == "zh" else ": "
        return f"[{self._mark()}] {self.exercise}{colon}{self.text}"

    __str__ = __repr__


#: The default message of a passed check.
WELL_DONE = Text("correct, well done.", "正确，做得好！")


def ok(exercise: Text, message: Text = WELL_DONE) -> CheckResult:
    return CheckResult(True, exercise, _text_arg(message, "message"))


def fail(exercise: Text, hint: Text) -> CheckResult:
    hint = _text_arg(hint, "hint")
    return CheckResult(False, exercise, Text(MARKS["en"]["hint"], MARKS["zh"]["hint"]) + hint)


def missing(exercise: Text, what: Text) -> CheckResult:
    what = _text_arg(what, "what")
    message = (
        tr(
            "no answer yet -- replace the `None` under `# YOUR CODE HERE` with ",
            "还没有答案。请把 `# YOUR CODE HERE` 下面的 `None` 换成",
        )
        + what
        + tr(".", "。")
    )
    return CheckResult(False, exercise, message)


#: Wall-clock seconds one checker call may take before it gives up (the learner's code may loop).
TIME_LIMIT_S = 60.0


class CheckTimeout(BaseException):
    """Raised by the time limit; a BaseException so that no ``except Exception`` swallows it."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise ``CheckTimeout`` in the block after ``seconds`` (main thread with SIGALRM only).

    A timer the caller already set (e.g. a test runner's) is left alone when it fires sooner, and
    re-armed with its remaining time afterwards.
    """
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return
    old_delay, old_interval = signal.getitimer(signal.ITIMER_REAL)
    if 0 < old_delay <= seconds:
        yield
        return

    def on_alarm(signum: int, frame: object) -> None:
        raise CheckTimeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_delay > 0:
            left = max(old_delay - (time.monotonic() - start), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, old_interval)


def never_raises(checker: Callable[..., CheckResult]) -> Callable[..., CheckResult]:
    """Wrap ``checker`` so that nothing a learner passes makes it raise or hang.

    Whatever the answer (None, a string, a NaN or meta tensor, a class whose ``forward`` raises,
    calls ``sys.exit`` or loops forever, extra arguments), the learner gets a ``[NOT YET]`` result
    naming what went wrong, never a traceback, and never a PASS: only a ``CheckResult`` that the
    checker itself returned can pass. A call stops after ``TIME_LIMIT_S`` seconds (where a
    SIGALRM timer is available: the main thread on Unix, as in a notebook kernel). Ctrl-C
    (KeyboardInterrupt) still interrupts. ``mhsa_helpers.exercises`` applies it to every checker it
    exports.
    """
    exercise = Text(*(checker.__name__.removeprefix("check_"),) * 2)

    @functools.wraps(checker)
    def safe(*args: Any, **kwargs: Any) -> CheckResult:
        for given in (*args, *kwargs.values()):
            if isinstance(given, torch.Tensor) and not plain_tensor(given):
                kind = type(given).__name__
                return fail(
                    exercise,
                    tr(
                        f"got a {kind}, a subclass of torch.Tensor; pass a plain torch.Tensor.",
                        f"收到的是 {kind}，它是 torch.Tensor 的子类；请传入普通的 torch.Tensor。",
                    ),
                )
        try:
            with _time_limit(TIME_LIMIT_S):
                result = checker(*args, **kwargs)
        except CheckTimeout:
            return fail(
                exercise,
                tr(
                    f"checking your answer took more than {TIME_LIMIT_S:g} s and was stopped: "
                    "does your code loop forever, sleep, or call itself without end?",
                    f"检查你的答案用了超过 {TIME_LIMIT_S:g} 秒，已被中止：你的代码是不是陷入了"
                    "死循环、在 sleep，或者无休止地调用自己？",
                ),
            )
        except (
            Exception,
            SystemExit,
            GeneratorExit,
        ) as error:  # the learner's code, or an odd answer
            kind, said = type(error).__name__, _text(error)
            return fail(
                exercise,
                tr(
                    f"checking your answer raised {kind}: {said}. "
                    "Look at what the exercise asks for (type and shape) and try again.",
                    f"检查你的答案时抛出了 {kind}：{said}。"
                    "请再读一遍练习要求的类型和形状，然后再试。",
                ),
            )
        if type(result) not in (CheckResult, PredictionNoted):
            return fail(
                exercise,
                tr(
                    "the checker could not judge this answer; re-read the exercise.",
                    "检查器无法判断这个答案；请重新读一遍练习。",
                ),
            )
        return result

    safe.__wrapped__ = checker  # type: ignore[attr-defined]
    return safe


def _text(error: BaseException) -> str:
    """``str(error)``, or a placeholder when even that raises (a learner's own exception)."""
    try:
        return str(error)
    except Exception:
        return "(its message could not be shown)"


def plain_tensor(answer: object) -> bool:
    """Whether ``answer`` is a plain ``torch.Tensor`` (or ``nn.Parameter``), not a subclass.

    A subclass can override any torch function (``allclose`` included) through
    ``__torch_function__``, so the checkers compare only plain tensors.
    """
    return type(answer) in (torch.Tensor, torch.nn.Parameter)


def number(answer: object) -> float | None:
    """``answer`` as a float if it is a finite real number (or a one-element tensor), else None.

    Numpy scalars count. ``True``/``False`` are not numbers here, nor are strings, lists, NaN,
    infinity or an int too large for a float.
    """
    if _is_bool(answer):
        return None
    if isinstance(answer, torch.Tensor):
        if not plain_tensor(answer) or answer.numel() != 1 or answer.is_meta:
            return None
        answer = answer.item()
    if isinstance(answer, numbers.Real) and not _is_bool(answer):
        try:
            value = float(answer)
        except OverflowError:
            return None
        return value if math.isfinite(value) else None
    return None


def _is_bool(answer: object) -> bool:
    return isinstance(answer, bool) or type(answer).__name__ == "bool_"


def whole_number(answer: object) -> int | None:
    """``answer`` as an int if it is a whole number (int, integral float, one-element tensor).

    Numpy integers and floats count; bools do not.
    """
    if _is_bool(answer):
        return None
    if isinstance(answer, torch.Tensor):
        if not plain_tensor(answer) or answer.numel() != 1 or answer.is_meta:
            return None
        answer = answer.item()
    if isinstance(answer, numbers.Integral) and not _is_bool(answer):
        return int(answer)
    if isinstance(answer, numbers.Real) and not _is_bool(answer):
        value = float(answer)
        if math.isfinite(value) and value.is_integer():
            return int(value)
    return None


def not_a_tensor(answer: object) -> Text:
    """The hint for an answer that should have been a tensor."""
    kind = type(answer).__name__
    return tr(f"expected a torch.Tensor, got {kind}.", f"需要一个 torch.Tensor，收到的是 {kind}。")


def not_a_byte_count(answer: object) -> Text:
    """The hint for a memory exercise's answer that is not a number of bytes."""
    kind = type(answer).__name__
    return tr(
        f"expected a number of bytes (an int), got {kind}.",
        f"需要一个字节数（int），收到的是 {kind}。",
    )


def wrong_shape(got: object, expected: object) -> Text:
    """The hint for a tensor of the wrong shape (``got`` and ``expected`` are shape tuples)."""
    return tr(f"shape {got} but expected {expected}.", f"形状是 {got}，应为 {expected}。")


def _tensor_kind_hint(answer: Any) -> Text | None:
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
            "meta 张量只有形状没有数值：请算出真正的数。",
        )
    return None


def tensor_answer(
    exercise: Text,
    answer: Any,
    expected: torch.Tensor,
    *,
    what: Text,
    hint: Callable[[torch.Tensor], Text] | Text,
    atol: float = 1e-4,
) -> CheckResult:
    """Compare a tensor answer with ``expected``: shape first, then values (to ``atol``)."""
    if answer is None:
        return missing(exercise, what)
    kind_hint = _tensor_kind_hint(answer)
    if kind_hint is not None:
        return fail(exercise, kind_hint)
    if tuple(answer.shape) != tuple(expected.shape):
        return fail(exercise, wrong_shape(tuple(answer.shape), tuple(expected.shape)))
    if not answer.is_floating_point():
        dtype = answer.dtype
        return fail(
            exercise,
            tr(
                f"expected a floating-point tensor, got dtype {dtype}.",
                f"需要浮点张量，收到的 dtype 是 {dtype}。",
            ),
        )
    got = answer.detach().to(torch.float64).cpu()
    want = expected.detach().to(torch.float64).cpu()
    if not torch.allclose(got, want, atol=atol, rtol=0):
        return fail(exercise, hint(answer) if callable(hint) else hint)
    return ok(exercise)


def mask_answer(
    exercise: Text,
    answer: Any,
    expected_shape: tuple[int, ...],
    *,
    what: Text,
    shape_hint: Text,
    dtype_hint: Text,
) -> CheckResult | torch.Tensor:
    """The first checks of a boolean-mask answer, shared by the mask exercises.

    Returns the NOT YET result for a missing answer, a non-tensor, a subclass or meta tensor, a
    wrong shape (``shape_hint`` says what rows and columns are) or a dtype other than bool
    (``dtype_hint`` follows the dtype); otherwise the answer on the CPU, ready to compare.
    """
    if answer is None:
        return missing(exercise, what)
    kind_hint = _tensor_kind_hint(answer)
    if kind_hint is not None:
        return fail(exercise, kind_hint)
    if tuple(answer.shape) != tuple(expected_shape):
        return fail(
            exercise,
            wrong_shape(tuple(answer.shape), tuple(expected_shape)) + " " + shape_hint,
        )
    if answer.dtype != torch.bool:
        dtype = answer.dtype
        return fail(
            exercise,
            tr(
                f"expected dtype torch.bool, got {dtype}",
                f"需要 dtype torch.bool，收到的是 {dtype}",
            )
            + dtype_hint,
        )
    return answer.cpu()


# -- predict, then run ----------------------------------------------------------------------------


class PredictionNoted(CheckResult):
    """A prediction that is written down but not judged yet: shows as ``[NOTED] ...``."""

    def _mark(self) -> str:
        return MARKS[language()]["noted"]

    __str__ = CheckResult.__repr__


def prediction_result(
    exercise: Text,
    prediction: object,
    *,
    reveal: object,
    what: Text,
    value: object,
    actual: Text,
    correct: bool,
    explain: Text,
) -> CheckResult:
    """The shared logic of the predict-then-run checkers.

    ``value`` is the parsed prediction (None when ``prediction`` is not of the kind ``what``
    describes); ``actual`` is what the experiment shows; ``correct`` whether ``value`` matches it.
    With ``reveal=False`` (the prediction cell) nothing about the answer is said.
    """
    if not isinstance(reveal, bool):
        return fail(
            exercise,
            tr(
                f"reveal must be True or False, got {reveal!r}.",
                f"reveal 只能是 True 或 False，收到的是 {reveal!r}。",
            ),
        )
    if prediction is None:
        if not reveal:
            return CheckResult(
                False,
                exercise,
                tr("no prediction yet -- replace the `None` with ", "还没有预测。请把 `None` 换成")
                + what
                + tr(
                    ", then run the next cell to see if you were right.",
                    "，然后运行下一个单元格，看看你猜得对不对。",
                ),
            )
        return fail(
            exercise,
            tr(
                "no prediction was written; the output above shows ",
                "没有写下预测；上面的输出显示：",
            )
            + actual
            + tr(
                ". Next time write your guess first: what surprises you is what you learn.",
                "。下次先写下你的猜测：让你意外的地方，正是你学到东西的地方。",
            ),
        )
    shown = repr(prediction)
    if value is None:
        return fail(
            exercise,
            tr("expected ", "这里需要") + what + tr(f", got {shown}.", f"，收到的是 {shown}。"),
        )
    if not reveal:
        return PredictionNoted(
            False,
            exercise,
            tr(
                f"your prediction {shown} is written down. Run the next cell.",
                f"你的预测 {shown} 已经记下。运行下一个单元格吧。",
            ),
        )
    if correct:
        return ok(
            exercise,
            tr(f"you predicted {shown}, and the output shows ", f"你预测的是 {shown}，输出显示：")
            + actual
            + tr(".", "。"),
        )
    return fail(
        exercise,
        tr(f"you predicted {shown}, but the output shows ", f"你预测的是 {shown}，但输出显示：")
        + actual
        + tr(". ", "。")
        + explain,
    )


def prediction_before_run(
    exercise: Text,
    prediction: object,
    *,
    value: object,
    guess: Text,
    kind: Text,
    correct: bool,
    right: Text,
    wrong: Text,
) -> CheckResult:
    """The predict-then-run checkers judged in the prediction cell itself (no ``reveal`` step).

    ``value`` is the parsed prediction (None when ``prediction`` is not ``kind``, e.g. "a whole
    number"); ``guess`` names what to write in the prompt, e.g. "an int"; ``correct`` whether
    ``value`` is what the next cell shows; ``right``/``wrong`` are the messages for either case.
    """
    if prediction is None:
        return CheckResult(
            False,
            exercise,
            tr("no prediction yet -- write your guess (", "还没有预测。请把你的猜测（")
            + guess
            + tr(
                ") in place of `None`, run this cell, then run the next one to see what happens.",
                "）写在 `None` 的位置，运行这个单元格，再运行下一个，看看会发生什么。",
            ),
        )
    if value is None:
        shown = repr(prediction)
        return fail(
            exercise,
            tr("a prediction here is ", "这里的预测应该是")
            + kind
            + tr(f", got {shown}.", f"，收到的是 {shown}。"),
        )
    if correct:
        return ok(exercise, right)
    return fail(exercise, wrong)
