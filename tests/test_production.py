"""The production variants compute what the teaching classes compute.

Fused QKV, SDPA, grouped-query attention, the KV cache and cross-attention are each compared with
``MultiHeadAttention`` or with an independent reference (torch's ``nn.MultiheadAttention``, or
K/V heads repeated by hand), on random configurations drawn by hypothesis.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.testing import assert_close

import mhsa_helpers as mh

FAST = settings(max_examples=25, deadline=None)


@st.composite
def mha_config(draw):
    num_heads = draw(st.integers(1, 4))
    return {
        "d_in": draw(st.integers(1, 8)),
        "d_out": num_heads * draw(st.integers(1, 4)),
        "context_length": draw(st.integers(1, 12)),
        "num_heads": num_heads,
        "qkv_bias": draw(st.booleans()),
        "batch": draw(st.integers(1, 3)),
        "seed": draw(st.integers(0, 2**16)),
    }


def build_mha(cfg, dropout=0.0):
    torch.manual_seed(cfg["seed"])
    module = mh.MultiHeadAttention(
        cfg["d_in"],
        cfg["d_out"],
        cfg["context_length"],
        dropout,
        cfg["num_heads"],
        qkv_bias=cfg["qkv_bias"],
    )
    return module.eval()


def random_input(cfg, num_tokens=None):
    num_tokens = cfg["context_length"] if num_tokens is None else num_tokens
    return torch.randn(cfg["batch"], num_tokens, cfg["d_in"])


# -- fused QKV and SDPA ------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [mh.FusedQKVMultiHeadAttention, mh.SDPAMultiHeadAttention])
@FAST
@given(cfg=mha_config(), data=st.data())
def test_fused_and_sdpa_equal_multihead(cls, cfg, data):
    mha = build_mha(cfg)
    x = random_input(cfg, data.draw(st.integers(1, cfg["context_length"])))
    module = cls.from_multihead(mha)
    assert not module.training
    want, want_weights = mha(x, return_weights=True)
    assert_close(module(x), want)
    got, weights = module(x, return_weights=True)
    assert_close(got, want)
    assert_close(weights, want_weights)


def test_fused_weight_is_the_three_matrices_stacked():
    mha = mh.MultiHeadAttention(3, 4, 6, 0.0, num_heads=2, qkv_bias=True)
    fused = mh.FusedQKVMultiHeadAttention.from_multihead(mha)
    assert fused.training
    assert torch.equal(fused.qkv.weight[:4], mha.W_query.weight)
    assert torch.equal(fused.qkv.weight[4:8], mha.W_key.weight)
    assert torch.equal(fused.qkv.weight[8:], mha.W_value.weight)
    assert torch.equal(fused.qkv.bias[4:8], mha.W_key.bias)
    n_params = sum(p.numel() for p in mha.parameters())
    assert sum(p.numel() for p in fused.parameters()) == n_params
    with pytest.raises(TypeError, match="MultiHeadAttention"):
        mh.SDPAMultiHeadAttention.from_multihead(fused)


def test_sdpa_book_example_matches_multihead(journey):
    torch.manual_seed(123)
    mha = mh.MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)
    sdpa = mh.SDPAMultiHeadAttention.from_multihead(mha)
    assert_close(sdpa(journey.batch), mha(journey.batch))


def test_sdpa_dropout_active_in_training_only():
    torch.manual_seed(0)
    module = mh.SDPAMultiHeadAttention(8, 8, 10, 0.5, num_heads=2)
    x = torch.randn(2, 10, 8)
    module.train()
    assert not torch.equal(module(x), module(x))
    module.eval()
    assert torch.equal(module(x), module(x))
    mha = build_mha(
        {"d_in": 8, "d_out": 8, "context_length": 10, "num_heads": 2, "qkv_bias": False, "seed": 1}
    )
    no_dropout = mh.SDPAMultiHeadAttention.from_multihead(mha)
    no_dropout.dropout.p = 0.5
    assert_close(no_dropout(x), mha(x))  # eval: the rate does not matter


# -- grouped-query attention ---------------------------------------------------------------------


@st.composite
def gqa_config(draw):
    num_kv_groups = draw(st.integers(1, 3))
    num_heads = num_kv_groups * draw(st.integers(1, 3))
    return {
        "d_in": draw(st.integers(1, 8)),
        "head_dim": draw(st.integers(1, 4)),
        "context_length": draw(st.integers(1, 10)),
        "num_heads": num_heads,
        "num_kv_groups": num_kv_groups,
        "qkv_bias": draw(st.booleans()),
        "batch": draw(st.integers(1, 3)),
        "seed": draw(st.integers(0, 2**16)),
    }


def build_gqa(cfg, dropout=0.0):
    torch.manual_seed(cfg["seed"])
    module = mh.GroupedQueryAttention(
        cfg["d_in"],
        cfg["num_heads"] * cfg["head_dim"],
        cfg["context_length"],
        dropout,
        cfg["num_heads"],
        cfg["num_kv_groups"],
        qkv_bias=cfg["qkv_bias"],
    )
    return module.eval()


def reference_gqa(module, x):
    """Independent GQA: per query head, pick its K/V group by index, loop, softmax by hand."""
    b, t, _ = x.shape
    hd = module.head_dim
    q = module.W_query(x).reshape(b, t, module.num_heads, hd)
    k = module.W_key(x).reshape(b, t, module.num_kv_groups, hd)
    v = module.W_value(x).reshape(b, t, module.num_kv_groups, hd)
    group = module.num_heads // module.num_kv_groups
    future = torch.ones(t, t).triu(1).bool()
    heads, weights = [], []
    for head in range(module.num_heads):
        kv = head // group  # K/V head shared by query heads kv*group .. kv*group+group-1
        scores = torch.einsum("bid,bjd->bij", q[:, :, head], k[:, :, kv]) / math.sqrt(hd)
        w = scores.masked_fill(future, float("-inf")).softmax(-1)  # (b, t, t)
        heads.append(w @ v[:, :, kv])
        weights.append(w)
    return module.out_proj(torch.cat(heads, dim=-1)), torch.stack(weights, dim=1)


@FAST
@given(cfg=gqa_config(), data=st.data())
def test_gqa_equals_reference_with_repeated_kv_heads(cfg, data):
    module = build_gqa(cfg)
    x = random_input(cfg, data.draw(st.integers(1, cfg["context_length"])))
    want, want_weights = reference_gqa(module, x)
    assert_close(module(x), want)
    got, weights = module(x, return_weights=True)
    assert_close(got, want)
    assert_close(weights, want_weights)


@FAST
@given(cfg=mha_config())
def test_gqa_with_one_group_per_head_is_multihead(cfg):
    mha = build_mha(cfg)
    gqa = mh.GroupedQueryAttention(
        cfg["d_in"],
        cfg["d_out"],
        cfg["context_length"],
        0.0,
        cfg["num_heads"],
        num_kv_groups=cfg["num_heads"],
        qkv_bias=cfg["qkv_bias"],
    ).eval()
    gqa.load_state_dict(mha.state_dict())  # same keys and shapes
    x = random_input(cfg)
    assert_close(gqa(x), mha(x))


def test_gqa_parameter_counts():
    d, h, hd = 48, 8, 6
    for groups in (1, 2, 4, 8):
        gqa = mh.GroupedQueryAttention(d, d, 4, 0.0, h, groups)
        kv = groups * hd
        want = d * d + 2 * d * kv + d * d + d  # W_query, W_key + W_value, out_proj (+ bias)
        assert sum(p.numel() for p in gqa.parameters()) == want
    mqa = mh.GroupedQueryAttention(d, d, 4, 0.0, h, 1)
    assert mqa.W_key.weight.shape == (hd, d)


# -- KV cache ------------------------------------------------------------------------------------


def chunk_sizes(data, total):
    sizes = []
    while sum(sizes) < total:
        sizes.append(data.draw(st.integers(1, total - sum(sizes))))
    return sizes


def _sdpa_from_cfg(cfg):
    return mh.SDPAMultiHeadAttention.from_multihead(build_mha(cfg))


@pytest.mark.parametrize("kind", ["sdpa", "gqa"])
@FAST
@given(data=st.data())
def test_kv_cache_token_by_token_and_chunks_equal_full_forward(kind, data):
    if kind == "sdpa":
        cfg = data.draw(mha_config())
        module = _sdpa_from_cfg(cfg)
    else:
        cfg = data.draw(gqa_config())
        module = build_gqa(cfg)
    total = data.draw(st.integers(1, cfg["context_length"]))
    x = random_input(cfg, total)
    full, full_weights = module(x, return_weights=True)
    cache = mh.KVCache(cfg["context_length"])
    steps = [module(x[:, i : i + 1], cache=cache) for i in range(total)]
    assert len(cache) == total
    assert_close(torch.cat(steps, dim=1), full)
    # The same cache after reset(), in random chunks; also the weights of the last chunk.
    cache.reset()
    assert len(cache) == 0
    outs, start = [], 0
    for size in chunk_sizes(data, total):
        out, weights = module(x[:, start : start + size], return_weights=True, cache=cache)
        assert weights.shape[-2:] == (size, start + size)
        assert_close(weights, full_weights[:, :, start : start + size, : start + size])
        outs.append(out)
        start += size
        assert len(cache) == start
    assert_close(torch.cat(outs, dim=1), full)
    cache.reset()
    outs, start = [], 0
    for size in chunk_sizes(data, total):
        outs.append(module(x[:, start : start + size], cache=cache))  # SDPA path, mask by chunk
        start += size
    assert_close(torch.cat(outs, dim=1), full)


def test_kv_cache_stores_only_the_kv_groups():
    module = mh.GroupedQueryAttention(16, 16, 8, 0.0, num_heads=8, num_kv_groups=2).eval()
    cache = mh.KVCache(8)
    module(torch.randn(3, 5, 16), cache=cache)
    assert cache.keys.shape == (3, 2, 5, 2)
    assert cache.nbytes == 2 * 3 * 2 * 5 * 2 * 4
    assert "5/8 tokens" in repr(cache)


def test_kv_cache_errors():
    module = mh.SDPAMultiHeadAttention(4, 4, 6, 0.0, num_heads=2).eval()
    cache = mh.KVCache(6)
    module(torch.randn(2, 4, 4), cache=cache)
    with pytest.raises(ValueError, match="context_length=6"):
        module(torch.randn(2, 3, 4), cache=cache)
    assert len(cache) == 4  # nothing appended by the failed call
    with pytest.raises(ValueError, match="batch size"):
        module(torch.randn(3, 1, 4), cache=cache)
    with pytest.raises(TypeError, match="dtype"):
        module.double()(torch.randn(2, 1, 4, dtype=torch.float64), cache=cache)
    module.float()
    # The module's own context_length also bounds a bigger cache (its mask has that size).
    big = mh.KVCache(100)
    module(torch.randn(2, 5, 4), cache=big)
    with pytest.raises(ValueError, match="context_length=6"):
        module(torch.randn(2, 2, 4), cache=big)
    other = mh.SDPAMultiHeadAttention(4, 6, 6, 0.0, num_heads=2).eval()
    with pytest.raises(ValueError, match="another layer"):
        other(torch.randn(2, 1, 4), cache=cache)  # a cache belongs to one layer
    with pytest.raises(ValueError, match="context_length"):
        mh.KVCache(0)
    with pytest.raises(TypeError, match="context_length"):
        mh.KVCache(2.5)


# -- cross-attention -----------------------------------------------------------------------------


@st.composite
def cross_config(draw):
    num_heads = draw(st.integers(1, 4))
    return {
        "d_out": num_heads * draw(st.integers(1, 4)),
        "d_kv": draw(st.integers(1, 8)),
        "num_heads": num_heads,
        "qkv_bias": draw(st.booleans()),
        "batch": draw(st.integers(1, 3)),
        "n_q": draw(st.integers(1, 6)),
        "n_kv": draw(st.integers(1, 7)),
        "seed": draw(st.integers(0, 2**16)),
    }


@FAST
@given(cfg=cross_config())
def test_cross_attention_equals_torch_multihead_attention(cfg):
    d_out, d_kv = cfg["d_out"], cfg["d_kv"]
    torch.manual_seed(cfg["seed"])
    ours = mh.CrossMultiHeadAttention(
        d_out, d_kv, d_out, cfg["num_heads"], qkv_bias=cfg["qkv_bias"]
    ).eval()
    theirs = torch.nn.MultiheadAttention(
        d_out, cfg["num_heads"], bias=True, kdim=d_kv, vdim=d_kv, batch_first=True
    ).eval()
    layers = (ours.W_query, ours.W_key, ours.W_value)
    with torch.no_grad():
        if theirs._qkv_same_embed_dim:  # d_kv == d_out: torch stores one in_proj_weight
            theirs.in_proj_weight.copy_(torch.cat([lin.weight for lin in layers]))
        else:
            theirs.q_proj_weight.copy_(ours.W_query.weight)
            theirs.k_proj_weight.copy_(ours.W_key.weight)
            theirs.v_proj_weight.copy_(ours.W_value.weight)
        if cfg["qkv_bias"]:
            theirs.in_proj_bias.copy_(torch.cat([lin.bias for lin in layers]))
        else:
            theirs.in_proj_bias.zero_()
        theirs.out_proj.load_state_dict(ours.out_proj.state_dict())
    query = torch.randn(cfg["batch"], cfg["n_q"], d_out)
    key_value = torch.randn(cfg["batch"], cfg["n_kv"], d_kv)
    out, weights = ours(query, key_value, return_weights=True)
    want, want_weights = theirs(
        query, key_value, key_value, need_weights=True, average_attn_weights=False
    )
    assert weights.shape == (cfg["batch"], cfg["num_heads"], cfg["n_q"], cfg["n_kv"])
    assert_close(out, want)
    assert_close(weights, want_weights)
    assert_close(ours(query, key_value), want)


def test_cross_attention_has_no_mask_and_sizes_may_differ():
    torch.manual_seed(0)
    module = mh.CrossMultiHeadAttention(d_q=5, d_kv=3, d_out=4, num_heads=2).eval()
    out, weights = module(torch.randn(2, 4, 5), torch.randn(2, 7, 3), return_weights=True)
    assert out.shape == (2, 4, 4)
    assert (weights > 0).all()  # every target token sees every source token
    assert_close(weights.sum(-1), torch.ones(2, 2, 4))


def test_cross_attention_errors():
    module = mh.CrossMultiHeadAttention(d_q=5, d_kv=3, d_out=4, num_heads=2)
    with pytest.raises(ValueError, match="query"):
        module(torch.randn(2, 4, 6), torch.randn(2, 7, 3))
    with pytest.raises(ValueError, match="key_value"):
        module(torch.randn(2, 4, 5), torch.randn(2, 7, 5))
    with pytest.raises(ValueError, match="batch size"):
        module(torch.randn(2, 4, 5), torch.randn(3, 7, 3))
    with pytest.raises(TypeError, match="key_value"):
        module(torch.randn(2, 4, 5), torch.randint(0, 5, (2, 7, 3)))
    with pytest.raises(ValueError, match="key_value"):
        module(torch.randn(2, 4, 5), torch.randn(7, 3))
    with pytest.raises(ValueError, match="d_out=5, num_heads=2"):
        mh.CrossMultiHeadAttention(5, 3, 5, 2)
    with pytest.raises(ValueError, match="dropout"):
        mh.CrossMultiHeadAttention(5, 3, 4, 2, dropout=1.0)
    with pytest.raises(TypeError, match="d_kv"):
        mh.CrossMultiHeadAttention(5, "3", 4, 2)


# -- shared behaviour: gradients and input checks ------------------------------------------------


def all_modules(dropout=0.0):
    torch.manual_seed(3)
    return {
        "fused": mh.FusedQKVMultiHeadAttention(6, 8, 5, dropout, 4, qkv_bias=True),
        "sdpa": mh.SDPAMultiHeadAttention(6, 8, 5, dropout, 4, qkv_bias=True),
        "gqa": mh.GroupedQueryAttention(6, 8, 5, dropout, 4, 2, qkv_bias=True),
        "mqa": mh.GroupedQueryAttention(6, 8, 5, dropout, 4, 1, qkv_bias=True),
    }


@pytest.mark.parametrize("name", ["fused", "sdpa", "gqa", "mqa", "cross"])
def test_gradients_reach_every_parameter(name):
    x = torch.randn(2, 5, 6)
    if name == "cross":
        module = mh.CrossMultiHeadAttention(6, 3, 8, 4, qkv_bias=True)
        out = module(x, torch.randn(2, 4, 3))
    else:
        module = all_modules()[name]
        out = module(x)
    out.square().sum().backward()
    for pname, param in module.named_parameters():
        assert param.grad is not None, pname
        assert param.grad.abs().sum() > 0, pname
    assert [n for n, _ in module.named_buffers()] == ([] if name == "cross" else ["mask"])


def test_gradients_flow_through_the_cache():
    module = mh.GroupedQueryAttention(6, 8, 5, 0.0, 4, 2)
    cache = mh.KVCache(5)
    x = torch.randn(1, 5, 6)
    out = torch.cat([module(x[:, :2], cache=cache), module(x[:, 2:], cache=cache)], dim=1)
    out.sum().backward()
    assert all(p.grad is not None for p in module.parameters())


@pytest.mark.parametrize("name", ["fused", "sdpa", "gqa", "mqa"])
def test_bad_inputs_raise_before_any_matmul(name):
    module = all_modules()[name]
    with pytest.raises(ValueError, match="context_length=5"):
        module(torch.randn(2, 6, 6))
    with pytest.raises(TypeError, match="floating-point"):
        module(torch.randint(0, 3, (2, 4, 6)))
    with pytest.raises(ValueError, match="d_in=6"):
        module(torch.randn(2, 4, 7))
    with pytest.raises(ValueError, match="dimensions"):
        module(torch.randn(4, 6))
    with pytest.raises(ValueError, match="at least one token"):
        module(torch.randn(2, 0, 6))
    with pytest.raises(TypeError, match="dtype"):
        module(torch.randn(2, 4, 6, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        module([[1.0] * 6])


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: mh.FusedQKVMultiHeadAttention(6, 9, 5, 0.0, 2), "d_out=9, num_heads=2"),
        (lambda: mh.SDPAMultiHeadAttention(6, 8, 5, 1.5, 2), "dropout=1.5"),
        (lambda: mh.SDPAMultiHeadAttention(6, 8, 0, 0.0, 2), "context_length=0"),
        (lambda: mh.GroupedQueryAttention(6, 8, 5, 0.0, 4, 3), "num_kv_groups=3, num_heads=4"),
        (lambda: mh.GroupedQueryAttention(6, 8, 5, 0.0, 4, 0), "num_kv_groups=0"),
        (lambda: mh.GroupedQueryAttention(6, 9, 5, 0.0, 4, 2), "d_out=9, num_heads=4"),
    ],
)
def test_bad_arguments_raise_value_error(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_sdpa_return_weights_documented_and_causal():
    assert "falls back" in mh.SDPAMultiHeadAttention.__doc__
    module = all_modules()["sdpa"].eval()
    _, weights = module(torch.randn(2, 5, 6), return_weights=True)
    assert weights.shape == (2, 4, 5, 5)
    assert torch.equal(weights.triu(1), torch.zeros_like(weights))
    assert_close(weights.sum(-1), torch.ones(2, 4, 5))
