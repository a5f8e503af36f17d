"""Padded batches: every real token gets the output it gets alone, and nothing is NaN.

The oracle is independent of the masking code: each sequence is run *alone*, unpadded, through the
same module, and the padded batch must reproduce those outputs at the real positions (to float32
rounding) -- for right and left padding, with the causal mask (causal classes) and without it
(``SelfAttentionV1/V2``, cross-attention), on the explicit, SDPA and KV-cache paths.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.testing import assert_close

import mhsa_helpers as mh

D_IN, CONTEXT = 8, 10
LENGTHS = [5, 2, 7, 1]  # one sequence per batch row; the batch is padded to T = 7
T = max(LENGTHS)


def build(kind: str) -> torch.nn.Module:
    torch.manual_seed(11)
    if kind == "v1":
        return mh.SelfAttentionV1(D_IN, 6)
    if kind == "v2":
        return mh.SelfAttentionV2(D_IN, 6, qkv_bias=True)
    if kind == "causal":
        return mh.CausalAttention(D_IN, 6, CONTEXT, 0.0, qkv_bias=True)
    if kind == "wrapper":
        return mh.MultiHeadAttentionWrapper(D_IN, 3, CONTEXT, 0.0, num_heads=2, qkv_bias=True)
    if kind == "multihead":
        return mh.MultiHeadAttention(D_IN, 6, CONTEXT, 0.0, num_heads=3, qkv_bias=True)
    if kind == "fused":
        return mh.FusedQKVMultiHeadAttention(D_IN, 6, CONTEXT, 0.0, num_heads=3, qkv_bias=True)
    if kind == "sdpa":
        return mh.SDPAMultiHeadAttention(D_IN, 6, CONTEXT, 0.0, num_heads=3, qkv_bias=True)
    if kind == "gqa":
        return mh.GroupedQueryAttention(D_IN, 8, CONTEXT, 0.0, num_heads=4, num_kv_groups=2)
    if kind == "modern":  # RoPE: positions count the real tokens only
        return mh.ModernAttention(D_IN, CONTEXT, num_heads=4, num_kv_groups=2, qk_norm=True)
    raise AssertionError(kind)


SELF_KINDS = ["v1", "v2", "causal", "wrapper", "multihead", "fused", "sdpa", "gqa", "modern"]
CAUSAL_KINDS = ["causal", "wrapper", "multihead", "fused", "sdpa", "gqa", "modern"]
CACHE_KINDS = ["multihead", "fused", "sdpa", "gqa", "modern"]


def padded_batch(side: str, lengths=LENGTHS, num_tokens: int = T, d: int = D_IN, seed: int = 5):
    """Sequences of the given lengths, their padded batch (b, T, d) and mask (b, T), True = pad.

    Padding positions hold large random numbers, so a leak of a pad into a real token's output
    could not go unnoticed.
    """
    gen = torch.Generator().manual_seed(seed)
    sequences = [torch.randn(n, d, generator=gen) for n in lengths]
    batch = 100 * torch.randn(len(lengths), num_tokens, d, generator=gen)  # (b, T, d)
    positions = torch.arange(num_tokens)  # (T,)
    lengths_t = torch.tensor(lengths)  # (b,)
    if side == "right":
        pad = positions >= lengths_t[:, None]  # (b, T)
    else:
        pad = positions < (num_tokens - lengths_t)[:, None]  # (b, T)
    for row, seq in enumerate(sequences):
        batch[row, ~pad[row]] = seq
    return sequences, batch, pad


def alone(module, seq: torch.Tensor, **kw) -> torch.Tensor:
    return module(seq.unsqueeze(0), **kw)[0]  # (n, d_out)


@pytest.mark.parametrize("kind", SELF_KINDS)
@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("return_weights", [False, True])
def test_padded_batch_equals_one_sequence_at_a_time(kind, side, return_weights):
    module = build(kind).eval()
    sequences, batch, pad = padded_batch(side)
    result = module(batch, key_padding_mask=pad, return_weights=return_weights)
    out = result[0] if return_weights else result
    assert torch.isfinite(out).all()
    for row, seq in enumerate(sequences):
        assert_close(out[row, ~pad[row]], alone(module, seq), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", SELF_KINDS)
def test_without_padding_mask_the_pads_do_leak(kind):
    """The test above can fail: without the mask, real tokens see the padding."""
    module = build(kind).eval()
    sequences, batch, pad = padded_batch("left" if kind in CAUSAL_KINDS else "right")
    out = module(batch)
    assert not torch.allclose(out[0, ~pad[0]], alone(module, sequences[0]), atol=1e-3)


@pytest.mark.parametrize("kind", SELF_KINDS)
@pytest.mark.parametrize("side", ["right", "left"])
def test_weights_zero_on_padding_rows_sum_to_one_or_are_all_zero(kind, side):
    module = build(kind).eval()
    _, batch, pad = padded_batch(side)
    _, weights = module(batch, key_padding_mask=pad, return_weights=True)
    if weights.dim() == 3:
        weights = weights.unsqueeze(1)  # (b, 1, T, T): one head
    assert torch.isfinite(weights).all()
    assert torch.all(weights.masked_select(pad[:, None, None, :]) == 0)
    visible = ~pad[:, None, :].expand(-1, T, -1)  # (b, T_q, T_k)
    if kind in CAUSAL_KINDS:
        visible = visible & torch.ones(T, T, dtype=torch.bool).tril()
    has_key = visible.any(dim=-1)[:, None, :].expand_as(weights[..., 0])  # (b, h, T_q)
    sums = weights.sum(dim=-1)  # (b, h, T_q)
    assert_close(sums[has_key], torch.ones(int(has_key.sum())))
    assert torch.all(weights[~has_key] == 0)
    # Left padding plus the causal mask: the first pads see no key at all.
    assert bool((~has_key).any()) == (side == "left" and kind in CAUSAL_KINDS)


@pytest.mark.parametrize("kind", ["multihead", "fused", "sdpa", "gqa", "causal", "wrapper"])
def test_a_row_with_no_visible_key_outputs_a_zero_context_vector(kind):
    """Left padding + causal mask: a pad before the first real token sees nothing.

    Its context vector is defined as zero, so the layer's output there is ``out_proj.bias`` (or
    exactly zero for the classes without ``out_proj``).
    """
    module = build(kind).eval()
    _, batch, pad = padded_batch("left")
    out = module(batch, key_padding_mask=pad)  # SDPA: the fused-kernel path
    row = LENGTHS.index(1)  # a single real token, at the last position: 6 pads see nothing
    expected = module.out_proj.bias if hasattr(module, "out_proj") else torch.zeros(out.shape[-1])
    for position in range(T - 1):
        assert torch.equal(out[row, position], expected)


@pytest.mark.parametrize("kind", SELF_KINDS)
@pytest.mark.parametrize("side", ["right", "left"])
def test_gradients_stay_finite_with_empty_rows(kind, side):
    module = build(kind).train()
    _, batch, pad = padded_batch(side)
    batch.requires_grad_(True)
    out = module(batch, key_padding_mask=pad)
    (out * torch.randn_like(out)).sum().backward()
    assert torch.isfinite(batch.grad).all()
    for name, param in module.named_parameters():
        assert param.grad is not None and torch.isfinite(param.grad).all(), name
    # Pads never influence real tokens: no gradient flows into a padded input position.
    real_out = module(batch, key_padding_mask=pad)[~pad].sum()
    (grad,) = torch.autograd.grad(real_out, batch)
    assert torch.all(grad[pad] == 0)
    assert grad[~pad].abs().sum() > 0


@pytest.mark.parametrize("kind", SELF_KINDS)
def test_all_false_mask_changes_nothing(kind):
    module = build(kind).eval()
    x = torch.randn(3, 6, D_IN)
    no_pad = torch.zeros(3, 6, dtype=torch.bool)
    plain, with_mask = module(x), module(x, key_padding_mask=no_pad)
    if kind == "sdpa":  # another SDPA kernel (boolean attn_mask instead of is_causal)
        assert_close(with_mask, plain)
    else:
        assert torch.equal(with_mask, plain)


@pytest.mark.parametrize("kind", ["v1", "v2"])
def test_unbatched_input_takes_an_unbatched_mask(kind):
    module = build(kind)
    sequences, batch, pad = padded_batch("right")
    for row, seq in enumerate(sequences):
        out, weights = module(batch[row], key_padding_mask=pad[row], return_weights=True)
        assert out.shape == (T, 6) and weights.shape == (T, T)
        assert_close(out[~pad[row]], module(seq))
    with pytest.raises(ValueError, match=r"key_padding_mask.*\(num_keys,\)"):
        module(batch[0], key_padding_mask=pad)


def test_book_example_is_unchanged_by_an_all_false_mask(journey):
    torch.manual_seed(123)
    v1 = mh.SelfAttentionV1(3, 2)
    out = v1(journey.inputs, key_padding_mask=torch.zeros(6, dtype=torch.bool))
    assert torch.equal(out, v1(journey.inputs))
    assert_close(out[1], torch.tensor([0.3061, 0.8210]), atol=1e-4, rtol=0)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    kind=st.sampled_from(SELF_KINDS),
    pattern=st.lists(st.lists(st.booleans(), min_size=5, max_size=5), min_size=1, max_size=3),
    return_weights=st.booleans(),
)
def test_no_nan_for_any_padding_pattern(kind, pattern, return_weights):
    """Any pattern, including pads in the middle and rows that are all padding."""
    module = build(kind).eval()
    pad = torch.tensor(pattern)  # (b, 5)
    x = torch.randn(pad.shape[0], 5, D_IN)
    result = module(x, key_padding_mask=pad, return_weights=return_weights)
    if return_weights:
        out, weights = result
        assert torch.isfinite(weights).all()
        if weights.dim() == 3:
            weights = weights.unsqueeze(1)
        assert torch.all(weights.masked_select(pad[:, None, None, :]) == 0)
        sums = weights.sum(-1)
        assert torch.all((sums - 1).abs().lt(1e-5) | sums.eq(0))
    else:
        out = result
    assert torch.isfinite(out).all()
    # Real tokens still match each sequence alone (the pads removed; causal order kept).
    for row in range(pad.shape[0]):
        real = ~pad[row]
        if real.any():
            assert_close(out[row, real], alone(module, x[row, real]), rtol=1e-5, atol=1e-5)


# -- the KV-cache path ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", CACHE_KINDS)
@pytest.mark.parametrize("chunks", [[7, 1, 1, 1], [3, 4, 2, 1], [1] * 10])
def test_left_padded_prompt_then_generation_through_the_cache(kind, chunks):
    """A left-padded prompt batch, then more tokens: the cache must remember the prompt's pads."""
    module = build(kind).eval()
    sequences, prompt, pad = padded_batch("left")  # (b, 7, d), (b, 7)
    more = torch.randn(len(LENGTHS), CONTEXT - T, D_IN)  # (b, 3, d): real tokens for everyone
    x = torch.cat([prompt, more], dim=1)  # (b, 10, d)
    full_pad = torch.cat([pad, torch.zeros(len(LENGTHS), CONTEXT - T, dtype=torch.bool)], dim=1)
    cache = mh.KVCache(CONTEXT)
    outs, start = [], 0
    for size in chunks:
        piece_pad = full_pad[:, start : start + size]
        # Chunks that hold no pad may omit the mask: the cache keeps the earlier pads.
        kw = {"key_padding_mask": piece_pad} if piece_pad.any() else {}
        outs.append(module(x[:, start : start + size], cache=cache, **kw))
        start += size
    assert cache.key_padding_mask is not None and torch.equal(cache.key_padding_mask, full_pad)
    out = torch.cat(outs, dim=1)  # (b, 10, d_out)
    assert torch.isfinite(out).all()
    for row, seq in enumerate(sequences):
        whole = torch.cat([seq, more[row]])  # this sequence alone, no pads
        assert_close(out[row, ~full_pad[row]], alone(module, whole), rtol=1e-5, atol=1e-5)
    assert_close(out, module(x, key_padding_mask=full_pad), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", CACHE_KINDS)
@pytest.mark.parametrize("side", ["right", "left"])
def test_cache_token_by_token_with_weights_matches_one_pass(kind, side):
    module = build(kind).eval()
    _, batch, pad = padded_batch(side)
    full_out, full_weights = module(batch, key_padding_mask=pad, return_weights=True)
    cache = mh.KVCache(CONTEXT)
    for i in range(T):
        out, weights = module(
            batch[:, i : i + 1],
            key_padding_mask=pad[:, i : i + 1],
            cache=cache,
            return_weights=True,
        )  # (b, 1, d_out), (b, h, 1, i + 1)
        assert_close(out, full_out[:, i : i + 1], rtol=1e-5, atol=1e-5)
        assert_close(weights, full_weights[:, :, i : i + 1, : i + 1], rtol=1e-5, atol=1e-5)


def test_cache_without_padding_keeps_no_mask_and_the_old_numbers():
    module = build("multihead").eval()
    x = torch.randn(2, 6, D_IN)
    cache = mh.KVCache(CONTEXT)
    steps = torch.cat([module(x[:, i : i + 1], cache=cache) for i in range(6)], dim=1)
    assert cache.key_padding_mask is None
    assert_close(steps, module(x))


# -- cross-attention -----------------------------------------------------------------------------


@pytest.mark.parametrize("side", ["right", "left"])
def test_cross_attention_padded_source_and_target(side):
    torch.manual_seed(3)
    module = mh.CrossMultiHeadAttention(d_q=6, d_kv=D_IN, d_out=8, num_heads=2).eval()
    sources, source_batch, source_pad = padded_batch(side, seed=1)  # (b, 7, 8)
    targets, target_batch, target_pad = padded_batch(
        "right", lengths=[3, 4, 1, 2], num_tokens=4, d=6, seed=2
    )  # (b, 4, 6)
    out, weights = module(
        target_batch, source_batch, key_padding_mask=source_pad, return_weights=True
    )
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    assert torch.all(weights.masked_select(source_pad[:, None, None, :]) == 0)
    assert_close(weights.sum(-1), torch.ones(4, 2, 4))
    for row in range(4):
        want = module(targets[row][None], sources[row][None])[0]  # (n_q, d_out)
        assert_close(out[row, ~target_pad[row]], want, rtol=1e-5, atol=1e-5)


def test_cross_attention_source_all_padding_gives_bias_not_nan():
    module = mh.CrossMultiHeadAttention(d_q=4, d_kv=4, d_out=4, num_heads=2).eval()
    pad = torch.tensor([[False, True], [True, True]])
    out, weights = module(
        torch.randn(2, 3, 4), torch.randn(2, 2, 4), key_padding_mask=pad, return_weights=True
    )
    assert torch.all(weights[1] == 0)
    assert torch.equal(out[1], module.out_proj.bias.expand(3, 4))
    assert_close(weights[0, ..., 0], torch.ones(2, 3))


# -- the functional core -------------------------------------------------------------------------


def test_masked_attention_with_padding_matches_a_float_mask_oracle():
    """An independent oracle: softmax over the real keys only, computed key by key."""
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 6)
    pad = torch.tensor([[False, False, True, True], [True, False, False, False]])
    causal = torch.ones(4, 4).triu(1).bool()
    context, weights = mh.masked_attention(q, k, v, causal, key_padding_mask=pad)
    for b in range(2):
        for i in range(4):
            seen = [j for j in range(4) if j <= i and not pad[b, j]]
            if not seen:
                assert torch.all(weights[b, :, i] == 0) and torch.all(context[b, :, i] == 0)
                continue
            scores = torch.stack([(q[b, :, i] * k[b, :, j]).sum(-1) for j in seen], -1) / 5**0.5
            probs = torch.exp(scores - scores.max(-1, keepdim=True).values)
            probs = probs / probs.sum(-1, keepdim=True)  # (h, len(seen))
            assert_close(weights[b][:, i][:, seen], probs)
            assert_close(context[b][:, i], torch.einsum("hn,hnd->hd", probs, v[b][:, seen]))


# -- the lesson's figures ------------------------------------------------------------------------


def test_padded_batch_figure_writes_words_and_pads():
    import matplotlib.pyplot as plt

    mask = torch.tensor([[False, False, True], [False, False, False]])
    fig = mh.figures.padded_batch([["a", "b"], ["c", "d", "e"]], mask)
    (ax,) = fig.axes
    texts = [t.get_text() for t in ax.texts]
    assert texts == ["a", "b", "<pad>", "c", "d", "e"]
    assert ax.get_xlabel() == "position" and ax.get_ylabel() == "sequence"
    plt.close(fig)
    with pytest.raises(ValueError, match="sequence 0 has 3 tokens"):
        mh.figures.padded_batch([["a", "b", "x"], ["c", "d", "e"]], mask)
    with pytest.raises(TypeError, match="key_padding_mask"):
        mh.figures.padded_batch([["a"]], torch.zeros(1, 1))


def test_padding_masks_figure_flags_rows_without_keys():
    import matplotlib.pyplot as plt

    fig = mh.figures.padding_masks(torch.tensor([True, True, False]), ["p", "p", "w"])
    assert [ax.get_title() for ax in fig.axes] == [
        "causal mask",
        "key padding mask",
        "hidden = causal | padding",
    ]
    hidden = fig.axes[2].images[0].get_array()
    assert hidden.tolist() == [[1, 1, 1], [1, 1, 1], [1, 1, 0]]
    assert [t.get_text() for t in fig.axes[2].texts] == ["no key", "no key"]
    plt.close(fig)
    fig = mh.figures.padding_masks(torch.tensor([False, True]), causal=False)
    assert len(fig.axes[2].texts) == 0 and fig.axes[0].get_title() == "no causal mask"
    plt.close(fig)
    with pytest.raises(ValueError, match="tokens has 1 labels"):
        mh.figures.padding_masks(torch.tensor([False, True]), ["a"])


def test_masked_attention_rejects_a_batched_mask_for_unbatched_scores():
    q = torch.randn(3, 4)
    with pytest.raises(ValueError, match="key_padding_mask"):
        mh.masked_attention(q, q, q, key_padding_mask=torch.zeros(3, 3, dtype=torch.bool))
