"""Checkers for lesson 08, training a tiny attention model.

* ``check_initial_loss(answer)`` -- the cross-entropy of a model that guesses uniformly over the
  lesson's 64 tokens: log 64 = 4.1589 nats.
* ``check_probability_gain(answer)`` -- how many times likelier the right token is at a loss of
  0.63 nats (epoch 2) than under the uniform guess: 64 * exp(-0.63) = 34.09.
* ``check_shift_targets(answer, ids, k)`` -- the targets of the shift task for ``ids`` (b, T):
  ``target[:, t] = ids[:, t - k]``, and -100 (ignored by the loss) for ``t < k``.
* ``check_offset_attention(answer, weights, k)`` -- per head, the mean weight on the token ``k``
  positions back (the diagonal ``t, t - k`` of each (T, T) map): what ``mh.offset_attention`` gives.
"""

from __future__ import annotations

import math

import torch

from ..i18n import tr
from ..training import IGNORE_INDEX, offset_attention
from ._kinds import Near, Number, number_checker, tensor_answer
from ._parse import A_PER_HEAD_TENSOR, not_a_tensor
from ._result import CheckResult, exercise, fail, missing, ok

__all__ = [
    "check_initial_loss",
    "check_offset_attention",
    "check_probability_gain",
    "check_shift_targets",
]


_VOCAB = 64  # the lesson's vocabulary
_UNIFORM = math.log(_VOCAB)
_MINUS = tr(
    "the loss is MINUS the log of the probability of the right token.",
    "损失是正确词元概率的对数的相反数（前面有负号）。",
)

check_initial_loss = number_checker(
    "check_initial_loss",
    Number(
        name=tr(
            f"loss of a uniform guess over {_VOCAB} tokens", f"在 {_VOCAB} 个词元上均匀猜测的损失"
        ),
        what=tr(
            "a number: the loss you expect, in nats", "一个数：你预计的损失，单位是奈特（nat）"
        ),
        expected=_UNIFORM,
        right=tr(
            f"correct: log({_VOCAB}) = {_UNIFORM:.4f} nats.",
            f"正确：log({_VOCAB}) = {_UNIFORM:.4f} 奈特。",
        ),
        wrong={
            Near(math.log2(_VOCAB), 1e-3): lambda value: tr(
                f"{value:.4g} is log base 2 (bits); cross_entropy uses the natural log.",
                f"{value:.4g} 是以 2 为底的对数（比特），而 `cross_entropy` 用的是自然对数。",
            ),
            Near(1 / _VOCAB, 1e-4): _MINUS,
            -_UNIFORM: _MINUS,
        },
        otherwise=tr(
            f"cross-entropy = -log(p of the right token), and p = 1/{_VOCAB} for every token.",
            f"交叉熵 = -log(正确词元的 p)，而每个词元的 p 都是 1/{_VOCAB}。",
        ),
        tol=5e-3,  # the two decimals the lesson prints (4.16) pass
    ),
    "log(64) = 4.1589: the loss when every one of the lesson's 64 tokens gets probability 1/64.",
)


_TRAINED_LOSS = 0.63  # the repeat task's second epoch, as lesson 08 prints it
_GAIN = _VOCAB * math.exp(-_TRAINED_LOSS)  # 34.09: p = exp(-loss) against the uniform 1/64
_MEASURED_START = 4.25  # the untrained model's measured loss, printed by the lesson

check_probability_gain = number_checker(
    "check_probability_gain",
    Number(
        name=tr("how much likelier the right token got", "正确词元的概率是均匀猜测的多少倍"),
        what=tr(
            "a number: how many times larger",
            "一个数：训练后正确词元的概率是均匀猜测的多少倍",
        ),
        expected=_GAIN,
        right=tr(
            f"correct: p went from 1/64 to exp(-0.63) = 0.53, {_GAIN:.1f} times larger "
            "(a difference of losses is the log of a ratio of probabilities).",
            f"正确：p 从 1/64 变为 exp(-0.63) = 0.53，是原来的 {_GAIN:.1f} 倍"
            "（损失之差就是概率之比的对数）。",
        ),
        wrong={
            Near(_UNIFORM / _TRAINED_LOSS, 0.2): tr(
                "that is the ratio of the losses; a loss is -log p, so compare the p's.",
                "这是两个损失之比。损失是 -log p，要比较的是两个 p。",
            ),
            Near(_UNIFORM - _TRAINED_LOSS, 0.05): tr(
                "that is how much the loss fell, in nats: still a log. Undo it.",
                "这是损失下降了多少奈特，还是对数，要把它还原。",
            ),
            Near(math.exp(-_TRAINED_LOSS), 5e-3): tr(
                "that is the trained model's p; compare it with the uniform guess's.",
                "这是训练后模型的 p，还要和均匀猜测的 p 比较。",
            ),
            Near(_VOCAB * (1 - _TRAINED_LOSS), 0.2): tr(
                "1 - loss is not a probability: the loss is -log p, so p = exp(-loss).",
                "1 - 损失不是概率。损失是 -log p，所以 p = exp(-损失)。",
            ),
            Near(math.exp(_MEASURED_START - _TRAINED_LOSS), 0.2): tr(
                "that starts from the untrained model's measured 4.25; the question compares "
                "with the uniform guess, p = 1/64.",
                "这是从未训练模型实测的 4.25 出发算的。题目比较的是均匀猜测，即 p = 1/64。",
            ),
            _VOCAB: tr(
                "that would be a perfect model (p = 1); a loss of 0.63 is far from 0.",
                "那是完美模型（p = 1）的结果，而 0.63 的损失离 0 还远。",
            ),
        },
        otherwise=tr(
            "find each probability of the right token from its loss, then divide.",
            "先由各自的损失求出正确词元的两个概率，再相除。",
        ),
        tol=0.1,  # 34.1 (from the printed 4.16 and 0.63) passes
    ),
    "64 * exp(-0.63) = 34.09: the right token's probability after epoch 2, over a uniform guess",
)


def _expected_targets(ids: torch.Tensor, k: int) -> torch.Tensor:
    targets = torch.full_like(ids, IGNORE_INDEX)  # (b, T)
    targets[:, k:] = ids[:, :-k]
    return targets


@exercise(tr("shift-task targets", "平移任务的目标"))
def check_shift_targets(answer: object, ids: torch.Tensor, k: int) -> CheckResult:
    """``target[:, t] = ids[:, t - k]`` for t >= k, -100 before."""
    name = tr(f"shift-task targets (k={k})", f"平移任务的目标（k={k}）")
    expected = _expected_targets(ids, k)  # (b, T)
    if answer is None:
        return missing(
            name,
            tr("an integer tensor of targets, one per id", "一个整数目标张量，每个 id 一个目标"),
        )
    if not isinstance(answer, torch.Tensor):
        hint = not_a_tensor(answer)
    elif tuple(answer.shape) != tuple(ids.shape):
        hint = tr(
            f"shape {tuple(answer.shape)} but expected {tuple(ids.shape)}, like ids.",
            f"形状是 {tuple(answer.shape)}，应为 {tuple(ids.shape)}，和 ids 一样。",
        )
    elif answer.is_floating_point() or answer.dtype == torch.bool:
        hint = tr(
            f"targets are token ids: use an integer dtype, got {answer.dtype}.",
            f"目标是词元 id，要用整数 dtype，收到的却是 {answer.dtype}。",
        )
    elif torch.equal(answer, expected):
        return ok(
            name,
            tr(
                "correct: each position's target is the token k places back.",
                "正确：每个位置的目标都是往前数 k 个位置的那个词元。",
            ),
        )
    elif torch.equal(answer[:, k:], expected[:, k:]):
        hint = tr(
            "the first k positions have no token k back: set them to -100.",
            "前 k 个位置往回数 k 步没有词元可抄，请把它们的目标设为 -100。",
        )
    elif torch.equal(answer, _expected_targets(ids.flip(1), k).flip(1)):  # from t + k
        hint = tr(
            "that copies from the FUTURE (t + k); the target at t is the id k places "
            "BEFORE it, at t - k.",
            "这是从未来（t + k）复制的。位置 t 的目标是它之前 k 个位置（t - k）上的 id。",
        )
    else:
        hint = tr(
            "the target at position t is the id at t - k, along the token axis (dim 1), and "
            "the first k positions, which have none, hold -100.",
            "位置 t 的目标是词元轴（dim 1）上 t - k 处的 id；前 k 个位置往回没有词元，"
            "目标为 -100。",
        )
    return fail(name, hint)


@exercise(tr("attention on the token k back", "对往前第 k 个词元的注意力"))
def check_offset_attention(answer: object, weights: torch.Tensor, k: int) -> CheckResult:
    """Mean over queries t >= k of ``weights[h, t, t - k]``, one number per head."""
    name = tr(f"attention on the token {k} back", f"对往前第 {k} 个词元的注意力")
    return tensor_answer(
        name,
        answer,
        offset_attention(weights, k),  # (h,)
        what=A_PER_HEAD_TENSOR,
        hint=tr(
            "the entries t, t - k of each head's (T, T) map lie on one diagonal, k below the "
            "main one: torch.diagonal takes it (mind its offset sign and which two dimensions "
            "are the map's), then average each head's T - k entries.",
            "每个头的 (T, T) 图里，(t, t - k) 这些元素在主对角线下方第 k 条对角线上。"
            "`torch.diagonal` 能取出它（注意 offset 的正负，以及哪两维是这张图），"
            "再对每个头的 T - k 个元素求平均。",
        ),
        wrong={
            offset_attention(weights.transpose(-2, -1), k): tr(
                "offset=+k is above the diagonal (the future): use offset=-k.",
                "offset=+k 在对角线上方，也就是未来。请用 offset=-k。",
            )
        },
    )
