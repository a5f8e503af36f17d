"""Exercise checkers of lessons 01-03: a correct answer passes; wrong values, a wrong shape and
``None`` do not, and no checker raises on a wrong answer."""

from __future__ import annotations

import pytest
import torch
from exercise_checks import assert_not_yet, assert_pass

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex

INPUTS = mh.book_inputs()  # (6, 3)


# -- lesson 02 ----------------------------------------------------------------------------------


def seed123_weights() -> torch.Tensor:
    torch.manual_seed(123)
    sa_v1 = mh.SelfAttentionV1(3, 2)
    with torch.no_grad():
        keys = INPUTS @ sa_v1.W_key
        queries = INPUTS @ sa_v1.W_query
        return torch.softmax(queries @ keys.T / 2**0.5, dim=-1)  # (6, 6)


def seed123_matrices() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    torch.manual_seed(123)
    sa_v1 = mh.SelfAttentionV1(3, 2)
    return sa_v1.W_query.detach(), sa_v1.W_key.detach(), sa_v1.W_value.detach()


def test_context_vector_3():
    """Exercise 3: the context vector of "starts" over the three tokens it has read; every
    known mistake named, each one of the steps of section 5's recipe."""
    W_query, W_key, W_value = seed123_matrices()
    weights = seed123_weights()
    torch.testing.assert_close(
        weights[1], mh.reference("seed123_attn_weights_2"), atol=1e-4, rtol=0
    )
    keys, values = INPUTS @ W_key, INPUTS @ W_value  # (6, 2) each
    scores = (INPUTS[2] @ W_query) @ keys.T  # (6,)
    visible = torch.softmax(scores[:3] / 2**0.5, dim=-1)  # (3,)
    assert_pass(ex.check_context_vector_3(visible @ values[:3]))
    # the same weights, computed as lesson 03 will: the hidden scores set to -inf
    hidden = torch.tensor([False, False, False, True, True, True])
    masked = torch.softmax((scores / 2**0.5).masked_fill(hidden, -torch.inf), -1)  # (6,)
    assert_pass(ex.check_context_vector_3(masked @ values))
    assert_not_yet(ex.check_context_vector_3(None), "no answer yet")
    assert_not_yet(ex.check_context_vector_3(visible), "three weights")
    assert_not_yet(ex.check_context_vector_3(weights @ values), "every token")
    assert_not_yet(ex.check_context_vector_3(weights[2] @ values), "all six tokens")
    assert_not_yet(ex.check_context_vector_3(weights[2, :3] @ values[:3]), "no longer sum to 1")
    journey = torch.softmax((INPUTS[1] @ W_query) @ keys[:3].T / 2**0.5, dim=-1)
    assert_not_yet(ex.check_context_vector_3(journey @ values[:3]), "the query of another")
    unscaled = torch.softmax(scores[:3], dim=-1)
    assert_not_yet(ex.check_context_vector_3(unscaled @ values[:3]), "not scaled")
    by_d_in = torch.softmax(scores[:3] / 3**0.5, dim=-1)
    assert_not_yet(ex.check_context_vector_3(by_d_in @ values[:3]), "sqrt(3)")
    assert_not_yet(ex.check_context_vector_3(visible @ INPUTS[:3, :2]), "section 5")
    assert_not_yet(ex.check_context_vector_3(visible @ (INPUTS[:3] @ W_query)), "section 5")


def test_checker_does_not_touch_global_rng():
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    ex.check_context_vector_3(None)
    ex.check_context_vector_3(torch.zeros(6))
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize(
    "checker",
    [ex.check_context_vector_3, ex.check_context_vector_new_token],
)
@pytest.mark.parametrize("answer", [None, 3, "text", torch.tensor(float("nan")), object()])
def test_single_argument_checkers_never_raise(checker, answer):
    result = checker(answer)
    assert isinstance(result, ex.CheckResult)
    assert not result


def test_not_yet_text_is_exact_for_none():
    assert repr(ex.check_context_vector_new_token(None)) == (
        "[TO DO] context vector of the new token 'forward': no answer yet -- replace the "
        "`None` marked `# YOUR CODE HERE` with a tensor: the context vector of the new token."
    )
