"""``assert_same_module``: the closing check of lessons 04-06 must be able to fail."""

from __future__ import annotations

import pytest
import torch

import mhsa_helpers as mh


def pair(dropout_ours=0.5, dropout_ref=0.5):
    torch.manual_seed(123)
    ours = mh.CausalAttention(3, 2, 6, dropout_ours)
    torch.manual_seed(123)
    reference = mh.CausalAttention(3, 2, 6, dropout_ref)
    return ours, reference


def test_equal_modules_pass_and_are_left_in_eval_mode(batch):
    ours, reference = pair()
    message = mh.assert_same_module(ours, reference, batch)
    assert message.startswith("inline CausalAttention == mhsa_helpers.CausalAttention")
    assert not ours.training and not reference.training


def test_different_parameter_fails(batch):
    ours, reference = pair()
    with torch.no_grad():
        ours.W_key.weight[0, 0] += 1e-6
    with pytest.raises(AssertionError, match=r"parameter W_key\.weight differs"):
        mh.assert_same_module(ours, reference, batch)


def test_different_dropout_fails_in_train_mode_only(batch):
    ours, reference = pair(dropout_ours=0.5, dropout_ref=0.1)
    with pytest.raises(AssertionError, match="outputs differ in train mode"):
        mh.assert_same_module(ours, reference, batch)


def test_different_buffers_or_layers_fail(batch):
    torch.manual_seed(123)
    ours = mh.MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)
    torch.manual_seed(123)
    reference = mh.FusedQKVMultiHeadAttention(3, 2, 6, 0.0, num_heads=2)
    with pytest.raises(AssertionError, match="state_dict keys differ"):
        mh.assert_same_module(ours, reference, batch)


def test_count_matmuls_counts_linear_layers_and_matrix_products(batch):
    torch.manual_seed(0)
    wrapper = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=4)
    split = mh.multihead_from_wrapper(wrapper)
    with mh.CountMatmuls() as counter:
        wrapper(batch)
    assert counter.counts == {"linear": 12, "matmul": 8}
    with mh.CountMatmuls() as counter:
        split(batch)
    assert counter.counts == {"linear": 4, "matmul": 2}
