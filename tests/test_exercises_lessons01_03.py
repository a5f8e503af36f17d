"""Exercise checkers of lessons 01-03: a correct answer passes; wrong values, a wrong shape and
``None`` do not, and no checker raises on a wrong answer."""

from __future__ import annotations

import pytest
import torch
from exercise_checks import assert_not_yet, assert_pass
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex

INPUTS = mh.book_inputs()  # (6, 3)


# -- lesson 01 ----------------------------------------------------------------------------------


def context_vector(row: int) -> torch.Tensor:
    return torch.softmax(INPUTS @ INPUTS[row], dim=0) @ INPUTS  # (3,)


def test_context_vector_5_correct_matches_book():
    answer = context_vector(4)
    torch.testing.assert_close(answer, mh.reference("simplified_all_context")[4], atol=1e-4, rtol=0)
    assert_pass(ex.check_context_vector_5(answer))
    assert_pass(ex.check_context_vector_5(answer.double()))  # other float dtypes are fine


def test_context_vector_5_none_and_wrong():
    assert_not_yet(ex.check_context_vector_5(None), "no answer yet", "(3,) tensor")
    assert_not_yet(ex.check_context_vector_5([0.4671, 0.5910, 0.5266]), "torch.Tensor")
    assert_not_yet(ex.check_context_vector_5(torch.zeros(2)), "shape (2,)")
    assert_not_yet(ex.check_context_vector_5(context_vector(1)), "'journey'", "inputs[4]")
    assert_not_yet(ex.check_context_vector_5(INPUTS[4].clone()), "embedding x(5) itself")
    assert_not_yet(ex.check_context_vector_5(INPUTS @ INPUTS[4] @ INPUTS), "not normalized")
    all_context = torch.softmax(INPUTS @ INPUTS.T, dim=-1) @ INPUTS
    assert_not_yet(ex.check_context_vector_5(all_context), "row 4")
    assert_not_yet(ex.check_context_vector_5(torch.tensor([1, 2, 3])), "floating-point")


def test_context_vector_5_sum_normalization_hint():
    scores = INPUTS @ INPUTS[4]
    assert_not_yet(ex.check_context_vector_5((scores / scores.sum()) @ INPUTS), "sum normalization")


def softmax_stable(x: torch.Tensor) -> torch.Tensor:
    e = torch.exp(x - x.max())
    return e / e.sum()


def softmax_naive(x: torch.Tensor) -> torch.Tensor:
    return torch.exp(x) / torch.exp(x).sum(dim=0)


def test_stable_softmax():
    assert_pass(ex.check_stable_softmax(softmax_stable))
    assert_not_yet(ex.check_stable_softmax(None), "no answer yet")
    assert_not_yet(ex.check_stable_softmax(softmax_stable(INPUTS[0])), "expected a function")
    assert_not_yet(ex.check_stable_softmax(softmax_naive), "overflowed", "x.max()")
    assert_not_yet(ex.check_stable_softmax(lambda x: x / x.sum()), "expected")
    assert_not_yet(ex.check_stable_softmax(lambda x: x[:1]), "shape")
    assert_not_yet(ex.check_stable_softmax(lambda x: x.tolist()), "not a tensor")

    def broken(x):
        raise RuntimeError("boom")

    assert_not_yet(ex.check_stable_softmax(broken), "RuntimeError", "boom")


def test_row_sums():
    weights = torch.softmax(INPUTS @ INPUTS.T, dim=-1)
    assert_pass(ex.check_row_sums(weights.sum(dim=-1)))
    assert_not_yet(ex.check_row_sums(None), "no answer yet")
    assert_not_yet(ex.check_row_sums(weights.sum(dim=0)), "dim=0")
    assert_not_yet(ex.check_row_sums((INPUTS @ INPUTS.T).sum(dim=-1)), "raw scores")
    assert_not_yet(ex.check_row_sums(weights.sum()), "shape ()")


# -- lesson 02 ----------------------------------------------------------------------------------


@pytest.fixture
def sa_v2() -> nn.Module:
    torch.manual_seed(789)
    return mh.SelfAttentionV2(3, 2)


def transferred(sa_v2: nn.Module) -> nn.Module:
    torch.manual_seed(123)
    sa_v1 = mh.SelfAttentionV1(3, 2)
    sa_v1.W_query = nn.Parameter(sa_v2.W_query.weight.T)
    sa_v1.W_key = nn.Parameter(sa_v2.W_key.weight.T)
    sa_v1.W_value = nn.Parameter(sa_v2.W_value.weight.T)
    return sa_v1


def test_v2_to_v1_correct(sa_v2):
    result = ex.check_v2_to_v1(transferred(sa_v2), sa_v2, INPUTS)
    assert_pass(result)
    assert "bit for bit" in repr(result)


def test_v2_to_v1_wrong(sa_v2):
    assert_not_yet(ex.check_v2_to_v1(None, sa_v2, INPUTS), "no answer yet")
    assert_not_yet(ex.check_v2_to_v1(torch.zeros(3, 2), sa_v2, INPUTS), "module")
    assert_not_yet(ex.check_v2_to_v1(sa_v2, sa_v2, INPUTS), "nn.Linear")
    torch.manual_seed(123)
    untouched = mh.SelfAttentionV1(3, 2)
    assert_not_yet(ex.check_v2_to_v1(untouched, sa_v2, INPUTS), "W_query differs")
    swapped = transferred(sa_v2)
    swapped.W_query, swapped.W_key = swapped.W_key, swapped.W_query
    assert_not_yet(ex.check_v2_to_v1(swapped, sa_v2, INPUTS), "W_query holds sa_v2.W_key")
    not_transposed = transferred(sa_v2)
    not_transposed.W_query = nn.Parameter(sa_v2.W_query.weight)  # (2, 3)
    assert_not_yet(ex.check_v2_to_v1(not_transposed, sa_v2, INPUTS), "(2, 3)", ".weight.T")
    wrong_shape = transferred(sa_v2)
    wrong_shape.W_value = nn.Parameter(torch.zeros(4, 4))
    assert_not_yet(ex.check_v2_to_v1(wrong_shape, sa_v2, INPUTS), "shape (4, 4)")
    assert_not_yet(ex.check_v2_to_v1(nn.Identity(), sa_v2, INPUTS), "no tensor attribute")
    assert_not_yet(ex.check_v2_to_v1(transferred(sa_v2), None, INPUTS), "second argument")


def test_v2_to_v1_forward_errors_are_reported(sa_v2):
    class Broken(nn.Module):
        def __init__(self, source):
            super().__init__()
            for name in ("W_query", "W_key", "W_value"):
                setattr(self, name, nn.Parameter(getattr(source, name).weight.T))

        def forward(self, x):
            raise RuntimeError("no forward yet")

    assert_not_yet(ex.check_v2_to_v1(Broken(sa_v2), sa_v2, INPUTS), "no forward yet")


def seed123_weights() -> torch.Tensor:
    torch.manual_seed(123)
    sa_v1 = mh.SelfAttentionV1(3, 2)
    with torch.no_grad():
        keys = INPUTS @ sa_v1.W_key
        queries = INPUTS @ sa_v1.W_query
        return torch.softmax(queries @ keys.T / 2**0.5, dim=-1)  # (6, 6)


def test_attn_weights_3():
    weights = seed123_weights()
    torch.testing.assert_close(
        weights[1], mh.reference("seed123_attn_weights_2"), atol=1e-4, rtol=0
    )
    assert_pass(ex.check_attn_weights_3(weights[2]))
    assert_not_yet(ex.check_attn_weights_3(None), "no answer yet")
    assert_not_yet(ex.check_attn_weights_3(weights), "whole (6, 6)")
    assert_not_yet(ex.check_attn_weights_3(weights[1]), "'journey'")
    assert_not_yet(ex.check_attn_weights_3(weights[2][:5]), "shape (5,)")
    assert_not_yet(ex.check_attn_weights_3(torch.full((6,), 1 / 6)), "softmax")


def test_attn_weights_3_unscaled_hint():
    torch.manual_seed(123)
    sa_v1 = mh.SelfAttentionV1(3, 2)
    with torch.no_grad():
        scores_3 = (INPUTS[2] @ sa_v1.W_query) @ (INPUTS @ sa_v1.W_key).T
    assert_not_yet(ex.check_attn_weights_3(torch.softmax(scores_3, dim=-1)), "not scaled")
    assert_not_yet(ex.check_attn_weights_3(scores_3), "those are scores")


def test_checker_does_not_touch_global_rng():
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    ex.check_attn_weights_3(None)
    ex.check_attn_weights_3(torch.zeros(6))
    assert torch.equal(torch.rand(3), expected)


# -- lesson 03 ----------------------------------------------------------------------------------


def test_causal_mask_4():
    mask = torch.triu(torch.ones(4, 4), diagonal=1)
    assert_pass(ex.check_causal_mask_4(mask.bool()))
    assert_pass(ex.check_causal_mask_4(mask))  # 0/1 floats are accepted
    assert_pass(ex.check_causal_mask_4(mh.causal_mask(4)))
    assert_not_yet(ex.check_causal_mask_4(None), "no answer yet")
    assert_not_yet(ex.check_causal_mask_4(mask.tolist()), "torch.Tensor")
    assert_not_yet(ex.check_causal_mask_4(torch.triu(torch.ones(6, 6), 1).bool()), "shape (6, 6)")
    assert_not_yet(ex.check_causal_mask_4(torch.tril(torch.ones(4, 4)).bool()), "KEEP")
    assert_not_yet(ex.check_causal_mask_4(torch.triu(torch.ones(4, 4)).bool()), "diagonal=1")
    additive = torch.zeros(4, 4).masked_fill(mask.bool(), -torch.inf)
    assert_not_yet(ex.check_causal_mask_4(additive), "additive")
    assert_not_yet(ex.check_causal_mask_4(mask * 3), "True/False")
    assert_not_yet(ex.check_causal_mask_4(torch.zeros(4, 4, dtype=torch.bool)), "strictly above")


SCORES = torch.tensor(
    [
        [2.0, 1.0, 0.5, 3.0],
        [0.3, 1.2, 2.2, -1.0],
        [1.5, -0.5, 0.0, 2.5],
        [0.1, 0.4, 0.9, 1.6],
    ]
)


def test_one_step_mask_correct_and_equal_to_three_step():
    future = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
    one_step = torch.softmax(SCORES.masked_fill(future, -torch.inf), dim=-1)
    assert_pass(ex.check_one_step_mask(one_step, SCORES))
    three_step = torch.softmax(SCORES, dim=-1) * torch.tril(torch.ones(4, 4))
    three_step = three_step / three_step.sum(dim=-1, keepdim=True)
    assert_pass(ex.check_one_step_mask(three_step, SCORES))


def test_one_step_mask_wrong():
    assert_not_yet(ex.check_one_step_mask(None, SCORES), "no answer yet", "(4, 4)")
    assert_not_yet(ex.check_one_step_mask(torch.softmax(SCORES, dim=-1), SCORES), "NEW tensor")
    diagonal_too = torch.triu(torch.ones(4, 4, dtype=torch.bool))
    nan_rows = torch.softmax(SCORES.masked_fill(diagonal_too, -torch.inf), dim=-1)
    assert_not_yet(ex.check_one_step_mask(nan_rows, SCORES), "nan", "diagonal=1")
    past = torch.tril(torch.ones(4, 4, dtype=torch.bool), diagonal=-1)
    assert_not_yet(
        ex.check_one_step_mask(torch.softmax(SCORES.masked_fill(past, -torch.inf), -1), SCORES),
        "above the diagonal",
    )
    future = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
    columns = torch.softmax(SCORES.masked_fill(future, -torch.inf), dim=0)
    assert_not_yet(ex.check_one_step_mask(columns, SCORES), "dim=-1")
    scaled = torch.softmax(SCORES.masked_fill(future, -torch.inf) / 2, dim=-1)
    assert_not_yet(ex.check_one_step_mask(scaled, SCORES), "Do not scale")
    assert_not_yet(ex.check_one_step_mask(torch.zeros(3, 3), SCORES), "shape (3, 3)")
    assert_not_yet(ex.check_one_step_mask(torch.zeros(4, 4, dtype=torch.long), SCORES), "dtype")
    assert_not_yet(ex.check_one_step_mask(SCORES, None), "second argument")


@pytest.mark.parametrize(
    "checker",
    [
        ex.check_context_vector_5,
        ex.check_stable_softmax,
        ex.check_row_sums,
        ex.check_attn_weights_3,
        ex.check_causal_mask_4,
    ],
)
@pytest.mark.parametrize("answer", [None, 3, "text", torch.tensor(float("nan")), object()])
def test_single_argument_checkers_never_raise(checker, answer):
    result = checker(answer)
    assert isinstance(result, ex.CheckResult)
    assert not result


def test_not_yet_text_is_exact_for_none():
    assert repr(ex.check_context_vector_5(None)) == (
        "[NOT YET] context vector z(5) of 'one': no answer yet -- replace the `None` under "
        "`# YOUR CODE HERE` with a (3,) tensor."
    )
