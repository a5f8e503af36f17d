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

from ..inspection import head_entropy
from ._common import CheckResult, fail, missing, number, ok, tensor_answer

__all__ = ["ROW", "check_head_entropy", "check_row_entropy", "check_sharpest_head"]

ROW = (0.5, 0.25, 0.25, 0.0)  # the row of exercise 1


def check_row_entropy(answer: object) -> CheckResult:
    """-sum w log w of [0.5, 0.25, 0.25, 0] in nats = 1.5 log 2 = 1.0397."""
    name = "entropy of one row"
    expected = -sum(w * math.log(w) for w in ROW if w > 0)
    if answer is None:
        return missing(name, "a number: -(sum of w * log(w)) over the row, in nats")
    if isinstance(answer, (float, torch.Tensor)) and bool(
        torch.isnan(torch.as_tensor(answer)).any()
    ):
        return fail(
            name, "nan: 0 * log(0) must count as 0; skip the zeros or use torch.special.xlogy."
        )
    value = number(answer)
    if value is None:
        return fail(name, f"expected a number (float or 0-d tensor), got {type(answer).__name__}.")
    if abs(value - expected) < 1e-3:
        return ok(name, f"correct: {expected:.4f} nats (= 1.5 * log 2).")
    if abs(value - expected / math.log(2)) < 1e-3:
        return fail(name, "that is in bits (log base 2); use the natural log, torch.log.")
    if abs(value + expected) < 1e-3:
        return fail(name, "the sign: entropy is MINUS the sum of w * log(w), so it is >= 0.")
    return fail(
        name,
        "sum w * log(w) over the non-zero weights, then negate; 0 * log 0 counts as 0 "
        "(torch.special.xlogy(w, w) does that).",
    )


def check_head_entropy(answer: object, weights: torch.Tensor) -> CheckResult:
    """Per-head mean row entropy (h,) of ``weights`` (h, T, T)."""
    name = "entropy of every head"
    if answer is None:
        return missing(name, "a tensor of shape (num_heads,): each head's mean row entropy")
    if isinstance(answer, torch.Tensor) and torch.isnan(answer).any():
        return fail(
            name,
            "nan: 0 * log(0) is nan in torch. Use torch.special.xlogy(w, w), which gives 0 there.",
        )
    expected = head_entropy(weights)  # (h,)
    if (
        isinstance(answer, torch.Tensor)
        and answer.shape == expected.shape
        and answer.is_floating_point()
        and torch.allclose(answer.double(), -expected.double(), atol=1e-4)
        and bool(expected.abs().max() > 1e-4)
    ):
        return fail(name, "the sign: entropy is -sum w log w (>= 0).")
    if isinstance(answer, torch.Tensor) and answer.shape == weights.shape[:2]:
        return fail(
            name,
            f"shape {tuple(answer.shape)} is one entropy per row; average the rows of each "
            "head: .mean(dim=-1).",
        )
    return tensor_answer(
        name,
        answer,
        expected,
        what="a (num_heads,) tensor",
        hint="row entropy = -(w * log w).sum(dim=-1) with 0 log 0 = 0, then .mean(dim=-1).",
    )


def check_sharpest_head(answer: object, weights: torch.Tensor) -> CheckResult:
    """Index (0-based) of the head of ``weights`` (h, T, T) with the lowest entropy."""
    name = "the sharpest head"
    entropy = head_entropy(weights)
    expected = int(entropy.argmin())
    if answer is None:
        return missing(name, "an int: the 0-based index of the head with the LOWEST entropy")
    if isinstance(answer, torch.Tensor) and answer.numel() == 1 and not answer.is_floating_point():
        answer = int(answer.item())
    if isinstance(answer, numbers.Integral) and type(answer).__name__ != "bool_":
        answer = answer if isinstance(answer, bool) else int(answer)  # numpy ints count
    if isinstance(answer, bool) or not isinstance(answer, int):
        return fail(name, f"expected an int (a head index), got {type(answer).__name__}.")
    if answer == expected:
        return ok(name, f'correct: head index {expected} ("Head {expected + 1}" in the plots).')
    if answer == expected + 1:
        return fail(name, "plots number heads from 1, tensors from 0: subtract one.")
    if answer == int(entropy.argmax()):
        return fail(name, "that is the most spread-out head; the sharpest has the LOWEST entropy.")
    return fail(name, "compute the entropy of every head and take .argmin().")
