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

from ..training import IGNORE_INDEX, offset_attention
from ._common import CheckResult, fail, missing, number, ok, tensor_answer

__all__ = ["check_initial_loss", "check_offset_attention", "check_shift_targets"]


def check_initial_loss(answer: object, vocab_size: int = 64) -> CheckResult:
    """log(vocab_size): the loss when every token gets probability 1 / vocab_size.

    Lesson 08 uses it twice: for a prediction before the first run (64 tokens, log 64 = 4.1589)
    and for the exercise (GPT-2's 50257 tokens).
    """
    name = f"loss of a uniform guess over {vocab_size} tokens"
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 2:
        return fail(name, f"vocab_size must be an int >= 2, got {vocab_size!r}.")
    expected = math.log(vocab_size)
    if answer is None:
        return missing(
            name,
            f"a number: the cross-entropy when each of {vocab_size} tokens has p = 1/{vocab_size}",
        )
    value = number(answer)
    if value is None:
        return fail(name, f"expected a number, got {type(answer).__name__}.")
    if abs(value - expected) < 1e-3:
        return ok(name, f"correct: log({vocab_size}) = {expected:.4f} nats.")
    if abs(value - math.log2(vocab_size)) < 1e-3:
        return fail(name, f"{value:.4g} is log base 2 (bits); cross_entropy uses the natural log.")
    if abs(value - 1 / vocab_size) < 1e-4 or abs(value + expected) < 1e-3:
        return fail(name, "the loss is MINUS the log of the probability of the right token.")
    if vocab_size != 64 and abs(value - math.log(64)) < 1e-3:
        return fail(name, f"that is log(64), the lesson's vocabulary; this one has {vocab_size}.")
    return fail(
        name,
        f"cross-entropy = -log(p of the right token), and p = 1/{vocab_size} for every token.",
    )


def _expected_targets(ids: torch.Tensor, k: int) -> torch.Tensor:
    targets = torch.full_like(ids, IGNORE_INDEX)  # (b, T)
    targets[:, k:] = ids[:, :-k]
    return targets


def check_shift_targets(answer: object, ids: torch.Tensor, k: int) -> CheckResult:
    """``target[:, t] = ids[:, t - k]`` for t >= k, -100 before."""
    name = f"shift-task targets (k={k})"
    expected = _expected_targets(ids, k)
    if answer is None:
        return missing(name, f"a {tuple(ids.shape)} integer tensor of targets")
    if not isinstance(answer, torch.Tensor):
        return fail(name, f"expected a torch.Tensor, got {type(answer).__name__}.")
    if tuple(answer.shape) != tuple(ids.shape):
        return fail(name, f"shape {tuple(answer.shape)} but expected {tuple(ids.shape)}, like ids.")
    if answer.is_floating_point() or answer.dtype == torch.bool:
        return fail(name, f"targets are token ids: use an integer dtype, got {answer.dtype}.")
    if torch.equal(answer, expected):
        return ok(name, "correct: each position's target is the token k places back.")
    if torch.equal(answer[:, k:], expected[:, k:]):
        return fail(name, "the first k positions have no token k back: set them to -100.")
    wrong_way = torch.full_like(ids, IGNORE_INDEX)
    wrong_way[:, :-k] = ids[:, k:]
    if torch.equal(answer, wrong_way):
        return fail(name, "that copies from the FUTURE (t + k); we want the past: ids[:, :-k].")
    return fail(name, "start from torch.full_like(ids, -100), then targets[:, k:] = ids[:, :-k].")


def check_offset_attention(answer: object, weights: torch.Tensor, k: int) -> CheckResult:
    """Mean over queries t >= k of ``weights[h, t, t - k]``, one number per head."""
    name = f"attention on the token {k} back"
    expected = offset_attention(weights, k)  # (h,)
    if (
        isinstance(answer, torch.Tensor)
        and answer.is_floating_point()
        and answer.shape == expected.shape
        and torch.allclose(answer, offset_attention(weights.transpose(-2, -1), k), atol=1e-4)
        and not torch.allclose(answer, expected, atol=1e-4)
    ):
        return fail(name, "offset=+k is above the diagonal (the future): use offset=-k.")
    return tensor_answer(
        name,
        answer,
        expected,
        what="a (num_heads,) tensor",
        hint=(
            "torch.diagonal(weights, offset=-k, dim1=-2, dim2=-1) gives (h, T - k); "
            "average it over the last dimension."
        ),
    )
