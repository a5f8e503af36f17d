"""Build-it checkers on the one harness for lessons 04 and 05: the book's CausalAttention (with
dropout) and the wrapper of such heads. The right classes pass; each usual mistake is named, two at
once are both named; a mask built in forward passes, with a note about register_buffer."""

from __future__ import annotations

import pytest
import torch
from exercise_checks import assert_not_yet, assert_pass
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex


class Head(nn.Module):
    """The book's CausalAttention, written out, with switches for the usual mistakes."""

    mask_after_softmax = False
    scale_power = 0.5
    no_mask = False
    eval_dropout = False
    mask_in_forward = False

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.p = dropout
        if not self.mask_in_forward:
            self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1))

    def forward(self, x):
        T = x.shape[1]
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        scores = queries @ keys.transpose(1, 2)  # (b, T, T)
        if self.mask_in_forward:
            future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        else:
            future = self.mask.bool()[:T, :T]
        if not (self.no_mask or self.mask_after_softmax):
            scores = scores.masked_fill(future, -torch.inf)
        weights = torch.softmax(scores / keys.shape[-1] ** self.scale_power, dim=-1)
        if self.mask_after_softmax:
            weights = weights.masked_fill(future, 0.0)
        if self.eval_dropout:
            weights = nn.functional.dropout(weights, self.p, training=True)
        else:
            weights = self.dropout(weights)
        return weights @ values  # (b, T, d_out)


def head(**switches):
    return type("Variant", (Head,), switches)


class Wrapper(nn.Module):
    head_class = Head
    cat_dim = -1

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            self.head_class(d_in, d_out, context_length, dropout, qkv_bias)
            for _ in range(num_heads)
        )

    def forward(self, x):
        return torch.cat([h(x) for h in self.heads], dim=self.cat_dim)


def wrapper(**attributes):
    return type("WrapperVariant", (Wrapper,), attributes)


def test_the_book_classes_pass():
    assert_pass(ex.check_causal_attention_class(mh.CausalAttention))
    assert_pass(ex.check_causal_attention_class(Head))
    assert_pass(ex.check_wrapper_class(mh.MultiHeadAttentionWrapper))
    assert_pass(ex.check_wrapper_class(Wrapper))


def test_a_mask_built_in_forward_is_named_and_a_wrapper_of_such_heads_gets_a_note():
    """Lesson 04's brief asks for a buffer named mask; lesson 05's asks for heads, any heads."""
    result = ex.check_causal_attention_class(head(mask_in_forward=True))
    assert_not_yet(result, "buffer named mask", "register_buffer")
    assert "register_buffer" in result.render("zh")
    assert "register_buffer" not in ex.check_causal_attention_class(Head).render("en")
    result = ex.check_wrapper_class(wrapper(head_class=head(mask_in_forward=True)))
    assert_pass(result)
    assert "register_buffer" in result.render("en") and "register_buffer" in result.render("zh")


@pytest.mark.parametrize(
    ("switches", "fragments"),
    [
        ({"no_mask": True}, ["no causal mask"]),
        ({"mask_after_softmax": True}, ["masked after the softmax"]),
        ({"scale_power": 1.0}, ["divided by d_k itself"]),
        ({"scale_power": 0.0}, ["not scaled"]),
        (
            {"mask_after_softmax": True, "scale_power": 1.0},
            ["2 mistakes", "after the softmax", "d_k itself"],
        ),
        ({"eval_dropout": True}, ["applied in eval mode"]),
    ],
)
def test_the_usual_mistakes_are_named(switches, fragments):
    assert_not_yet(ex.check_causal_attention_class(head(**switches)), *fragments)
    assert_not_yet(ex.check_wrapper_class(wrapper(head_class=head(**switches))), *fragments)


@pytest.mark.parametrize("dim", [0, 1])
def test_heads_concatenated_on_the_wrong_dim_are_named(dim):
    assert_not_yet(ex.check_wrapper_class(wrapper(cat_dim=dim)), "wrong dimension", "dim=-1")


def test_wrong_kinds_of_answer():
    assert_not_yet(ex.check_causal_attention_class(None), "no answer yet")
    assert_not_yet(ex.check_causal_attention_class(Head(3, 2, 6, 0.0)), "not an instance")
    assert_not_yet(ex.check_wrapper_class("Wrapper"), "subclass of nn.Module")
    assert_not_yet(ex.check_wrapper_class(Head), "W_query")  # one head is not the wrapper
    assert_not_yet(ex.check_causal_attention_class(Wrapper), "raised TypeError")
