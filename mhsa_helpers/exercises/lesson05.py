"""Checkers for lesson 05, multi-head attention (多头注意力) as a wrapper of separate heads.

* ``check_wrapper_width(answer)`` -- output width of a wrapper with d_in=512, d_out=96 per head
  and 6 heads.
* ``check_head_output(answer)`` -- head 3's part of the output of the book's wrapper built with
  3 heads (seed 123, d_out=2), sliced out of the concatenation.
* ``check_matmul_count(answer)`` -- matrix multiplications in one forward pass of a 12-head wrapper
  on a batch of 8 sequences of 100 tokens.
* ``check_matmul_prediction(prediction)`` -- the predict-then-run moment: matmul calls of a
  2-head wrapper.
"""

from __future__ import annotations

import torch

from ..attention.multihead import MultiHeadAttentionWrapper
from ..data import load_journey
from ._common import (
    CheckResult,
    fail,
    missing,
    ok,
    prediction_before_run,
    tensor_answer,
    whole_number,
)

__all__ = [
    "check_head_output",
    "check_matmul_count",
    "check_matmul_prediction",
    "check_wrapper_width",
]


def check_wrapper_width(answer: object) -> CheckResult:
    """``MultiHeadAttentionWrapper(512, 96, 256, 0.1, num_heads=6)``: 6 * 96 = 576 columns."""
    name = "wrapper output width"
    if answer is None:
        return missing(name, "the size of the output's last dimension (an int)")
    value = whole_number(answer)
    if value is None:
        return fail(name, f"expected a whole number, got {answer!r}.")
    if value == 6 * 96:
        return ok(name, "correct: 6 heads x 96 = 576, concatenated side by side.")
    if value == 96:
        return fail(name, "96 is ONE head's width. The wrapper concatenates all 6 heads.")
    if value == 96 // 6:
        return fail(name, "in the wrapper d_out is per head, it is not split: nothing is divided.")
    if value == 512:
        return fail(name, "512 is d_in, the width of the input. What does each head output?")
    return fail(name, "output width = num_heads * d_out in the wrapper.")


def check_matmul_prediction(prediction: object) -> CheckResult:
    """Prediction: matmul calls (``linear`` + ``@``) in one forward pass of a 2-head wrapper."""
    value = whole_number(prediction)
    return prediction_before_run(
        "prediction: matmul calls of a 2-head wrapper",
        prediction,
        value=value,
        guess="an int",
        kind="a whole number",
        correct=value == 2 * (3 + 2),
        right="right -- the next cell counts them.",
        wrong=(
            "not what happens. Run the next cell, then find in CausalAttention.forward every "
            "nn.Linear call and every @ -- and remember the wrapper runs each head's forward."
        ),
    )


def _wrapper_output(num_heads: int = 3) -> torch.Tensor:
    batch = load_journey().batch  # (2, 6, 3)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(123)
        wrapper = MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=num_heads)
    with torch.no_grad():
        return wrapper(batch)  # (2, 6, num_heads * 2)


def check_head_output(answer: object) -> CheckResult:
    """Columns 4:6 of the 3-head wrapper's output (seed 123, d_out=2): head 3, shape (2, 6, 2)."""
    name = "head 3 of the wrapper's output"
    out = _wrapper_output()  # (2, 6, 6)
    expected = out[..., 4:6]  # (2, 6, 2)

    def hint(got: torch.Tensor) -> str:
        got = got.detach().to(torch.float32).cpu()
        for k, cols in ((1, slice(0, 2)), (2, slice(2, 4))):
            if torch.allclose(got, out[..., cols], atol=1e-4):
                return f"that is head {k}. Head k sits in columns (k - 1) * d_out : k * d_out."
        return "slice the last dimension of the wrapper's output: out[..., 4:6]."

    if answer is None:
        return missing(name, "a (2, 6, 2) slice of the (2, 6, 6) output")
    if isinstance(answer, torch.Tensor) and tuple(answer.shape) == (2, 6, 6):
        return fail(name, "that is the whole output; head 3 is 2 of its 6 columns.")
    return tensor_answer(name, answer, expected, what="a (2, 6, 2) tensor", hint=hint)


def check_matmul_count(answer: object) -> CheckResult:
    """12 heads x (3 projections + Q @ K^T + weights @ V) = 60 calls, whatever the batch size."""
    name = "matmuls of a 12-head wrapper on a (8, 100, d_in) batch"
    if answer is None:
        return missing(name, "the number of matrix multiplications (an int)")
    value = whole_number(answer)
    if value is None:
        return fail(name, f"expected a whole number, got {answer!r}.")
    if value == 60:
        return ok(
            name,
            "correct: 12 x (3 projections + 2 attention matmuls) = 60; one call handles all 8 "
            "sequences (a batched matmul), so the batch size does not change the count.",
        )
    if value in (60 * 8, 60 * 100, 60 * 800):
        return fail(
            name,
            "the count is of CALLS: one nn.Linear or @ call handles every sequence and token of "
            "the batch at once. Does the batch size change how often forward runs each line?",
        )
    if value == 36:
        return fail(
            name, "36 are the projections only; each head also computes Q @ K^T and weights @ V."
        )
    if value == 24:
        return fail(name, "24 are the attention matmuls only; add 3 projections per head.")
    if value == 5:
        return fail(name, "5 is one head's count. The wrapper runs 12 heads one after another.")
    return fail(name, "count per head: W_query, W_key, W_value, Q @ K^T, weights @ V; then x 12.")
