"""Checkers for lesson 03, causal attention (因果注意力).

* ``check_local_mask(answer)`` -- a boolean (5, 5) mask for a local window: each token sees only
  itself and the one token just before it.
* ``check_build_causal_weights(fn)`` -- "build it": the learner's ``fn(attn_scores)`` that turns an
  already scaled (..., T, T) score matrix into causal attention weights, run through contract
  tests (shapes, zeros above the diagonal, rows summing to 1, causality, gradients, several sizes
  and batch shapes); the typical mistakes are named in the hint.
* ``check_prediction_changed_weights(prediction, reveal=False)`` -- predict-then-run: how many of
  the 36 causal weights change when the last token's embedding changes?
"""

from __future__ import annotations

import torch

from ..attention.self_attention import SelfAttentionV2
from ..data import book_inputs
from ._common import (
    CheckResult,
    fail,
    missing,
    ok,
    plain_tensor,
    prediction_result,
    whole_number,
)
from ._contract import function_answer

__all__ = [
    "check_build_causal_weights",
    "check_local_mask",
    "check_prediction_changed_weights",
]


def check_local_mask(answer: object) -> CheckResult:
    """(5, 5) bool, True where a token must not look: the future and everything 2+ tokens back."""
    name = "local window mask for T=5"
    ones = torch.ones(5, 5, dtype=torch.bool)
    future = torch.triu(ones, diagonal=1)
    too_old = torch.tril(ones, diagonal=-2)
    expected = future | too_old
    if answer is None:
        return missing(name, "a (5, 5) boolean tensor, True where a token must not look")
    if not isinstance(answer, torch.Tensor):
        return fail(name, f"expected a torch.Tensor, got {type(answer).__name__}.")
    if tuple(answer.shape) != (5, 5):
        return fail(name, f"shape {tuple(answer.shape)} but expected (5, 5).")
    got = answer.detach().cpu()
    if got.dtype != torch.bool:
        if got.is_floating_point() and torch.isinf(got).any():
            return fail(
                name, "that is an additive -inf mask; build the boolean mask (True = hide)."
            )
        if not ((got == 0) | (got == 1)).all():
            return fail(name, "a mask holds only True/False (or 1/0); got other values.")
        got = got.bool()
    if torch.equal(got, expected):
        return ok(name, "correct: each token sees itself and the token before it, nothing else.")
    if torch.equal(got, ~expected):
        return fail(name, "that marks the positions to KEEP; masked_fill needs the ones to HIDE.")
    if torch.equal(got, too_old):
        return fail(name, "the old tokens are hidden, but the future is visible again: hide both.")
    if torch.equal(got, future):
        return fail(name, "that is the plain causal mask: also hide tokens 2 or more steps back.")
    if got.diagonal().any():
        return fail(name, "the diagonal is masked, so a token could not look at itself.")
    return fail(
        name,
        "True above the diagonal (torch.triu(..., diagonal=1)) OR two or more below it "
        "(torch.tril(..., diagonal=-2)); combine them with |.",
    )


def _book_seed789_weights(x: torch.Tensor, causal: bool = True) -> torch.Tensor:
    with torch.random.fork_rng():
        torch.manual_seed(789)
        sa_v2 = SelfAttentionV2(3, 2)
    with torch.no_grad():
        scores = sa_v2.W_query(x) @ sa_v2.W_key(x).T  # (T, T)
    if causal:
        future = torch.triu(torch.ones(len(x), len(x), dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(future, -torch.inf)
    return torch.softmax(scores / 2**0.5, dim=-1)  # (T, T)


def check_prediction_changed_weights(prediction: object, reveal: bool = False) -> CheckResult:
    """How many of the 36 one-step causal weights change when "step" gets a new embedding?"""
    inputs = book_inputs()  # (6, 3)
    changed = inputs.clone()
    changed[5] = torch.tensor([5.0, -3.0, 2.0])
    count = int((_book_seed789_weights(inputs) != _book_seed789_weights(changed)).sum())
    value = whole_number(prediction)
    if value is not None and not 0 <= value <= 36:
        value = None
    return prediction_result(
        "prediction: causal weights that change",
        prediction,
        reveal=reveal,
        what="a whole number from 0 to 36",
        value=value,
        actual=f"{count} of 36",
        correct=value == count,
        explain=(
            "Only the last row may look at 'step', and it looks at every token, so exactly "
            "its 6 weights move; rows 1-5 never see 'step'."
        ),
    )


# -- build it: causal attention weights ----------------------------------------------------------


def _causal_reference(scores: torch.Tensor) -> torch.Tensor:
    T = scores.shape[-1]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=scores.device), diagonal=1)
    return torch.softmax(scores.masked_fill(future, -torch.inf), dim=-1)


def _mistakes(scores: torch.Tensor) -> list[tuple[torch.Tensor, str]]:
    """Outputs of the typical mistakes on ``scores`` (..., T, T), with their hints."""
    T = scores.shape[-1]
    ones = torch.ones(T, T)
    future = torch.triu(ones, diagonal=1).bool()
    full = torch.softmax(scores, dim=-1)
    return [
        (
            full,
            "no mask was applied: masked_fill returns a NEW tensor, use its result before the "
            "softmax (or the in-place masked_fill_ on a copy).",
        ),
        (
            full * torch.tril(ones),
            "masking after the softmax without renormalising: the rows no longer sum to 1. "
            "Either divide each row by its sum, or fill the future with -inf BEFORE the softmax.",
        ),
        (
            torch.softmax(scores.masked_fill(future.T, -torch.inf), dim=-1),
            "the mask is transposed: it hides the past and keeps the future. Hide what is ABOVE "
            "the diagonal: torch.triu(..., diagonal=1).",
        ),
        (
            torch.softmax(scores.masked_fill(future, -torch.inf) / T**0.5, dim=-1),
            "the scores were scaled again: they come in already divided by sqrt(d_k) (and T is "
            "not d_k anyway). Mask and softmax only.",
        ),
        (
            torch.softmax(scores.masked_fill(future, -torch.inf), dim=-2),
            "softmax over dim=-2 normalises columns; each query's row must sum to 1: dim=-1.",
        ),
        (
            torch.softmax(scores.masked_fill(future, 0.0), dim=-1),
            "filling the future with 0 (or any finite number) leaves it a weight > 0, and the more "
            "so the lower the scores: fill it with -torch.inf.",
        ),
    ]


def _cases() -> list[tuple[str, torch.Tensor]]:
    generator = torch.Generator().manual_seed(3)
    inputs = book_inputs()
    with torch.random.fork_rng():
        torch.manual_seed(789)
        sa_v2 = SelfAttentionV2(3, 2)
    with torch.no_grad():
        book = sa_v2.W_query(inputs) @ sa_v2.W_key(inputs).T / 2**0.5  # (6, 6)
    return [
        ("the book's scaled scores (6, 6)", book),
        ("a (4, 4) matrix", torch.randn(4, 4, generator=generator) * 2),
        ("a (1, 1) matrix", torch.randn(1, 1, generator=generator)),
        ("a batch (2, 7, 7)", torch.randn(2, 7, 7, generator=generator) * 3),
        ("heads (2, 3, 5, 5)", torch.randn(2, 3, 5, 5, generator=generator)),
        # Scores far below zero: a finite fill value such as -20 or -100 would let the future in.
        ("a (3, 3) matrix of large negative scores", torch.randn(3, 3, generator=generator) - 500),
    ]


def check_build_causal_weights(fn: object) -> CheckResult:
    """Contract tests for ``fn(attn_scores)`` -> causal attention weights, (..., T, T)."""
    name = "build causal attention weights"
    not_a_function = function_answer(fn, name, "causal_weights", reject_classes=True)
    if not_a_function is not None:
        return not_a_function
    assert callable(fn)
    for label, scores in _cases():
        T = scores.shape[-1]
        given = scores.clone()
        version = given._version
        try:
            got = fn(given)
        except NotImplementedError:
            return fail(name, "the function is not written yet (it raises NotImplementedError).")
        except Exception as error:  # the learner's code may raise anything
            return fail(
                name,
                f"on {label} it raised {type(error).__name__}: {error}. Build the mask from "
                "attn_scores.shape[-1] so that any T and any leading (batch, head) shape works.",
            )
        if given._version != version or not torch.equal(given, scores):
            return fail(
                name,
                "your function changed the scores it was given in place (masked_fill_?): "
                "use the out-of-place masked_fill, which returns a new tensor.",
            )
        if not isinstance(got, torch.Tensor):
            return fail(name, f"it returned {type(got).__name__}, not a tensor.")
        if not plain_tensor(got):
            return fail(name, f"it returned a {type(got).__name__}; return a plain torch.Tensor.")
        if tuple(got.shape) != tuple(scores.shape):
            return fail(
                name, f"on {label} it returned shape {tuple(got.shape)}, not {tuple(scores.shape)}."
            )
        if got.dtype != scores.dtype or got.device != scores.device:
            return fail(
                name,
                f"for {scores.dtype} scores on {scores.device} it returned {got.dtype} on "
                f"{got.device}: the weights keep the scores' dtype and device (no .double(), "
                "no .to(...)).",
            )
        out = got.detach().to(torch.float64)
        if torch.isnan(out).any():
            return fail(
                name,
                f"on {label} the weights contain nan: a row was -inf everywhere. Is the diagonal "
                "masked too? The mask is torch.triu(..., diagonal=1).",
            )
        want = _causal_reference(scores).to(torch.float64)
        if not torch.allclose(out, want, atol=1e-6, rtol=0):
            for output, hint in _mistakes(scores):
                if torch.allclose(out, output.to(torch.float64), atol=1e-6, rtol=0):
                    return fail(name, hint)
            future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
            if T > 1 and out[..., future].abs().max() > 1e-6:
                if scores.max() < -100:
                    return fail(
                        name,
                        f"on {label} the future (above the diagonal) has weight > 0: a finite "
                        "fill value (such as -20 or -1000) is not below scores this negative. "
                        "Fill with -torch.inf.",
                    )
                return fail(name, f"on {label} the future (above the diagonal) has weight > 0.")
            if not torch.allclose(out.sum(dim=-1), torch.ones_like(out.sum(dim=-1)), atol=1e-5):
                return fail(name, f"on {label} the rows do not sum to 1.")
            return fail(
                name,
                f"on {label} the weights differ from softmax(scores.masked_fill(future, -inf)). "
                "future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1).",
            )
        problem = _causality(fn, scores, label)
        if problem:
            return fail(name, problem)
    return ok(
        name,
        "correct: zeros above the diagonal, rows sum to 1, a future score changes nothing, "
        "gradients flow to the past scores only, for T = 1 to 7 and batched (..., T, T) input.",
    )


def _causality(fn: object, scores: torch.Tensor, label: str) -> str:
    """Changing a future score changes nothing; no gradient flows to a future score."""
    T = scores.shape[-1]
    if T < 2:
        return ""
    before = fn(scores.clone()).detach()  # type: ignore[operator]
    changed = scores.clone()
    changed[..., 0, T - 1] += 10.0  # the first query's score of the last key: the future
    after = fn(changed).detach()  # type: ignore[operator]
    if not torch.allclose(before, after, atol=1e-6, rtol=0):
        return f"on {label} changing a future score changed the weights: the future leaks in."
    leaf = scores.clone().requires_grad_(True)
    weights = fn(leaf)  # type: ignore[operator]
    if not weights.requires_grad:
        return "no gradient reaches the scores: do not detach them or use torch.no_grad()."
    weights_grad = torch.rand(weights.shape, generator=torch.Generator().manual_seed(0))
    (weights * weights_grad).sum().backward()
    grad = leaf.grad
    if grad is None:
        return "no gradient reaches the scores: do not detach them or use torch.no_grad()."
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    if not torch.isfinite(grad).all():
        return f"on {label} the gradient of the scores is not finite."
    if grad[..., future].abs().max() > 1e-6:
        return f"on {label} gradient flows into future scores: they must not influence anything."
    if grad[..., ~future].abs().sum() == 0:
        return f"on {label} no gradient reaches the past scores."
    return ""
