"""Checkers for lesson 07, inspecting attention heads (注意力头) and their entropy (熵).

* ``check_keys_from_entropy(answer)`` -- over how many keys a row of entropy 1.3863 nats (log 4)
  spreads its weight evenly: 4.
* ``check_head_entropy(answer, weights)`` -- the entropy of every row of every head of
  ``weights`` (h, T, T), shape (h, T): the numbers ``mh.head_entropy`` averages per head.
* ``check_sharpest_head(answer, weights)`` -- the index (0-based) of the head with the lowest
  entropy, i.e. the most focused head.
"""

from __future__ import annotations

import math
import numbers

import torch

from ..i18n import tr
from ..inspection import head_entropy
from ._kinds import Number, number_checker, tensor_answer
from ._parse import is_bool
from ._result import CheckResult, ContractError, exercise, ok

__all__ = ["check_head_entropy", "check_keys_from_entropy", "check_sharpest_head"]

_USED_KEYS = 4  # exercise 1: a row spread evenly over 4 of the 6 keys it may see

check_keys_from_entropy = number_checker(
    "check_keys_from_entropy",
    Number(
        name=tr("keys a row of entropy 1.3863 uses", "熵为 1.3863 的一行用到的键"),
        what=tr("a number of keys", "一个数：键的个数"),
        expected=_USED_KEYS,
        right=tr(
            "correct: n equal weights of 1/n give -n * (1/n) * log(1/n) = log n, so "
            "n = exp(1.3863) = 4; the zeros add nothing.",
            "正确：n 个相等的权重 1/n 给出 -n * (1/n) * log(1/n) = log n，"
            "所以 n = exp(1.3863) = 4。权重为 0 的键不贡献熵。",
        ),
        wrong={
            6: tr(
                "even over all 6 keys the entropy would be log 6 = 1.79, the row's maximum; "
                "this row is lower.",
                "均匀分在全部 6 个键上时，熵是 log 6 = 1.79，这是这一行的最大值。这一行的熵更低。",
            ),
            1: tr(
                "all the weight on one key gives entropy 0.",
                "全部权重放在一个键上时，熵是 0。",
            ),
            1.3863: tr(
                "1.3863 is the entropy itself, not the number of keys n: write the entropy of n "
                "equal weights, then solve it for n.",
                "1.3863 是熵本身，题目问的是键的个数 n。先写出 n 个相等权重的熵，再从中解出 n。",
            ),
        },
        otherwise=tr(
            "write the entropy of n equal weights 1/n, then solve it for n (undo the log).",
            "先写出 n 个相等权重 1/n 的熵，再从中解出 n（把对数还原）。",
        ),
        tol=1e-2,  # exp(1.3863) = 4.00002 passes
    ),
    "A row spread evenly over n keys has entropy log n: 1.3863 nats means n = 4.",
)


_HEAD_ENTROPY = tr("entropy of every row of every head", "每个头每一行的熵")


@exercise(
    _HEAD_ENTROPY,
    what=tr(
        "a tensor of shape (num_heads, T): the entropy of each row of each head",
        "一个形状为 (num_heads, T) 的张量：每个头每一行的熵",
    ),
)
def check_head_entropy(answer: object, weights: torch.Tensor) -> CheckResult:
    """The entropy (h, T) of every row of ``weights`` (h, T, T)."""
    if isinstance(answer, torch.Tensor) and torch.isnan(answer).any():
        raise ContractError(
            tr(
                "nan: 0 * log(0) is nan in torch, and the masked keys have weight 0. "
                "torch.special.xlogy computes x * log(y) with 0 where x is 0.",
                "得到了 nan。在 torch 里 0 * log(0) 是 nan，而被遮住的键权重是 0。"
                "`torch.special.xlogy` 计算 x * log(y)，在 x 为 0 处给出 0。",
            ),
        )
    expected = -torch.special.xlogy(weights, weights).sum(dim=-1)  # (h, T)
    return tensor_answer(
        _HEAD_ENTROPY,
        answer,
        expected,
        what=tr("a tensor of entropies", "一个由熵组成的张量"),
        hint=tr(
            "a row's entropy is minus the sum, over its keys, of w log w (natural log, with "
            "0 log 0 counted as 0); one number per row, no mean.",
            "一行的熵是对它的各个键求 w log w 之和再取负（自然对数，0 log 0 记为 0）。"
            "每一行一个数，不求平均。",
        ),
        shapes={
            tuple(expected.shape[:1]): tr(
                "one number per head is the mean that mh.head_entropy gives; the exercise asks "
                "for every row, before any mean: shape (num_heads, T).",
                "每个头一个数，那是 mh.head_entropy 给出的平均值。题目要的是求平均之前的每一行："
                "形状 (num_heads, T)。",
            )
        },
        wrong={
            -expected: tr(
                "the sign: entropy is -sum w log w (>= 0).",
                "注意符号。熵是 -sum w log w，总是 >= 0。",
            ),
            expected / math.log(2): tr(
                "that is log base 2 (bits); the lesson measures entropy in nats, the natural log.",
                "这是以 2 为底的对数（比特）。本课的熵以奈特为单位，用自然对数。",
            ),
        },
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
    entropy = head_entropy(weights)
    sharpest = _tied_with(entropy, entropy.min())  # every head as sharp as the sharpest
    index = _head_index(answer)
    if index is None:
        raise ContractError(
            tr(
                f"expected an int (a head index), got {type(answer).__name__}.",
                f"需要一个整数（头的索引），收到的是 {type(answer).__name__}。",
            ),
        )
    if index in sharpest:
        return ok(
            _SHARPEST_HEAD,
            tr(
                f'correct: head index {index} ("Head {index + 1}" in the plots).',
                f"正确！头的索引是 {index}，也就是图中的“头 {index + 1}”。",
            ),
        )
    if index - 1 in sharpest:
        raise ContractError(
            tr(
                "plots number heads from 1, tensors from 0: subtract one.",
                "图里的头从 1 开始编号，张量的索引从 0 开始，所以要减去 1。",
            ),
        )
    if index in _tied_with(entropy, entropy.max()):
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
    if isinstance(answer, torch.Tensor):  # one element: its value, refused below if not an int
        answer = answer.item() if answer.numel() == 1 and not answer.is_meta else None
    if is_bool(answer) or not isinstance(answer, numbers.Integral):
        return None
    return int(answer)
