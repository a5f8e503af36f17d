"""Checkers for lesson 02, trainable query/key/value weights (查询、键、值).

* ``check_v2_to_v1(answer, sa_v2, inputs)`` -- a ``SelfAttentionV1`` carrying the weights of a
  ``SelfAttentionV2`` (``nn.Linear`` stores the transpose, so ``W_query = weight.T``) and computing
  the same output.
* ``check_attn_weights_3(answer)`` -- the scaled attention weights of the query "starts" (x(3))
  with the seed-123 matrices of the lesson.
"""

from __future__ import annotations

from typing import cast

import torch
from torch import nn

from ..data import book_inputs
from ._common import CheckResult, fail, missing, ok, tensor_answer

__all__ = ["check_attn_weights_3", "check_v2_to_v1"]

_NAMES = ("W_query", "W_key", "W_value")


def check_v2_to_v1(answer: object, sa_v2: nn.Module, inputs: torch.Tensor) -> CheckResult:
    """``answer``: a V1-style module (raw (d_in, d_out) matrices) with ``sa_v2``'s weights."""
    name = "SelfAttentionV2 -> SelfAttentionV1 weight transfer"
    if answer is None:
        return missing(name, "your SelfAttentionV1 object after copying sa_v2's weights into it")
    if not isinstance(answer, nn.Module):
        return fail(name, f"expected a SelfAttentionV1 module, got {type(answer).__name__}.")
    linears = {n: getattr(sa_v2, n, None) for n in _NAMES}
    if not all(isinstance(layer, nn.Linear) for layer in linears.values()):
        return fail(name, "the second argument must be the lesson's SelfAttentionV2 object sa_v2.")
    targets = {n: cast(nn.Linear, layer).weight.detach().T for n, layer in linears.items()}
    for n in _NAMES:
        w = getattr(answer, n, None)
        if isinstance(w, nn.Linear):
            return fail(name, f"answer.{n} is an nn.Linear: answer must be a SelfAttentionV1.")
        if not isinstance(w, torch.Tensor):
            return fail(name, f"answer has no tensor attribute {n}: is it a SelfAttentionV1?")
        want = targets[n]
        if tuple(w.shape) == tuple(want.T.shape) and tuple(w.shape) != tuple(want.shape):
            return fail(
                name,
                f"answer.{n} has shape {tuple(w.shape)}, the nn.Linear layout (d_out, d_in). "
                f"V1 multiplies x @ W, so it needs (d_in, d_out): use sa_v2.{n}.weight.T.",
            )
        if tuple(w.shape) != tuple(want.shape):
            return fail(
                name, f"answer.{n} has shape {tuple(w.shape)}, expected {tuple(want.shape)}."
            )
        if not torch.equal(w.detach(), want):
            for other in _NAMES:
                if other != n and torch.equal(w.detach(), targets[other]):
                    return fail(name, f"answer.{n} holds sa_v2.{other}'s weights: match the names.")
            return fail(
                name, f"answer.{n} differs from sa_v2.{n}.weight.T: copy it with nn.Parameter(...)."
            )
    try:
        with torch.no_grad():
            got = answer(inputs)
            want_out = sa_v2(inputs)
    except Exception as error:  # the learner's module may raise anything
        return fail(name, f"calling answer(inputs) raised {type(error).__name__}: {error}")
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(want_out.shape):
        return fail(name, "answer(inputs) should return the (T, d_out) context vectors.")
    if not torch.allclose(got, want_out, atol=1e-6, rtol=0):
        return fail(name, "the weights match but the outputs differ: is forward V1's forward?")
    same = "bit for bit" if torch.equal(got, want_out) else "to 1e-6"
    return ok(name, f"correct: the weights are sa_v2's transposed and the outputs agree {same}.")


def _seed123_matrices() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # Same numbers as torch.manual_seed(123) then three torch.rand(3, 2), without touching the
    # global random state of the learner's notebook.
    generator = torch.Generator().manual_seed(123)
    W_query = torch.rand(3, 2, generator=generator)
    W_key = torch.rand(3, 2, generator=generator)
    W_value = torch.rand(3, 2, generator=generator)
    return W_query, W_key, W_value


def check_attn_weights_3(answer: object) -> CheckResult:
    """The scaled softmax weights of query x(3) "starts" against all six keys, shape (6,)."""
    name = "attention weights of 'starts'"
    inputs = book_inputs()  # (6, 3)
    W_query, W_key, _ = _seed123_matrices()
    queries = inputs @ W_query  # (6, 2)
    keys = inputs @ W_key  # (6, 2)
    scores = queries @ keys.T  # (6, 6)
    d_k = keys.shape[-1]
    weights = torch.softmax(scores / d_k**0.5, dim=-1)  # (6, 6)

    def close(got: torch.Tensor, want: torch.Tensor) -> bool:
        got = got.detach().to(torch.float64)
        return torch.allclose(got, want.to(torch.float64), atol=1e-4, rtol=0)

    def hint(got: torch.Tensor) -> str:
        if close(got, torch.softmax(scores[2], dim=-1)):
            return "not scaled: divide the scores by d_k**0.5 before the softmax."
        if close(got, scores[2]) or close(got, scores[2] / d_k**0.5):
            return "those are scores; apply torch.softmax(..., dim=-1) to turn them into weights."
        for row, word in enumerate(["Your", "journey", "starts", "with", "one", "step"]):
            if row != 2 and close(got, weights[row]):
                return f"that is the row of '{word}'; 'starts' is x(3) = inputs[2]."
        return (
            "query_3 = inputs[2] @ W_query; scores = query_3 @ keys.T; "
            "torch.softmax(scores / d_k**0.5, dim=-1), with the seed-123 W_query and W_key."
        )

    if isinstance(answer, torch.Tensor) and tuple(answer.shape) == (6, 6):
        return fail(name, "that is the whole (6, 6) matrix: take the row of 'starts' (index 2).")
    return tensor_answer(name, answer, weights[2], what="a (6,) tensor", hint=hint)
