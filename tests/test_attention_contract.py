"""What every causal attention class promises: shapes, causality, weights, dropout, grads."""

from __future__ import annotations

import pytest
import torch
from torch.testing import assert_close

import mhsa_helpers as mh

D_IN, CONTEXT = 8, 10


def make(kind: str, dropout: float = 0.0, **kw) -> torch.nn.Module:
    torch.manual_seed(7)
    if kind == "causal":
        return mh.CausalAttention(D_IN, 6, CONTEXT, dropout, **kw)
    if kind == "wrapper":
        return mh.MultiHeadAttentionWrapper(D_IN, 3, CONTEXT, dropout, num_heads=2, **kw)
    return mh.MultiHeadAttention(D_IN, 6, CONTEXT, dropout, num_heads=3, **kw)


KINDS = ["causal", "wrapper", "multihead"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("num_tokens", [1, 4, CONTEXT])
def test_shape_contract(kind, num_tokens):
    x = torch.randn(3, num_tokens, D_IN)
    assert make(kind)(x).shape == (3, num_tokens, 6)


def test_self_attention_shapes(journey):
    assert mh.SelfAttentionV1(3, 5)(journey.inputs).shape == (6, 5)
    assert mh.SelfAttentionV2(3, 5, qkv_bias=True)(journey.inputs).shape == (6, 5)


@pytest.mark.parametrize("kind", KINDS)
def test_causality_future_tokens_do_not_change_the_past(kind):
    module = make(kind).eval()
    x = torch.randn(2, CONTEXT, D_IN)
    changed = x.clone()
    changed[:, 6:] = torch.randn(2, CONTEXT - 6, D_IN) * 5
    out, out_changed = module(x), module(changed)
    assert torch.equal(out[:, :6], out_changed[:, :6])  # bit-identical past
    assert not torch.equal(out[:, 6:], out_changed[:, 6:])


def test_shorter_input_equals_prefix_of_longer_input():
    module = make("multihead").eval()
    x = torch.randn(2, CONTEXT, D_IN)
    assert_close(module(x[:, :5]), module(x)[:, :5])


def test_weights_rows_sum_to_one_and_are_zero_above_diagonal():
    module = make("multihead")
    _, weights = module(torch.randn(2, 7, D_IN), return_weights=True)
    assert weights.shape == (2, 3, 7, 7)
    assert_close(weights.sum(-1), torch.ones(2, 3, 7))
    upper = torch.triu(torch.ones(7, 7, dtype=torch.bool), diagonal=1)
    assert torch.all(weights[..., upper] == 0)
    assert torch.all(weights[..., ~upper] > 0)
    assert torch.all(weights[..., 0, 0] == 1)


def test_causal_attention_returns_weights_too():
    _, weights = make("causal")(torch.randn(2, 5, D_IN), return_weights=True)
    assert weights.shape == (2, 5, 5)
    assert_close(weights.sum(-1), torch.ones(2, 5))


def test_returned_weights_are_taken_before_dropout():
    module = make("multihead", dropout=0.5).train()
    x = torch.randn(2, 6, D_IN)
    _, w_train = module(x, return_weights=True)
    _, w_eval = module.eval()(x, return_weights=True)
    assert torch.equal(w_train, w_eval)


@pytest.mark.parametrize("kind", KINDS)
def test_dropout_active_in_train_off_in_eval(kind):
    module = make(kind, dropout=0.5)
    x = torch.randn(2, CONTEXT, D_IN)
    module.train()
    assert not torch.equal(module(x), module(x))
    module.eval()
    assert torch.equal(module(x), module(x))
    assert torch.equal(module(x), make(kind, dropout=0.0).eval()(x))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("qkv_bias", [False, True])
def test_gradient_reaches_every_parameter(kind, qkv_bias):
    module = make(kind, qkv_bias=qkv_bias)
    module(torch.randn(2, 5, D_IN)).pow(2).sum().backward()
    for name, param in module.named_parameters():
        assert param.grad is not None, name
        assert param.grad.abs().sum() > 0, name
    assert not any(b.requires_grad for b in module.buffers())


def test_self_attention_gradients(journey):
    for module in (mh.SelfAttentionV1(3, 2), mh.SelfAttentionV2(3, 2, qkv_bias=True)):
        module(journey.inputs).sum().backward()
        assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in module.parameters())


@pytest.mark.parametrize("kind", KINDS)
def test_gradcheck_float64(kind):
    module = make(kind, qkv_bias=True).double()
    x = torch.randn(2, 4, D_IN, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(module, (x,), eps=1e-6, atol=1e-5)


def test_gradcheck_float64_through_parameters():
    module = mh.MultiHeadAttention(3, 4, 6, 0.0, num_heads=2).double()
    x = torch.randn(1, 5, 3, dtype=torch.float64)
    weight = module.W_query.weight.detach().clone().requires_grad_(True)

    def with_query_weight(w):
        return torch.func.functional_call(module, {"W_query.weight": w}, (x,))

    assert torch.autograd.gradcheck(with_query_weight, (weight,), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_bfloat16_stays_finite(kind):
    module = make(kind).to(torch.bfloat16)
    out = module(torch.randn(2, CONTEXT, D_IN, dtype=torch.bfloat16))
    assert out.dtype == torch.bfloat16
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("scale", [1e3, 1e6])
def test_large_magnitude_inputs_stay_finite(kind, scale):
    module = make(kind)
    out = module(torch.randn(2, CONTEXT, D_IN) * scale)
    assert torch.isfinite(out).all()


def test_mask_is_a_buffer_that_moves_with_the_module_and_is_saved():
    module = make("multihead")
    assert "mask" in module.state_dict()
    assert "mask" not in dict(module.named_parameters())
    assert module.mask.shape == (CONTEXT, CONTEXT)
    module = module.double()
    assert module.mask.dtype == torch.float64  # follows .to(); still usable as a mask
    assert module(torch.randn(1, 3, D_IN, dtype=torch.float64)).dtype == torch.float64


def test_state_dict_round_trip():
    a, b = make("multihead"), mh.MultiHeadAttention(D_IN, 6, CONTEXT, 0.0, num_heads=3)
    b.load_state_dict(a.state_dict())
    x = torch.randn(2, 5, D_IN)
    assert torch.equal(a(x), b(x))


def test_agrees_with_torch_multihead_attention():
    torch.manual_seed(3)
    d, heads, T = 12, 3, 7
    ours = mh.MultiHeadAttention(d, d, T, 0.0, num_heads=heads, qkv_bias=True).eval()
    ref = torch.nn.MultiheadAttention(d, heads, bias=True, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(
            torch.cat([ours.W_query.weight, ours.W_key.weight, ours.W_value.weight])
        )
        ref.in_proj_bias.copy_(torch.cat([ours.W_query.bias, ours.W_key.bias, ours.W_value.bias]))
        ref.out_proj.weight.copy_(ours.out_proj.weight)
        ref.out_proj.bias.copy_(ours.out_proj.bias)
    x = torch.randn(2, T, d)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    ref_out, ref_weights = ref(
        x, x, x, attn_mask=mask, need_weights=True, average_attn_weights=False
    )
    out, weights = ours(x, return_weights=True)
    assert_close(out, ref_out, rtol=1e-5, atol=1e-6)
    assert_close(weights, ref_weights, rtol=1e-5, atol=1e-6)


def test_repr_mentions_sizes():
    text = repr(mh.MultiHeadAttention(3, 4, 6, 0.0, num_heads=2))
    assert "num_heads=2" in text and "head_dim=2" in text
    assert "output width 4" in repr(mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2))
