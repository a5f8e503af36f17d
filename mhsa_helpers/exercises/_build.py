"""The build-it harness: accept the learner's class or function, run it safely, name its mistake.

A build-it exercise hands a checker the learner's own class (lessons 06, 09) or function (lessons
01, 03, 11), which may be unfinished, raise anything, or be passed the wrong way (an instance
instead of the class, a call instead of the function). The mechanical parts are written once here:

* ``BuildSpec.check`` -- the answer is a class derived from ``nn.Module`` / a function, or a
  ``[NOT YET]`` result saying what to pass instead;
* ``ContractError`` -- raised at the first broken contract, its ``text`` (a bilingual ``Text``)
  is the hint;
* ``is_view_error`` / ``first_line`` -- recognise a ``.view`` on a non-contiguous tensor (the
  usual slip when merging heads after ``transpose``) and quote torch's message briefly;
* ``forward_on_copy`` -- run ``fn(x, ...)`` on a copy of ``x`` and say whether the call changed
  its input in place (the reference then still runs on the untouched ``x``);
* ``written`` -- a module whose constructor is still the stub (it holds nothing) is ``[TO DO]``;
* ``book_forward`` and ``MISTAKE_HINTS`` -- the book's causal multi-head forward from projected
  queries, keys and values, or the same with one typical mistake, and the ONE catalog of hints
  that name those mistakes; ``name_mistake`` finds the mistake an output reproduces.

The one runner:

* ``BuildSpec`` / ``build_checker`` -- a build-it exercise as data: its name, what to pass (a
  class or a function) and the hints for the wrong kind of answer, its contracts in order (each
  raises ``ContractError`` with its hint at the first thing that is wrong) and the PASS message;
  ``build_checker`` turns it into the checker (answer kind first, the contracts under a forked,
  seeded random state, ``fail``/``ok``);
* ``ForwardTexts`` / ``call_forward`` -- one call of the learner's forward (or function), every
  way it can go wrong (it raises, writes to its input, returns a tuple, no tensor, a subclass, the
  wrong dtype, device or shape) turned into the exercise's own hint;
* ``construct`` -- build the learner's class at given sizes, naming what its constructor raised.
* ``attempt`` -- run a step of the learner's code; what it raises is the hint a template says.
* ``linear_layer`` -- the layer named so is ``nn.Linear(fan_in, fan_out, bias=...)``, else the
  lesson's hint for what is not (no such layer, other sizes, a bias or none), from its templates.

The contracts, each written once and given the lesson's own hint (and tolerances):

* ``agrees`` (equal to the reference), ``not_a_known_mistake`` (an output a known mistake gives
  is refused with its hint), ``causal`` with ``change_from`` (no output before a
  changed token changes), ``rows_sum_to_one``, ``drops_something`` and
  ``dropout_only_in_training``, ``gradients_reach`` (with ``no_gradient``), ``load_by_names``
  (the book's parameters by the book's names), ``mask_buffer`` (the brief's rule "a buffer named
  ``mask``") and ``mask_note`` (the same as a note where no brief asks for it), ``never_calls``
  (the brief's rule "without torch.softmax", say: the torch functions a call makes, counted).

What each lesson tests, at which sizes and tolerances, and its texts stay in its module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import chain, product
from typing import Any, TypeVar

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from ..i18n import Text, listed, tr
from ._parse import plain_tensor
from ._result import (
    CheckResult,
    ContractError,
    missing,
    ok,
    spec_checker,
)

__all__ = [
    "CALL_NOT_TENSOR",
    "CALL_RAISED",
    "CALL_SUBCLASS",
    "CONSTRUCT_NOT_MODULE",
    "CONSTRUCT_RAISED",
    "DROP_THE_CALL",
    "HEAD_MISTAKE_GROUPS",
    "INPUT_CHANGED",
    "MASK_ATTRIBUTE",
    "MASK_IN_INIT",
    "MASK_NO_BUFFER",
    "MISTAKES",
    "MISTAKE_HINTS",
    "MODULE_FORWARD",
    "NOT_A_MODULE_CLASS",
    "PARAMETER_SHAPE",
    "UNWRITTEN_CLASS",
    "UNWRITTEN_FUNCTION",
    "BuildSpec",
    "ContractError",
    "ForwardTexts",
    "agrees",
    "attempt",
    "book_forward",
    "build_checker",
    "call_forward",
    "calls_made",
    "causal",
    "change_from",
    "construct",
    "dropout_only_in_training",
    "drops_something",
    "fill",
    "first_line",
    "forward_on_copy",
    "gradients_reach",
    "head_forward",
    "is_view_error",
    "linear_layer",
    "load_by_names",
    "mask_buffer",
    "mask_note",
    "mistakes_hint",
    "name_head_mistakes",
    "name_mistake",
    "never_calls",
    "no_gradient",
    "not_a_known_mistake",
    "on_x",
    "pass_the_class",
    "rows_sum_to_one",
    "tested",
    "written",
]


def fill(text: Text, **values: object) -> Text:
    """``text`` with its ``{placeholders}`` filled in (``str.format``), in both languages; a value
    that is a ``Text`` itself (the name of an input, say) is filled in in each language."""

    def side(lang: str) -> dict[str, object]:
        return {k: v.get(lang) if isinstance(v, Text) else v for k, v in values.items()}

    return replace(text, en=text.en.format(**side("en")), zh=text.zh.format(**side("zh")))


def is_view_error(error: BaseException) -> bool:
    """Whether ``error`` is torch's ``.view`` on a tensor whose memory layout does not allow it."""
    return "view size is not compatible" in str(error)


def first_line(text: str) -> str:
    """The first line of an error message, to quote it in a one-line hint."""
    return (text.strip().splitlines() or ["(no message)"])[0]


R = TypeVar("R")


def attempt(
    call: Callable[[], R], raised: Text, /, *, unwritten: Text | None = None, **values: object
) -> R:
    """``call()`` (the learner's code, or a step that runs it), or the ``ContractError`` that says
    it raised: ``raised`` filled in with ``{kind}`` (the exception's type), ``{error}`` (its
    message), ``{said}`` (that message's first line) and ``values``. With ``unwritten``, a
    ``NotImplementedError`` (the notebook's stub) is that hint instead, marked ``[TO DO]``."""
    try:
        return call()
    except Exception as error:  # the learner's code may raise anything
        if unwritten is not None and isinstance(error, NotImplementedError):
            raise ContractError(unwritten, todo=True) from None
        kind, said = type(error).__name__, first_line(str(error))
        raise ContractError(fill(raised, kind=kind, error=error, said=said, **values)) from None


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
    "scale_not_sqrt",  # last: at sizes where head_dim == sqrt(d_out) it reads as scale_d_out
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
    output. No dropout (the checkers compare in eval mode). ``mistake`` is one of ``MISTAKES``;
    the heads themselves are ``head_forward``'s, so one head's slips are written once.
    """
    b, T, d_out = queries.shape
    head_dim = d_out // num_heads
    plain_split = mistake in ("split_no_transpose", "split_no_transpose_merge_plain")
    q, k, v = (
        t.reshape(b, num_heads, T, head_dim)
        if plain_split
        else t.view(b, T, num_heads, head_dim).transpose(1, 2)  # (b, h, T, head_dim)
        for t in (queries, keys, values)
    )
    scale = d_out**0.5 if mistake == "scale_d_out" else None
    context = head_forward(q, k, v, _HEAD_MISTAKES & {mistake}, scale=scale)
    plain_merge = mistake in ("merge_no_transpose", "split_no_transpose_merge_plain")
    merged = (context if plain_merge else context.transpose(1, 2)).reshape(b, T, d_out)
    return merged if mistake == "no_out_proj" else out_proj(merged)  # (b, T, d_out)


_SPLIT_NO_TRANSPOSE = tr(
    "the heads are cut with `view(b, num_heads, T, head_dim)` straight away, without a "
    "transpose, which mixes tokens and heads: view to (b, T, num_heads, head_dim) first, then "
    "swap the tokens and the heads with transpose (and swap them back before merging).",
    "直接用 `view(b, num_heads, T, head_dim)` 切分出头而不转置，"
    "会把词元和头混在一起。应该先 view 成 (b, T, num_heads, head_dim)，"
    "再用 transpose 交换词元和头这两维。合并前再交换回来。",
)

#: The one catalog: each mistake of ``MISTAKES`` and the hint that names it.
MISTAKE_HINTS: dict[str, Text] = {
    "no_scaling": tr(
        "the scores are not scaled: divide them by the square root of the keys' width, "
        "keys.shape[-1] ** 0.5 (d_k; once the heads are split, head_dim), before the softmax.",
        "注意力分数没有缩放。请在 softmax 之前先除以键宽度的平方根 keys.shape[-1] ** 0.5"
        "（即 d_k；拆分成多个头之后就是 head_dim）。",
    ),
    "scale_d_out": tr(
        "the scores are divided by sqrt(d_out); each head's dot products are head_dim long, so "
        "divide by sqrt(head_dim) (keys.shape[-1] ** 0.5 after the split).",
        "注意力分数除以的是 sqrt(d_out)。"
        "每个头的点积只有 head_dim 长，"
        "所以应该除以 sqrt(head_dim)（拆分之后就是 keys.shape[-1] ** 0.5）"
        "。",
    ),
    "split_no_transpose": _SPLIT_NO_TRANSPOSE,
    "split_no_transpose_merge_plain": _SPLIT_NO_TRANSPOSE,
    "merge_no_transpose": tr(
        "the heads are merged without transposing back: (b, h, T, head_dim) must become "
        "(b, T, h, head_dim) again before the last two dimensions are joined into d_out.",
        "合并各个头时没有先转置回来。把最后两维合成 d_out 之前，"
        "要先把 (b, h, T, head_dim) 变回 (b, T, h, head_dim)。",
    ),
    "no_out_proj": tr(
        "the heads are merged, but the last step of the table is missing: a (d_out -> d_out) "
        "linear layer named out_proj, applied to the merged heads.",
        "各个头合并之后，少了表格的最后一步：一个名为 out_proj 的 (d_out → d_out) 线性层，"
        "作用在合并后的结果上。",
    ),
    "transposed_mask": tr(
        "the mask is transposed: it hides the past instead of the future. True/1 must sit ABOVE "
        "the diagonal (torch.triu(..., diagonal=1)), where the key comes after the query.",
        "掩码被转置了。它隐藏的是过去而不是未来。"
        "True/1 必须在对角线以上（torch.triu(..., diagonal=1)）"
        "，也就是键在查询之后的位置。",
    ),
    "mask_after_softmax": tr(
        "the future is masked after the softmax without renormalising, so rows no longer sum to "
        "1: fill the scores with -inf BEFORE the softmax.",
        "在 softmax 之后才遮住未来，又没有重新归一化，"
        "所以每行之和不再是 1。遮住未来要在 softmax 之前做，"
        "把注意力分数填成 -inf。",
    ),
    "mask_with_zero": tr(
        "the future scores are set to 0, not -inf; exp(0) = 1 still gives the future weight. "
        "Fill them with -torch.inf (masked_fill).",
        "未来的注意力分数被设成了 0 而不是 -inf。"
        "exp(0) = 1 仍然会给未来分配权重。"
        "请用 masked_fill 把它们填成 -torch.inf。",
    ),
    "no_mask": tr(
        "there is no causal mask: fill the future scores with -inf before the softmax.",
        "没有因果掩码。请在 softmax 之前把未来的注意力分数填成 -inf。",
    ),
    "scale_not_sqrt": tr(
        "the scores are divided by d_k itself; divide by its square root, "
        "keys.shape[-1] ** 0.5, before the softmax.",
        "注意力分数除以的是 d_k 本身，应该在 softmax 之前除以它的平方根 keys.shape[-1] ** 0.5。",
    ),
    "softmax_wrong_dim": tr(
        "the softmax runs over the wrong dimension: normalise each row, softmax(..., dim=-1).",
        "softmax 用错了维度。应该对每一行归一化，即 softmax(..., dim=-1)。",
    ),
}


#: The slips of one causal head's forward (lessons 04 and 05's classes), which ``head_forward``
#: reproduces alone or two at a time (one from each group).
HEAD_MISTAKE_GROUPS = (
    ("no_mask", "mask_after_softmax", "mask_with_zero", "transposed_mask"),
    ("no_scaling", "scale_not_sqrt", "softmax_wrong_dim"),
)


def head_forward(
    queries: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    mistakes: frozenset[str] = frozenset(),
    *,
    scale: float | None = None,
) -> torch.Tensor:
    """One causal head after the projections, (..., T, d) each, with the given ``mistakes``;
    ``scale``: what the scores are divided by instead of sqrt(d_k) (a scaling slip of its own)."""
    T = queries.shape[-2]
    scores = queries @ keys.transpose(-2, -1)  # (..., T, T)
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # (T, T)
    if "transposed_mask" in mistakes:
        future = future.T
    if "mask_with_zero" in mistakes:
        scores = scores.masked_fill(future, 0.0)
    elif not mistakes & {"no_mask", "mask_after_softmax"}:
        scores = scores.masked_fill(future, -torch.inf)
    d_k = keys.shape[-1]
    if scale is None:
        scale = (
            1.0 if "no_scaling" in mistakes else d_k if "scale_not_sqrt" in mistakes else d_k**0.5
        )
    weights = torch.softmax(scores / scale, dim=-2 if "softmax_wrong_dim" in mistakes else -1)
    if "mask_after_softmax" in mistakes:
        weights = weights.masked_fill(future, 0.0)
    return weights @ values  # (..., T, d)


#: Every slip ``head_forward`` reproduces.
_HEAD_MISTAKES = frozenset(HEAD_MISTAKE_GROUPS[0] + HEAD_MISTAKE_GROUPS[1])


def name_head_mistakes(
    out: torch.Tensor, forward: Callable[[frozenset[str]], torch.Tensor]
) -> tuple[str, ...]:
    """The mistakes (one, else two from different groups) whose output ``forward`` equals
    ``out``; empty when none does."""
    first, second = HEAD_MISTAKE_GROUPS
    for combination in [*((m,) for m in first + second), *product(first, second)]:
        candidate = forward(frozenset(combination))
        if candidate.shape == out.shape and torch.allclose(
            out, candidate, atol=1e-5, rtol=1e-4, equal_nan=True
        ):
            return combination
    return ()


def mistakes_hint(mistakes: tuple[str, ...]) -> Text:
    """The catalog's hints for ``mistakes``, one after the other (two mistakes: both named)."""
    if len(mistakes) == 1:
        return MISTAKE_HINTS[mistakes[0]]
    hint = tr(f"{len(mistakes)} mistakes at once: ", f"同时有 {len(mistakes)} 处错误：")
    for index, mistake in enumerate(mistakes):
        hint = hint + (tr(" And ", "另外，") if index else _NOWHERE) + MISTAKE_HINTS[mistake]
    return hint


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
    "forward 原地修改了它的输入 x（对参数用了 x.clamp_(...)、"
    "x.add_(...) 或 x[...] = ... 这样的原地操作）"
    "。调用者的张量就不再是它传进去的那个了。"
    "请改为计算一个新张量（x.clamp(...)、"
    "x + ...）。",
)


def forward_on_copy(fn: Callable[..., object], args: Sequence[object]) -> tuple[object, bool]:
    """``fn(copy of args[0], *args[1:])`` and whether the call changed that copy in place.

    The learner's code gets its own copy, so the reference, run on ``args[0]`` afterwards, sees
    the input the test meant; a write to the copy (even one that keeps its values) is reported.
    """
    x, *rest = args
    assert isinstance(x, torch.Tensor)
    given = x.clone()
    version = given._version
    out = fn(given, *rest)
    return out, given._version != version or not torch.equal(given, x)


# -- the one runner -------------------------------------------------------------------------------


#: The one wording of the call mechanics, ``ForwardTexts``' defaults: ``{call}`` is the
#: exercise's name for what was called (``call``, itself filled in with the call's values).
YOUR_FUNCTION = tr("your function", "你的函数")
CALL_RAISED = tr("{call} raised {kind}: {said}", "{call} 抛出了 {kind}：{said}")
CALL_NOT_TENSOR = tr("{call} returned {kind}, not a tensor.", "{call} 返回的是 {kind}，不是张量。")
CALL_SUBCLASS = tr(
    "{call} returned a {kind}; return a plain torch.Tensor.",
    "{call} 返回的是 {kind}，请返回普通的 torch.Tensor。",
)


@dataclass(frozen=True)
class ForwardTexts:
    """How one exercise words each way a call of the learner's forward (or function) goes wrong.

    Every text is a template filled in with ``fill``: ``raised`` gets ``{kind}`` (the exception's
    type), ``{error}`` (its message) and ``{said}`` (its first line); ``not_tensor`` and
    ``subclass`` get ``{kind}`` (the returned type); ``dtype`` gets ``{got_dtype}``,
    ``{got_device}``, ``{dtype}``, ``{device}``; ``shape`` gets ``{got}`` and ``{want}`` (shape
    tuples); ``{call}`` is ``call``, what the exercise calls the function (the defaults use it).
    ``call_forward``'s ``values`` fill in any other placeholder (sizes, say). A text that
    is None is a test this exercise does not make: ``input_changed`` None leaves the input
    unwatched, ``tuple_`` None counts a tuple as "not a tensor", ``dtype`` None keeps any dtype.
    ``runtime`` reads a ``RuntimeError`` (or ``TypeError``) first (e.g. a ``.view`` on a
    non-contiguous tensor); None from it, or no reader, falls back to ``raised``.
    ``not_written``: the hint for ``NotImplementedError`` (None: like any other exception).
    ``shape_first``: test the shape before the dtype.
    """

    raised: Text = CALL_RAISED
    not_tensor: Text = CALL_NOT_TENSOR
    subclass: Text = CALL_SUBCLASS
    tuple_: Text | None = None
    input_changed: Text | None = None
    dtype: Text | None = None
    shape: Text | None = None
    runtime: Callable[[RuntimeError, tuple[object, ...]], Text | None] | None = None
    not_written: Text | None = None
    shape_first: bool = False
    call: Text = YOUR_FUNCTION


#: What a stub's ``forward`` gets where a checker names no ``not_written`` text of its own.
FORWARD_NOT_WRITTEN = tr(
    "forward is not written yet (it still raises NotImplementedError): write it under "
    "`# YOUR CODE HERE`, then run the cell again.",
    "forward 还没有写完（仍在抛出 NotImplementedError）。"
    "请在 `# 在这里写代码` 下面写好它，再运行这个单元格。",
)

#: A module's ``forward(x)`` after the exercise's name (": forward raised ..."), shared by the
#: lessons 04 and 06; each adds its own ``dtype`` and ``shape`` texts with ``dataclasses.replace``.
MODULE_FORWARD = ForwardTexts(
    raised=tr(": forward raised {kind}: {error}", "：forward 抛出了 {kind}：{error}"),
    input_changed=tr(": ", "：") + INPUT_CHANGED,
    tuple_=tr(
        ": forward(x) must return one tensor, got a tuple.",
        "：forward(x) 必须返回一个张量，收到的却是元组。",
    ),
    not_tensor=tr(
        ": forward(x) must return a tensor, got {kind}.",
        "：forward(x) 必须返回一个张量，收到的是 {kind}。",
    ),
    subclass=tr(
        ": forward(x) returned a {kind}, not a tensor.",
        "：forward(x) 返回的是 {kind}，不是普通张量。",
    ),
)

_NOWHERE = Text("", "")


def call_forward(
    fn: Callable[..., object],
    args: Sequence[object],
    texts: ForwardTexts,
    *,
    where: Text = _NOWHERE,
    want_shape: tuple[int, ...] | None = None,
    **values: object,
) -> torch.Tensor:
    """``fn(*args)``, the output a plain tensor; else ``ContractError(where + the hint)``.

    With ``texts.input_changed`` the first argument is passed as a copy and a write to it (even
    one that keeps its values) is the hint; ``want_shape`` is the shape the output must have.
    """
    args = tuple(args)
    x = args[0]
    watch = texts.input_changed is not None and isinstance(x, torch.Tensor)
    values = {"call": fill(texts.call, **values), **values}

    def stop(text: Text | None, todo: bool = False, /, **more: object) -> ContractError:
        assert text is not None
        return ContractError(tested(fill(text, **values, **more), where), todo=todo)

    try:
        out, changed = forward_on_copy(fn, args) if watch else (fn(*args), False)
    except Exception as error:  # the learner's code may raise anything
        said = {"kind": type(error).__name__, "error": error, "said": first_line(str(error))}
        if isinstance(error, NotImplementedError):  # the stub: an empty answer, not a wrong one
            raise stop(texts.not_written or FORWARD_NOT_WRITTEN, True, **said) from None
        readable = isinstance(error, (RuntimeError, TypeError))  # a reader reads the message
        reading = texts.runtime(error, args) if readable and texts.runtime else None  # type: ignore[arg-type]
        if reading is not None:
            raise ContractError(tested(reading, where)) from None
        raise stop(texts.raised, **said) from None
    if changed:
        raise stop(texts.input_changed)
    if isinstance(out, tuple) and texts.tuple_ is not None:
        raise stop(texts.tuple_)
    kind = type(out).__name__
    if not isinstance(out, torch.Tensor):
        raise stop(texts.not_tensor, kind=kind)
    if not plain_tensor(out):
        raise stop(texts.subclass, kind=kind)
    like = x if texts.dtype is not None and isinstance(x, torch.Tensor) else out  # what to keep
    dtype, device = like.dtype, like.device
    wrong_type = (out.dtype, out.device) != (dtype, device)
    wrong_shape = want_shape is not None and tuple(out.shape) != tuple(want_shape)
    if texts.shape is not None and wrong_shape and (texts.shape_first or not wrong_type):
        raise stop(texts.shape, got=tuple(out.shape), want=want_shape)
    if wrong_type:
        raise stop(
            texts.dtype, got_dtype=out.dtype, got_device=out.device, dtype=dtype, device=device
        )
    return out


#: The hint for a class whose constructor is still the notebook's stub: it creates nothing.
#: ``not_class_hint`` of the class exercises of lessons 04-06 (``{cls!r}``: what was passed).
NOT_A_MODULE_CLASS = tr(
    "expected a subclass of nn.Module, got {cls!r}.",
    "需要一个 nn.Module 的子类，收到的是 {cls!r}。",
)

#: ``instance_hint`` of the class exercises of lessons 09 and 10.
DROP_THE_CALL = tr(
    "pass the class itself, not an instance: drop the (...) after its name.",
    "请传入类本身，而不是它的实例，也就是去掉类名后面的 (...)。",
)


def pass_the_class(call: str) -> Text:
    """``instance_hint`` that shows the call, e.g. ``check_build_multihead(MyClass)``."""
    return tr(
        f"pass the class itself, not an instance: {call}.",
        f"请像 {call} 这样传入类本身，而不是它的实例。",
    )


def on_x(call: str, shape: tuple[int, ...]) -> Text:
    """Where a class hint happened: ``call`` (e.g. ``cls(3, 2, 6, 0.0)``) run on x of ``shape``."""
    return tr(f"{call} on x {shape}", f"{call}，输入形状 {shape}")


#: The hint for a function that is still the stub: it raises ``NotImplementedError`` (lessons
#: 01 and 11).
UNWRITTEN_FUNCTION = tr(
    "your function is not written yet: it raises NotImplementedError. Write its body, then "
    "run the cell again.",
    "你的函数还没有写好，它抛出了 NotImplementedError。请写好函数体，再运行这个单元格。",
)

UNWRITTEN_CLASS = tr(
    "the class is not written yet: its constructor creates no parameters (no layer, no "
    "nn.Parameter) and forward still raises NotImplementedError. Write `__init__` and "
    "`forward` under `# YOUR CODE HERE`, then run the cell again.",
    "这个类还没有写完。它的构造函数还没有创建任何参数（层或 nn.Parameter），"
    "forward 也还在抛出 NotImplementedError。"
    "请在 `# 在这里写代码` 下面写好 `__init__` 和 `forward`，"
    "再运行这个单元格。",
)


#: The note a passing class gets when it keeps no buffer named ``mask`` where its brief does not
#: ask for one (lesson 05's heads).
MASK_IN_INIT = tr(
    " (Your heads keep no buffer named mask, which works; the book registers the mask once in "
    "__init__ with register_buffer, so that it moves with .to(device) and is not rebuilt at "
    "every call.)",
    "（你的头没有名为 mask 的缓冲区，这样也能算对。书中在 __init__ 里用 register_buffer "
    "只注册一次掩码，这样它会随 .to(device) 一起移动，也不必每次调用都重新构造。）",
)

#: ``mask_buffer``'s hints: the mask kept as a plain attribute, or not kept at all.
MASK_ATTRIBUTE = tr(
    "self.mask is a plain attribute, not a buffer: .to(device) and state_dict() leave it behind "
    "(lesson 04, section 9). Register it in __init__ with self.register_buffer.",
    "self.mask 是普通属性，不是缓冲区：.to(device) 和 state_dict() 都不会带上它"
    "（见第 04 课第 9 节）。"
    "请在 __init__ 里用 self.register_buffer 注册它。",
)
MASK_NO_BUFFER = tr(
    "the brief asks for the causal mask as a buffer named mask, created once in __init__ with "
    "self.register_buffer and sliced to (T, T) in forward.",
    "题目要求把因果掩码注册为名为 mask 的缓冲区：在 __init__ 里用 self.register_buffer "
    "创建一次，在 forward 里切成 (T, T)。",
)


def mask_buffer(module: nn.Module) -> None:
    """The contract "the causal mask is a buffer named ``mask``" (the briefs of lessons 04, 06)."""
    if "mask" in dict(module.named_buffers(recurse=False)):
        return
    plain = isinstance(getattr(module, "mask", None), torch.Tensor)
    raise ContractError(MASK_ATTRIBUTE if plain else MASK_NO_BUFFER)


class _SeenCalls(TorchFunctionMode):
    """The names of the torch functions (and tensor methods) called inside its ``with`` block."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.names.add(getattr(func, "__name__", ""))
        return func(*args, **(kwargs or {}))


def never_calls(fn: Callable[..., object], args: tuple[object, ...], names: set[str], hint: Text):
    """The contract "without X": ``fn(*args)`` calls none of the torch functions ``names``
    (``torch.softmax``, ``x.softmax`` and ``F.softmax`` are all "softmax"), else ``hint``. The
    call is watched, not its source read; what it raises is left to the other contracts."""
    if calls_made(fn, args) & names:
        raise ContractError(hint)


def calls_made(fn: Callable[..., object], args: tuple[object, ...]) -> set[str]:
    """The names of the torch functions ``fn(*args)`` calls (none if it raises)."""
    with _SeenCalls() as seen:
        try:
            fn(*args)
        except Exception:  # the learner's function may raise anything
            return set()
    return seen.names


def mask_note(build: Callable[[], nn.Module], *, unbuilt: Text) -> Text:
    """``MASK_IN_INIT`` when the module ``build()`` makes keeps no mask buffer, else nothing;
    ``unbuilt`` when building it raises."""
    try:
        buffers = [name for name, _ in build().named_buffers()]
    except Exception:  # the learner's class may raise anything
        return unbuilt
    return _NOWHERE if any("mask" in name for name in buffers) else MASK_IN_INIT


def linear_layer(
    module: object, name: str, fan: tuple[int, int] | None, bias: bool | None, **texts: Any
) -> nn.Linear:
    """The contract "``module.<name>`` is ``nn.Linear(*fan, bias=bias)``" (``fan`` or ``bias``
    None: either is fine), else the hint ``absent`` (it is no ``nn.Linear``), ``shape`` (other
    sizes: ``{fan_in}``, ``{fan_out}``) or ``biased`` (a bias where ``bias`` is False, none where
    it is True). Each text may use ``{name}``, ``{kind}`` (the attribute's type) and the other
    keyword arguments (``d_in=...``); the layer is returned."""
    layer = getattr(module, name, None)
    said = {**texts, "name": name, "kind": type(layer).__name__}
    if not isinstance(layer, nn.Linear):
        raise ContractError(fill(texts["absent"], **said))
    if fan is not None and (layer.in_features, layer.out_features) != fan:
        sizes = {"fan_in": layer.in_features, "fan_out": layer.out_features}
        raise ContractError(fill(texts["shape"], **said, **sizes))
    if bias is not None and (layer.bias is not None) != bias:
        raise ContractError(fill(texts["biased"], **said))
    return layer


def written(module: nn.Module) -> nn.Module:
    """``module``, unless it is the notebook's stub: it holds no layer, parameter or buffer at all
    and its ``forward`` still raises ``NotImplementedError`` (the ``[TO DO]`` hint
    ``UNWRITTEN_CLASS``). A class whose forward is written but that creates nothing (an RMSNorm
    without its weight, say) is left to the contracts, which name what it lacks."""
    holds = chain(module.children(), module.parameters(), module.buffers())
    code = getattr(type(module).forward, "__code__", None)  # None: a builtin, say
    stub = code is None or "NotImplementedError" in code.co_names
    if stub and not any(True for _ in holds):
        raise ContractError(UNWRITTEN_CLASS, todo=True)
    return module


#: ``construct``'s hints unless a lesson words them itself (lessons 04-06).
CONSTRUCT_RAISED = tr("{call} raised {kind}: {error}", "{call} 抛出了 {kind}：{error}")
CONSTRUCT_NOT_MODULE = tr(
    "{call} returned a {kind}, not an nn.Module.", "{call} 返回的是 {kind}，不是 nn.Module。"
)


def construct(
    cls: type,
    args: Sequence[object],
    kwargs: dict[str, object],
    raised: Text = CONSTRUCT_RAISED,
    not_module: Text = CONSTRUCT_NOT_MODULE,
    not_written: Text | None = None,
) -> nn.Module:
    """``cls(*args, **kwargs)``, an ``nn.Module``; else ``ContractError`` with the hint.

    ``raised`` gets ``{call}`` (the call as written, ``cls(5, 12, ...)``), ``{args}`` (what is
    inside its parentheses), ``{name}`` (the class's name), ``{kind}`` and ``{error}``;
    ``not_module`` gets ``{call}``, ``{args}``, ``{name}`` and ``{kind}``. ``not_written``: the
    hint for ``NotImplementedError`` (None: like any other exception).
    """
    shown = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
    said = {"call": f"cls({shown})", "args": shown, "name": cls.__name__}
    try:
        module = cls(*args, **kwargs)
    except Exception as error:  # the learner's code may raise anything
        hint = fill(raised, **said, kind=type(error).__name__, error=error)
        if isinstance(error, NotImplementedError):  # the stub: an empty answer, not a wrong one
            raise ContractError(not_written or hint, todo=True) from None
        raise ContractError(hint) from None
    if not isinstance(module, nn.Module):
        raise ContractError(fill(not_module, **said, kind=type(module).__name__))
    return module


@dataclass(frozen=True)
class BuildSpec:
    """A build-it exercise as data.

    ``answer`` is ``"class"`` (the learner's class, derived from ``nn.Module`` unless
    ``modules_only`` is False: then any class, its instances checked by the contracts) or
    ``"function"`` (the learner's function, written ``answer = <function_name>``; a tensor is the
    result of a call, not the function; with ``reject_classes`` a class is refused as well). For
    a class, ``missing_what`` says what to write in place of None; ``instance_hint`` (for an
    instance) and ``not_class_hint`` (for anything else) may use ``{cls!r}`` and ``{kind}`` (the
    answer's type name), filled in with ``fill``. ``contracts`` run in order, each given the
    answer; the first to raise ``ContractError`` gives the hint. They run under a forked random
    state (the learner's is kept), after ``torch.manual_seed(seed)`` unless ``seed`` is None.
    ``passed`` is the PASS message, or a function of the answer giving it. ``check`` refuses a
    wrong kind of answer by raising ``ContractError`` too (``build_checker`` names the exercise).
    """

    name: Text
    contracts: tuple[Callable[[Any], None], ...]
    passed: Text | Callable[[Any], Text]
    answer: str = "class"
    missing_what: Text = _NOWHERE
    instance_hint: Text = _NOWHERE
    not_class_hint: Text = _NOWHERE
    modules_only: bool = True
    function_name: str = ""
    reject_classes: bool = False
    seed: int | None = None

    def check(self, answer: object) -> CheckResult:
        name, kind, is_class = self.function_name, type(answer).__name__, self.answer == "class"
        if answer is None:
            what = tr(
                f"your function (write `answer = {name}`, no parentheses)",
                f"你的函数（写 `answer = {name}`，不带括号）",
            )
            return missing(self.name, self.missing_what if is_class else what)
        if is_class and isinstance(answer, nn.Module):
            raise ContractError(fill(self.instance_hint, cls=answer, kind=kind))
        modules = (nn.Module,) if self.modules_only else (object,)
        if is_class and not (isinstance(answer, type) and issubclass(answer, modules)):
            raise ContractError(fill(self.not_class_hint, cls=answer, kind=kind))
        refused = (torch.Tensor, type) if self.reject_classes else (torch.Tensor,)
        if not is_class and (isinstance(answer, refused) or not callable(answer)):
            raise ContractError(
                tr(
                    f"expected a function, got a {kind}, perhaps what a call returned: write "
                    f"`answer = {name}`, the function itself, not a call (no parentheses).",
                    f"这里要的是函数本身，你传入的却是一个 {kind}（比如函数调用的结果）。"
                    f"请写 `answer = {name}`，不带括号。",
                )
            )
        with torch.random.fork_rng(devices=[]):
            if self.seed is not None:
                torch.manual_seed(self.seed)
            for contract in self.contracts:  # a ContractError is the hint (``exercise``)
                contract(answer)
            passed = self.passed if isinstance(self.passed, Text) else self.passed(answer)
        return ok(self.name, passed)


def build_checker(python_name: str, spec: BuildSpec, doc: str) -> Callable[[object], CheckResult]:
    """The checker function ``python_name(answer)`` for the build-it exercise ``spec``."""
    return spec_checker(python_name, spec, doc, keep_as="build_spec")


def dropout_only_in_training(
    run: Callable[[torch.Tensor], torch.Tensor],
    module: nn.Module,
    reference: nn.Module,
    x: torch.Tensor,
    where: Text,
    seed: int,
) -> None:
    """The contract "dropout only in training, at the book's place", written once.

    ``module`` and ``reference`` hold the same weights and a dropout rate > 0; ``run(x)`` calls
    the learner's forward through ``call_forward``. In eval mode the output is the same twice and
    equals the reference's; in train mode, after ``torch.manual_seed(seed)``, something is dropped
    and the output equals the reference's after the same seed. The hints follow ``where``.
    """
    module.eval()
    reference.eval()
    with torch.no_grad():
        first, second = run(x), run(x)
        want = reference(x)
    if not torch.equal(first, second) or not torch.allclose(first, want, atol=1e-5, rtol=1e-4):
        raise ContractError(
            where
            + tr(
                " in eval mode the output is random or differs from the dropout-free result: "
                "dropout is applied in eval mode. Use self.dropout = nn.Dropout(dropout) (not "
                "F.dropout, whose training=True is the default) so that .eval() switches it off.",
                "，在评估模式下输出是随机的，或者与不做 dropout 的结果不同。"
                "评估模式下也做了 dropout。请用 self.dropout = nn.Dropout(dropout)"
                "（不要用默认 training=True 的 F.dropout）"
                "，这样 .eval() 才能把它关掉。",
            )
        )
    module.train()
    reference.train()
    with torch.no_grad():
        torch.manual_seed(seed)
        out_train = run(x)
        torch.manual_seed(seed)
        want_train = reference(x)
    nothing_dropped = where + tr(
        " in training mode nothing is dropped: apply self.dropout to the attention "
        "weights after the softmax.",
        "，在训练模式下什么都没有丢弃。请在 softmax 之后对注意力权重使用 self.dropout。",
    )
    drops_something(out_train, want, nothing_dropped)
    elsewhere = where + tr(
        " in training mode the output differs from the book's class with the same "
        "seed: apply self.dropout to the attention weights, right after the softmax and "
        "before the product with the values (the book's place).",
        "，在训练模式下，输出与使用相同随机种子的书中的类不一致。"
        "请像书中那样，在 softmax 之后、"
        "与值相乘之前，对注意力权重使用 self.dropout。",
    )
    agrees(out_train, want_train, elsewhere)


# -- the contracts, each written once ---------------------------------------------------------
#
# Each takes what the lesson ran and the lesson's own hint (a ``Text``, or a function building it
# only when the contract is broken), and raises ``ContractError`` with it; the tolerances that
# differ between lessons are arguments.

Hint = Text | Callable[[], Text]


def _hint(hint: Hint) -> Text:
    return hint if isinstance(hint, Text) else hint()


def agrees(
    out: torch.Tensor, want: torch.Tensor, hint: Hint, *, atol: float = 1e-5, rtol: float = 1e-4
) -> None:
    """The contract "equal to the reference": ``out`` is close to ``want``, else ``hint`` (a
    function: the diagnosis of what differs, run only then)."""
    if not torch.allclose(out, want, atol=atol, rtol=rtol):
        raise ContractError(_hint(hint))


#: Known mistakes: ``(output, hint)``, the output a mistake gives and the hint that names it.
Known = Iterable[tuple[torch.Tensor, Text]]


def not_a_known_mistake(
    out: torch.Tensor, known: Known, *, atol: float, rtol: float = 0.0, where: Text = _NOWHERE
) -> None:
    """The contract "not a known mistake": ``out`` equal (same shape, values close in float64)
    to the output of one of the ``known`` mistakes, in order, is refused with that mistake's
    hint, then ``where`` (the test setting) in a bracket after it: "...hint. (test: where)"."""
    got = out.detach().double()
    for output, hint in known:
        if output.shape == got.shape and torch.allclose(got, output.double(), atol=atol, rtol=rtol):
            raise ContractError(tested(hint, where))


def tested(hint: Text, where: Text) -> Text:
    """``hint`` with the test setting ``where`` in a trailing bracket, so that colons do not stack
    up: the separators a call site puts around them (": ", "：", "上：") are dropped."""
    if not where.en:
        return hint
    en, zh = (where.get(lang).rstrip(":： ").removesuffix("上") for lang in ("en", "zh"))
    body = replace(hint, en=hint.en.lstrip(":： "), zh=hint.zh.lstrip(":：，, "))
    place = replace(where, en=en, zh=zh)
    return body + fill(tr(" (test: {place})", "（测试：{place}）"), place=place)


def rows_sum_to_one(
    row_sums: torch.Tensor, hint: Text | Callable[[torch.Tensor], Text], *, rtol: float = 0.0
) -> None:
    """The contract "every row of attention weights sums to 1": ``row_sums`` is what forward gives
    when every value is 1 (and the output projection, if any, the identity), all 1 to 1e-5;
    ``hint`` may be a function of ``row_sums``."""
    if not torch.allclose(row_sums, torch.ones_like(row_sums), atol=1e-5, rtol=rtol):
        raise ContractError(hint if isinstance(hint, Text) else hint(row_sums))


def change_from(x: torch.Tensor, first: int) -> torch.Tensor:
    """``x`` (b, T, d) with the tokens ``first..`` replaced by new random ones, for ``causal``."""
    changed = x.clone()
    changed[:, first:] = torch.randn_like(changed[:, first:]) * 3
    return changed


def causal(
    got: torch.Tensor, baseline: torch.Tensor, first: int, hint: Hint, *, rtol: float = 1e-5
) -> None:
    """The contract "causal": the outputs of the tokens before ``first`` are the same (to 1e-6)
    in ``got`` and ``baseline``, one computed on an input whose tokens ``first..`` changed."""
    if not torch.allclose(got[:, :first], baseline[:, :first], atol=1e-6, rtol=rtol):
        raise ContractError(_hint(hint))


def drops_something(
    out_train: torch.Tensor, out_eval: torch.Tensor, hint: Hint, *, rtol: float = 1e-5
) -> None:
    """The contract "dropout drops in training": the train-mode output differs from the eval one."""
    if torch.allclose(out_train, out_eval, atol=1e-6, rtol=rtol):
        raise ContractError(_hint(hint))


def gradients_reach(
    grads: Iterable[tuple[Any, torch.Tensor | None]],
    hint: Callable[[Any], Text],
    *,
    finite: bool = False,
) -> None:
    """The contract "gradients flow": each ``(name, grad)`` has a gradient, not all zero (and,
    with ``finite``, no NaN or inf), else ``hint(name)`` for the first that has none."""
    for name, grad in grads:
        if grad is None or (finite and not torch.isfinite(grad).all()) or not grad.abs().sum() > 0:
            raise ContractError(hint(name))


def no_gradient(name: str) -> Text:
    """The hint for the parameter ``name`` that gets no gradient (lessons 04, 05 and 06)."""
    return tr(
        f"{name} gets no gradient: is it used in forward, without .detach() or torch.no_grad()?",
        f"{name} 没有得到梯度。forward 中用到它了吗？有没有用 .detach() 或 torch.no_grad()？",
    )


#: The hint for a parameter of the wrong shape (lessons 04-06): ``{name}``, ``{got_shape}``,
#: ``{want_shape}``.
PARAMETER_SHAPE = tr(
    "{name} has shape {got_shape}, expected {want_shape}.",
    "{name} 的形状是 {got_shape}，应为 {want_shape}。",
)


def load_by_names(module: nn.Module, reference: nn.Module, *, missing: Text, extra: Text) -> None:
    """The contract "the book's parameters, by the book's names": copy ``reference``'s parameters
    into ``module``; else the hint ``missing`` or ``extra`` (``{names}``: the names the learner's
    class lacks, or has and the book's has not), or ``PARAMETER_SHAPE``."""
    want = {name: p.shape for name, p in reference.named_parameters()}
    got = {name: p.shape for name, p in module.named_parameters()}
    for names, hint in (
        ([n for n in want if n not in got], missing),
        ([n for n in got if n not in want], extra),
    ):
        if names:  # the book's names the class lacks, then the names only the class has
            raise ContractError(fill(hint, names=listed(names)))
    for name, shape in want.items():
        if got[name] != shape:
            got_shape, want_shape = tuple(got[name]), tuple(shape)
            raise ContractError(
                fill(PARAMETER_SHAPE, name=name, got_shape=got_shape, want_shape=want_shape)
            )
    with torch.no_grad():
        mine = dict(module.named_parameters())
        for name, param in reference.named_parameters():
            mine[name].copy_(param)
