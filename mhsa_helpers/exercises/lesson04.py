"""Checkers for lesson 04, dropout (随机失活) on attention weights.

* ``check_dropout_scale(answer)`` -- the factor a surviving entry is multiplied by when p = 0.2.
* ``check_zero_fraction(answer)`` -- the expected fraction of zeros in a 6x6 causal weight matrix
  after dropout with p = 0.5 (masked entries plus dropped ones).
* ``check_manual_dropout(answer)`` -- dropout with p = 0.25 done by hand on the book's seed-789
  causal weights, given the keep pattern ``exercise_keep_pattern()`` (True = kept).
* ``check_survivor_prediction(prediction)`` -- the predict-then-run moment: the value of the
  entries of a 6x6 matrix of ones that survive ``nn.Dropout(0.5)``.
"""

from __future__ import annotations

import math

import torch

from ..data import reference
from ..i18n import Text, tr
from ._kinds import Number, number_checker, prediction_before_run, tensor_answer
from ._parse import number
from ._result import CheckResult, exercise, missing

__all__ = [
    "check_dropout_scale",
    "check_manual_dropout",
    "check_survivor_prediction",
    "check_zero_fraction",
    "exercise_keep_pattern",
]

EXERCISE_P = 0.25


def exercise_keep_pattern() -> torch.Tensor:
    """The (6, 6) keep pattern of exercise 3 (True = kept), drawn with its own generator.

    The lesson builds the same tensor with the same line:
    ``torch.rand(6, 6, generator=torch.Generator().manual_seed(2025)) >= 0.25``.
    """
    return torch.rand(6, 6, generator=torch.Generator().manual_seed(2025)) >= EXERCISE_P


_SURVIVOR_PREDICTION = tr("prediction: the value of a surviving entry", "预测：保留下来的元素的值")


@exercise(_SURVIVOR_PREDICTION)
def check_survivor_prediction(prediction: object) -> CheckResult:
    """Prediction: the survivors of ``nn.Dropout(0.5)`` on a 6x6 matrix of ones equal 2."""
    value = number(prediction)
    return prediction_before_run(
        _SURVIVOR_PREDICTION,
        prediction,
        value=value,
        guess=tr("a number", "一个数"),
        kind=tr("a number", "一个数"),
        correct=value is not None and math.isclose(value, 2.0, abs_tol=1e-4),
        right=tr(
            "right -- the next cell shows it; section 2 explains why.",
            "对了！下一个单元格会展示出来；第 2 节解释原因。",
        ),
        wrong=tr(
            "not what happens. Run the next cell and look at the entries that are not 0; then "
            "think about what happens to the average of the matrix when half of it is zeroed.",
            "实际情况不是这样。运行下一个单元格，看看那些不为 0 的元素；"
            "再想一想：矩阵有一半被置零后，它的平均值会怎样？",
        ),
    )


check_dropout_scale = number_checker(
    "check_dropout_scale",
    Number(
        name=tr("dropout scale for p=0.2", "p=0.2 时 dropout 的缩放因子"),
        what=tr("the number a surviving entry is multiplied by", "保留下来的元素要乘的那个数"),
        expected=1.25,
        right=tr(
            "correct: 1 / (1 - 0.2) = 1.25, so the expected value stays the same.",
            "正确：1 / (1 - 0.2) = 1.25，这样期望值保持不变。",
        ),
        wrong=(
            (
                0.8,
                tr(
                    "0.8 is the probability to survive, 1 - p. Survivors are DIVIDED by it.",
                    "0.8 是保留下来的概率 1 - p。保留下来的元素要“除以”它。",
                ),
            ),
            (
                5.0,
                tr(
                    "that is 1 / p. The factor is 1 / (1 - p): divide by what survives.",
                    "这是 1 / p。缩放因子是 1 / (1 - p)：除以保留下来的比例。",
                ),
            ),
            (
                2.0,
                tr(
                    "2 is the factor for p = 0.5 (the book's example). Here p = 0.2.",
                    "2 是 p = 0.5 时的缩放因子（书中的例子）。这里 p = 0.2。",
                ),
            ),
            (
                0.2,
                tr(
                    "0.2 is p itself, the fraction dropped. What keeps the mean at 1?",
                    "0.2 就是 p 本身，即被丢弃的比例。怎样才能让平均值保持为 1？",
                ),
            ),
        ),
        otherwise=tr(
            "a fraction 1 - p survives; scale it by 1 / (1 - p) to keep the mean.",
            "保留下来的比例是 1 - p；把它们乘以 1 / (1 - p)，平均值就不变。",
        ),
        tol=1e-4,
    ),
    "With p = 0.2, survivors are multiplied by 1 / (1 - 0.2) = 1.25.",
)


_ZERO_FRACTION = (15 + 21 * 0.5) / 36  # 0.7083

check_zero_fraction = number_checker(
    "check_zero_fraction",
    Number(
        name=tr("expected fraction of zeros", "零所占比例的期望值"),
        what=tr("a fraction between 0 and 1", "一个 0 到 1 之间的比例"),
        expected=_ZERO_FRACTION,
        right=tr(
            f"correct: 15 masked + 21 * 0.5 dropped = 25.5 of 36 = {_ZERO_FRACTION:.4f}.",
            f"正确：15 个被掩码 + 21 * 0.5 个被丢弃 = 36 个中的 25.5 个 = {_ZERO_FRACTION:.4f}。",
        ),
        wrong=(
            (
                25.5,
                tr(
                    "25.5 is the expected COUNT of zeros; divide by the 36 entries.",
                    "25.5 是零的“个数”的期望值；还要除以全部 36 个元素。",
                ),
            ),
            (
                lambda value: not 0.0 <= value <= 1.0,
                tr(
                    "a fraction lies between 0 and 1: zeros divided by the 36 entries.",
                    "比例在 0 到 1 之间：零的个数除以 36 个元素。",
                ),
            ),
            (
                0.5,
                tr(
                    "dropout zeroes half of the entries, but 15 entries above the diagonal are "
                    "already 0 (the causal mask) and stay 0.",
                    "dropout 会把一半的元素置零，但对角线以上的 15 个元素已经是 0（因果掩码），"
                    "而且一直是 0。",
                ),
            ),
            (
                15 / 36,
                tr(
                    "that counts only the 15 masked entries; dropout zeroes half of the 21 others.",
                    "这只算了被掩码的 15 个元素；dropout 还会把其余 21 个元素中的一半置零。",
                ),
            ),
            (
                10.5 / 36,
                tr(
                    "that counts only the dropped entries; add the 15 masked ones.",
                    "这只算了被丢弃的元素；还要加上被掩码的 15 个。",
                ),
            ),
        ),
        otherwise=tr(
            "count the 15 masked zeros, then half of the 21 entries on/below the diagonal.",
            "先数被掩码的 15 个零，再加上对角线及其以下 21 个元素中的一半。",
        ),
        tol=1e-3,
    ),
    "Expected zeros in a 6x6 causal weight matrix after dropout p = 0.5: (15 + 21 * 0.5) / 36.",
)


_MANUAL_DROPOUT = tr("dropout by hand, p=0.25", "手动实现 dropout，p=0.25")


@exercise(_MANUAL_DROPOUT)
def check_manual_dropout(answer: object) -> CheckResult:
    """The seed-789 causal weights, kept where ``exercise_keep_pattern()`` is True, / (1 - 0.25)."""
    name = _MANUAL_DROPOUT
    weights = reference("seed789_masked_renormalized")  # (6, 6)
    keep = exercise_keep_pattern()  # (6, 6) bool
    expected = torch.where(keep, weights / (1 - EXERCISE_P), torch.zeros(()))  # (6, 6)

    def hint(got: torch.Tensor) -> Text:
        got = got.detach().to(torch.float32).cpu()
        if torch.allclose(got, weights * keep, atol=1e-4):
            return tr(
                "the right entries survive, but scale them by 1 / (1 - p).",
                "保留下来的元素对了，但还要把它们乘以 1 / (1 - p)。",
            )
        if torch.allclose(got, weights * keep * 2, atol=1e-4):
            return tr(
                "x2 is the factor for p = 0.5; here p = 0.25.",
                "乘以 2 是 p = 0.5 时的缩放；这里 p = 0.25。",
            )
        if torch.allclose(got, weights * keep / EXERCISE_P, atol=1e-4):
            return tr(
                "that divides by p; survivors are divided by 1 - p, the fraction that survives.",
                "这是除以 p；保留下来的元素要除以 1 - p，也就是保留下来的比例。",
            )
        if torch.allclose(got, weights * ~keep / (1 - EXERCISE_P), atol=1e-4):
            return tr(
                "the mask is inverted: keep the entries where keep_ex is True.",
                "掩码反了：应该保留 keep_ex 为 True 的元素。",
            )
        if torch.allclose(got, weights, atol=1e-4):
            return tr(
                "nothing was dropped: multiply by the keep pattern keep_ex.",
                "什么都没有丢弃：请乘以保留模式 keep_ex。",
            )
        return tr(
            "multiply the weights by the keep pattern, then by 1 / (1 - p).",
            "把注意力权重乘以保留模式，再乘以 1 / (1 - p)。",
        )

    what = tr("the (6, 6) dropped weights", "经过 dropout 之后、形状为 (6, 6) 的注意力权重")
    if answer is None:
        return missing(name, what)
    return tensor_answer(name, answer, expected, what=what, hint=hint)
