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
from ._common import CheckResult, fail, missing, number, ok, prediction_before_run, tensor_answer

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


def check_survivor_prediction(prediction: object) -> CheckResult:
    """Prediction: the survivors of ``nn.Dropout(0.5)`` on a 6x6 matrix of ones equal 2."""
    value = number(prediction)
    return prediction_before_run(
        "prediction: the value of a surviving entry",
        prediction,
        value=value,
        guess="a number",
        kind="a number",
        correct=value is not None and math.isclose(value, 2.0, abs_tol=1e-4),
        right="right -- the next cell shows it; section 2 explains why.",
        wrong=(
            "not what happens. Run the next cell and look at the entries that are not 0; then "
            "think about what happens to the average of the matrix when half of it is zeroed."
        ),
    )


def check_dropout_scale(answer: object) -> CheckResult:
    """With p = 0.2, survivors are multiplied by 1 / (1 - 0.2) = 1.25."""
    name = "dropout scale for p=0.2"
    if answer is None:
        return missing(name, "the number a surviving entry is multiplied by")
    value = number(answer)
    if value is None:
        return fail(name, f"expected a number, got {type(answer).__name__}.")
    if math.isclose(value, 1.25, abs_tol=1e-4):
        return ok(name, "correct: 1 / (1 - 0.2) = 1.25, so the expected value stays the same.")
    if math.isclose(value, 0.8, abs_tol=1e-4):
        return fail(name, "0.8 is the probability to survive, 1 - p. Survivors are DIVIDED by it.")
    if math.isclose(value, 5.0, abs_tol=1e-4):
        return fail(name, "that is 1 / p. The factor is 1 / (1 - p): divide by what survives.")
    if math.isclose(value, 2.0, abs_tol=1e-4):
        return fail(name, "2 is the factor for p = 0.5 (the book's example). Here p = 0.2.")
    if math.isclose(value, 0.2, abs_tol=1e-4):
        return fail(name, "0.2 is p itself, the fraction dropped. What keeps the mean at 1?")
    return fail(name, "a fraction 1 - p survives; scale it by 1 / (1 - p) to keep the mean.")


def check_zero_fraction(answer: object) -> CheckResult:
    """Expected zeros in a 6x6 causal weight matrix after dropout p = 0.5: (15 + 21 * 0.5) / 36."""
    name = "expected fraction of zeros"
    expected = (15 + 21 * 0.5) / 36  # 0.7083
    if answer is None:
        return missing(name, "a fraction between 0 and 1")
    value = number(answer)
    if value is None:
        return fail(name, f"expected a number, got {type(answer).__name__}.")
    if math.isclose(value, expected, abs_tol=1e-3):
        return ok(name, f"correct: 15 masked + 21 * 0.5 dropped = 25.5 of 36 = {expected:.4f}.")
    if math.isclose(value, 25.5, abs_tol=1e-3):
        return fail(name, "25.5 is the expected COUNT of zeros; divide by the 36 entries.")
    if not 0.0 <= value <= 1.0:
        return fail(name, "a fraction lies between 0 and 1: zeros divided by the 36 entries.")
    if math.isclose(value, 0.5, abs_tol=1e-3):
        return fail(
            name,
            "dropout zeroes half of the entries, but 15 entries above the diagonal are already 0 "
            "(the causal mask) and stay 0.",
        )
    if math.isclose(value, 15 / 36, abs_tol=1e-3):
        return fail(
            name, "that counts only the 15 masked entries; dropout zeroes half of the 21 others."
        )
    if math.isclose(value, 10.5 / 36, abs_tol=1e-3):
        return fail(name, "that counts only the dropped entries; add the 15 masked ones.")
    return fail(
        name, "count the 15 masked zeros, then half of the 21 entries on/below the diagonal."
    )


def check_manual_dropout(answer: object) -> CheckResult:
    """The seed-789 causal weights, kept where ``exercise_keep_pattern()`` is True, / (1 - 0.25)."""
    name = "dropout by hand, p=0.25"
    weights = reference("seed789_masked_renormalized")  # (6, 6)
    keep = exercise_keep_pattern()  # (6, 6) bool
    expected = torch.where(keep, weights / (1 - EXERCISE_P), torch.zeros(()))  # (6, 6)

    def hint(got: torch.Tensor) -> str:
        got = got.detach().to(torch.float32).cpu()
        if torch.allclose(got, weights * keep, atol=1e-4):
            return "the right entries survive, but scale them by 1 / (1 - p)."
        if torch.allclose(got, weights * keep * 2, atol=1e-4):
            return "x2 is the factor for p = 0.5; here p = 0.25."
        if torch.allclose(got, weights * keep / EXERCISE_P, atol=1e-4):
            return "that divides by p; survivors are divided by 1 - p, the fraction that survives."
        if torch.allclose(got, weights * ~keep / (1 - EXERCISE_P), atol=1e-4):
            return "the mask is inverted: keep the entries where keep_ex is True."
        if torch.allclose(got, weights, atol=1e-4):
            return "nothing was dropped: multiply by the keep pattern keep_ex."
        return "multiply the weights by the keep pattern, then by 1 / (1 - p)."

    if answer is None:
        return missing(name, "the (6, 6) dropped weights")
    return tensor_answer(name, answer, expected, what="the (6, 6) dropped weights", hint=hint)
