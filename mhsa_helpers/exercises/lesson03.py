"""Checkers for lesson 03, causal attention (因果注意力).

* ``check_local_mask(answer)`` -- a boolean (5, 5) mask for a local window: each token sees only
  itself and the one token just before it.
* ``check_build_causal_weights(fn)`` -- "build it": the learner's ``fn(attn_scores, window=None)``
  that turns an already scaled (..., T, T) score matrix into causal attention weights, optionally
  within a local window, run through contract tests (shapes, zeros above the diagonal, rows
  summing to 1, causality, gradients, several sizes and batch shapes, windows 1, 2, 3 and one
  wider than T); the typical mistakes are named in the hint.
* ``check_prediction_changed_weights(prediction, reveal=False)`` -- predict-then-run: how many of
  the 36 causal weights change when the last token's embedding changes?
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import replace
from functools import partial

import torch

from ..attention.self_attention import SelfAttentionV2
from ..data import book_inputs
from ..i18n import Text, tr
from ._build import (
    BuildSpec,
    ContractError,
    ForwardTexts,
    agrees,
    build_checker,
    call_forward,
    gradients_reach,
    not_a_known_mistake,
    rows_sum_to_one,
)
from ._kinds import Mask, Prediction, mask_checker, prediction_checker
from ._parse import not_a_tensor, wrong_shape
from ._result import CheckResult, missing

__all__ = [
    "check_build_causal_weights",
    "check_local_mask",
    "check_prediction_changed_weights",
]


def _read_local_mask(spec: Mask, answer: object) -> CheckResult | torch.Tensor:
    """The answer as a bool (5, 5) mask, or the ``[NOT YET]``: a mask of 1/0 numbers is refused
    (the brief asks for the boolean mask ``masked_fill`` takes), an additive -inf mask named."""
    if answer is None:
        return missing(spec.name, spec.what)
    if not isinstance(answer, torch.Tensor):
        raise ContractError(not_a_tensor(answer))
    if tuple(answer.shape) != (5, 5):
        raise ContractError(wrong_shape(tuple(answer.shape), (5, 5)))
    got = answer.detach().cpu()
    if got.dtype == torch.bool:
        return got
    if got.is_floating_point() and torch.isinf(got).any():
        raise ContractError(
            tr(
                "that is an additive -inf mask; build the boolean mask (True = hide).",
                "这是加法形式的 -inf 掩码，请构造布尔掩码（True 表示隐藏）。",
            ),
        )
    if not ((got == 0) | (got == 1)).all():
        raise ContractError(
            tr(
                "a mask holds only True/False; got other values.",
                "掩码里只能有 True/False，这里出现了别的值。",
            ),
        )
    raise ContractError(
        tr(
            f"a mask of 1/0 numbers ({got.dtype}): masked_fill refuses it, it takes a boolean "
            "mask. Build it from a bool tensor (dtype=torch.bool), or convert with .bool().",
            f"这是由 1/0 数字组成的掩码（{got.dtype}），masked_fill 不接受它，只接受布尔掩码。"
            "请从布尔张量（dtype=torch.bool）构造，或者用 .bool() 转换。",
        ),
    )


def _masked_diagonal(got: torch.Tensor) -> Text | None:
    if got.diagonal().any():
        return tr(
            "the diagonal is masked, so a token could not look at itself.",
            "对角线被遮住了，这样词元就看不到它自己了。",
        )
    return None


def _hidden(T: int, window: int | None = None) -> torch.Tensor:
    """(T, T) bool, True where a query may not look: the future, and keys window or more back."""
    ones = torch.ones(T, T, dtype=torch.bool)
    future = torch.triu(ones, diagonal=1)
    return future if window is None else future | torch.tril(ones, diagonal=-window)


check_local_mask = mask_checker(
    "check_local_mask",
    Mask(
        name=tr("local window mask for T=5", "T=5 的局部窗口掩码"),
        what=tr(
            "a boolean tensor, True where a token must not look",
            "一个布尔张量，词元不能看的位置为 True",
        ),
        expected=_hidden(5, 2),
        read=_read_local_mask,
        right=tr(
            "correct: each token sees itself and the token before it, nothing else.",
            "正确：每个词元只看得到自己和前一个词元，别的都看不到。",
        ),
        wrong={
            ~_hidden(5, 2): tr(
                "that marks the positions to KEEP; masked_fill needs the ones to HIDE.",
                "这标出的是要保留的位置，而 masked_fill 需要的是要隐藏的位置。",
            ),
            torch.ones(5, 5, dtype=torch.bool).tril(diagonal=-2): tr(
                "the old tokens are hidden, but the future is visible again: hide both.",
                "较早的词元隐藏了，但未来的词元又看得见了。两者都要隐藏。",
            ),
            _hidden(5): tr(
                "that is the plain causal mask: also hide tokens 2 or more steps back.",
                "这是普通的因果掩码。还要隐藏往前 2 步及更远的词元。",
            ),
            _hidden(5, 2).T: tr(
                "the mask is transposed: it keeps the token just AFTER each token and hides the "
                "one before. Rows are queries, columns keys: the future is above the diagonal.",
                "掩码被转置了。它留下的是每个词元后面紧挨着的那个，遮住的却是前面那个。"
                "行是查询，列是键，未来在对角线以上。",
            ),
            _hidden(5, 3): tr(
                "off by one: that keeps two tokens before each token. The window is the token "
                "itself and ONE token before it, so hide from two steps back (diagonal=-2).",
                "差了一个。这样每个词元前面留下了两个词元。"
                "窗口是词元自己加上前面的一个，所以要从往前两步开始遮住（diagonal=-2）。",
            ),
            _hidden(5, 1): tr(
                "that leaves each token only itself: the window also keeps the one token just "
                "before it (hide from two steps back, diagonal=-2).",
                "这样每个词元只看得到它自己。窗口还要留下它前面紧挨着的那个词元"
                "（从往前两步开始遮住，diagonal=-2）。",
            ),
        },
        diagnose=_masked_diagonal,
        otherwise=tr(
            "hide two regions: the future (above the diagonal) and the tokens two or more "
            "steps back (below it). torch.triu and torch.tril keep a region given by their "
            "diagonal= offset (negative counts below the diagonal); | joins two masks.",
            "要隐藏两块区域：未来（对角线以上）和往前两步及更远的词元（对角线以下）。"
            "torch.triu 和 torch.tril 用 diagonal= 偏移量指定保留的区域（负数表示对角线以下），"
            "| 可以把两个掩码合起来。",
        ),
    ),
    """(5, 5) bool, True where a token must not look: the future and everything 2+ tokens back.""",
)


def _book_scores(x: torch.Tensor) -> torch.Tensor:
    """The book's scaled scores of ``x`` (T, 3): the queries of the seed-789
    ``SelfAttentionV2(3, 2)`` against its keys, divided by sqrt(2), (T, T)."""
    with torch.random.fork_rng():
        torch.manual_seed(789)
        sa_v2 = SelfAttentionV2(3, 2)
    with torch.no_grad():
        return sa_v2.W_query(x) @ sa_v2.W_key(x).T / 2**0.5  # (T, T)


def _changed_weights() -> int:
    """How many of the 36 one-step causal weights change when "step" gets a new embedding."""
    inputs = book_inputs()  # (6, 3)
    changed = torch.cat([inputs[:5], torch.tensor([[5.0, -3.0, 2.0]])])  # (6, 3), a new "step"
    before, after = (_softmax(_book_scores(x), _hidden(6)) for x in (inputs, changed))
    return int((before != after).sum())


check_prediction_changed_weights = prediction_checker(
    "check_prediction_changed_weights",
    Prediction(
        name=tr("prediction: causal weights that change", "预测：会改变的因果注意力权重"),
        what=tr("a whole number: how many weights change", "一个整数，即会改变的权重有几个"),
        actual=_changed_weights,
        shows=lambda count: tr(f"{count} of 36", f"36 个权重中有 {count} 个改变"),
        explain=tr(
            "Only the last row may look at 'step', and it looks at every token, so exactly "
            "its 6 weights move; rows 1-5 never see 'step'.",
            "只有最后一行可以看到 'step'，而它会看所有词元，"
            "所以恰好是它的 6 个权重变了。第 1-5 行根本看不到 'step'。",
        ),
        whole=True,
        between=(0, 36),
    ),
    """How many of the 36 one-step causal weights change when "step" gets a new embedding?""",
)


# -- build it: causal attention weights ----------------------------------------------------------


def _softmax(
    scores: torch.Tensor, hidden: torch.Tensor, fill: float = -torch.inf, dim: int = -1
) -> torch.Tensor:
    """The softmax over ``dim`` of ``scores`` (..., T, T) with the ``hidden`` ones set to ``fill``,
    in float64: the right weights, and with another mask, fill or dimension a typical mistake."""
    return torch.softmax(scores.masked_fill(hidden, fill), dim=dim).to(torch.float64)


def _mistakes(scores: torch.Tensor) -> dict[torch.Tensor, Text]:
    """Outputs of the typical mistakes on ``scores`` (..., T, T), with their hints."""
    T = scores.shape[-1]
    future = _hidden(T)
    full = torch.softmax(scores, dim=-1)
    scaled_again = tr(
        "the scores were scaled again: they come in already divided by sqrt(d_k), so the "
        "function must not divide them (by sqrt(T), or by section 4's d_k**0.5) a second time. "
        "Mask and softmax only.",
        "注意力分数被重复缩放了。传进来时它们已经除过 sqrt(d_k)，"
        "所以函数里不能再除一次（无论是 sqrt(T) 还是第 4 节的 d_k**0.5）。只需加掩码和做 softmax。",
    )
    return {
        **{_softmax(scores / scale, future): scaled_again for scale in (T**0.5, 2**0.5)},
        full: tr(
            "no mask was applied: masked_fill returns a NEW tensor, use its result before the "
            "softmax (or the in-place masked_fill_ on a copy).",
            "掩码没有生效。masked_fill 返回的是一个新的张量，"
            "softmax 之前要用它的返回值（或者在副本上用原地操作 masked_fill_）"
            "。",
        ),
        full * ~future: tr(
            "masking after the softmax without renormalising: the rows no longer sum to 1. "
            "Either divide each row by its sum, or fill the future with -inf BEFORE the "
            "softmax.",
            "在 softmax 之后加掩码却没有重新归一化。"
            "每行之和不再是 1。要么把每一行除以它的和，"
            "要么在 softmax 之前就把未来的位置填成 -inf。",
        ),
        _softmax(scores, future.T): tr(
            "the mask is transposed: it hides the past and keeps the future. Hide what is "
            "ABOVE the diagonal: torch.triu(..., diagonal=1).",
            "掩码被转置了，它隐藏了过去，保留了未来。"
            "要隐藏的是对角线以上的部分，即 torch.triu(..., diagonal=1)。",
        ),
        _softmax(scores, future, dim=-2): tr(
            "softmax over dim=-2 normalises columns; each query's row must sum to 1: dim=-1.",
            "在 dim=-2 上做 softmax，归一化的是列。每个查询的那一行之和必须为 1，所以要用 dim=-1。",
        ),
        _softmax(scores, future, 0.0): tr(
            "filling the future with 0 (or any finite number) leaves it a weight > 0, and the "
            "more so the lower the scores: fill it with -torch.inf.",
            "把未来的位置填成 0（或任何有限的数），"
            "它仍会得到大于 0 的权重，而且注意力分数越低，"
            "这个权重越大。请填成 -torch.inf。",
        ),
    }


def _window_mistakes(scores: torch.Tensor, window: int) -> dict[torch.Tensor, Text]:
    """Outputs of the typical mistakes with a ``window``, with their hints."""
    T = scores.shape[-1]
    return {
        _softmax(scores, _hidden(T)): tr(
            "the window is ignored: tokens too far back must be hidden as well as the future.",
            "窗口被忽略了。除了未来，太早的词元也要遮住。",
        ),
        _softmax(scores, _hidden(T, window + 1)): tr(
            "off by one: window=2 means the token itself and ONE token before it, window=1 the "
            "token alone.",
            "差了一个。window=2 表示词元自己加上紧挨在它前面的一个词元，window=1 表示只看自己。",
        ),
        _softmax(scores, torch.ones(T, T, dtype=torch.bool).tril(diagonal=-window)): tr(
            "the old tokens are hidden, but the future is visible again: hide both.",
            "较早的词元遮住了，但未来的词元又看得见了。两者都要遮住。",
        ),
    }


def _cases() -> list[tuple[Text, torch.Tensor]]:
    """The plain inputs (label, scores): the book's scores, then random ones of several sizes
    and scales."""
    randn = partial(torch.randn, generator=torch.Generator().manual_seed(3))
    return [
        (
            tr("the book's scaled scores (6, 6)", "书中缩放后的 (6, 6) 注意力分数"),
            _book_scores(book_inputs()),
        ),
        (tr("a (4, 4) matrix", "一个 (4, 4) 矩阵"), randn(4, 4) * 2),
        (tr("a (1, 1) matrix", "一个 (1, 1) 矩阵"), randn(1, 1)),
        (tr("a batch (2, 7, 7)", "一个 (2, 7, 7) 的批次"), randn(2, 7, 7) * 3),
        (tr("heads (2, 3, 5, 5)", "多个头的 (2, 3, 5, 5) 分数"), randn(2, 3, 5, 5)),
        (
            tr("a (3, 3) matrix of large negative scores", "一个分数都是很大负数的 (3, 3) 矩阵"),
            randn(3, 3) - 500,
        ),
        (
            tr("a (5, 5) matrix of scores near -1e30", "一个分数都接近 -1e30 的 (5, 5) 矩阵"),
            torch.full((5, 5), -1e30),
        ),
    ]


def _window_cases() -> list[tuple[Text, torch.Tensor, int]]:
    """The inputs with a window: (label, scores, window), window 1, 2, 3 and one wider than T."""
    randn = partial(torch.randn, generator=torch.Generator().manual_seed(5))
    return [
        (
            tr("the book's scores (6, 6), window=2", "书中的 (6, 6) 分数，window=2"),
            _book_scores(book_inputs()),
            2,
        ),
        (tr("a (7, 7) matrix, window=3", "一个 (7, 7) 矩阵，window=3"), randn(7, 7) * 2, 3),
        (
            tr("heads (2, 3, 5, 5), window=1", "多个头的 (2, 3, 5, 5) 分数，window=1"),
            randn(2, 3, 5, 5),
            1,
        ),
        (tr("a batch (2, 4, 4), window=9", "一个 (2, 4, 4) 的批次，window=9"), randn(2, 4, 4), 9),
        (
            tr("a (5, 5) matrix near -1e30, window=2", "一个接近 -1e30 的 (5, 5) 矩阵，window=2"),
            torch.full((5, 5), -1e30) + randn(5, 5),
            2,
        ),
    ]


_FORWARD = ForwardTexts(
    raised=tr(
        " it raised {kind}: {error}. Build the mask from attn_scores.shape[-1] "
        "so that any T and any leading (batch, head) shape works.",
        "上，它抛出了 {kind}：{error}。请根据 attn_scores.shape[-1] 构造掩码，"
        "这样任意 T 和任意前置的（批次、头）形状都能用。",
    ),
    not_written=tr(
        "the function is not written yet (it raises NotImplementedError).",
        "这个函数还没有写完（它抛出了 NotImplementedError）。",
    ),
    input_changed=tr(
        "your function changed the scores it was given in place (masked_fill_?): "
        "use the out-of-place masked_fill, which returns a new tensor.",
        "你的函数原地修改了传入的注意力分数（是不是用了 masked_fill_？）"
        "。请用非原地的 masked_fill，"
        "它会返回一个新张量。",
    ),
    not_tensor=tr("it returned {kind}, not a tensor.", "它返回的是 {kind}，不是张量。"),
    subclass=tr(
        "it returned a {kind}; return a plain torch.Tensor.",
        "它返回的是 {kind}，请返回普通的 torch.Tensor。",
    ),
    shape=tr(
        " it returned shape {got}, not {want}.",
        "上，它返回的形状是 {got}，而不是 {want}。",
    ),
    dtype=tr(
        "for {dtype} scores on {device} it returned {got_dtype} on "
        "{got_device}: the weights keep the scores' dtype and device (no .double(), "
        "no .to(...)).",
        "注意力分数是 {dtype}、位于 {device}，它却返回了 {got_dtype}、"
        "位于 {got_device}。注意力权重要保持分数的 dtype 和设备（不要 .double()，"
        "不要 .to(...)）。",
    ),
    shape_first=True,
)


def _weights(fn: Callable[..., object], args: tuple[object, ...], on: Text) -> torch.Tensor:
    """``fn(*args)`` through the runner (the scores first); the hints about a call and a shape
    name the input."""
    texts = replace(_FORWARD, raised=on + _FORWARD.raised, shape=on + _FORWARD.shape)
    return call_forward(fn, args, texts, want_shape=tuple(args[0].shape))  # type: ignore[attr-defined]


def _judge(
    fn: Callable[..., object], label: Text, scores: torch.Tensor, window: int | None
) -> None:
    """``fn(scores)`` is the causal softmax of ``scores`` (``window`` None), ``fn(scores, window)``
    the local one; else the hint naming why not, after the input ``label``: nan, a known mistake,
    (plain only) weight on the future or rows not summing to 1, then that the weights differ."""
    on = tr("on ", "在") + label
    plain = window is None
    out = _weights(fn, (scores,) if plain else (scores, window), on).detach().to(torch.float64)
    T = scores.shape[-1]
    if torch.isnan(out).any():
        raise ContractError(on + (_NAN if plain else _NAN_IN_WINDOW))
    if torch.allclose(out, _softmax(scores, _hidden(T, window)), atol=1e-6, rtol=0):
        return
    known = _mistakes(scores) if window is None else _window_mistakes(scores, window)
    not_a_known_mistake(out, known.items(), atol=1e-6, where=label)
    if plain and T > 1 and out[..., _hidden(T)].abs().max() > 1e-6:
        raise ContractError(
            on
            + tr(
                " the future (above the diagonal) has weight > 0.",
                "上，未来的位置（对角线以上）权重大于 0。",
            )
        )
    if plain:
        rows = on + tr(" the rows do not sum to 1.", "上，每行之和不是 1。")
        rows_sum_to_one(out.sum(dim=-1), rows, rtol=1e-5)
    raise ContractError(on + (_DIFFERS if plain else _DIFFERS_IN_WINDOW))


#: ``_judge``'s hints that differ between the plain case and the windowed one.
_NAN = tr(
    " the weights contain nan: a row was -inf everywhere. Is the diagonal "
    "masked too? The mask is torch.triu(..., diagonal=1).",
    "上，注意力权重里出现了 nan。有一行全是 -inf。"
    "是不是连对角线也遮住了？掩码应该是 torch.triu(..., diagonal=1)。",
)
_NAN_IN_WINDOW = tr(
    " the weights contain nan: a row hides every key. A token always sees itself.",
    "上，注意力权重里出现了 nan。有一行把所有键都遮住了。词元总能看到它自己。",
)
_DIFFERS = tr(
    " the weights differ from the causal ones: fill the future scores (a boolean "
    "mask above the diagonal, from torch.triu) with -inf using masked_fill, then the "
    "softmax over the last dimension.",
    "上，注意力权重与因果权重不一致。请用 masked_fill 把未来的分数"
    "（由 torch.triu 得到的对角线以上的布尔掩码）填成 -inf，"
    "再在最后一维上做 softmax。",
)
_DIFFERS_IN_WINDOW = tr(
    " the weights differ: each query may see itself and the window - 1 tokens "
    "just before it, nothing in the future and nothing further back.",
    "上，注意力权重不一致。每个查询只能看到它自己和它前面紧挨着的 window - 1 个词元，"
    "不能看未来，也不能看更早的词元。",
)


def _on_every_case(fn: Callable[..., object]) -> None:
    """``fn(scores)``: the causal weights of every plain case, causal in values and gradients."""
    for label, scores in _cases():
        _judge(fn, label, scores, None)
        _causality(fn, scores, label)


def _on_every_window(fn: Callable[..., object]) -> None:
    """``fn(scores, window)``: each query sees itself and the window - 1 keys before it."""
    try:
        inspect.signature(fn).bind(torch.zeros(2, 2), 2)
    except TypeError:
        raise ContractError(
            tr(
                "plain causal weights are right; now give the function its second argument, "
                "`window=None`, as in the cell's `def` line.",
                "普通的因果权重已经对了，现在给函数加上第二个参数 `window=None`，"
                "就像单元格里 `def` 那一行写的那样。",
            )
        ) from None
    except ValueError:  # a builtin without a signature: let the call decide
        pass
    for label, scores, window in _window_cases():
        _judge(fn, label, scores, window)


check_build_causal_weights = build_checker(
    "check_build_causal_weights",
    BuildSpec(
        name=tr("build causal attention weights", "动手实现因果注意力权重"),
        answer="function",
        function_name="causal_weights",
        reject_classes=True,
        contracts=(_on_every_case, _on_every_window),
        passed=tr(
            "correct: zeros above the diagonal, rows sum to 1, a future score changes nothing, "
            "gradients flow to the past scores only, for T = 1 to 7 and batched (..., T, T) "
            "input; with a window, each token sees itself and the window - 1 tokens before it.",
            "正确：对于 T = 1 到 7 以及批量的 (..., T, T) 输入，"
            "对角线以上都是 0，每行之和为 1，改动未来的分数不会改变任何结果，"
            "梯度也只流向过去的分数。有窗口时，每个词元只看到自己和它前面的 window - 1 个词元。",
        ),
    ),
    """Contract tests for ``fn(attn_scores, window=None)`` -> causal attention weights.

    ``fn(scores)`` is plain causal attention (..., T, T); ``fn(scores, window)`` also hides keys
    ``window`` or more steps back (local attention: itself and the window - 1 tokens before it).
    """,
)


def _causality(fn: object, scores: torch.Tensor, label: Text) -> None:
    """Changing a future score changes nothing; no gradient flows to a future score.

    ``label`` names the input ("a (4, 4) matrix"); the hints start with it.
    """
    T = scores.shape[-1]
    if T < 2:
        return
    on = tr("on ", "在") + label
    before = fn(scores.clone()).detach()  # type: ignore[operator]
    changed = scores.clone()
    changed[..., 0, T - 1] += 10.0  # the first query's score of the last key: the future
    leaks = on + tr(
        " changing a future score changed the weights: the future leaks in.",
        "上，改动一个未来的分数后，注意力权重变了，说明未来的信息泄露进来了。",
    )
    agrees(fn(changed).detach(), before, leaks, atol=1e-6, rtol=0)  # type: ignore[operator]
    leaf = scores.clone().requires_grad_(True)
    weights = fn(leaf)  # type: ignore[operator]
    if weights.requires_grad:
        weights_grad = torch.rand(weights.shape, generator=torch.Generator().manual_seed(0))
        (weights * weights_grad).sum().backward()
    grad = torch.zeros_like(leaf) if leaf.grad is None else leaf.grad  # none: as good as zero
    if grad[..., _hidden(T)].abs().max() > 1e-6:
        raise ContractError(
            on
            + tr(
                " gradient flows into future scores: they must not influence anything.",
                "上，有梯度流进了未来的分数。它们不应该影响任何结果。",
            )
        )
    gradients_reach([(on, grad[..., ~_hidden(T)])], _no_gradient, finite=True)


def _no_gradient(on: Text) -> Text:
    return on + tr(
        " no gradient reaches the scores (or it is not finite): do not detach them or use "
        "torch.no_grad(); the past scores must get one.",
        "上，没有梯度传到注意力分数（或者梯度不是有限值）。"
        "不要对它们 detach，也不要用 torch.no_grad()。过去的分数必须得到梯度。",
    )
