"""Checkers for lesson 03, causal attention (因果注意力).

* ``check_causal_mask_4(answer)`` -- the boolean (4, 4) causal mask, True where a token must not
  look (the future, above the diagonal).
* ``check_one_step_mask(answer, scores)`` -- causal attention weights of a given (T, T) score
  matrix with the one-step method: ``masked_fill`` with ``-inf``, then softmax.
"""

from __future__ import annotations

import torch

from ._common import CheckResult, fail, missing, ok

__all__ = ["check_causal_mask_4", "check_one_step_mask"]


def check_causal_mask_4(answer: object) -> CheckResult:
    """A (4, 4) bool tensor with True strictly above the diagonal (0/1 numbers are accepted)."""
    name = "causal mask for T=4"
    ones = torch.ones(4, 4)
    expected = torch.triu(ones, diagonal=1).bool()
    if answer is None:
        return missing(name, "a (4, 4) boolean tensor, True where a token must not look")
    if not isinstance(answer, torch.Tensor):
        return fail(name, f"expected a torch.Tensor, got {type(answer).__name__}.")
    if tuple(answer.shape) != (4, 4):
        return fail(name, f"shape {tuple(answer.shape)} but expected (4, 4): use torch.ones(4, 4).")
    got = answer.detach().cpu()
    if got.dtype != torch.bool:
        if got.is_floating_point() and torch.isinf(got).any():
            return fail(
                name,
                "that is an additive mask (-inf and 0); here we want the boolean mask that "
                "masked_fill takes: torch.triu(torch.ones(4, 4), diagonal=1).bool().",
            )
        if not ((got == 0) | (got == 1)).all():
            return fail(name, "a mask holds only True/False (or 1/0); got other values.")
        got = got.bool()
    if torch.equal(got, expected):
        return ok(name, "correct: True above the diagonal, where the future is.")
    if torch.equal(got, torch.tril(ones).bool()):
        return fail(
            name,
            "that marks the positions to KEEP (torch.tril). masked_fill needs the ones to HIDE: "
            "torch.triu(torch.ones(4, 4), diagonal=1).bool().",
        )
    if torch.equal(got, torch.triu(ones).bool()):
        return fail(
            name,
            "the diagonal is masked too, so a token could not look at itself (and row 0 would be "
            "all -inf, giving nan): use diagonal=1.",
        )
    return fail(name, "True strictly above the diagonal: torch.triu(torch.ones(4, 4), diagonal=1).")


def check_one_step_mask(answer: object, scores: torch.Tensor) -> CheckResult:
    """Row-wise softmax of ``scores`` with the future (above the diagonal) set to -inf first."""
    name = "one-step causal mask"
    if (
        not isinstance(scores, torch.Tensor)
        or scores.dim() != 2
        or scores.shape[0] != scores.shape[1]
    ):
        return fail(name, "the second argument must be the (T, T) score matrix of the exercise.")
    T = scores.shape[0]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # (T, T)
    expected = torch.softmax(scores.masked_fill(future, -torch.inf), dim=-1)  # (T, T)
    if answer is None:
        return missing(name, f"the ({T}, {T}) tensor of causal attention weights")
    if not isinstance(answer, torch.Tensor):
        return fail(name, f"expected a torch.Tensor, got {type(answer).__name__}.")
    if tuple(answer.shape) != (T, T):
        return fail(name, f"shape {tuple(answer.shape)} but expected {(T, T)}.")
    if not answer.is_floating_point():
        return fail(name, f"expected a floating-point tensor, got dtype {answer.dtype}.")
    got = answer.detach().to(torch.float64).cpu()
    if torch.isnan(got).any():
        return fail(
            name,
            "nan appears: a row was -inf everywhere. Did you mask the diagonal too? Use "
            "torch.triu(..., diagonal=1).",
        )
    if torch.allclose(got, expected.to(torch.float64), atol=1e-4, rtol=0):
        return ok(name, "correct: zeros above the diagonal and every row sums to 1.")
    if got[future].abs().max() > 1e-6:
        if torch.allclose(got, torch.softmax(scores, dim=-1).to(torch.float64), atol=1e-4, rtol=0):
            return fail(
                name,
                "no mask was applied. masked_fill returns a NEW tensor: use its result "
                "(or the in-place masked_fill_) before the softmax.",
            )
        return fail(name, "the future (above the diagonal) must get weight 0: fill it with -inf.")
    if not torch.allclose(got.sum(dim=-1), torch.ones(T, dtype=torch.float64), atol=1e-4):
        return fail(name, "the rows do not sum to 1: take the softmax over dim=-1 (each row).")
    return fail(
        name,
        "scores.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1), "
        "-torch.inf), then torch.softmax(..., dim=-1). Do not scale here: the scores are given.",
    )
