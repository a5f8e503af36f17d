"""Lesson 13's parts: RoPE, RMSNorm, SwiGLU, ModernAttention and ModernDecoderLayer.

Properties (hypothesis) rather than examples: the KV cache with RoPE offsets equals one pass, a
padded batch equals each sentence alone, RoPE scores depend only on the offset, RMSNorm is
``torch.nn.RMSNorm``, the two pairing conventions differ by a permutation. Equality with Hugging
Face's layers: tests/test_modern_hf.py.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.testing import assert_close

import mhsa_helpers as mh

TOL = {"rtol": 1e-5, "atol": 1e-5}


@st.composite
def layers(draw, *, window: bool = True):
    """A small random ModernDecoderLayer (eval mode) and its sizes."""
    kv = draw(st.sampled_from([1, 2]))
    heads = kv * draw(st.sampled_from([1, 2]))
    head_dim = draw(st.sampled_from([2, 4]))
    d_model = draw(st.sampled_from([4, 8]))
    context = 12
    layer = mh.ModernDecoderLayer(
        d_model,
        context,
        heads,
        kv,
        head_dim=head_dim,
        hidden_dim=draw(st.sampled_from([None, 6])),
        qk_norm=draw(st.booleans()),
        sliding_window=draw(st.sampled_from([None, 1, 3])) if window else None,
        rope_base=draw(st.sampled_from([10.0, 10000.0])),
    )
    torch.manual_seed(draw(st.integers(0, 2**16)))
    with torch.no_grad():  # norms off their initial ones
        for name, p in layer.named_parameters():
            if "norm" in name:
                p.add_(0.3 * torch.randn_like(p))
    return layer.eval(), d_model, context


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    built=layers(),
    chunks=st.lists(st.integers(1, 4), min_size=1, max_size=5),
    weights=st.booleans(),
)
def test_cache_in_chunks_with_offsets_equals_one_pass(built, chunks, weights):
    """Token at a time or in chunks: each chunk is rotated at its true positions (the offset)."""
    layer, d_model, context = built
    total = min(sum(chunks), context)
    x = torch.randn(2, total, d_model)  # (b, T, d)
    full = layer(x, return_weights=weights)
    cache, outs, start = mh.KVCache(context), [], 0
    while start < total:
        size = chunks[len(outs) % len(chunks)]
        out = layer(x[:, start : start + size], cache=cache, return_weights=weights)
        if weights:
            out, w = out
            end = min(start + size, total)
            assert_close(w, full[1][:, :, start:end, :end], **TOL)
        outs.append(out)
        start += size
    assert len(cache) == total
    assert_close(torch.cat(outs, dim=1), full[0] if weights else full, **TOL)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    built=layers(window=False),
    pattern=st.lists(st.lists(st.booleans(), min_size=6, max_size=6), min_size=1, max_size=3),
    through_cache=st.booleans(),
)
def test_padded_batch_equals_each_sentence_alone(built, pattern, through_cache):
    """Pads anywhere (left, right, middle, a whole row): the real tokens get the outputs they get
    alone, since positions count real tokens only; no NaN. (A sliding window counts positions,
    pads included, so it is left out here.)"""
    layer, d_model, context = built
    pad = torch.tensor(pattern)  # (b, 6)
    x = 100 * torch.randn(pad.shape[0], 6, d_model)  # (b, 6, d): large pads would show a leak
    x[~pad] = torch.randn(int((~pad).sum()), d_model)
    if through_cache:
        cache = mh.KVCache(context)
        out = torch.cat(
            [
                layer(x[:, i : i + 1], key_padding_mask=pad[:, i : i + 1], cache=cache)
                for i in range(6)
            ],
            dim=1,
        )  # (b, 6, d)
    else:
        out = layer(x, key_padding_mask=pad)  # (b, 6, d)
    assert torch.isfinite(out).all()
    for row in range(pad.shape[0]):
        real = ~pad[row]
        if real.any():
            assert_close(out[row, real], layer(x[row, real][None])[0], **TOL)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    m=st.integers(0, 40),
    n=st.integers(0, 40),
    shift=st.integers(0, 20),
    head_dim=st.sampled_from([2, 8, 16]),
    seed=st.integers(0, 2**16),
)
def test_rope_score_depends_only_on_the_offset(m, n, shift, head_dim, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, 1, 1, 1, head_dim, generator=gen)  # (1, 1, 1, hd) each
    rope = mh.RotaryEmbedding(head_dim, 64)

    def score(i: int, j: int) -> torch.Tensor:
        cos_i, sin_i = rope(q, offset=i)
        cos_j, sin_j = rope(k, offset=j)
        rq, _ = mh.apply_rotary_pos_emb(q, q, cos_i, sin_i)
        rk, _ = mh.apply_rotary_pos_emb(k, k, cos_j, sin_j)
        return (rq * rk).sum()

    assert_close(score(m + shift, n + shift), score(m, n), rtol=1e-4, atol=1e-4)
    assert_close(score(m, m), (q * k).sum(), rtol=1e-5, atol=1e-5)  # offset 0: no rotation


def test_cached_tables_equal_fresh_ones_at_every_offset():
    rope = mh.RotaryEmbedding(8, 20, base=100.0)
    x = torch.zeros(1, 1, 5, 8)
    for offset in range(16):
        cos, sin = rope(x, offset=offset)
        fresh_cos, fresh_sin = mh.rope_cos_sin(torch.arange(offset, offset + 5), 8, 100.0)
        assert torch.equal(cos, fresh_cos) and torch.equal(sin, fresh_sin)
    assert "cos_cached" not in rope.state_dict()  # recomputed, not learned


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    width=st.integers(1, 16),
    eps=st.sampled_from([1e-6, 1e-5, 0.1]),
    dtype=st.sampled_from([torch.float32, torch.float64]),
    seed=st.integers(0, 2**16),
)
def test_rmsnorm_equals_torch_rmsnorm(shape, width, eps, dtype, seed):
    torch.manual_seed(seed)
    ours, torchs = mh.RMSNorm(width, eps=eps).to(dtype), torch.nn.RMSNorm(width, eps=eps).to(dtype)
    with torch.no_grad():
        ours.weight.normal_()
        torchs.weight.copy_(ours.weight)
    x = 3 * torch.randn(*shape, width, dtype=dtype)
    assert_close(ours(x), torchs(x))


def test_rmsnorm_keeps_bfloat16_and_computes_in_float32():
    x = torch.randn(2, 3, 8).to(torch.bfloat16)
    out = mh.RMSNorm(8).to(torch.bfloat16)(x)
    assert out.dtype == torch.bfloat16  # the statistics in float32, the result cast back
    assert torch.equal(out, mh.RMSNorm(8)(x.float()).to(torch.bfloat16))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(head_dim=st.sampled_from([2, 4, 8, 16]), offset=st.integers(0, 30), seed=st.integers(0, 99))
def test_interleaved_equals_rotate_half_up_to_a_permutation(head_dim, offset, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(2, 3, 5, head_dim, generator=gen)  # (b, h, T, hd)
    cos, sin = mh.rope_cos_sin(torch.arange(offset, offset + 5), head_dim)
    perm = mh.interleaved_to_half(head_dim)
    interleaved = mh.apply_rotary_interleaved(x, cos, sin)  # (b, h, T, hd)
    half, _ = mh.apply_rotary_pos_emb(x[..., perm], x[..., perm], cos, sin)
    assert_close(interleaved[..., perm], half)
    if head_dim > 2:  # one pair: the two conventions are the same function
        assert not torch.allclose(interleaved, mh.apply_rotary_pos_emb(x, x, cos, sin)[0])


def test_swiglu_width_rule_keeps_the_gelu_parameter_count():
    assert mh.swiglu_hidden_dim(4096, 256) == 11008  # Llama 2 7B's intermediate_size
    for d in (48, 96, 768):
        swiglu = mh.SwiGLU(d)
        gelu_count = 2 * d * 4 * d  # fc_in and fc_out, no biases
        count = sum(p.numel() for p in swiglu.parameters())
        assert swiglu.hidden_dim == 8 * d // 3 and abs(count - gelu_count) < 3 * d


class Shifted(mh.RotaryEmbedding):
    """The tables of positions 7 .. instead of 0 ..: every token far from position 0."""

    def forward(self, x, offset=0, position_ids=None):
        return super().forward(x, offset + 7)


def test_values_are_never_rotated():
    """A single token attends to itself only, so its output is o_proj(v): at position 7 as at 0,
    since RoPE turns q and k (whose score no longer matters) and never v."""
    torch.manual_seed(3)
    attn = mh.ModernAttention(8, 16, 2, 1).eval()
    x = torch.randn(3, 1, 8)  # (b, 1, d)
    value_path = attn.o_proj(attn.v_proj(x).repeat(1, 1, 2))  # (b, 1, d): 2 heads share v
    assert_close(attn(x), value_path, **TOL)
    attn.rotary_emb = Shifted(attn.head_dim, 16 + 7)
    assert_close(attn(x), value_path, **TOL)
    two = torch.randn(1, 2, 8)  # with two tokens the shift cancels in the scores as well
    shifted = attn(two)
    attn.rotary_emb = mh.RotaryEmbedding(attn.head_dim, 16)
    assert_close(shifted, attn(two), **TOL)


BAD = [
    (lambda: mh.RMSNorm(0), ValueError, "normalized_shape=0"),
    (lambda: mh.RMSNorm(4, eps=-1.0), ValueError, "eps"),
    (lambda: mh.RMSNorm(4)(torch.zeros(2, 5)), ValueError, "normalized_shape=4"),
    (lambda: mh.RMSNorm(4)(torch.zeros(2, 4, dtype=torch.long)), TypeError, "floating"),
    (lambda: mh.SwiGLU(4, hidden_dim=0), ValueError, "hidden_dim=0"),
    (lambda: mh.SwiGLU(4, bias="no"), TypeError, "bias"),
    (lambda: mh.SwiGLU(4)(torch.zeros(1, 3)), ValueError, "d_model=4"),
    (lambda: mh.swiglu_hidden_dim(True), TypeError, "d_model"),
    (lambda: mh.RotaryEmbedding(5, 8), ValueError, "head_dim must be even"),
    (lambda: mh.RotaryEmbedding(4, 8, base=1.0), ValueError, "base"),
    (lambda: mh.RotaryEmbedding(4, 8)(torch.zeros(1, 6, 4), offset=3), ValueError, "offset=3"),
    (lambda: mh.RotaryEmbedding(4, 8)(torch.zeros(1, 2, 4), offset=-1), ValueError, "offset=-1"),
    (lambda: mh.rope_cos_sin(torch.arange(3.0), 4), TypeError, "integer"),
    (lambda: mh.ModernAttention(8, 10, 4, 3), ValueError, "num_kv_groups=3"),
    (lambda: mh.ModernAttention(8, 10, 3, 1), ValueError, "d_model=8, num_heads=3"),
    (lambda: mh.ModernAttention(8, 10, 2, 1, head_dim=3), ValueError, "head_dim must be even"),
    (lambda: mh.ModernAttention(8, 10, 2, 1, sliding_window=0), ValueError, "sliding_window=0"),
    (lambda: mh.ModernAttention(8, 10, 2, 1, qk_norm=1), TypeError, "qk_norm"),
    (lambda: mh.ModernAttention(8, 10, 2, 1)(torch.zeros(1, 11, 8)), ValueError, "context_length"),
    (lambda: mh.ModernAttention(8, 10, 2, 1)(torch.zeros(1, 3, 7)), ValueError, "8"),
    (
        lambda: mh.ModernDecoderLayer(8, 10, 2, 1)(torch.zeros(1, 3, 8), cache=[]),
        TypeError,
        "cache must be a KVCache",
    ),
    (
        lambda: mh.ModernDecoderLayer(8, 10, 2, 1)(
            torch.zeros(1, 3, 8), key_padding_mask=torch.zeros(1, 3)
        ),
        TypeError,
        "key_padding_mask",
    ),
    (
        lambda: mh.ModernDecoderLayer(8, 10, 2, 1)(torch.full((1, 2, 8), float("nan"))),
        ValueError,
        "NaN",
    ),
]


@pytest.mark.parametrize(
    ("make", "error", "match"),
    BAD,
    ids=[f"{error.__name__}-{match}" for _, error, match in BAD],
)
def test_bad_input_is_refused_naming_the_parameter(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_an_interleaved_checkpoint_loads_with_its_query_and_key_rows_permuted():
    """A model trained with interleaved pairs (the RoPE paper, Meta's Llama code, CS336) is
    ``ModernAttention`` once each head's rows of W_query and W_key are permuted by
    ``interleaved_to_half`` -- how checkpoints are converted to Hugging Face's layout."""
    torch.manual_seed(4)
    d, heads, kv, head_dim, T = 12, 4, 2, 6, 7
    attn = mh.ModernAttention(d, 16, heads, kv, head_dim=head_dim).eval()
    wq, wk = torch.randn(heads * head_dim, d), torch.randn(kv * head_dim, d)  # interleaved
    x = torch.randn(2, T, d)  # (b, T, d)
    cos, sin = mh.rope_cos_sin(torch.arange(T), head_dim)
    q = mh.apply_rotary_interleaved(
        (x @ wq.T).view(2, T, heads, head_dim).transpose(1, 2), cos, sin
    )
    k = mh.apply_rotary_interleaved((x @ wk.T).view(2, T, kv, head_dim).transpose(1, 2), cos, sin)
    v = attn.v_proj(x).view(2, T, kv, head_dim).transpose(1, 2)  # (b, g, T, hd)
    k, v = k.repeat_interleave(heads // kv, 1), v.repeat_interleave(heads // kv, 1)
    context = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (b, h, T, hd)
    want = attn.o_proj(context.transpose(1, 2).reshape(2, T, heads * head_dim))  # (b, T, d)
    perm = mh.interleaved_to_half(head_dim)
    with torch.no_grad():
        attn.q_proj.weight.copy_(wq.view(heads, head_dim, d)[:, perm].reshape(-1, d))
        attn.k_proj.weight.copy_(wk.view(kv, head_dim, d)[:, perm].reshape(-1, d))
        assert_close(attn(x), want, **TOL)
        attn.q_proj.weight.copy_(wq)  # unpermuted: another function
        attn.k_proj.weight.copy_(wk)
        assert not torch.allclose(attn(x), want, atol=1e-3)
