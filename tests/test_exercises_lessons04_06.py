"""Exercise checkers of lessons 04-06: a correct answer passes; wrong values, a wrong shape and
``None`` do not, and no checker raises on a wrong answer."""

from __future__ import annotations

import pytest
import torch
from exercise_checks import FixedDropoutCausal, FixedDropoutWrapper, assert_not_yet, assert_pass
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex

ODD_ANSWERS = ["1.25", [1.25], True, object(), float("nan"), torch.ones(2), {"a": 1}]


def test_number_helpers_of_the_checkers():
    from mhsa_helpers.exercises._common import number, whole_number

    assert number(1.25) == 1.25 and number(2) == 2.0 and number(torch.tensor(0.5)) == 0.5
    for odd in ["1", [1], True, float("nan"), float("inf"), torch.ones(2), None]:
        assert number(odd) is None, odd
    assert whole_number(768) == 768 and whole_number(768.0) == 768
    assert whole_number(torch.tensor(60)) == 60 and whole_number(torch.tensor(60.0)) == 60
    for odd in [60.5, "60", [60], True, float("nan"), float("inf"), torch.ones(2), None]:
        assert whole_number(odd) is None, odd


# -- lesson 04: dropout --------------------------------------------------------------------------


def test_dropout_scale():
    assert_pass(ex.check_dropout_scale(1 / (1 - 0.2)))
    assert_pass(ex.check_dropout_scale(torch.tensor(1.25)))
    assert_pass(ex.check_dropout_scale(1.25))
    assert_not_yet(ex.check_dropout_scale(None), "no answer yet")
    assert_not_yet(ex.check_dropout_scale(0.8), "DIVIDED")
    assert_not_yet(ex.check_dropout_scale(5), "1 / p")
    assert_not_yet(ex.check_dropout_scale(2), "p = 0.5")
    assert_not_yet(ex.check_dropout_scale(0.2), "p itself")
    assert_not_yet(ex.check_dropout_scale(1.3), "1 / (1 - p)")
    for odd in ODD_ANSWERS:
        assert not ex.check_dropout_scale(odd)


def test_zero_fraction():
    assert_pass(ex.check_zero_fraction((15 + 21 * 0.5) / 36))
    assert_pass(ex.check_zero_fraction(0.7083))
    assert_pass(ex.check_zero_fraction(0.71))  # rounded to 2 decimals
    assert_not_yet(ex.check_zero_fraction(0.72), "half of the 21")
    assert_not_yet(ex.check_zero_fraction(None), "no answer yet")
    assert_not_yet(ex.check_zero_fraction(0.5), "already 0")
    assert_not_yet(ex.check_zero_fraction(15 / 36), "only the 15 masked")
    assert_not_yet(ex.check_zero_fraction(10.5 / 36), "add the 15 masked")
    assert_not_yet(ex.check_zero_fraction(25.5), "COUNT")
    assert_not_yet(ex.check_zero_fraction(3), "between 0 and 1")
    assert_not_yet(ex.check_zero_fraction(0.6), "half of the 21")
    for odd in ODD_ANSWERS:
        assert not ex.check_zero_fraction(odd)


def test_zero_fraction_matches_simulation():
    """The expected fraction is what dropout on causal weights gives on average."""
    weights = mh.reference("seed789_masked_renormalized")
    dropout = nn.Dropout(0.5)
    torch.manual_seed(0)
    zeros = torch.stack([(dropout(weights) == 0).float().mean() for _ in range(4000)]).mean()
    assert abs(zeros.item() - (15 + 21 * 0.5) / 36) < 5e-3


def test_dropout_rate_read_from_the_context_vectors():
    from mhsa_helpers.exercises.lesson04 import (
        exercise_context,
        exercise_dropped_context,
        exercise_keep_pattern,
    )

    weights, values = exercise_context()  # (6, 6), (6, 2)
    torch.testing.assert_close(
        weights, mh.reference("seed789_masked_renormalized"), atol=1e-4, rtol=0
    )
    keep = exercise_keep_pattern()
    assert 0 < int(keep.sum()) < keep.numel()  # the pattern drops some entries and keeps some
    # the share of zeros this draw is not the rate: counting zeros cannot pass
    assert abs((~keep).float().mean().item() - 0.3) > 0.01
    context, dropped = weights @ values, exercise_dropped_context()  # (6, 2) each
    factors = dropped[keep] / context[keep]
    p = 1 - 1 / factors[0].item()
    assert_pass(ex.check_dropout_rate(p))
    assert_pass(ex.check_dropout_rate(0.3))
    assert_not_yet(ex.check_dropout_rate(None), "no answer yet", "dropout rate p")
    assert_not_yet(ex.check_dropout_rate((~keep).float().mean().item()), "share of zeros")
    assert_not_yet(ex.check_dropout_rate(factors[0].item()), "1 / (1 - p)")
    assert_not_yet(ex.check_dropout_rate(0.7), "keeps, 1 - p")
    assert_not_yet(ex.check_dropout_rate(1 / 0.7 - 1), "how much a survivor grew")
    assert_not_yet(ex.check_dropout_rate(0.5), "attn_weights @ values")
    assert_not_yet(ex.check_dropout_rate(dropped), "a number")


# -- lesson 05: the wrapper ----------------------------------------------------------------------


def test_wrapper_parameters():
    """The 768-wide wrapper of 12 heads of 64: its parameters, counted from one head (issue 29:
    section 3 builds this wrapper, so its d_out is no longer the question)."""
    with torch.device("meta"):
        wrapper = mh.MultiHeadAttentionWrapper(768, 64, 1024, 0.0, num_heads=12)
    count = sum(p.numel() for p in wrapper.parameters())
    assert count == 1_769_472
    assert_pass(ex.check_wrapper_parameters(count))
    assert_pass(ex.check_wrapper_parameters(float(count)))
    assert_not_yet(ex.check_wrapper_parameters(None), "no answer yet")
    assert_not_yet(ex.check_wrapper_parameters(3 * 768 * 64), "one head")
    assert_not_yet(ex.check_wrapper_parameters(768 * 768), "three projections")
    assert_not_yet(ex.check_wrapper_parameters(4 * 768 * 768), "no output projection")
    assert_not_yet(ex.check_wrapper_parameters(count + 3 * 768), "no bias")
    assert_not_yet(ex.check_wrapper_parameters(12 * 3 * 768 * 768), "share the 768")
    assert_not_yet(ex.check_wrapper_parameters(64), "one head's weight matrices")
    for odd in ODD_ANSWERS:
        assert not ex.check_wrapper_parameters(odd)


def wrapper_output(num_heads: int) -> torch.Tensor:
    torch.manual_seed(123)
    wrapper = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=num_heads)
    return wrapper(mh.load_journey().batch).detach()  # (2, 6, 2 * num_heads)


def test_head_output():
    out = wrapper_output(4)  # (2, 6, 8): the 3-head wrapper's heads, then the one built after it
    torch.manual_seed(123)
    mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=3)
    extra = mh.CausalAttention(3, 2, 6, 0.0)(mh.load_journey().batch).detach()  # (2, 6, 2)
    assert_pass(ex.check_head_output(extra))
    assert_pass(ex.check_head_output(out[..., 6:8]))
    assert_not_yet(ex.check_head_output(None), "no answer yet")
    assert_not_yet(ex.check_head_output(wrapper_output(3)), "whole output")
    assert_not_yet(ex.check_head_output(out[..., 0:2]), "seed set again")
    assert_not_yet(ex.check_head_output(out[..., 2:4]), "head 2")
    assert_not_yet(ex.check_head_output(out[..., 4:6]), "head 3")
    assert_not_yet(ex.check_head_output(extra[0]), "shape (6, 2)")
    wrong = ex.check_head_output(torch.zeros(2, 6, 2))
    assert_not_yet(wrong, "draws its weights from the generator in turn")
    assert "6:8" not in wrong.render("en") and "6:8" not in wrong.render("zh")  # not the answer
    assert_not_yet(ex.check_head_output("extra(batch)"), "torch.Tensor")


def test_head_output_checker_leaves_global_rng_alone():
    torch.manual_seed(5)
    expected = torch.rand(2)
    torch.manual_seed(5)
    ex.check_head_output(None)
    assert torch.equal(torch.rand(2), expected)


def test_matmul_count_counts_multiply_adds():
    projections = 3 * 12 * 8 * 100 * 768 * 64
    attention = 2 * 12 * 8 * 100 * 100 * 64
    answer = projections + attention
    assert_pass(ex.check_matmul_count(answer))
    assert_not_yet(ex.check_matmul_count(None), "no answer yet", "multiply-adds")
    assert_not_yet(ex.check_matmul_count(60), "CALLS")
    assert_not_yet(ex.check_matmul_count(2 * answer), "twice")
    assert_not_yet(ex.check_matmul_count(projections), "projections only")
    assert_not_yet(ex.check_matmul_count(attention), "attention products only")
    assert_not_yet(ex.check_matmul_count(answer // 8), "one sequence")
    assert_not_yet(ex.check_matmul_count(answer // 12), "one head")
    assert_not_yet(ex.check_matmul_count(projections // 3 + attention), "one projection")
    assert_not_yet(ex.check_matmul_count(answer + 1), "head by head")
    assert_not_yet(ex.check_matmul_count(60.5), "whole number")
    for odd in ODD_ANSWERS:
        assert not ex.check_matmul_count(odd)


# -- lesson 06: split matrices -------------------------------------------------------------------


def test_head_dim():
    assert_pass(ex.check_head_dim(4096 // 32))
    # the brief asks for an int: the float 128.0 of `/` is told to divide with //
    assert_not_yet(ex.check_head_dim(4096 / 32), "divide with //")
    assert_not_yet(ex.check_head_dim(None), "no answer yet")
    assert_not_yet(ex.check_head_dim(4096), "total width")
    assert_not_yet(ex.check_head_dim(4096 * 32), "TOTAL")
    assert_not_yet(ex.check_head_dim(64), "GPT-2")
    assert_not_yet(ex.check_head_dim(65), "d_out // num_heads")
    for odd in ODD_ANSWERS:
        assert not ex.check_head_dim(odd)


def test_mha_parameter_count():
    d = 1536
    with torch.device("meta"):
        mha = mh.MultiHeadAttention(d, d, 1024, 0.0, num_heads=24, qkv_bias=True)
    assert sum(p.numel() for p in mha.parameters()) == 9_443_328
    assert_pass(ex.check_mha_parameter_count(d))
    assert_pass(ex.check_mha_parameter_count(float(d)))
    assert_not_yet(ex.check_mha_parameter_count(None), "no answer yet")
    # without the Q/K/V biases (4d² + d, or 4d² with no bias at all), unrounded or rounded
    for no_bias in (1536.37, 1536.5):
        assert_not_yet(ex.check_mha_parameter_count(no_bias), "qkv_bias=True", "have no bias")
    # 1537 is no solution of the bias-free count (d = 1536.37): the generic hint, not a false one
    assert_not_yet(ex.check_mha_parameter_count(1537), "does not have 9,443,328")
    assert_not_yet(ex.check_mha_parameter_count(-1537), "positive")
    assert_not_yet(ex.check_mha_parameter_count(3073), "ONE square matrix")
    assert_not_yet(ex.check_mha_parameter_count(1773.7), "out_proj")
    assert_not_yet(ex.check_mha_parameter_count(24), "num_heads")
    assert_not_yet(ex.check_mha_parameter_count(64), "head_dim")
    assert_not_yet(ex.check_mha_parameter_count(d * d), "(d, d) matrix")
    assert_not_yet(ex.check_mha_parameter_count(1024), "GPT-2 width")
    assert_not_yet(ex.check_mha_parameter_count(100.5), "whole number")
    assert_not_yet(ex.check_mha_parameter_count(1000), "does not have")
    for odd in ODD_ANSWERS:
        assert not ex.check_mha_parameter_count(odd)


@pytest.fixture
def x_heads() -> torch.Tensor:
    return torch.arange(5 * 12, dtype=torch.float32).view(5, 12)  # (T, d_out), no batch axis


def test_split_into_heads(x_heads):
    answer = x_heads.view(5, 3, 4).transpose(0, 1)  # (h, T, head_dim)
    assert_pass(ex.check_split_into_heads(answer, x_heads))
    assert_pass(ex.check_split_into_heads(mh.split_heads(x_heads[None], 3)[0], x_heads))
    assert_not_yet(ex.check_split_into_heads(None, x_heads), "no answer yet")
    assert_not_yet(ex.check_split_into_heads(x_heads.view(5, 3, 4), x_heads), "swap the token")
    assert_not_yet(ex.check_split_into_heads(x_heads.view(3, 5, 4), x_heads), "mixes tokens")
    assert_not_yet(
        ex.check_split_into_heads(x_heads.view(5, 3, 4).transpose(1, 2), x_heads), "axis 0"
    )
    assert_not_yet(ex.check_split_into_heads(answer[None], x_heads), "no batch axis")
    assert_not_yet(ex.check_split_into_heads(x_heads.view(5, 2, 6), x_heads), "shape")
    assert_not_yet(ex.check_split_into_heads(answer + 1, x_heads), "swap the token")
    assert_not_yet(ex.check_split_into_heads(answer.long(), x_heads), "floating-point")
    assert_not_yet(ex.check_split_into_heads(answer, None), "second argument")
    assert_not_yet(ex.check_split_into_heads(answer, torch.ones(5, 10)), "second argument")


@settings(max_examples=40, deadline=None, derandomize=True)
@given(T=st.integers(1, 7), head_dim=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_split_into_heads_at_any_size(T, head_dim, seed):
    """Every correct split passes, also where T == num_heads == 3 (a slip then has the expected
    shape), and the two slips of the transpose are named by their values wherever they differ
    from the answer."""
    x = torch.randn(T, 3 * head_dim, generator=torch.Generator().manual_seed(seed))  # (T, d_out)
    split = x.view(T, 3, head_dim)  # (T, h, head_dim)
    assert_pass(ex.check_split_into_heads(split.transpose(0, 1), x))
    assert_pass(ex.check_split_into_heads(split.permute(1, 0, 2).contiguous(), x))
    assert_not_yet(ex.check_split_into_heads(split, x), "swap the token")
    assert_not_yet(ex.check_split_into_heads(split.transpose(1, 2), x), "axis 0")


@pytest.mark.parametrize(
    "check",
    [
        lambda: ex.check_dropout_rate(None),
        lambda: ex.check_dropout_rate(1 / 0.7),
        lambda: ex.check_causal_attention_class(FixedDropoutCausal),
        lambda: ex.check_wrapper_class(FixedDropoutWrapper),
    ],
    ids=["rate-none", "rate-factor", "causal-fixed-dropout", "wrapper-fixed-dropout"],
)
def test_lesson04_says_dropout_rate_with_the_glossary_term(check):
    """The Chinese hints call the rate p 丢弃率 (the glossary's term), not a 比例 (a share)."""
    text = check().render("zh")
    assert "丢弃率" in text and "比例 p" not in text and "dropout 比例" not in text, text
