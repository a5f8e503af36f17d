"""Bad arguments and bad input give ValueError/TypeError naming the parameter and the value,
raised before any computation: never a bare RuntimeError from a matmul, IndexError or assert.
"""

from __future__ import annotations

import re

import pytest
import torch

import mhsa_helpers as mh

CONSTRUCTORS = {
    "causal": lambda **kw: mh.CausalAttention(
        kw.get("d_in", 3), kw.get("d_out", 4), kw.get("context_length", 6), kw.get("dropout", 0.0)
    ),
    "wrapper": lambda **kw: mh.MultiHeadAttentionWrapper(
        kw.get("d_in", 3),
        kw.get("d_out", 4),
        kw.get("context_length", 6),
        kw.get("dropout", 0.0),
        kw.get("num_heads", 2),
    ),
    "multihead": lambda **kw: mh.MultiHeadAttention(
        kw.get("d_in", 3),
        kw.get("d_out", 4),
        kw.get("context_length", 6),
        kw.get("dropout", 0.0),
        kw.get("num_heads", 2),
    ),
}
ALL = list(CONSTRUCTORS)


def raises(exc, *words):
    """pytest.raises whose message must contain every word (parameter name and value)."""
    return pytest.raises(exc, match=".*".join(re.escape(w) for w in words))


def test_d_out_not_divisible_by_num_heads():
    with raises(ValueError, "d_out", "d_out=6", "num_heads=4"):
        mh.MultiHeadAttention(3, 6, 6, 0.0, num_heads=4)


@pytest.mark.parametrize("kind", ["wrapper", "multihead"])
@pytest.mark.parametrize("num_heads", [0, -2])
def test_num_heads_below_one(kind, num_heads):
    with raises(ValueError, "num_heads", str(num_heads)):
        CONSTRUCTORS[kind](num_heads=num_heads)


@pytest.mark.parametrize("kind", ["wrapper", "multihead"])
def test_num_heads_not_an_int(kind):
    with raises(TypeError, "num_heads", "2.0"):
        CONSTRUCTORS[kind](num_heads=2.0)


@pytest.mark.parametrize("kind", ALL)
@pytest.mark.parametrize("dropout", [-0.1, 1.0, 1.5, float("nan")])
def test_dropout_outside_unit_interval(kind, dropout):
    with raises(ValueError, "dropout", str(float(dropout))):
        CONSTRUCTORS[kind](dropout=dropout)


@pytest.mark.parametrize("kind", ALL)
def test_dropout_not_a_number(kind):
    with raises(TypeError, "dropout", "'0.1'"):
        CONSTRUCTORS[kind](dropout="0.1")


@pytest.mark.parametrize("kind", ALL)
@pytest.mark.parametrize("context_length", [0, -1])
def test_context_length_below_one(kind, context_length):
    with raises(ValueError, "context_length", str(context_length)):
        CONSTRUCTORS[kind](context_length=context_length)


@pytest.mark.parametrize("kind", ALL)
@pytest.mark.parametrize("name", ["d_in", "d_out"])
def test_sizes_below_one(kind, name):
    with raises(ValueError, name, "0"):
        CONSTRUCTORS[kind](**{name: 0})


@pytest.mark.parametrize("cls", [mh.SelfAttentionV1, mh.SelfAttentionV2])
def test_self_attention_sizes(cls):
    with raises(ValueError, "d_out", "0"):
        cls(3, 0)


@pytest.mark.parametrize("kind", ALL)
@pytest.mark.parametrize("shape", [(6, 3), (3,), (1, 2, 6, 3)])
def test_wrong_number_of_dimensions(kind, shape):
    with raises(ValueError, "x", "dimensions", str(tuple(shape))):
        CONSTRUCTORS[kind]()(torch.rand(shape))


@pytest.mark.parametrize("cls", [mh.SelfAttentionV1, mh.SelfAttentionV2])
def test_self_attention_wants_two_or_three_dimensions(cls, batch):
    with raises(ValueError, "x", "(1, 2, 6, 3)"):
        cls(3, 2)(batch[None])


@pytest.mark.parametrize("kind", ALL)
def test_last_dimension_not_d_in(kind):
    with raises(ValueError, "d_in=3", "(2, 6, 5)"):
        CONSTRUCTORS[kind]()(torch.rand(2, 6, 5))


@pytest.mark.parametrize("cls", [mh.SelfAttentionV1, mh.SelfAttentionV2])
def test_self_attention_last_dimension(cls):
    with raises(ValueError, "d_in=3", "(6, 4)"):
        cls(3, 2)(torch.rand(6, 4))


@pytest.mark.parametrize("kind", ALL)
def test_more_tokens_than_context_length(kind):
    with raises(ValueError, "7 tokens", "context_length=6"):
        CONSTRUCTORS[kind]()(torch.rand(2, 7, 3))


@pytest.mark.parametrize("kind", ALL)
def test_zero_tokens(kind):
    with raises(ValueError, "at least one token", "(2, 0, 3)"):
        CONSTRUCTORS[kind]()(torch.rand(2, 0, 3))


@pytest.mark.parametrize("kind", ALL)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
def test_non_floating_dtypes(kind, dtype):
    with raises(TypeError, "floating-point", str(dtype)):
        CONSTRUCTORS[kind]()(torch.ones(2, 6, 3, dtype=dtype))


@pytest.mark.parametrize("cls", [mh.SelfAttentionV1, mh.SelfAttentionV2])
def test_self_attention_integer_input(cls):
    with raises(TypeError, "floating-point", "torch.int64"):
        cls(3, 2)(torch.ones(6, 3, dtype=torch.int64))


@pytest.mark.parametrize("kind", ALL)
def test_dtype_different_from_parameters(kind):
    with raises(TypeError, "torch.float64", "torch.float32"):
        CONSTRUCTORS[kind]()(torch.rand(2, 6, 3, dtype=torch.float64))


@pytest.mark.parametrize("kind", ALL)
def test_not_a_tensor(kind):
    with raises(TypeError, "x must be a torch.Tensor", "list"):
        CONSTRUCTORS[kind]()([[0.1, 0.2, 0.3]])


def test_errors_come_before_any_matmul(monkeypatch):
    """No projection runs for bad input: the check is the first thing forward does."""
    module = mh.MultiHeadAttention(3, 4, 6, 0.0, num_heads=2)
    calls = []
    module.W_query.register_forward_pre_hook(lambda *args: calls.append("W_query"))
    with pytest.raises(ValueError):
        module(torch.rand(2, 7, 3))
    assert calls == []


def test_multihead_from_wrapper_rejects_other_modules():
    with raises(TypeError, "wrapper", "MultiHeadAttention"):
        mh.multihead_from_wrapper(mh.MultiHeadAttention(3, 4, 6, 0.0, num_heads=2))
