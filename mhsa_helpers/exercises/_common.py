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

__all__ = [
    "CheckResult",
    "PredictionNoted",
    "fail",
    "mask_answer",
    "missing",
    "never_raises",
    "number",
    "ok",
    "plain_tensor",
    "prediction_before_run",
    "prediction_result",
    "tensor_answer",
    "whole_number",
]

PASS = "PASS"
NOT_YET = "NOT YET"


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one exercise check."""

    passed: bool
    exercise: str
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        mark = f"[{PASS}]" if self.passed else f"[{NOT_YET}]"
        return f"{mark} {self.exercise}: {self.message}"

    __str__ = __repr__


def ok(exercise: str, message: str = "correct, well done.") -> CheckResult:
    return CheckResult(True, exercise, message)


def fail(exercise: str, hint: str) -> CheckResult:
    return CheckResult(False, exercise, f"hint: {hint}")


def missing(exercise: str, what: str) -> CheckResult:
    message = f"no answer yet -- replace the `None` under `# YOUR CODE HERE` with {what}."
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
    exercise = checker.__name__.removeprefix("check_")

    @functools.wraps(checker)
    def safe(*args: Any, **kwargs: Any) -> CheckResult:
        for given in (*args, *kwargs.values()):
            if isinstance(given, torch.Tensor) and not plain_tensor(given):
                return fail(
                    exercise,
                    f"got a {type(given).__name__}, a subclass of torch.Tensor; pass a plain "
                    "torch.Tensor.",
                )
        try:
            with _time_limit(TIME_LIMIT_S):
                result = checker(*args, **kwargs)
        except CheckTimeout:
            return fail(
                exercise,
                f"checking your answer took more than {TIME_LIMIT_S:g} s and was stopped: does "
                "your code loop forever, sleep, or call itself without end?",
            )
        except (
            Exception,
            SystemExit,
            GeneratorExit,
        ) as error:  # the learner's code, or an odd answer
            return fail(
                exercise,
                f"checking your answer raised {type(error).__name__}: {_text(error)}. "
                "Look at what the exercise asks for (type and shape) and try again.",
            )
        if type(result) not in (CheckResult, PredictionNoted):
            return fail(exercise, "the checker could not judge this answer; re-read the exercise.")
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


def tensor_answer(
    exercise: str,
    answer: Any,
    expected: torch.Tensor,
    *,
    what: str,
    hint: Callable[[torch.Tensor], str] | str,
    atol: float = 1e-4,
) -> CheckResult:
    """Compare a tensor answer with ``expected``: shape first, then values (to ``atol``)."""
    if answer is None:
        return missing(exercise, what)
    if not isinstance(answer, torch.Tensor):
        return fail(exercise, f"expected a torch.Tensor, got {type(answer).__name__}.")
    if not plain_tensor(answer):
        return fail(
            exercise, f"expected a plain torch.Tensor, got the subclass {type(answer).__name__}."
        )
    if answer.is_meta:
        return fail(exercise, "a meta tensor has a shape but no values: compute real numbers.")
    if tuple(answer.shape) != tuple(expected.shape):
        return fail(
            exercise,
            f"shape {tuple(answer.shape)} but expected {tuple(expected.shape)}.",
        )
    if not answer.is_floating_point():
        return fail(exercise, f"expected a floating-point tensor, got dtype {answer.dtype}.")
    got = answer.detach().to(torch.float64).cpu()
    want = expected.detach().to(torch.float64).cpu()
    if not torch.allclose(got, want, atol=atol, rtol=0):
        return fail(exercise, hint(answer) if callable(hint) else hint)
    return ok(exercise)


def mask_answer(
    exercise: str,
    answer: Any,
    expected_shape: tuple[int, ...],
    *,
    what: str,
    shape_hint: str,
    dtype_hint: str,
) -> CheckResult | torch.Tensor:
    """The first checks of a boolean-mask answer, shared by the mask exercises.

    Returns the NOT YET result for a missing answer, a non-tensor, a subclass or meta tensor, a
    wrong shape (``shape_hint`` says what rows and columns are) or a dtype other than bool
    (``dtype_hint`` follows the dtype); otherwise the answer on the CPU, ready to compare.
    """
    if answer is None:
        return missing(exercise, what)
    if not isinstance(answer, torch.Tensor):
        return fail(exercise, f"expected a torch.Tensor, got {type(answer).__name__}.")
    if not plain_tensor(answer):
        return fail(
            exercise, f"expected a plain torch.Tensor, got the subclass {type(answer).__name__}."
        )
    if answer.is_meta:
        return fail(exercise, "a meta tensor has a shape but no values: compute real numbers.")
    if tuple(answer.shape) != tuple(expected_shape):
        return fail(
            exercise,
            f"shape {tuple(answer.shape)} but expected {tuple(expected_shape)}: {shape_hint}",
        )
    if answer.dtype != torch.bool:
        return fail(exercise, f"expected dtype torch.bool, got {answer.dtype}{dtype_hint}")
    return answer.cpu()


# -- predict, then run ----------------------------------------------------------------------------


class PredictionNoted(CheckResult):
    """A prediction that is written down but not judged yet: shows as ``[NOTED] ...``."""

    def __repr__(self) -> str:
        return f"[NOTED] {self.exercise}: {self.message}"

    __str__ = __repr__


def prediction_result(
    exercise: str,
    prediction: object,
    *,
    reveal: object,
    what: str,
    value: object,
    actual: str,
    correct: bool,
    explain: str,
) -> CheckResult:
    """The shared logic of the predict-then-run checkers.

    ``value`` is the parsed prediction (None when ``prediction`` is not of the kind ``what``
    describes); ``actual`` is what the experiment shows; ``correct`` whether ``value`` matches it.
    With ``reveal=False`` (the prediction cell) nothing about the answer is said.
    """
    if not isinstance(reveal, bool):
        return fail(exercise, f"reveal must be True or False, got {reveal!r}.")
    if prediction is None:
        if not reveal:
            return CheckResult(
                False,
                exercise,
                f"no prediction yet -- replace the `None` with {what}, then run the next cell "
                "to see if you were right.",
            )
        return fail(
            exercise,
            f"no prediction was written; the output above shows {actual}. Next time write "
            "your guess first: what surprises you is what you learn.",
        )
    if value is None:
        return fail(exercise, f"expected {what}, got {prediction!r}.")
    if not reveal:
        return PredictionNoted(
            False, exercise, f"your prediction {prediction!r} is written down. Run the next cell."
        )
    if correct:
        return ok(exercise, f"you predicted {prediction!r}, and the output shows {actual}.")
    return fail(exercise, f"you predicted {prediction!r}, but the output shows {actual}. {explain}")


def prediction_before_run(
    exercise: str,
    prediction: object,
    *,
    value: object,
    guess: str,
    kind: str,
    correct: bool,
    right: str,
    wrong: str,
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
            f"no prediction yet -- write your guess ({guess}) in place of `None`, run this "
            "cell, then run the next one to see what happens.",
        )
    if value is None:
        return fail(exercise, f"a prediction here is {kind}, got {prediction!r}.")
    if correct:
        return ok(exercise, right)
    return fail(exercise, wrong)
