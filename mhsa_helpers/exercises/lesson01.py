"""Checkers for lesson 01, simplified self-attention (简化的自注意力).

* ``check_context_vector_new_token(answer)`` -- the context vector of a seventh token, "forward",
  appended to the book's six (its embedding is ``NEW_TOKEN_EMBEDDING``), over all seven tokens.
* ``check_softmax_rows(answer)`` -- a row-wise softmax function for (rows, cols) matrices that
  stays finite when one row is huge and another very negative.
* ``check_attention_received(answer)`` -- the column sums of the (6, 6) weights: how much
  attention each token receives in total.
* ``check_prediction_self_match(prediction, reveal=False)`` -- a predict-then-run moment: for how
  many of the six tokens is the largest score the one with itself?
"""

from __future__ import annotations

import torch

from ..data import book_inputs
from ._common import (
    CheckResult,
    fail,
    ok,
    plain_tensor,
    prediction_result,
    tensor_answer,
    whole_number,
)
from ._contract import function_answer

__all__ = [
    "NEW_TOKEN_EMBEDDING",
    "check_attention_received",
    "check_context_vector_new_token",
    "check_prediction_self_match",
    "check_softmax_rows",
]

#: The made-up 3-D embedding of "forward", the seventh token of lesson 01's exercise.
NEW_TOKEN_EMBEDDING = (0.60, 0.40, 0.20)


def _close(a: torch.Tensor, b: torch.Tensor, atol: float = 1e-4) -> bool:
    a = a.detach().to(torch.float64).cpu()
    b = b.detach().to(torch.float64).cpu()
    return a.shape == b.shape and torch.allclose(a, b, atol=atol, rtol=0)


def check_context_vector_new_token(answer: object) -> CheckResult:
    """The context vector of "forward" (``NEW_TOKEN_EMBEDDING``) over all seven tokens, (3,)."""
    name = "context vector of the new token 'forward'"
    inputs = book_inputs()  # (6, 3)
    new = torch.tensor(NEW_TOKEN_EMBEDDING)  # (3,)
    seven = torch.cat([inputs, new.unsqueeze(0)])  # (7, 3)
    scores = seven @ new  # (7,)
    expected = torch.softmax(scores, dim=0) @ seven  # (3,)

    def hint(got: torch.Tensor) -> str:
        six_scores = inputs @ new  # (6,)
        if _close(got, torch.softmax(six_scores, dim=0) @ inputs):
            return (
                "you mixed only the book's six tokens: 'forward' is part of the sentence too, "
                "so stack it under them first (torch.cat) and let it attend to all seven."
            )
        if _close(got, (scores / scores.sum()) @ seven):
            return "you used sum normalization; use torch.softmax(scores, dim=0) for the weights."
        if _close(got, scores @ seven):
            return "the scores are not normalized yet: apply torch.softmax before the weighted sum."
        if _close(got, new):
            return "that is the embedding of 'forward' itself; its context vector mixes all seven."
        return (
            "stack the seven embeddings (7, 3), score them against 'forward', softmax the "
            "seven scores, then take the weighted sum of the seven embeddings."
        )

    if isinstance(answer, torch.Tensor) and tuple(answer.shape) == (7, 3):
        return fail(name, "that is the whole (7, 3) context matrix: take the row of 'forward'.")
    return tensor_answer(name, answer, expected, what="a (3,) tensor", hint=hint)


_ROWS_CASES = (
    ("the journey scores (6, 6)", (book_inputs() @ book_inputs().T).tolist()),
    ("a (2, 3) matrix of small scores", [[0.5, -1.0, 2.0], [1.5, 0.0, 0.25]]),
    ("a matrix with a huge row", [[1000.0, 1001.0, 999.0], [0.1, 0.2, 0.3]]),
    ("rows far apart", [[1000.0, 1001.0], [-1000.0, -1001.0]]),
)


def check_softmax_rows(answer: object) -> CheckResult:
    """A function ``f(x)`` for a 2-D float32 ``x``: softmax of every row, finite on any scale."""
    name = "row-wise stable softmax"
    not_a_function = function_answer(answer, name, "softmax_rows")
    if not_a_function is not None:
        return not_a_function
    assert callable(answer)
    for label, values in _ROWS_CASES:
        x = torch.tensor(values, dtype=torch.float32)
        expected = torch.softmax(x, dim=-1)
        try:
            got = answer(x.clone())
        except Exception as error:  # the learner's code may raise anything
            if "size of tensor" in str(error) or "must match" in str(error):
                return fail(
                    name,
                    f"on {label} it raised {type(error).__name__}: {error}. x.max(dim=-1) drops "
                    "the row dimension; keep it with keepdim=True so that it broadcasts per row.",
                )
            return fail(name, f"your function raised {type(error).__name__}: {error} on {label}.")
        if not isinstance(got, torch.Tensor):
            return fail(name, f"your function returned {type(got).__name__}, not a tensor.")
        if not plain_tensor(got):
            return fail(
                name, f"your function returned a {type(got).__name__}; return a plain torch.Tensor."
            )
        if tuple(got.shape) != tuple(x.shape):
            return fail(
                name,
                f"on {label} it returned shape {tuple(got.shape)}, not {tuple(x.shape)}: "
                "keep one weight per score (keepdim=True on the row max and the row sum).",
            )
        if not torch.isfinite(got).all():
            shift = x - x.max()
            one_max = torch.exp(shift) / torch.exp(shift).sum(dim=-1, keepdim=True)
            naive = torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)
            overflow = torch.isnan(naive).any() and torch.equal(got.isfinite(), naive.isfinite())
            if not overflow and torch.equal(got.isfinite(), one_max.isfinite()):
                return fail(
                    name,
                    f"on {label} it returned nan: one maximum for the whole matrix is not enough, "
                    "a row far below it underflows to 0 / 0. Subtract each row's own maximum: "
                    "x.max(dim=-1, keepdim=True).values.",
                )
            return fail(
                name,
                f"on {label} it returned {got.tolist()}: exp overflowed. Subtract each row's "
                "maximum before torch.exp.",
            )
        if _close(got, torch.softmax(x, dim=0), atol=1e-6) and not _close(got, expected, 1e-6):
            return fail(name, f"on {label} the columns sum to 1, not the rows: use dim=-1.")
        if not _close(got, expected, atol=1e-6):
            return fail(
                name,
                f"on {label} it returned {got.tolist()}, expected {expected.tolist()}: "
                "subtract the row maximum (keepdim=True), exp, divide by the row sum "
                "(keepdim=True).",
            )
    return ok(name, "correct: every row sums to 1 and stays finite, whatever its scale.")


def check_attention_received(answer: object) -> CheckResult:
    """The column sums of the (6, 6) simplified attention weights, shape (6,)."""
    name = "attention each token receives"
    inputs = book_inputs()
    scores = inputs @ inputs.T  # (6, 6)
    attn_weights = torch.softmax(scores, dim=-1)  # (6, 6)

    def hint(got: torch.Tensor) -> str:
        if _close(got, attn_weights.sum(dim=-1)):
            return (
                "those are the row sums (dim=-1): what each token GIVES, always 1. What a token "
                "receives is in its column: sum over the queries, dim=0."
            )
        if _close(got, scores.sum(dim=0)):
            return "those are sums of the raw scores; sum the softmax weights instead."
        return "attn_weights.sum(dim=0): column j adds up what every query gives to token j."

    return tensor_answer(name, answer, attn_weights.sum(dim=0), what="a (6,) tensor", hint=hint)


def check_prediction_self_match(prediction: object, reveal: bool = False) -> CheckResult:
    """How many of the six tokens have their largest dot product with themselves? (0..6)."""
    inputs = book_inputs()
    scores = inputs @ inputs.T  # (6, 6)
    count = int((scores.argmax(dim=-1) == torch.arange(6)).sum())
    value = whole_number(prediction)
    if value is not None and not 0 <= value <= 6:
        value = None
    return prediction_result(
        "prediction: tokens most similar to themselves",
        prediction,
        reveal=reveal,
        what="a whole number from 0 to 6",
        value=value,
        actual=f"{count} of 6",
        correct=value == count,
        explain=(
            "A dot product grows with the length of the vectors, not only with their "
            "direction: a longer neighbour pointing roughly the same way can beat the token "
            "itself."
        ),
    )
