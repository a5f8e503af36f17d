"""Checkers for lesson 06, multi-head attention with split matrices (one big W, split into heads).

* ``check_head_dim(answer)`` -- head_dim of the largest GPT-2 (d_out=1600, 25 heads).
* ``check_mha_parameter_count(answer)`` -- parameters of ``MultiHeadAttention`` at GPT-2 medium
  size (d_in = d_out = 1024, 16 heads, ``qkv_bias=True``).
* ``check_split_into_heads(answer, x)`` -- a (b, T, d_out) tensor split into 4 heads,
  (b, num_heads, T, head_dim), the way ``MultiHeadAttention.forward`` does it.
"""

from __future__ import annotations

import torch

from ._common import CheckResult, fail, missing, ok, tensor_answer, whole_number

__all__ = ["check_head_dim", "check_mha_parameter_count", "check_split_into_heads"]


def check_head_dim(answer: object) -> CheckResult:
    """The largest GPT-2: d_out = 1600 split over 25 heads gives head_dim = 64."""
    name = "head_dim of the largest GPT-2"
    if answer is None:
        return missing(name, "an int: the width of each head")
    value = whole_number(answer)
    if value is None:
        return fail(name, f"expected a whole number, got {answer!r}.")
    if value == 64:
        return ok(name, "correct: 1600 // 25 = 64, the same head width as GPT-2 small (768 // 12).")
    if value == 1600 * 25:
        return fail(name, "in MultiHeadAttention d_out is the TOTAL width: divide it by the heads.")
    if value == 1600:
        return fail(name, "1600 is the total width d_out; each of the 25 heads gets a slice.")
    return fail(name, "head_dim = d_out // num_heads.")


def check_mha_parameter_count(answer: object) -> CheckResult:
    """``MultiHeadAttention(1024, 1024, ..., num_heads=16, qkv_bias=True)``: 4*d*d + 4*d."""
    name = "MultiHeadAttention parameters at GPT-2 medium size"
    d = 1024
    expected = 4 * d * d + 4 * d  # 4_198_400
    if answer is None:
        return missing(name, "an int: the number of parameters")
    value = whole_number(answer)
    if value is None:
        return fail(name, f"expected a whole number, got {answer!r}.")
    if value == expected:
        return ok(name, f"correct: 4 * 1024^2 + 4 * 1024 = {expected:,}.")
    if value == 4 * d * d + d:
        return fail(name, "with qkv_bias=True W_query, W_key and W_value have a bias too.")
    if value == 4 * d * d:
        return fail(name, "the weights are right; add the biases (out_proj always has one).")
    if value in (3 * d * d + 3 * d, 3 * d * d):
        return fail(name, "don't forget out_proj, a (d_out, d_out) Linear with a bias.")
    if value in (4 * d * d // 16 + 4 * d, 4 * (d * d // 16) + 4 * d):
        return fail(name, "the heads do not divide the parameters: the matrices stay d x d.")
    return fail(name, "W_query, W_key, W_value: d*d + d each; out_proj: d*d + d.")


def check_split_into_heads(answer: object, x: torch.Tensor) -> CheckResult:
    """``x`` (b, T, d_out) -> (b, 4, T, d_out // 4): view to (b, T, 4, hd), then transpose(1, 2)."""
    name = "split into 4 heads"
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] % 4 != 0:
        return fail(name, "the second argument must be the exercise's (b, T, d_out) tensor x.")
    b, T, d_out = x.shape
    head_dim = d_out // 4
    expected = x.view(b, T, 4, head_dim).transpose(1, 2)  # (b, h, T, head_dim)
    if T > 1 and torch.equal(x.reshape(b, 4, T, head_dim), expected):
        return fail(name, "pass the exercise's x: with this x a wrong split would look right.")

    def hint(got: torch.Tensor) -> str:
        if torch.equal(got.detach().cpu(), x.reshape(b, 4, T, head_dim)):
            return (
                "viewing straight into (b, h, T, head_dim) mixes tokens and heads: view to "
                "(b, T, h, head_dim) first, then transpose(1, 2)."
            )
        return "x.view(b, T, num_heads, head_dim).transpose(1, 2)."

    if answer is None:
        return missing(name, f"a ({b}, 4, {T}, {head_dim}) tensor")
    if isinstance(answer, torch.Tensor) and tuple(answer.shape) == (b, T, 4, head_dim):
        return fail(name, "the heads are split; now transpose(1, 2) to put heads before tokens.")
    return tensor_answer(
        name, answer, expected, what=f"a ({b}, 4, {T}, {head_dim}) tensor", hint=hint, atol=0.0
    )
