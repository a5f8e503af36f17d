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


def seed123_scores_3() -> torch.Tensor:
    torch.manual_seed(123)
    sa_v1 = mh.SelfAttentionV1(3, 2)
    with torch.no_grad():
        return (INPUTS[2] @ sa_v1.W_query) @ (INPUTS @ sa_v1.W_key).T  # (6,)


def test_attn_weights_3():
    weights = seed123_weights()
    torch.testing.assert_close(
        weights[1], mh.reference("seed123_attn_weights_2"), atol=1e-4, rtol=0
    )
    visible = torch.softmax(seed123_scores_3()[:3] / 2**0.5, dim=-1)  # (3,)
    assert_pass(ex.check_attn_weights_3(visible))
    # the same weights, computed as lesson 03 will: the hidden scores set to -inf
    hidden = torch.tensor([False, False, False, True, True, True])
    masked = torch.softmax((seed123_scores_3() / 2**0.5).masked_fill(hidden, -torch.inf), -1)
    assert_pass(ex.check_attn_weights_3(masked[:3]))
    assert_not_yet(ex.check_attn_weights_3(None), "no answer yet")
    assert_not_yet(ex.check_attn_weights_3(weights[2]), "may see only the first three")
    assert_not_yet(ex.check_attn_weights_3(weights[2][:3]), "no longer sum to 1")
    assert_not_yet(ex.check_attn_weights_3(weights[2][:5]), "shape (5,)")
    assert_not_yet(ex.check_attn_weights_3(torch.full((3,), 1 / 3)), "softmax over those three")


def test_attn_weights_3_unscaled_hint():
    scores_3 = seed123_scores_3()
    assert_not_yet(ex.check_attn_weights_3(torch.softmax(scores_3[:3], dim=-1)), "not scaled")
    assert_not_yet(ex.check_attn_weights_3(scores_3[:3]), "those are scores")


def test_checker_does_not_touch_global_rng():
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    ex.check_attn_weights_3(None)
    ex.check_attn_weights_3(torch.zeros(6))
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize(
    "checker",
    [ex.check_attn_weights_3, ex.check_context_vector_new_token],
)
@pytest.mark.parametrize("answer", [None, 3, "text", torch.tensor(float("nan")), object()])
def test_single_argument_checkers_never_raise(checker, answer):
    result = checker(answer)
    assert isinstance(result, ex.CheckResult)
    assert not result


def test_not_yet_text_is_exact_for_none():
    assert repr(ex.check_context_vector_new_token(None)) == (
        "[TO DO] context vector of the new token 'forward': no answer yet -- replace the "
        "`None` under `# YOUR CODE HERE` with a tensor: the context vector of the new token."
    )
