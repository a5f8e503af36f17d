"""Checkers for lesson 01, simplified self-attention (简化的自注意力).

* ``check_context_vector_5(answer)`` -- the context vector z(5) of the token "one", shape (3,).
* ``check_stable_softmax(answer)`` -- a softmax function that survives inputs like [1000., 1001.].
* ``check_row_sums(answer)`` -- the six row sums of the (6, 6) attention-weight matrix.
"""

from __future__ import annotations

import torch

from ..data import book_inputs
from ._common import CheckResult, fail, missing, ok, tensor_answer

__all__ = ["check_context_vector_5", "check_row_sums", "check_stable_softmax"]


def _close(a: torch.Tensor, b: torch.Tensor, atol: float = 1e-4) -> bool:
    a = a.detach().to(torch.float64).cpu()
    b = b.detach().to(torch.float64).cpu()
    return a.shape == b.shape and torch.allclose(a, b, atol=atol, rtol=0)


def check_context_vector_5(answer: object) -> CheckResult:
    """z(5): the softmax-weighted sum of all inputs, with x(5) ("one", ``inputs[4]``) as query."""
    name = "context vector z(5) of 'one'"
    inputs = book_inputs()  # (6, 3)
    scores_5 = inputs @ inputs[4]  # (6,)
    expected = torch.softmax(scores_5, dim=0) @ inputs  # (3,)

    def hint(got: torch.Tensor) -> str:
        all_context = torch.softmax(inputs @ inputs.T, dim=-1) @ inputs  # (6, 3)
        for row, word in enumerate(["Your", "journey", "starts", "with", "one", "step"]):
            if row != 4 and _close(got, all_context[row]):
                return (
                    f"that is the context vector of '{word}' (row {row}); 'one' is x(5), "
                    "which is inputs[4] (Python counts from 0)."
                )
        if _close(got, (scores_5 / scores_5.sum()) @ inputs):
            return "you used sum normalization; use torch.softmax(scores, dim=0) for the weights."
        if _close(got, scores_5 @ inputs):
            return "the scores are not normalized yet: apply torch.softmax before the weighted sum."
        if _close(got, inputs[4]):
            return "that is the embedding x(5) itself; z(5) mixes all six inputs by their weights."
        return (
            "scores = inputs @ inputs[4]; weights = torch.softmax(scores, dim=0); "
            "z5 = weights @ inputs."
        )

    if isinstance(answer, torch.Tensor) and tuple(answer.shape) == (6, 3):
        return fail(name, "that is the whole (6, 3) context matrix: take its row 4 (the 5th).")
    return tensor_answer(name, answer, expected, what="a (3,) tensor", hint=hint)


_SOFTMAX_CASES = (
    ("the journey scores", [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865]),
    ("[1000., 1001.]", [1000.0, 1001.0]),
    ("[-1000., -1001.]", [-1000.0, -1001.0]),
    ("the journey scores * 100", [95.44, 149.50, 147.54, 84.34, 70.70, 108.65]),
    # A wide range catches a shift by anything but the maximum (min, mean, first element):
    # exp(100) overflows float32.
    ("[0., 100.]", [0.0, 100.0]),
    ("[-1000., 0., 1000.]", [-1000.0, 0.0, 1000.0]),
)


def check_stable_softmax(answer: object) -> CheckResult:
    """A function ``f(x)`` (x a 1-D float32 tensor) that returns softmax(x) without overflow."""
    name = "numerically stable softmax"
    if answer is None:
        return missing(name, "your function (write `answer = softmax_stable`, no parentheses)")
    if isinstance(answer, torch.Tensor) or not callable(answer):
        return fail(
            name,
            f"expected a function, got {type(answer).__name__}: write `answer = softmax_stable` "
            "(the function itself, not a call).",
        )
    for label, values in _SOFTMAX_CASES:
        x = torch.tensor(values, dtype=torch.float32)
        expected = torch.softmax(x, dim=0)
        try:
            got = answer(x.clone())
        except Exception as error:  # the learner's code may raise anything
            return fail(name, f"your function raised {type(error).__name__}: {error} on {label}.")
        if not isinstance(got, torch.Tensor):
            return fail(name, f"your function returned {type(got).__name__}, not a tensor.")
        if tuple(got.shape) != tuple(x.shape):
            return fail(name, f"on {label} it returned shape {tuple(got.shape)}, not {x.shape}.")
        if not torch.isfinite(got).all():
            return fail(
                name,
                f"on {label} it returned {got.tolist()}: exp overflowed (inf / inf = nan). "
                "Subtract x.max() from x before torch.exp.",
            )
        if not _close(got, expected, atol=1e-6):
            return fail(
                name,
                f"on {label} it returned {got.tolist()}, expected {expected.tolist()}: "
                "return torch.exp(x - x.max()) / torch.exp(x - x.max()).sum().",
            )
    return ok(name, "correct: finite and equal to torch.softmax on small and huge inputs.")


def check_row_sums(answer: object) -> CheckResult:
    """The row sums of the (6, 6) simplified attention weights: six ones."""
    name = "row sums of the attention weights"
    inputs = book_inputs()
    attn_weights = torch.softmax(inputs @ inputs.T, dim=-1)  # (6, 6)

    def hint(got: torch.Tensor) -> str:
        if _close(got, attn_weights.sum(dim=0)):
            return "you summed each column (dim=0); sum each row with .sum(dim=-1)."
        if _close(got, (inputs @ inputs.T).sum(dim=-1)):
            return "those are the sums of the raw scores; sum the softmax weights instead."
        return "attn_weights.sum(dim=-1) -- every row of the softmax weights should sum to 1."

    return tensor_answer(name, answer, attn_weights.sum(dim=-1), what="a (6,) tensor", hint=hint)
