"""What every attention class promises.

First the forward contract shared by every class (teaching and production, the wrapper included):
the input positionally, everything else by keyword with the same names and meanings --
``forward(x, *, key_padding_mask=None, return_weights=False[, cache=None])`` for self-attention,
``forward(query, key_value, *, key_padding_mask=None, return_weights=False)`` for cross-attention.
Then what the causal classes promise: shapes, causality, weights, dropout, gradients.
"""

from __future__ import annotations

import inspect
import re

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


# -- one forward contract ------------------------------------------------------------------------

# name -> (constructor, input width, batched?, output width, weights per head?, accepts a cache?)
EVERY_CLASS = {
    "SelfAttentionV1": (lambda: mh.SelfAttentionV1(D_IN, 6), 6, None, False),
    "SelfAttentionV2": (lambda: mh.SelfAttentionV2(D_IN, 6), 6, None, False),
    "CausalAttention": (lambda: mh.CausalAttention(D_IN, 6, CONTEXT, 0.0), 6, None, False),
    "MultiHeadAttentionWrapper": (
        lambda: mh.MultiHeadAttentionWrapper(D_IN, 3, CONTEXT, 0.0, 2),
        6,
        2,
        False,
    ),
    "MultiHeadAttention": (lambda: mh.MultiHeadAttention(D_IN, 6, CONTEXT, 0.0, 3), 6, 3, True),
    "FusedQKVMultiHeadAttention": (
        lambda: mh.FusedQKVMultiHeadAttention(D_IN, 6, CONTEXT, 0.0, 3),
        6,
        3,
        True,
    ),
    "SDPAMultiHeadAttention": (
        lambda: mh.SDPAMultiHeadAttention(D_IN, 6, CONTEXT, 0.0, 3),
        6,
        3,
        True,
    ),
    "GroupedQueryAttention": (
        lambda: mh.GroupedQueryAttention(D_IN, 8, CONTEXT, 0.0, 4, 2),
        8,
        4,
        True,
    ),
    "ModernAttention": (
        lambda: mh.ModernAttention(D_IN, CONTEXT, 4, 2, qk_norm=True, sliding_window=3),
        D_IN,
        4,
        True,
    ),
}


def test_every_attention_class_is_covered():
    classes = {
        name
        for name, obj in vars(mh.attention).items()
        if isinstance(obj, type) and issubclass(obj, torch.nn.Module)
    }
    assert classes == {*EVERY_CLASS, "CrossMultiHeadAttention"}


@pytest.mark.parametrize("name", EVERY_CLASS)
def test_forward_signature(name):
    build, _, _, caches = EVERY_CLASS[name]
    params = list(inspect.signature(build().forward).parameters.values())
    assert [p.name for p in params[:1]] == ["x"]
    assert params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    keyword = {p.name: p.default for p in params[1:]}
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[1:])
    expected = {"key_padding_mask": None, "return_weights": False}
    if caches:
        expected["cache"] = None
    assert keyword == expected


def test_cross_attention_forward_signature():
    module = mh.CrossMultiHeadAttention(D_IN, 5, 6, 2)
    params = list(inspect.signature(module.forward).parameters.values())
    assert [p.name for p in params[:2]] == ["query", "key_value"]
    assert {p.name: (p.kind, p.default) for p in params[2:]} == {
        "key_padding_mask": (inspect.Parameter.KEYWORD_ONLY, None),
        "return_weights": (inspect.Parameter.KEYWORD_ONLY, False),
    }


@pytest.mark.parametrize("name", EVERY_CLASS)
@pytest.mark.parametrize("batched", [True, False])
def test_forward_contract(name, batched):
    build, width, heads, caches = EVERY_CLASS[name]
    module = build().eval()
    unbatched_ok = name.startswith("SelfAttentionV")
    if not batched and not unbatched_ok:
        with pytest.raises(ValueError, match="dimensions"):
            module(torch.randn(5, D_IN))
        return
    lead = (2,) if batched else ()
    x = torch.randn(*lead, 5, D_IN)
    pad = torch.zeros(*lead, 5, dtype=torch.bool)
    pad[..., 3:] = True  # the last two tokens are padding
    out = module(x)
    assert isinstance(out, torch.Tensor) and out.shape == (*lead, 5, width)
    result = module(x, return_weights=True)
    assert isinstance(result, tuple) and len(result) == 2
    assert_close(result[0], out)  # SDPA: the explicit path, to float rounding
    weight_shape = (*lead, 5, 5) if heads is None else (*lead, heads, 5, 5)
    assert result[1].shape == weight_shape
    padded, weights = module(x, key_padding_mask=pad, return_weights=True)
    assert padded.shape == out.shape and weights.shape == weight_shape
    assert torch.all(weights[..., 3:] == 0)
    assert not torch.equal(padded, out)
    if caches:
        cache = mh.KVCache(CONTEXT)
        stepped = torch.cat([module(x[:, i : i + 1], cache=cache) for i in range(5)], dim=1)
        assert_close(stepped, out)
    # Everything after the input is keyword-only.
    with pytest.raises(TypeError):
        module(x, True)
    with pytest.raises(TypeError):
        module(x, pad)
    with pytest.raises(TypeError, match="return_weights"):
        module(x, return_weights="True")
    with pytest.raises(TypeError, match="return_weights"):
        module(x, return_weights=1)


BAD_MASKS = {
    "float": (lambda x: torch.zeros(x.shape[:-1]), TypeError, "dtype"),  # additive or 0/1?
    "int64": (lambda x: torch.ones(x.shape[:-1], dtype=torch.long), TypeError, "dtype"),  # 1=real?
    "list": (lambda x: torch.zeros(x.shape[:-1], dtype=torch.bool).tolist(), TypeError, "Tensor"),
    "3-D": (lambda x: torch.zeros(*x.shape[:-1], 1, dtype=torch.bool), ValueError, "shape"),
    "unbatched": (lambda x: torch.zeros(x.shape[-2] + 1, dtype=torch.bool), ValueError, "shape"),
    "batch + 1": (
        lambda x: torch.zeros(x.shape[0] + 1, x.shape[1], dtype=torch.bool),
        ValueError,
        "shape",
    ),
}


def bad_masks_that_slip_through(call, keys: torch.Tensor) -> list[str]:
    """Each of ``BAD_MASKS`` that ``call(mask)`` does not refuse with its error, naming
    ``key_padding_mask`` and the problem, before any matmul: "<bad>: <what happened>"."""
    slipped = []
    for bad, (make_mask, error, word) in BAD_MASKS.items():
        with mh.CountMatmuls() as counter:
            try:
                call(make_mask(keys))
            except Exception as raised:  # the wrong kind of error is reported, not raised
                if not isinstance(raised, error):
                    slipped.append(
                        f"{bad}: {type(raised).__name__} ({raised}), not {error.__name__}"
                    )
                elif not re.search(f"key_padding_mask.*{word}", str(raised)):
                    slipped.append(f"{bad}: message {str(raised)!r}")
            else:
                slipped.append(f"{bad}: no error")
        if counter.counts != {"linear": 0, "matmul": 0}:
            slipped.append(f"{bad}: matmuls before the error {counter.counts}")
    return slipped


@pytest.mark.parametrize("name", EVERY_CLASS)
def test_bad_key_padding_mask_raises_before_any_matmul(name):
    module = EVERY_CLASS[name][0]()
    x = torch.randn(2, 5, D_IN)
    assert bad_masks_that_slip_through(lambda mask: module(x, key_padding_mask=mask), x) == []


def test_cross_attention_bad_key_padding_mask():
    module = mh.CrossMultiHeadAttention(6, D_IN, 6, 2)
    query, key_value = torch.randn(2, 3, 6), torch.randn(2, 5, D_IN)
    slipped = bad_masks_that_slip_through(
        lambda mask: module(query, key_value, key_padding_mask=mask), key_value
    )
    assert slipped == []


def test_cross_attention_contract():
    module = mh.CrossMultiHeadAttention(6, D_IN, 6, 2).eval()
    query, key_value = torch.randn(2, 3, 6), torch.randn(2, 5, D_IN)
    out = module(query, key_value)
    assert isinstance(out, torch.Tensor) and out.shape == (2, 3, 6)
    out2, weights = module(query, key_value, return_weights=True)
    assert torch.equal(out2, out) and weights.shape == (2, 2, 3, 5)
    pad = torch.tensor([[False] * 5, [False, False, True, True, True]])
    _, weights = module(query, key_value, key_padding_mask=pad, return_weights=True)
    assert torch.all(weights[1, ..., 2:] == 0)
    with pytest.raises(TypeError):
        module(query, key_value, True)
    with pytest.raises(TypeError, match="return_weights"):
        module(query, key_value, return_weights="False")


def test_wrapper_weights_are_its_heads_weights():
    module = make("wrapper")
    x = torch.randn(2, 5, D_IN)
    out, weights = module(x, return_weights=True)
    assert weights.shape == (2, 2, 5, 5)
    for i, head in enumerate(module.heads):
        head_out, head_weights = head(x, return_weights=True)
        assert torch.equal(weights[:, i], head_weights)
        assert torch.equal(out[..., 3 * i : 3 * (i + 1)], head_out)


# -- a KV cache belongs to the layer that filled it ----------------------------------------------


def test_kv_cache_is_bound_to_the_layer_that_filled_it():
    torch.manual_seed(0)
    first = mh.MultiHeadAttention(D_IN, 6, CONTEXT, 0.0, 3).eval()
    second = mh.MultiHeadAttention(D_IN, 6, CONTEXT, 0.0, 3).eval()  # same shapes
    cache = mh.KVCache(CONTEXT)
    x = torch.randn(1, 3, D_IN)
    first(x, cache=cache)
    assert cache.layer is first
    with mh.CountMatmuls() as counter, pytest.raises(ValueError, match="another layer"):
        second(x, cache=cache)
    assert counter.counts == {"linear": 0, "matmul": 0}
    assert len(cache) == 3
    cache.reset()
    assert cache.layer is None
    second(x, cache=cache)  # free again after reset()
    assert cache.layer is second


def test_kv_cache_does_not_keep_its_layer_alive():
    module = mh.GroupedQueryAttention(D_IN, 8, CONTEXT, 0.0, 4, 2)
    cache = mh.KVCache(CONTEXT)
    module(torch.randn(1, 2, D_IN), cache=cache)
    del module
    assert cache.layer is None
    with pytest.raises(ValueError, match="another layer"):
        mh.GroupedQueryAttention(D_IN, 8, CONTEXT, 0.0, 4, 2)(torch.randn(1, 1, D_IN), cache=cache)


def test_kv_cache_rejects_values_of_another_dtype():
    cache = mh.KVCache(4)
    keys = torch.randn(1, 2, 3, 5)
    with pytest.raises(TypeError, match=r"values\.dtype"):
        cache.update(keys, keys.double())
    assert len(cache) == 0
    cache.update(keys, keys.clone())
    with pytest.raises(TypeError, match=r"values\.dtype"):
        cache.update(keys[:, :, :1], keys[:, :, :1].half())
    with pytest.raises(TypeError, match=r"keys\.dtype"):
        cache.update(keys[:, :, :1].double(), keys[:, :, :1].double())
    assert len(cache) == 3


def test_kv_cache_checks_the_padding_mask_it_stores():
    cache = mh.KVCache(4)
    keys = torch.randn(2, 1, 3, 5)
    with pytest.raises(TypeError, match=r"key_padding_mask.*dtype"):
        cache.update(keys, keys, torch.zeros(2, 3))  # float: the package's one mask check
    with pytest.raises(ValueError, match="key_padding_mask"):
        cache.update(keys, keys, torch.zeros(2, 2, dtype=torch.bool))
    cache.update(keys, keys)
    assert cache.key_padding_mask is None
    cache.update(keys[:, :, :1], keys[:, :, :1], torch.tensor([[True], [False]]))
    assert cache.key_padding_mask.tolist() == [[False, False, False, True], [False] * 4]
    assert "1 padded" in repr(cache)


def test_kv_cache_repr_follows_the_lesson_language():
    cache = mh.KVCache(4)
    with mh.i18n.using_language("en"):
        assert repr(cache) == "KVCache(empty, context_length=4)"
    with mh.i18n.using_language("zh"):
        assert repr(cache) == "KVCache(空，context_length=4)"
    keys = torch.zeros(2, 1, 3, 5)
    cache.update(keys, keys, torch.tensor([[False, False, True], [False, False, False]]))
    with mh.i18n.using_language("en"):
        assert (
            repr(cache) == "KVCache(3/4 tokens, keys/values (2, 1, 3, 5), torch.float32, 1 padded)"
        )
    with mh.i18n.using_language("zh"):
        assert (
            repr(cache) == "KVCache(3/4 个词元，键/值 (2, 1, 3, 5)，torch.float32，其中 1 个是填充)"
        )


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
