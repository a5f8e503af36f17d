"""The attention core and what goes through it: masks, mixed precision with a cache, head metrics.

* ``attention_mask`` builds one mask from the causal buffer (with the KV-cache offset) and the
  padding; ``masked_attention``, the checked entry point, rejects a bad ``key_padding_mask``
  before any matmul, naming it;
* a KV cache works inside ``torch.autocast`` (bfloat16) over several steps, for every class that
  takes one, and matches the float32 result to bfloat16 precision;
* ``head_entropy`` and ``offset_attention`` accept every weight tensor the classes return, the
  zero rows of padded queries included (they are skipped);
* the wrapper checks its input once, not once per head; with a KV cache, every class checks its
  input and its padding mask once per call (not again when the cache stores the mask).
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.testing import assert_close

import mhsa_helpers as mh
from mhsa_helpers.attention.functional import attention_mask

D_IN, CONTEXT = 8, 10


# -- the mask builder ----------------------------------------------------------------------------


def test_attention_mask_causal_rows_follow_the_cache_offset():
    causal = mh.causal_mask(CONTEXT)  # the buffer the classes hold
    square = attention_mask(4, 4, causal=causal, scores_ndim=4)
    assert torch.equal(square, torch.ones(4, 4, dtype=torch.bool).triu(1))
    # Two new queries after three cached tokens: positions 3 and 4 see keys 0..3 and 0..4.
    chunk = attention_mask(2, 5, causal=causal, scores_ndim=4)
    assert chunk.tolist() == [[False] * 4 + [True], [False] * 5]
    # One new token sees every cached key: nothing to hide.
    assert attention_mask(1, 7, causal=causal, scores_ndim=4) is None
    assert attention_mask(3, 3, scores_ndim=4) is None


def test_attention_mask_combines_padding_and_causal_for_every_score_shape():
    pad = torch.tensor([[True, False, False], [False, False, True]])  # (b, T_k)
    causal = mh.causal_mask(3)
    for ndim, shape in ((3, (2, 1, 3)), (4, (2, 1, 1, 3))):
        hidden = attention_mask(3, 3, key_padding_mask=pad, scores_ndim=ndim)
        assert hidden.shape == shape
        both = attention_mask(3, 3, causal=causal, key_padding_mask=pad, scores_ndim=ndim)
        want = pad.view(shape) | causal.bool()
        assert torch.equal(both, want)
    unbatched = attention_mask(3, 3, key_padding_mask=pad[0], scores_ndim=2)
    assert torch.equal(unbatched, pad[0])


# -- masked_attention checks its key_padding_mask -------------------------------------------------


def _qkv(batch=2, heads=3, num_tokens=4):
    gen = torch.Generator().manual_seed(0)
    return [torch.randn(batch, heads, num_tokens, 5, generator=gen) for _ in range(3)]


BAD_PADDING = {
    "float": (lambda b, t: torch.zeros(b, t), TypeError, r"key_padding_mask.*dtype.*float32"),
    "int64": (lambda b, t: torch.zeros(b, t, dtype=torch.long), TypeError, r"dtype.*int64"),
    "uint8": (lambda b, t: torch.zeros(b, t, dtype=torch.uint8), TypeError, r"dtype.*uint8"),
    "list": (lambda b, t: [[False] * t] * b, TypeError, r"key_padding_mask.*list"),
    "wrong batch": (
        lambda b, t: torch.zeros(b + 1, t, dtype=torch.bool),
        ValueError,
        r"key_padding_mask.*\(2, 4\).*\(3, 4\)",
    ),
    "wrong length": (
        lambda b, t: torch.zeros(b, t - 1, dtype=torch.bool),
        ValueError,
        r"key_padding_mask.*shape.*\(2, 3\)",
    ),
    "per head": (
        lambda b, t: torch.zeros(b, 3, t, dtype=torch.bool),
        ValueError,
        r"key_padding_mask.*\(batch, num_keys\)",
    ),
    "meta device": (
        lambda b, t: torch.zeros(b, t, dtype=torch.bool, device="meta"),
        ValueError,
        r"key_padding_mask is on meta",
    ),
}


@pytest.mark.parametrize("case", BAD_PADDING)
def test_masked_attention_rejects_a_bad_key_padding_mask_before_any_matmul(case):
    make, error, match = BAD_PADDING[case]
    q, k, v = _qkv()
    with mh.CountMatmuls() as counter, pytest.raises(error, match=match):
        mh.masked_attention(q, k, v, key_padding_mask=make(2, 4))
    assert counter.counts == {"linear": 0, "matmul": 0}


def test_masked_attention_padding_mask_follows_the_batch_of_the_scores():
    q, k, v = _qkv()
    pad = torch.tensor([[False, False, True, True], [True, False, False, False]])
    _, weights = mh.masked_attention(q, k, v, key_padding_mask=pad)
    assert torch.all(weights.masked_select(pad[:, None, None, :]) == 0)
    assert_close(weights.sum(-1), torch.ones(2, 3, 4))
    # Unbatched (T, d) inputs take a (T_k,) mask, and refuse a batched one by name.
    _, one = mh.masked_attention(q[1, 0], k[1, 0], v[1, 0], key_padding_mask=pad[1])
    assert_close(one, weights[1, 0])
    with pytest.raises(ValueError, match=r"key_padding_mask.*\(num_keys,\)"):
        mh.masked_attention(q[0, 0], k[0, 0], v[0, 0], key_padding_mask=pad)
    # Leading dimensions that cannot broadcast are named, not left to torch.matmul.
    with pytest.raises(ValueError, match="broadcast"):
        mh.masked_attention(q, k[:1].expand(3, -1, -1, -1), v)


def test_masked_attention_takes_mixed_dtypes_only_where_autocast_casts_them():
    q, k, v = _qkv()
    with pytest.raises(TypeError, match="share one dtype"):
        mh.masked_attention(q.bfloat16(), k, v)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        context, _ = mh.masked_attention(q.bfloat16(), k, v)
        with pytest.raises(TypeError, match="share one dtype"):
            mh.masked_attention(q.double(), k, v)  # autocast never casts float64
    assert_close(context.float(), mh.masked_attention(q, k, v)[0], atol=3e-2, rtol=3e-2)


# -- a KV cache inside torch.autocast ------------------------------------------------------------


def _cache_module(kind: str) -> torch.nn.Module:
    torch.manual_seed(4)
    if kind == "multihead":
        return mh.MultiHeadAttention(D_IN, 8, CONTEXT, 0.0, num_heads=2, qkv_bias=True).eval()
    if kind == "fused":
        return mh.FusedQKVMultiHeadAttention(D_IN, 8, CONTEXT, 0.0, num_heads=2).eval()
    if kind == "sdpa":
        return mh.SDPAMultiHeadAttention(D_IN, 8, CONTEXT, 0.0, num_heads=2).eval()
    return mh.GroupedQueryAttention(D_IN, 8, CONTEXT, 0.0, num_heads=4, num_kv_groups=2).eval()


CACHE_KINDS = ["multihead", "fused", "sdpa", "gqa"]
BF16 = {"atol": 3e-2, "rtol": 3e-2}  # bfloat16 keeps 8 bits of mantissa


@pytest.mark.parametrize("kind", CACHE_KINDS)
@pytest.mark.parametrize("return_weights", [False, True])
def test_kv_cache_under_bfloat16_autocast_matches_float32(kind, return_weights):
    module = _cache_module(kind)
    x = torch.randn(2, 9, D_IN)
    pad = torch.zeros(2, 9, dtype=torch.bool)
    pad[1, :2] = True  # a left-padded second sequence
    full, full_weights = module(x, key_padding_mask=pad, return_weights=True)  # float32
    cache = mh.KVCache(CONTEXT)
    outs, start = [], 0
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for size in (3, 1, 1, 2, 1, 1):  # a prompt, then tokens and a chunk
            piece = slice(start, start + size)
            result = (
                module(
                    x[:, piece], key_padding_mask=pad[:, piece], cache=cache, return_weights=True
                )
                if return_weights
                else module(x[:, piece], key_padding_mask=pad[:, piece], cache=cache)
            )
            out = result[0] if return_weights else result
            if return_weights:
                assert result[1].shape[-2:] == (size, start + size)
                assert_close(result[1].float(), full_weights[:, :, piece, : start + size], **BF16)
            assert out.dtype == torch.bfloat16
            outs.append(out)
            start += size
    # The cache holds what the layer computed inside autocast: bfloat16, half the bytes.
    assert cache.keys.dtype == cache.values.dtype == torch.bfloat16
    assert len(cache) == 9 and torch.equal(cache.key_padding_mask, pad)
    stepped = torch.cat(outs, dim=1).float()
    assert torch.isfinite(stepped).all()
    assert_close(stepped, full, **BF16)


@pytest.mark.parametrize("kind", CACHE_KINDS)
def test_a_cache_filled_in_one_precision_refuses_another_before_any_matmul(kind):
    module = _cache_module(kind)
    x = torch.randn(1, 4, D_IN)
    cache = mh.KVCache(CONTEXT)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        module(x[:, :2], cache=cache)
    with mh.CountMatmuls() as counter, pytest.raises(TypeError, match=r"autocast.*reset"):
        module(x[:, 2:3], cache=cache)  # float32 keys after bfloat16 ones
    assert counter.counts == {"linear": 0, "matmul": 0} and len(cache) == 2
    cache.reset()
    module(x[:, :2], cache=cache)  # float32 first ...
    bfloat16 = torch.autocast("cpu", dtype=torch.bfloat16)
    with bfloat16, pytest.raises(TypeError, match=r"bfloat16.*inside torch.autocast.*float32"):
        module(x[:, 2:3], cache=cache)  # ... then bfloat16
    assert len(cache) == 2 and cache.keys.dtype == torch.float32


def test_a_float64_layer_keeps_float64_keys_inside_autocast():
    """Autocast never casts float64, so neither does the cache's dtype check."""
    module = _cache_module("multihead").double()
    x = torch.randn(1, 3, D_IN, dtype=torch.float64)
    cache = mh.KVCache(CONTEXT)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        steps = torch.cat([module(x[:, i : i + 1], cache=cache) for i in range(3)], dim=1)
    assert cache.keys.dtype == torch.float64 and steps.dtype == torch.float64
    assert_close(steps, module(x))


def test_character_model_generates_inside_autocast_with_and_without_caches():
    torch.manual_seed(0)
    model = mh.lm.CharTransformer(20, d_model=16, context_length=8, num_heads=2, num_layers=2)
    prompt = torch.randint(0, 20, (2, 3))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        cached = mh.lm.generate(model, prompt, 4, top_k=1)  # one bfloat16 cache per block
        uncached = mh.lm.generate(model, prompt, 4, top_k=1, use_cache=False)
    assert cached.shape == (2, 7) and torch.equal(cached[:, :3], prompt)
    assert int(cached.min()) >= 0 and int(cached.max()) < 20
    # bfloat16 rounds the two paths differently, which may flip a near tie of the logits.
    assert (cached == uncached).float().mean() >= 0.75


# -- head metrics take every weight tensor the classes return ------------------------------------


def _every_weights():
    """name -> weights from ``return_weights=True`` on a left-padded batch (zero rows inside)."""
    torch.manual_seed(2)
    x = torch.randn(2, 5, D_IN)
    pad = torch.tensor([[True, True, False, False, False], [False] * 5])
    causal = {
        "CausalAttention": mh.CausalAttention(D_IN, 6, CONTEXT, 0.0),
        "MultiHeadAttentionWrapper": mh.MultiHeadAttentionWrapper(D_IN, 3, CONTEXT, 0.0, 2),
        "MultiHeadAttention": mh.MultiHeadAttention(D_IN, 6, CONTEXT, 0.0, 3),
        "FusedQKVMultiHeadAttention": mh.FusedQKVMultiHeadAttention(D_IN, 6, CONTEXT, 0.0, 3),
        "SDPAMultiHeadAttention": mh.SDPAMultiHeadAttention(D_IN, 6, CONTEXT, 0.0, 3),
        "GroupedQueryAttention": mh.GroupedQueryAttention(D_IN, 8, CONTEXT, 0.0, 4, 2),
        "SelfAttentionV2": mh.SelfAttentionV2(D_IN, 6),
    }
    found = {name: m(x, key_padding_mask=pad, return_weights=True)[1] for name, m in causal.items()}
    v1 = mh.SelfAttentionV1(D_IN, 6)
    found["SelfAttentionV1 unbatched"] = v1(x[0], key_padding_mask=pad[0], return_weights=True)[1]
    cross = mh.CrossMultiHeadAttention(6, D_IN, 6, 2)
    all_pad = torch.tensor([[True] * 5, [False, False, False, True, True]])
    found["CrossMultiHeadAttention"] = cross(
        torch.randn(2, 3, 6), x, key_padding_mask=all_pad, return_weights=True
    )[1]
    cache = mh.KVCache(CONTEXT)
    module = causal["MultiHeadAttention"]
    module(x[:, :4], key_padding_mask=pad[:, :4], cache=cache)
    found["one cached step"] = module(x[:, 4:], cache=cache, return_weights=True)[1]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        found["bfloat16 autocast"] = module(x, key_padding_mask=pad, return_weights=True)[1]
    return found


WEIGHTS = _every_weights()


def _entropy_of_kept_rows(weights: torch.Tensor) -> torch.Tensor:
    """Independent oracle: per head, the mean entropy of the rows that are not all zero."""
    w = weights.double()
    while w.dim() < 4:
        w = w.unsqueeze(0)
    result = []
    for head in range(w.shape[1]):
        rows = [r for r in w[:, head].reshape(-1, w.shape[-1]) if r.sum() > 0]
        result.append(sum(-sum(p * math.log(p) for p in r.tolist() if p > 0) for r in rows))
        result[-1] /= len(rows)
    return torch.tensor(result, dtype=torch.float64)


@pytest.mark.parametrize("name", WEIGHTS)
def test_head_entropy_accepts_every_returned_weight_tensor(name):
    weights = WEIGHTS[name]
    entropy = mh.head_entropy(weights)
    heads = 1 if weights.dim() == 2 else weights.shape[-3]
    assert entropy.shape == (heads,) and torch.isfinite(entropy).all()
    assert_close(entropy.double(), _entropy_of_kept_rows(weights), atol=2e-2, rtol=1e-2)


def test_padded_rows_are_skipped_not_counted_as_zero():
    weights = WEIGHTS["MultiHeadAttention"]  # (2, 3, 5, 5); batch 0 has two zero rows
    zero_rows = (weights == 0).all(dim=-1)
    assert int(zero_rows.sum()) == 2 * 3
    assert torch.all(zero_rows[0, :, :2]) and not zero_rows[1].any()
    real = torch.cat([weights[0, :, 2:], weights[1]], dim=1)  # (3, 8, 5): the real queries
    assert_close(mh.head_entropy(weights), mh.head_entropy(real))
    with pytest.raises(ValueError, match="every row of weights is zero"):
        mh.head_entropy(torch.zeros(2, 3, 3))
    half = weights.clone()
    half[1, 2, 4] /= 2  # sums to 0.5: neither a distribution nor a query without keys
    with pytest.raises(ValueError, match=r"weights\[1, 2, 4\] sums to 0\.5"):
        mh.head_entropy(half)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    heads=st.integers(1, 3),
    num_tokens=st.integers(2, 6),
    zero=st.lists(st.booleans(), min_size=12, max_size=12),
    k=st.integers(0, 5),
)
def test_offset_attention_skips_zero_rows(heads, num_tokens, zero, k):
    k = k % num_tokens
    gen = torch.Generator().manual_seed(heads * 100 + num_tokens)
    weights = torch.softmax(torch.randn(2, heads, num_tokens, num_tokens, generator=gen), -1)
    dead = torch.tensor(zero[: 2 * num_tokens]).view(2, num_tokens)  # (b, T): padded queries
    if dead[:, k:].all():
        dead[0, -1] = False  # keep one query t >= k that sees keys
    weights = weights.masked_fill(dead[:, None, :, None], 0.0)  # (b, h, T, T)
    got = mh.offset_attention(weights, k)
    for head in range(heads):
        kept = [
            float(weights[b, head, t, t - k])
            for b in range(2)
            for t in range(k, num_tokens)
            if not dead[b, t]
        ]
        assert got[head].item() == pytest.approx(sum(kept) / len(kept), abs=1e-6)


def test_offset_attention_takes_one_head_and_rejects_all_zero_weights():
    assert_close(mh.offset_attention(torch.eye(4), 0), torch.ones(1))
    with pytest.raises(ValueError, match="every row of weights is zero"):
        mh.offset_attention(torch.zeros(1, 2, 4, 4), 1)
    with pytest.raises(ValueError, match=r"\(T, T\)"):
        mh.offset_attention(WEIGHTS["one cached step"], 0)  # (b, h, 1, 5): not square
    with pytest.raises(TypeError, match="TinyAttentionLM"):
        mh.offset_attention(mh.MultiHeadAttention(4, 4, 4, 0.0, 2), 0)


# -- one check per call ---------------------------------------------------------------------------


def test_the_wrapper_reads_its_input_once_for_the_nan_check(monkeypatch):
    from mhsa_helpers import validation

    calls = []
    original = validation.check_finite
    monkeypatch.setattr(
        validation, "check_finite", lambda x, **kw: calls.append(1) or original(x, **kw)
    )
    wrapper = mh.MultiHeadAttentionWrapper(D_IN, 2, CONTEXT, 0.0, num_heads=4)
    wrapper(torch.randn(2, 5, D_IN), return_weights=True)
    assert len(calls) == 1  # not once more per head
    x = torch.randn(2, 5, D_IN)
    x[1, 3, 0] = float("nan")
    with pytest.raises(ValueError, match="batch 1, token 3"):
        wrapper(x)


@pytest.mark.parametrize(
    "make",
    [
        lambda: mh.MultiHeadAttention(D_IN, 4, CONTEXT, 0.0, 2),
        lambda: mh.FusedQKVMultiHeadAttention(D_IN, 4, CONTEXT, 0.0, 2),
        lambda: mh.SDPAMultiHeadAttention(D_IN, 4, CONTEXT, 0.0, 2),
        lambda: mh.GroupedQueryAttention(D_IN, 4, CONTEXT, 0.0, 2, 1),
    ],
    ids=["MultiHeadAttention", "FusedQKV", "SDPA", "GroupedQueryAttention"],
)
def test_with_a_cache_input_and_padding_are_checked_once_per_call(make, monkeypatch):
    from mhsa_helpers.attention import base, functional, kv_cache

    calls: list[str] = []

    def counted(module, name):
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, **kw: calls.append(name) or original(*a, **kw))

    for module, name in [
        (base, "check_input"),
        (base, "check_key_padding_mask"),
        (kv_cache, "check_key_padding_mask"),
        (functional, "check_attention_inputs"),
    ]:
        counted(module, name)
    layer, cache = make().eval(), mh.KVCache(CONTEXT)
    x = torch.randn(2, 6, D_IN)
    padding = torch.tensor([[True, True, False, False, False, False], [False] * 6])
    for start, stop in ((0, 4), (4, 5), (5, 6)):  # a left-padded prompt, then two tokens
        calls.clear()
        layer(x[:, start:stop], key_padding_mask=padding[:, start:stop], cache=cache)
        assert sorted(calls) == ["check_input", "check_key_padding_mask"], (start, calls)
    assert cache.key_padding_mask is not None and torch.equal(cache.key_padding_mask, padding)
