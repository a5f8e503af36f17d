"""Checkers for lesson 07, inspecting attention heads (注意力头) and their entropy (熵).

* ``check_row_entropy(answer)`` -- the entropy in nats of the attention row [0.5, 0.25, 0.25, 0].
* ``check_head_entropy(answer, weights)`` -- the mean row entropy of every head of ``weights``
  (h, T, T), written by hand: what ``mh.head_entropy`` computes.
* ``check_sharpest_head(answer, weights)`` -- the index (0-based) of the head with the lowest
  entropy, i.e. the most focused head.
"""

from __future__ import annotations

import math
import numbers

import torch

from ..i18n import Text, tr
from ..inspection import head_entropy
from ._kinds import Number, number_checker, tensor_answer
from ._parse import A_PER_HEAD_TENSOR, expected_kind, is_bool
from ._result import CheckResult, ContractError, exercise, ok

__all__ = ["ROW", "check_head_entropy", "check_row_entropy", "check_sharpest_head"]

ROW = (0.5, 0.25, 0.25, 0.0)  # the row of exercise 1


_ROW_ENTROPY = tr("entropy of one row", "一行的熵")
_ENTROPY = -sum(w * math.log(w) for w in ROW if w > 0)  # 1.5 log 2 = 1.0397


def _nan_entropy(answer: object) -> Text | None:
    """The hint for a NaN answer (a float, or a tensor holding one): 0 * log(0) was not 0."""
    if isinstance(answer, (float, torch.Tensor)) and bool(
        torch.isnan(torch.as_tensor(answer)).any()
    ):
        return tr(
            "nan: 0 * log(0) must count as 0; skip the zeros or use torch.special.xlogy.",
            "得到了 nan。0 * log(0) 必须按 0 计，"
            "请跳过权重为 0 的项，或者用 `torch.special.xlogy`。",
        )
    return None


_A_ROW_ENTROPY = tr("a number (float or 0-d tensor)", "一个数（浮点数或 0 维张量）")

check_row_entropy = number_checker(
    "check_row_entropy",
    Number(
        name=_ROW_ENTROPY,
        what=tr(
            "a number: the entropy of the row, in nats",
            "一个数：这一行的熵，单位是奈特（nat）",
        ),
        expected=_ENTROPY,
        right=tr(
            f"correct: {_ENTROPY:.4f} nats (= 1.5 * log 2).",
            f"正确：{_ENTROPY:.4f} 奈特（= 1.5 * log 2）。",
        ),
        wrong={
            _ENTROPY / math.log(2): tr(
                "that is in bits (log base 2); use the natural log, torch.log.",
                "这是以比特为单位（以 2 为底的对数），请用自然对数 `torch.log`。",
            ),
            -_ENTROPY: tr(
                "the sign: entropy is MINUS the sum of w * log(w), so it is >= 0.",
                "注意符号。熵是 w * log(w) 之和的相反数（前面有负号），所以它 >= 0。",
            ),
        },
        otherwise=tr(
            "sum w * log(w) over the non-zero weights, then negate; 0 * log 0 counts as 0 "
            "(torch.special.xlogy(w, w) does that).",
            "对非零权重求 w * log(w) 之和，"
            "再取相反数。0 * log 0 按 0 计（`torch.special.xlogy(w, w)` 正是这样做的）"
            "。",
        ),
        tol=1e-3,
        kind=lambda answer: expected_kind(_A_ROW_ENTROPY, answer),
        screen=_nan_entropy,
    ),
    "-sum w log w of [0.5, 0.25, 0.25, 0] in nats = 1.5 log 2 = 1.0397.",
)


_HEAD_ENTROPY = tr("entropy of every head", "每个头的熵")


@exercise(
    _HEAD_ENTROPY,
    what=tr(
        "a tensor of shape (num_heads,): each head's mean row entropy",
        "一个形状为 (num_heads,) 的张量：每个头各行熵的平均值",
    ),
)
def check_head_entropy(answer: object, weights: torch.Tensor) -> CheckResult:
    """Per-head mean row entropy (h,) of ``weights`` (h, T, T)."""
    name = _HEAD_ENTROPY
    if isinstance(answer, torch.Tensor) and torch.isnan(answer).any():
        raise ContractError(
            tr(
                "nan: 0 * log(0) is nan in torch. Use torch.special.xlogy(w, w), which gives 0 "
                "there.",
                "得到了 nan。在 torch 里 0 * log(0) 是 nan。"
                "请用 `torch.special.xlogy(w, w)`，"
                "它在那里给出 0。",
            ),
        )
    expected = head_entropy(weights)  # (h,)
    if (
        isinstance(answer, torch.Tensor)
        and answer.shape == expected.shape
        and answer.is_floating_point()
        and torch.allclose(answer.double(), -expected.double(), atol=1e-4)
        and bool(expected.abs().max() > 1e-4)
    ):
        raise ContractError(
            tr(
                "the sign: entropy is -sum w log w (>= 0).",
                "注意符号。熵是 -sum w log w，总是 >= 0。",
            ),
        )
    if isinstance(answer, torch.Tensor) and answer.shape == weights.shape[:2]:
        shape = tuple(answer.shape)
        raise ContractError(
            tr(
                f"shape {shape} is one entropy per row; average the rows of each head: "
                ".mean(dim=-1).",
                f"形状 {shape} 是每一行一个熵。请用 `.mean(dim=-1)` 对每个头的各行求平均。",
            ),
        )
    return tensor_answer(
        name,
        answer,
        expected,
        what=A_PER_HEAD_TENSOR,
        hint=tr(
            "row entropy = -(w * log w).sum(dim=-1) with 0 log 0 = 0, then .mean(dim=-1).",
            "行熵 = -(w * log w).sum(dim=-1)，其中 0 log 0 = 0，然后再 `.mean(dim=-1)`。",
        ),
    )


_SHARPEST_HEAD = tr("the sharpest head", "最集中（熵最低）的头")


@exercise(
    _SHARPEST_HEAD,
    what=tr(
        "an int: the index of the head with the LOWEST entropy, counting from zero",
        "一个整数，即熵最低的那个头的索引（从零数起）",
    ),
)
def check_sharpest_head(answer: object, weights: torch.Tensor) -> CheckResult:
    """Index (0-based) of the head of ``weights`` (h, T, T) with the lowest entropy."""
    name = _SHARPEST_HEAD
    entropy = head_entropy(weights)
    sharpest = _tied_with(entropy, entropy.min())  # every head as sharp as the sharpest
    expected = sharpest[0]
    index = _head_index(answer)
    if index is None:
        kind = type(answer).__name__
        raise ContractError(
            tr(
                f"expected an int (a head index), got {kind}.",
                f"需要一个整数（头的索引），收到的是 {kind}。",
            ),
        )
    answer = index
    if answer in sharpest:
        expected = answer
        return ok(
            name,
            tr(
                f'correct: head index {expected} ("Head {expected + 1}" in the plots).',
                f"正确！头的索引是 {expected}，也就是图中的“头 {expected + 1}”。",
            ),
        )
    if answer - 1 in sharpest:
        raise ContractError(
            tr(
                "plots number heads from 1, tensors from 0: subtract one.",
                "图里的头从 1 开始编号，张量的索引从 0 开始，所以要减去 1。",
            ),
        )
    if answer in _tied_with(entropy, entropy.max()):
        raise ContractError(
            tr(
                "that is the most spread-out head; the sharpest has the LOWEST entropy.",
                "这是注意力最分散的头。最集中的头熵最低。",
            ),
        )
    raise ContractError(
        tr(
            "compute the entropy of every head and take .argmin().",
            "先算出每个头的熵，再取 `.argmin()`。",
        ),
    )


def _tied_with(entropy: torch.Tensor, value: torch.Tensor) -> list[int]:
    """The heads whose entropy equals ``value`` (to float rounding): a tie has several."""
    close = torch.isclose(entropy, value.expand_as(entropy), rtol=0.0, atol=1e-6)
    return [int(i) for i in close.nonzero().flatten()]


def _head_index(answer: object) -> int | None:
    """``answer`` as a head index: an int (numpy ints too) or a one-element integer tensor.

    Floats and bools are not indices (``True`` would otherwise count as head 1), nor is a bool
    tensor.
    """
    if isinstance(answer, torch.Tensor):
        if answer.numel() != 1 or answer.is_meta or answer.is_floating_point():
            return None
        if answer.dtype == torch.bool or answer.is_complex():
            return None
        return int(answer.item())
    if is_bool(answer) or not isinstance(answer, numbers.Integral):
        return None
    return int(answer)
