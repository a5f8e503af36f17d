"""Checkers for lesson 08, training a tiny attention model.

* ``check_initial_loss(answer, vocab_size=64)`` -- the cross-entropy of a model that guesses
  uniformly over ``vocab_size`` tokens: log(vocab_size) nats (log 64 = 4.1589).
* ``check_shift_targets(answer, ids, k)`` -- the targets of the shift task for ``ids`` (b, T):
  ``target[:, t] = ids[:, t - k]``, and -100 (ignored by the loss) for ``t < k``.
* ``check_offset_attention(answer, weights, k)`` -- per head, the mean weight on the token ``k``
  positions back (the diagonal ``t, t - k`` of each (T, T) map): what ``mh.offset_attention`` gives.
"""

from __future__ import annotations

import math

import torch

from ..i18n import Text, tr
from ..training import IGNORE_INDEX, offset_attention
from ._kinds import Near, Number, tensor_answer
from ._parse import A_PER_HEAD_TENSOR, not_a_tensor
from ._result import CheckResult, exercise, fail, missing, ok

__all__ = ["check_initial_loss", "check_offset_attention", "check_shift_targets"]


# The guard's name for a result it builds itself (the checker's own names the sizes).
_INITIAL_LOSS = tr("loss of a uniform guess", "均匀猜测的损失")


def _initial_loss_name(vocab_size: object) -> Text:
    return tr(
        f"loss of a uniform guess over {vocab_size} tokens",
        f"在 {vocab_size} 个词元上均匀猜测的损失",
    )


def _initial_loss(vocab_size: int) -> Number:
    """The exercise for ``vocab_size`` tokens: log(vocab_size) nats, to the two decimals the
    lesson prints (log 64 = 4.16, log 50257 = 10.82 pass; half a unit of the last place)."""
    expected = math.log(vocab_size)
    minus = tr(
        "the loss is MINUS the log of the probability of the right token.",
        "损失是正确词元概率的对数的相反数（前面有负号）。",
    )
    other_vocabulary = (
        math.log(64),
        tr(
            f"that is log(64), the lesson's vocabulary; this one has {vocab_size}.",
            f"这是 log(64)，对应的是本课的词表。这里的词表有 {vocab_size} 个词元。",
        ),
    )
    return Number(
        name=_initial_loss_name(vocab_size),
        what=tr(
            "a number: the loss you expect, in nats",
            "一个数：你预计的损失，单位是奈特（nat）",
        ),
        expected=expected,
        right=tr(
            f"correct: log({vocab_size}) = {expected:.4f} nats.",
            f"正确：log({vocab_size}) = {expected:.4f} 奈特。",
        ),
        wrong=(
            (
                Near(math.log2(vocab_size), 1e-3),
                lambda value: tr(
                    f"{value:.4g} is log base 2 (bits); cross_entropy uses the natural log.",
                    f"{value:.4g} 是以 2 为底的对数（比特），而 `cross_entropy` 用的是自然对数。",
                ),
            ),
            (Near(1 / vocab_size, 1e-4), minus),
            (-expected, minus),
            *((other_vocabulary,) if vocab_size != 64 else ()),
        ),
        otherwise=tr(
            f"cross-entropy = -log(p of the right token), and p = 1/{vocab_size} for every token.",
            f"交叉熵 = -log(正确词元的 p)，而每个词元的 p 都是 1/{vocab_size}。",
        ),
        tol=5e-3,
    )


@exercise(_INITIAL_LOSS)
def check_initial_loss(answer: object, vocab_size: int = 64) -> CheckResult:
    """log(vocab_size): the loss when every token gets probability 1 / vocab_size.

    Lesson 08 uses it twice: for a prediction before the first run (64 tokens, log 64 = 4.1589)
    and for the exercise (GPT-2's 50257 tokens).
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 2:
        return fail(
            _initial_loss_name(vocab_size),
            tr(
                f"vocab_size must be an int >= 2, got {vocab_size!r}.",
                f"vocab_size 必须是不小于 2 的整数，收到的是 {vocab_size!r}。",
            ),
        )
    return _initial_loss(vocab_size).check(answer)


check_initial_loss.spec = _initial_loss(64)  # type: ignore[attr-defined]


def _expected_targets(ids: torch.Tensor, k: int) -> torch.Tensor:
    targets = torch.full_like(ids, IGNORE_INDEX)  # (b, T)
    targets[:, k:] = ids[:, :-k]
    return targets


_SHIFT_TARGETS = tr("shift-task targets", "平移任务的目标")


@exercise(_SHIFT_TARGETS)
def check_shift_targets(answer: object, ids: torch.Tensor, k: int) -> CheckResult:
    """``target[:, t] = ids[:, t - k]`` for t >= k, -100 before."""
    name = tr(f"shift-task targets (k={k})", f"平移任务的目标（k={k}）")
    expected = _expected_targets(ids, k)
    if answer is None:
        return missing(
            name,
            tr("an integer tensor of targets, one per id", "一个整数目标张量，每个 id 一个目标"),
        )
    if not isinstance(answer, torch.Tensor):
        return fail(name, not_a_tensor(answer))
    if tuple(answer.shape) != tuple(ids.shape):
        got, want = tuple(answer.shape), tuple(ids.shape)
        return fail(
            name,
            tr(
                f"shape {got} but expected {want}, like ids.",
                f"形状是 {got}，应为 {want}，和 ids 一样。",
            ),
        )
    if answer.is_floating_point() or answer.dtype == torch.bool:
        dtype = answer.dtype
        return fail(
            name,
            tr(
                f"targets are token ids: use an integer dtype, got {dtype}.",
                f"目标是词元 id，要用整数 dtype，收到的却是 {dtype}。",
            ),
        )
    if torch.equal(answer, expected):
        return ok(
            name,
            tr(
                "correct: each position's target is the token k places back.",
                "正确：每个位置的目标都是往前数 k 个位置的那个词元。",
            ),
        )
    if torch.equal(answer[:, k:], expected[:, k:]):
        return fail(
            name,
            tr(
                "the first k positions have no token k back: set them to -100.",
                "前 k 个位置往前数 k 个位置都没有词元，请把这些位置的目标设为 -100。",
            ),
        )
    wrong_way = torch.full_like(ids, IGNORE_INDEX)
    wrong_way[:, :-k] = ids[:, k:]
    if torch.equal(answer, wrong_way):
        return fail(
            name,
            tr(
                "that copies from the FUTURE (t + k); we want the past: ids[:, :-k].",
                "这是从未来（t + k）复制的，我们要的是过去，即 `ids[:, :-k]`。",
            ),
        )
    return fail(
        name,
        tr(
            "start from torch.full_like(ids, -100), then targets[:, k:] = ids[:, :-k].",
            "先用 `torch.full_like(ids, -100)`，再令 `targets[:, k:] = ids[:, :-k]`。",
        ),
    )


_OFFSET_ATTENTION = tr("attention on the token k back", "对往前第 k 个词元的注意力")


@exercise(_OFFSET_ATTENTION)
def check_offset_attention(answer: object, weights: torch.Tensor, k: int) -> CheckResult:
    """Mean over queries t >= k of ``weights[h, t, t - k]``, one number per head."""
    name = tr(f"attention on the token {k} back", f"对往前第 {k} 个词元的注意力")
    expected = offset_attention(weights, k)  # (h,)
    if (
        isinstance(answer, torch.Tensor)
        and answer.is_floating_point()
        and answer.shape == expected.shape
        and torch.allclose(answer, offset_attention(weights.transpose(-2, -1), k), atol=1e-4)
        and not torch.allclose(answer, expected, atol=1e-4)
    ):
        return fail(
            name,
            tr(
                "offset=+k is above the diagonal (the future): use offset=-k.",
                "offset=+k 在对角线上方，也就是未来。请用 offset=-k。",
            ),
        )
    return tensor_answer(
        name,
        answer,
        expected,
        what=A_PER_HEAD_TENSOR,
        hint=tr(
            "torch.diagonal(weights, offset=-k, dim1=-2, dim2=-1) gives (h, T - k); "
            "average it over the last dimension.",
            "`torch.diagonal(weights, offset=-k, dim1=-2, dim2=-1)` 给出 (h, T - k)，"
            "再对最后一维求平均。",
        ),
    )
