"""What every exercise checker returns, and the guard that keeps a checker from raising or hanging.

* ``CheckResult`` -- shows as ``[PASS] ...`` or ``[NOT YET] ... hint: ...``; truthy only for a
  correct answer. ``ok`` / ``fail`` / ``missing`` build one; ``PredictionNoted`` is a guess
  written down but not judged yet (``[NOTED] ...``).
* ``exercise(name)`` -- gives a checker its bilingual exercise name, so that even a result the
  guard builds (the checker raised or ran out of time) names the exercise in the lesson language.
* ``never_raises(checker)`` -- nothing a learner passes makes ``checker`` raise, or run longer than
  ``TIME_LIMIT_S``; ``mhsa_helpers.exercises`` wraps every checker it exports.
"""

from __future__ import annotations

import ctypes
import functools
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any, TypeVar

import torch

from ..i18n import Text, language, tr, using_language

__all__ = [
    "MARKS",
    "TIME_LIMIT_S",
    "WELL_DONE",
    "CheckResult",
    "CheckTimeout",
    "ContractError",
    "PredictionNoted",
    "UntranslatedMessage",
    "decimals",
    "exercise",
    "fail",
    "missing",
    "never_raises",
    "ok",
    "shown",
    "spec_checker",
]

#: How a result starts, per language: passed, not yet (a wrong answer), to do (no answer given
#: yet: ``None`` or the notebook's unwritten stub), a prediction written down.
MARKS = {
    "en": {
        "pass": "PASS",
        "not_yet": "NOT YET",
        "todo": "TO DO",
        "noted": "NOTED",
        "hint": "hint: ",
    },
    "zh": {
        "pass": "通过",
        "not_yet": "还没对",
        "todo": "未完成",
        "noted": "已记下",
        "hint": "提示：",
    },
}


def decimals(x: object) -> str:
    """A number as the lessons print it: 4 decimals (``0.3006``), tiny ones in e-notation.

    Every hint that shows a float (the learner's or the expected one) shows it through this, in
    both languages, so that no hint prints ``0.30060961842536926``.
    """
    value = float(x)  # type: ignore[arg-type]
    if value != 0 and abs(value) < 1e-4:
        return f"{value:.4g}"
    return f"{value:.4f}"


def shown(x: object) -> str:
    """``repr(x)``, but a float with more than 4 decimals (also inside a list or tuple) with
    ``decimals``: how a hint shows a value, the learner's answer or the expected one."""
    if isinstance(x, float):
        written = repr(x)  # 1.0 and 0.25 stay as written; 0.30060961842536926 gets 4 decimals
        digits = written.split(".")[-1] if "." in written and "e" not in written else ""
        return written if len(digits) <= 4 and "e" not in written else decimals(x)
    if isinstance(x, list):
        return "[" + ", ".join(map(shown, x)) + "]"
    if isinstance(x, tuple):
        return "(" + ", ".join(map(shown, x)) + ("," if len(x) == 1 else "") + ")"
    return repr(x)


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


class ContractError(Exception):
    """Raised inside a checker (a build checker's contract, or any checker marked with
    ``exercise``) to stop at the first thing that is wrong, with its hint.

    ``ContractError(text)`` takes the hint as a ``Text`` (both languages); ``error.text`` gives it
    back for ``fail(name, error.text, todo=error.todo)``. ``str(error)`` is the English hint.
    ``todo``: the answer is still the notebook's unwritten stub (``[TO DO]``, not ``[NOT YET]``).
    """

    def __init__(self, text: Text, *, todo: bool = False) -> None:
        if not isinstance(text, Text):
            raise UntranslatedMessage(
                f"ContractError needs a Text (tr(en, zh)), got {type(text).__name__} {text!r}"
            )
        super().__init__(text.en)
        self.text = text
        self.todo = todo


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one exercise check; ``exercise`` and ``text`` hold both languages."""

    passed: bool
    exercise: Text
    text: Text
    #: No answer was given yet (``None``, the unwritten stub): shown as ``[TO DO]``, never passes.
    todo: bool = False

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
        if self.passed:
            return MARKS[language()]["pass"]
        return MARKS[language()]["todo" if self.todo else "not_yet"]

    def render(self, lang: str) -> str:
        """The whole result as the learner sees it in ``lang``."""
        with using_language(lang):
            return repr(self)

    def __repr__(self) -> str:
        # Chinese: the exercise's name is a sentence of its own, so that a hint's own colon is
        # the only one ("[还没对] 某练习。提示：…", not "某练习：提示：…").
        after_name = "。" if language() == "zh" else ": "
        return f"[{self._mark()}] {self.exercise}{after_name}{self.text}"

    __str__ = __repr__


class PredictionNoted(CheckResult):
    """A prediction that is written down but not judged yet: shows as ``[NOTED] ...``."""

    def _mark(self) -> str:
        return MARKS[language()]["noted"]

    __str__ = CheckResult.__repr__


#: The default message of a passed check.
WELL_DONE = Text("correct, well done.", "正确，做得好！")


def ok(exercise: Text, message: Text = WELL_DONE) -> CheckResult:
    return CheckResult(True, exercise, _text_arg(message, "message"))


def fail(exercise: Text, hint: Text, *, todo: bool = False) -> CheckResult:
    """A check not passed; ``todo``: the answer is still the notebook's unwritten stub, so the
    result is marked ``[TO DO]`` (an empty answer), not ``[NOT YET]`` (a wrong one)."""
    hint = _text_arg(hint, "hint")
    mark = Text(MARKS["en"]["hint"], MARKS["zh"]["hint"])
    return CheckResult(False, exercise, mark + hint, todo=todo)


def missing(exercise: Text, what: Text) -> CheckResult:
    what = _text_arg(what, "what")
    message = (
        tr(
            "no answer yet -- replace the `None` marked `# YOUR CODE HERE` with ",
            "还没有答案。请把标着 `# 在这里写代码` 的 `None` 换成",
        )
        + what
        + tr(".", "。")
    )
    return CheckResult(False, exercise, message, todo=True)


F = TypeVar("F", bound=Callable[..., CheckResult])


def exercise(name: Text, what: Text | None = None) -> Callable[[F], F]:
    """Decorator: ``name`` is the exercise the checker judges (both languages).

    The result building is written once here: the checker refuses an answer by raising
    ``ContractError(hint)`` (``fail(name, hint)``); with ``what``, an answer (the first argument)
    of None is ``missing(name, what)`` before the checker runs.
    """
    _text_arg(name, "the exercise name")

    def mark(checker: F) -> F:
        @functools.wraps(checker)
        def judged(*args: Any, **kwargs: Any) -> CheckResult:
            if what is not None and (args[0] if args else kwargs.get("answer", 0)) is None:
                return missing(name, what)
            try:
                return checker(*args, **kwargs)
            except ContractError as stop:
                return fail(name, stop.text, todo=stop.todo)

        judged.exercise = name  # type: ignore[attr-defined]
        return judged  # type: ignore[return-value]

    return mark


def spec_checker(
    python_name: str,
    spec: Any,
    doc: str,
    *,
    keep_as: str,
    checker: Callable[..., CheckResult] | None = None,
) -> Callable[..., CheckResult]:
    """The checker function ``python_name(answer)``: ``spec.check(answer)``, for an exercise
    stated as data (``spec.name`` its name); the spec stays reachable as ``checker.<keep_as>``.

    ``checker``: the function to name instead, for a spec checked with more than the answer.
    """
    if checker is None:

        def checker(answer: object) -> CheckResult:
            return spec.check(answer)  # type: ignore[no-any-return]

    checker.__name__ = checker.__qualname__ = python_name
    checker.__doc__ = doc
    checker.__module__ = _stating_module()
    setattr(checker, keep_as, spec)
    return exercise(spec.name)(checker)


#: The modules of the harness, whose ``*_checker`` functions call ``spec_checker``.
_HARNESS = {f"{__package__}.{name}" for name in ("_result", "_kinds", "_build")}


def _stating_module() -> str:
    """The module that states the exercise: the first caller outside the harness."""
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_globals.get("__name__") in _HARNESS:
        frame = frame.f_back
    return str(frame.f_globals.get("__name__", __name__))


# -- the time limit -------------------------------------------------------------------------------

#: Wall-clock seconds one checker call may take before it gives up (the learner's code may loop).
TIME_LIMIT_S = 60.0
#: After the limit, the stop is raised again this often until the checker has returned, so a
#: learner's bare ``except:`` that swallows one of them does not keep the checker running.
_REPEAT_S = 0.05


class CheckTimeout(BaseException):
    """Raised by the time limit; a BaseException so that no ``except Exception`` swallows it."""


class _Deadline:
    """Whether the limit has fired; ``active`` is False once the checked call is over."""

    def __init__(self) -> None:
        self.fired = False
        self.active = True
        self.lock = threading.Lock()

    def stop_here(self, frame: FrameType | None) -> bool:
        """Whether to raise the stop in ``frame``: only in the learner's or the checker's code,
        never in this module's own frames (the guard's bookkeeping must always run)."""
        return self.active and (frame is None or frame.f_code.co_filename != __file__)


def _arm(seconds: float, deadline: _Deadline) -> Callable[[], None]:
    """Start the limit; the function returned ends it (call it in a ``finally``).

    On the main thread with SIGALRM, a timer signal raises ``CheckTimeout`` after ``seconds``,
    then every ``_REPEAT_S``; on any other thread, a watchdog thread raises it in the checking
    thread; either way again every ``_REPEAT_S`` until the check is over, so a learner's bare
    ``except:`` that swallows one stop meets the next (off the main thread a blocking call such as
    ``time.sleep`` ends before the stop lands; a loop that swallows every stop cannot be stopped
    from inside the process). ``deadline.fired`` tells
    whether the limit was reached, even if the stop was swallowed. No stop is ever raised in this
    module's frames, so the cleanup always runs. A timer the caller already set (e.g. a test
    runner's) is left alone when it fires sooner, and re-armed with its remaining time afterwards.
    """
    main = threading.current_thread() is threading.main_thread()
    stop = (_alarm if hasattr(signal, "setitimer") and main else _watchdog)(seconds, deadline)

    def disarm() -> None:
        deadline.active = False
        stop()

    return disarm


def _alarm(seconds: float, deadline: _Deadline) -> Callable[[], None]:
    old_delay, old_interval = signal.getitimer(signal.ITIMER_REAL)
    if 0 < old_delay <= seconds:
        return lambda: None

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        if deadline.stop_here(frame):
            deadline.fired = True
            raise CheckTimeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds, _REPEAT_S)

    def stop() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_delay > 0:
            left = max(old_delay - (time.monotonic() - start), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, old_interval)

    return stop


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc is not None else None
    )


def _watchdog(seconds: float, deadline: _Deadline) -> Callable[[], None]:
    target = threading.get_ident()
    done = threading.Event()

    def watch() -> None:
        if done.wait(seconds):
            return
        while True:
            with deadline.lock:
                if not deadline.active:
                    return
                deadline.fired = True
                _raise_in(target, CheckTimeout)
            if done.wait(_REPEAT_S):
                return

    threading.Thread(target=watch, name="checker-time-limit", daemon=True).start()

    def stop() -> None:
        with deadline.lock:
            deadline.active = False
            _raise_in(target, None)  # drop a stop raised but not delivered yet
        done.set()

    return stop


# -- the guard ------------------------------------------------------------------------------------


def never_raises(checker: Callable[..., CheckResult]) -> Callable[..., CheckResult]:
    """Wrap ``checker`` so that nothing a learner passes makes it raise or hang.

    Whatever the answer (None, a string, a NaN or meta tensor, a class whose ``forward`` raises,
    calls ``sys.exit`` or loops forever, extra arguments), the learner gets a ``[NOT YET]`` result
    naming what went wrong, never a traceback, and never a PASS: only a ``CheckResult`` that the
    checker itself returned in time can pass. A call stops after ``TIME_LIMIT_S`` seconds, on any
    thread, even if the learner's code catches the stop with a bare ``except:``. Ctrl-C
    (KeyboardInterrupt) still interrupts. ``mhsa_helpers.exercises`` applies it to every checker it
    exports.
    """
    python_name = checker.__name__.removeprefix("check_")
    name: Text = getattr(checker, "exercise", None) or Text(python_name, python_name)

    @functools.wraps(checker)
    def safe(*args: Any, **kwargs: Any) -> CheckResult:
        from ._parse import plain_tensor

        for given in (*args, *kwargs.values()):
            if isinstance(given, torch.Tensor) and not plain_tensor(given):
                kind = type(given).__name__
                return fail(
                    name,
                    tr(
                        f"got a {kind}, a subclass of torch.Tensor; pass a plain torch.Tensor.",
                        f"收到的是 {kind}，它是 torch.Tensor 的子类，请传入普通的 torch.Tensor。",
                    ),
                )
        # Nothing but assignments happens before disarm(): until then a stop may land in any
        # other module's code, message building included.
        deadline = _Deadline()
        result: object = None
        error: BaseException | None = None
        disarm = _arm(TIME_LIMIT_S, deadline)
        try:
            result = checker(*args, **kwargs)
        except CheckTimeout:
            deadline.fired = True
        except (Exception, SystemExit, GeneratorExit) as raised:  # the learner's code, odd input
            error = raised
        finally:
            disarm()
        if deadline.fired:  # TIME_LIMIT_S is read at call time (tests shorten it)
            return fail(
                name,
                tr(
                    f"checking your answer took more than {TIME_LIMIT_S:g} s and was stopped: "
                    "does your code loop forever, sleep, or call itself without end?",
                    f"检查你的答案用了超过 {TIME_LIMIT_S:g} 秒，"
                    "已被中止。你的代码是不是陷入了死循环、在调用 `time.sleep`，"
                    "或者在无休止地调用自己？",
                ),
            )
        if error is not None:
            kind, said = type(error).__name__, _text(error)
            return fail(
                name,
                tr(
                    f"checking your answer raised {kind}: {said}. "
                    "Look at what the exercise asks for (type and shape) and try again.",
                    f"检查你的答案时抛出了 {kind}：{said}。"
                    "请再读一遍练习要求的类型和形状，然后再试。",
                ),
            )
        if isinstance(result, CheckResult) and type(result) in (CheckResult, PredictionNoted):
            return result
        return fail(
            name,
            tr(
                "the checker could not judge this answer; re-read the exercise.",
                "检查器无法判断这个答案，请重新读一遍练习。",
            ),
        )

    safe.__wrapped__ = checker  # type: ignore[attr-defined]
    return safe


def _text(error: BaseException) -> str:
    """``str(error)``, or a placeholder when even that raises (a learner's own exception)."""
    try:
        return str(error)
    except Exception:
        return "(its message could not be shown)"
