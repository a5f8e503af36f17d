"""Independent oracles: numbers worked out by hand, loops instead of tensor tricks, and torch's own
``nn.MultiheadAttention``. None of these expected values is computed by the code under test."""

from __future__ import annotations

import math

import pytest
import torch
from torch.testing import assert_close

import mhsa_helpers as mh


def test_masked_attention_by_hand():
    queries = keys = torch.tensor([[1.0, 0.0], [0.0, 1.0]])  # (T=2, d_k=2)
    values = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    future = torch.tensor([[False, True], [False, False]])
    context, weights = mh.masked_attention(queries, keys, values, future)
    # Row 0 sees only key 0. Row 1: scores (0, 1) / sqrt(2), softmax by hand.
    e = math.exp(1 / math.sqrt(2))
    w1 = [1 / (1 + e), e / (1 + e)]
    assert_close(weights, torch.tensor([[1.0, 0.0], w1]))
    assert_close(context, torch.tensor([[1.0, 2.0], [w1[0] + 3 * w1[1], 2 * w1[0] + 4 * w1[1]]]))


def test_causal_mask_written_out():
    assert torch.equal(
        mh.causal_mask(3), torch.tensor([[0.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    )


def test_split_and_merge_heads_against_loops():
    x = torch.arange(2 * 3 * 8, dtype=torch.float32).view(2, 3, 8)  # (b, T, h * head_dim)
    split = mh.split_heads(x, 4)  # (b, h, T, head_dim)
    for b in range(2):
        for h in range(4):
            for t in range(3):
                assert torch.equal(split[b, h, t], x[b, t, 2 * h : 2 * h + 2])
    assert torch.equal(mh.merge_heads(split), x)


def _torch_reference(d, heads, T):
    ref = torch.nn.MultiheadAttention(d, heads, bias=True, batch_first=True).eval()
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    return ref, mask


def _load_into_torch(ref, q_w, k_w, v_w, q_b, k_b, v_b, out_proj):
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([q_w, k_w, v_w]))
        ref.in_proj_bias.copy_(torch.cat([q_b, k_b, v_b]))
        ref.out_proj.weight.copy_(out_proj.weight)
        ref.out_proj.bias.copy_(out_proj.bias)


@pytest.mark.parametrize("cls", [mh.FusedQKVMultiHeadAttention, mh.SDPAMultiHeadAttention])
def test_fused_and_sdpa_agree_with_torch(cls):
    torch.manual_seed(4)
    d, heads, T = 12, 3, 7
    ours = cls(d, d, T, 0.0, heads, qkv_bias=True).eval()
    ref, mask = _torch_reference(d, heads, T)
    q_w, k_w, v_w = ours.qkv.weight.split(d)
    q_b, k_b, v_b = ours.qkv.bias.split(d)
    _load_into_torch(ref, q_w, k_w, v_w, q_b, k_b, v_b, ours.out_proj)
    x = torch.randn(2, T, d)
    with torch.no_grad():
        want, want_weights = ref(x, x, x, attn_mask=mask, average_attn_weights=False)
        assert_close(ours(x), want, rtol=1e-5, atol=1e-5)
        _, weights = ours(x, return_weights=True)
    assert_close(weights, want_weights, rtol=1e-5, atol=1e-6)


def test_gqa_with_one_group_per_head_agrees_with_torch():
    torch.manual_seed(5)
    d, heads, T = 12, 3, 6
    ours = mh.GroupedQueryAttention(d, d, T, 0.0, heads, heads, qkv_bias=True).eval()
    ref, mask = _torch_reference(d, heads, T)
    layers = (ours.W_query, ours.W_key, ours.W_value)
    _load_into_torch(
        ref, *(lin.weight for lin in layers), *(lin.bias for lin in layers), ours.out_proj
    )
    x = torch.randn(2, T, d)
    with torch.no_grad():
        want, _ = ref(x, x, x, attn_mask=mask)
        assert_close(ours(x), want, rtol=1e-5, atol=1e-5)


def test_head_entropy_against_a_loop():
    weights = torch.rand(2, 3, 4, 4, generator=torch.Generator().manual_seed(1)).softmax(-1)
    want = torch.zeros(3, dtype=torch.float64)
    for h in range(3):
        rows = [weights[b, h, t].double() for b in range(2) for t in range(4)]
        want[h] = sum(-sum(w * math.log(w) for w in row.tolist()) for row in rows) / len(rows)
    assert_close(mh.head_entropy(weights.double()), want)


def test_offset_attention_against_a_loop():
    weights = torch.rand(2, 3, 5, 5, generator=torch.Generator().manual_seed(2)).softmax(-1)
    for k in range(5):
        want = [
            sum(float(weights[b, h, t, t - k]) for b in range(2) for t in range(k, 5))
            / (2 * (5 - k))
            for h in range(3)
        ]
        assert_close(mh.offset_attention(weights, k), torch.tensor(want))
