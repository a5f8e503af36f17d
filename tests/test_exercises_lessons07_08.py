"""Exercise checkers of lessons 07-08: a correct answer passes; wrong values, a wrong shape and
``None`` do not, and no checker raises on a wrong answer."""

from __future__ import annotations

import math

import pytest
import torch
from exercise_checks import assert_not_yet, assert_pass

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex

ODD_ANSWERS = ["1.04", [1.04], True, object(), float("nan"), torch.ones(2, 3), {"a": 1}]


@pytest.fixture(scope="module")
def weights4() -> torch.Tensor:
    """Four heads with different sharpness, (4, 5, 5)."""
    torch.manual_seed(0)
    mha = mh.MultiHeadAttention(3, 8, 5, 0.0, num_heads=4)
    with torch.no_grad():
        _, weights = mha(4 * torch.rand(1, 5, 3), return_weights=True)
    return weights[0]


# -- lesson 07: entropy ---------------------------------------------------------------------------


def test_keys_from_entropy():
    n = math.exp(math.log(4))  # a row even over n keys has entropy log n
    row = torch.tensor([0.25, 0.25, 0.25, 0.25, 0.0, 0.0])
    assert abs(-torch.special.xlogy(row, row).sum().item() - 1.3863) < 1e-4
    assert_pass(ex.check_keys_from_entropy(4))
    assert_pass(ex.check_keys_from_entropy(math.exp(1.3863)))
    assert_pass(ex.check_keys_from_entropy(torch.tensor(n)))
    assert_not_yet(ex.check_keys_from_entropy(None), "no answer yet")
    assert_not_yet(ex.check_keys_from_entropy(6), "log 6")
    assert_not_yet(ex.check_keys_from_entropy(1), "entropy 0")
    assert_not_yet(ex.check_keys_from_entropy(1.3863), "solve it for n")
    assert_not_yet(ex.check_keys_from_entropy(3), "solve it for n")
    for odd in ODD_ANSWERS:
        assert not ex.check_keys_from_entropy(odd)


def test_head_entropy(weights4):
    by_hand = -torch.special.xlogy(weights4, weights4).sum(-1)  # (h, T): every row
    assert_pass(ex.check_head_entropy(by_hand, weights4))
    torch.testing.assert_close(by_hand.mean(-1), mh.head_entropy(weights4))
    assert_not_yet(ex.check_head_entropy(None, weights4), "no answer yet")
    naive = -(weights4 * torch.log(weights4)).sum(-1)  # nan above the diagonal
    assert_not_yet(ex.check_head_entropy(naive, weights4), "xlogy")
    assert_not_yet(ex.check_head_entropy(-by_hand, weights4), "sign")
    per_head = mh.head_entropy(weights4)  # (h,): the mean, not the rows
    assert_not_yet(ex.check_head_entropy(per_head, weights4), "every row")
    assert_not_yet(ex.check_head_entropy(by_hand + 0.1, weights4), "hint")
    assert_not_yet(ex.check_head_entropy(torch.ones(3), weights4), "shape")
    for odd in ODD_ANSWERS:
        assert not ex.check_head_entropy(odd, weights4)


def test_sharpest_head(weights4):
    entropy = mh.head_entropy(weights4)
    best = int(entropy.argmin())
    assert_pass(ex.check_sharpest_head(best, weights4))
    assert_pass(ex.check_sharpest_head(entropy.argmin(), weights4))
    assert_not_yet(ex.check_sharpest_head(None, weights4), "no answer yet")
    assert_not_yet(ex.check_sharpest_head(int(entropy.argmax()), weights4), "LOWEST")
    if best + 1 != int(entropy.argmax()):
        assert_not_yet(ex.check_sharpest_head(best + 1, weights4), "from 0")
    assert_not_yet(ex.check_sharpest_head(float(best), weights4), "int")
    for odd in ODD_ANSWERS:
        assert not ex.check_sharpest_head(odd, weights4)


# -- lesson 08: training --------------------------------------------------------------------------


def test_initial_loss():
    assert_pass(ex.check_initial_loss(math.log(64)))
    assert_pass(ex.check_initial_loss(torch.tensor(64.0).log()))
    assert_not_yet(ex.check_initial_loss(None), "no answer yet")
    assert_not_yet(ex.check_initial_loss(6), "bits")
    assert_not_yet(ex.check_initial_loss(-math.log(64)), "MINUS")
    assert_not_yet(ex.check_initial_loss(1 / 64), "MINUS")
    assert_not_yet(ex.check_initial_loss(4.0), "1/64")
    for odd in ODD_ANSWERS:
        assert not ex.check_initial_loss(odd)


def test_shift_targets():
    ids = torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(3))
    good = torch.full_like(ids, -100)
    good[:, 3:] = ids[:, :-3]
    assert_pass(ex.check_shift_targets(good, ids, 3))
    assert_not_yet(ex.check_shift_targets(None, ids, 3), "no answer yet")
    no_ignore = good.clone()
    no_ignore[:, :3] = 0
    assert_not_yet(ex.check_shift_targets(no_ignore, ids, 3), "-100")
    future = torch.full_like(ids, -100)
    future[:, :-3] = ids[:, 3:]
    assert_not_yet(ex.check_shift_targets(future, ids, 3), "FUTURE")
    assert_not_yet(ex.check_shift_targets(good.float(), ids, 3), "integer")
    assert_not_yet(ex.check_shift_targets(good[:, 3:], ids, 3), "shape")
    assert_not_yet(ex.check_shift_targets(ids, ids, 3), "t - k")
    for odd in ODD_ANSWERS:
        assert not ex.check_shift_targets(odd, ids, 3)


def test_offset_attention(weights4):
    good = torch.diagonal(weights4, offset=-2, dim1=-2, dim2=-1).mean(-1)
    assert_pass(ex.check_offset_attention(good, weights4, 2))
    assert_pass(ex.check_offset_attention(mh.offset_attention(weights4, 2), weights4, 2))
    assert_not_yet(ex.check_offset_attention(None, weights4, 2), "no answer yet")
    above = torch.diagonal(weights4.transpose(-2, -1), offset=-2, dim1=-2, dim2=-1).mean(-1)
    assert_not_yet(ex.check_offset_attention(above, weights4, 2), "offset=-k")
    one_back = torch.diagonal(weights4, offset=-1, dim1=-2, dim2=-1).mean(-1)
    assert_not_yet(ex.check_offset_attention(one_back, weights4, 2), "torch.diagonal")
    assert_not_yet(ex.check_offset_attention(good[:2], weights4, 2), "shape")
    for odd in ODD_ANSWERS:
        assert not ex.check_offset_attention(odd, weights4, 2)
