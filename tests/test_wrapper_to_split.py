"""The two multi-head versions are the same function: ``multihead_from_wrapper`` proves it."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.testing import assert_close

import mhsa_helpers as mh


@pytest.mark.parametrize("d_out", [1, 2])
@pytest.mark.parametrize("qkv_bias", [False, True])
def test_bitwise_equal_on_the_book_example(batch, d_out, qkv_bias):
    torch.manual_seed(123)
    wrapper = mh.MultiHeadAttentionWrapper(3, d_out, 6, 0.0, num_heads=2, qkv_bias=qkv_bias)
    split = mh.multihead_from_wrapper(wrapper)
    assert isinstance(split, mh.MultiHeadAttention)
    assert (split.num_heads, split.head_dim, split.d_out) == (2, d_out, 2 * d_out)
    assert torch.equal(wrapper(batch), split(batch))


def test_split_weights_are_the_stacked_head_weights():
    torch.manual_seed(0)
    wrapper = mh.MultiHeadAttentionWrapper(5, 3, 8, 0.1, num_heads=4, qkv_bias=True)
    split = mh.multihead_from_wrapper(wrapper)
    for i, head in enumerate(wrapper.heads):
        rows = slice(3 * i, 3 * (i + 1))
        for name in ("W_query", "W_key", "W_value"):
            assert torch.equal(getattr(split, name).weight[rows], getattr(head, name).weight)
            assert torch.equal(getattr(split, name).bias[rows], getattr(head, name).bias)
    assert torch.equal(split.out_proj.weight, torch.eye(12))
    assert torch.equal(split.out_proj.bias, torch.zeros(12))
    assert split.dropout.p == 0.1 and split.training


def test_follows_the_wrappers_mode_dtype_and_weights_are_copies():
    wrapper = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2).double().eval()
    split = mh.multihead_from_wrapper(wrapper)
    assert not split.training
    assert split.W_query.weight.dtype == torch.float64
    with torch.no_grad():
        split.W_query.weight.zero_()
    assert wrapper.heads[0].W_query.weight.abs().sum() > 0


@settings(max_examples=40, deadline=None)
@given(
    d_in=st.integers(1, 24),
    head_width=st.integers(1, 16),
    num_heads=st.integers(1, 6),
    batch=st.integers(1, 3),
    num_tokens=st.integers(1, 12),
    qkv_bias=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_outputs_agree_to_float32_rounding_for_any_sizes(
    d_in, head_width, num_heads, batch, num_tokens, qkv_bias, seed
):
    torch.manual_seed(seed)
    wrapper = mh.MultiHeadAttentionWrapper(
        d_in, head_width, 12, 0.0, num_heads=num_heads, qkv_bias=qkv_bias
    )
    split = mh.multihead_from_wrapper(wrapper)
    x = torch.randn(batch, num_tokens, d_in)
    assert_close(split(x), wrapper(x), rtol=1e-5, atol=1e-6)


def test_gpt2_size_agrees_to_float32_rounding():
    torch.manual_seed(0)
    wrapper = mh.MultiHeadAttentionWrapper(768, 64, 128, 0.0, num_heads=12).eval()
    split = mh.multihead_from_wrapper(wrapper)
    x = torch.randn(1, 128, 768)
    with torch.no_grad():
        assert_close(split(x), wrapper(x), rtol=1e-5, atol=1e-5)
