"""Checkers for lesson 11: padded batches and key padding masks (填充掩码).

* ``check_left_padding_mask(answer)`` -- the bool (3, 5) key padding mask, True at padding, of
  three sequences of lengths 3, 1 and 4 left-padded to 5 tokens.
* ``check_masked_softmax(answer)`` -- a function ``masked_softmax(scores, hidden)``: softmax over
  the visible positions of each row, exactly 0 on hidden ones, and a row of zeros (no NaN, not
  even in the gradient) when every position of a row is hidden.
"""

from __future__ import annotations

import torch

from ._common import CheckResult, fail, mask_answer, ok, plain_tensor
from ._contract import function_answer

__all__ = ["check_left_padding_mask", "check_masked_softmax"]

_LENGTHS, _T = torch.tensor([3, 1, 4]), 5
_LEFT = torch.arange(_T) < (_T - _LENGTHS)[:, None]  # (3, 5): pads first, then the real tokens
_RIGHT = torch.arange(_T) >= _LENGTHS[:, None]  # (3, 5): the real tokens first, then pads


def check_left_padding_mask(answer: object) -> CheckResult:
    """``answer``: bool (3, 5), True at the padding positions of lengths 3, 1, 4 left-padded."""
    name = "left-padding mask"
    got = mask_answer(
        name,
        answer,
        tuple(_LEFT.shape),
        what="a bool (3, 5) tensor, True at padding positions",
        shape_hint="one row per sequence, one column per position.",
        dtype_hint=(
            ": compare positions with lengths (the comparison gives bools), or call .bool()."
        ),
    )
    if isinstance(got, CheckResult):
        return got
    answer = got
    if torch.equal(answer, _LEFT):
        return ok(name, "correct: every row has its pads first and its real tokens at the end.")
    if torch.equal(answer, ~_LEFT):
        return fail(
            name,
            "inverted: here True marks *padding* (torch.nn.MultiheadAttention's convention); "
            "True for real tokens is what a Hugging Face attention_mask uses.",
        )
    if torch.equal(answer, _RIGHT):
        return fail(name, "that is right padding: with left padding the pads come first.")
    if torch.equal(answer.sum(dim=1), _T - _LENGTHS):
        return fail(
            name,
            "the right number of pads per row, but not at the right places: left padding puts "
            "them at positions 0 .. T - length - 1.",
        )
    return fail(
        name,
        "row i has T - lengths[i] pads at the start: compare torch.arange(T) with "
        "(T - lengths)[:, None].",
    )


def _reference_case() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Scores (2, 4, 4), hidden (2, 4, 4) = causal mask | left padding, and the expected weights.

    Sequence 0 has 2 real tokens after 2 pads, so its rows 0 and 1 see no key at all.
    """
    gen = torch.Generator().manual_seed(11)
    scores = 3 * torch.randn(2, 4, 4, generator=gen)  # (b, T_q, T_k)
    causal = torch.ones(4, 4, dtype=torch.bool).triu(1)  # (T, T)
    pad = torch.tensor([[True, True, False, False], [False, False, False, False]])  # (b, T)
    hidden = causal | pad[:, None, :]  # (b, T_q, T_k)
    expected = torch.zeros(2, 4, 4)
    for b in range(2):
        for i in range(4):
            seen = [j for j in range(4) if not hidden[b, i, j]]
            if seen:
                row = scores[b, i, seen].double()
                expected[b, i, seen] = (
                    torch.exp(row - row.max()) / torch.exp(row - row.max()).sum()
                ).float()
    return scores, hidden, expected


def _call(fn: object, scores: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor | str:
    """Run the learner's function; return its tensor, or a message saying what went wrong."""
    try:
        got = fn(scores, hidden.clone())  # type: ignore[operator]
    except Exception as error:  # the learner's code may raise anything
        return f"your function raised {type(error).__name__}: {error}."
    if not isinstance(got, torch.Tensor):
        return f"your function returned {type(got).__name__}, not a tensor of weights."
    if not plain_tensor(got):
        return f"your function returned a {type(got).__name__}; return a plain torch.Tensor."
    if tuple(got.shape) != tuple(scores.shape):
        return f"it returned shape {tuple(got.shape)}, expected {tuple(scores.shape)}."
    return got


def check_masked_softmax(answer: object) -> CheckResult:
    """``answer``: a function ``f(scores, hidden)`` -> weights of the scores' shape.

    ``hidden`` is bool, the scores' shape, True where attention is forbidden. Correct: softmax
    over the visible positions of each row, 0 on hidden ones, all zeros for a fully hidden row;
    finite also for huge scores, and finite gradients.
    """
    name = "masked softmax without NaN"
    not_a_function = function_answer(answer, name, "masked_softmax")
    if not_a_function is not None:
        return not_a_function
    scores, hidden, expected = _reference_case()
    got = _call(answer, scores.clone(), hidden)
    if isinstance(got, str):
        return fail(name, got)
    got = got.detach().float().cpu()
    empty = hidden.all(dim=-1)  # (b, T_q): rows with no visible key
    if torch.isnan(got).any():
        return fail(
            name,
            "NaN in the output: a row whose positions are all hidden is softmax([-inf, ..., -inf]) "
            "= 0 / 0. Find those rows (hidden.all(dim=-1)) and keep them out of the -inf fill.",
        )
    if not torch.isfinite(got).all():
        return fail(name, "inf in the output: subtract each row's maximum before exp.")
    if got[hidden].abs().max() > 0:
        if torch.allclose(got[empty], torch.full_like(got[empty], 0.25)):
            return fail(
                name,
                "a fully hidden row came out uniform (1/4 each): a large negative fill such as "
                "-1e9 gives every hidden position the same weight. Those rows must be all zeros.",
            )
        return fail(name, "hidden positions must get weight exactly 0.")
    if not torch.allclose(got, expected, atol=1e-5, rtol=0):
        sums = got.sum(dim=-1)
        if not torch.allclose(sums[~empty], torch.ones(int((~empty).sum())), atol=1e-4):
            return fail(
                name,
                "rows do not sum to 1 over their visible positions: zeroing weights *after* a "
                "plain softmax does not renormalise. Fill hidden scores with -inf first.",
            )
        return fail(name, "the visible weights differ from a softmax over the visible scores.")
    big = _call(answer, 1000 * scores, hidden)
    if isinstance(big, str):
        return fail(name, f"with scores x 1000: {big}")
    if not torch.isfinite(big).all():
        return fail(name, "scores x 1000 overflow: subtract each row's maximum before exp.")
    leaf = scores.clone().requires_grad_(True)
    try:
        out = answer(leaf, hidden.clone())  # type: ignore[operator]
        (out * torch.arange(16.0).view(1, 4, 4)).sum().backward()
    except Exception as error:  # the learner's code may not be differentiable
        return fail(name, f"the backward pass raised {type(error).__name__}: {error}.")
    if leaf.grad is None or not torch.isfinite(leaf.grad).all():
        return fail(
            name,
            "the output is right but the gradient is NaN: a 0 / 0 computed in the forward pass "
            "and replaced afterwards (nan_to_num, torch.where) still poisons the backward pass. "
            "Never divide by the sum of an empty row: leave such rows unmasked, then zero them.",
        )
    return ok(name, "correct: softmax over visible keys, zero rows for empty ones, finite grads.")
