"""The build-it checker of lesson 06, ``check_build_multihead``, and the prediction checkers of
lessons 04-06: correct classes pass; each typical mistake, written as a small wrong class, gets
NOT YET with a hint that names it; nothing makes the checker raise or disturbs the global RNG."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from exercise_checks import assert_not_yet, assert_pass
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex


class BookMHA(nn.Module):
    """The book's MultiHeadAttention; subclasses switch on one typical mistake each."""

    mistake = ""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.p = dropout
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def split(self, t, b, T):
        if self.mistake == "split_no_transpose":
            return t.view(b, self.num_heads, T, self.head_dim)  # (b, h, T, head_dim), mixed up
        return t.view(b, T, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, T, _ = x.shape
        keys = self.split(self.W_key(x), b, T)  # (b, h, T, head_dim)
        queries = self.split(self.W_query(x), b, T)  # (b, h, T, head_dim)
        values = self.split(self.W_value(x), b, T)  # (b, h, T, head_dim)
        scores = queries @ keys.transpose(2, 3)  # (b, h, T, T)
        mask = self.mask.bool()[:T, :T]  # (T, T)
        if self.mistake == "transposed_mask":
            mask = mask.T
        if self.mistake == "unsliced_mask":
            mask = self.mask.bool()
        if self.mistake != "mask_after_softmax":
            scores = scores.masked_fill(mask, -torch.inf)
        scale = {"no_scaling": 1.0, "scale_d_out": self.d_out**0.5}.get(
            self.mistake, self.head_dim**0.5
        )
        weights = torch.softmax(scores / scale, dim=-1)  # (b, h, T, T)
        if self.mistake == "mask_after_softmax":
            weights = weights.masked_fill(mask, 0.0)
        if self.mistake == "dropout_in_eval":
            weights = F.dropout(weights, self.p)  # training=True by default
        elif self.mistake != "no_dropout":
            weights = self.dropout(weights)
        context = (weights @ values).transpose(1, 2)  # (b, T, h, head_dim)
        if self.mistake == "no_contiguous":
            context = context.view(b, T, self.d_out)
        else:
            context = context.contiguous().view(b, T, self.d_out)  # (b, T, d_out)
        if self.mistake == "no_out_proj_call":
            return context
        if self.mistake == "detached_query":
            return self.out_proj(context.detach() * 0 + context)
        return self.out_proj(context)  # (b, T, d_out)


def wrong(mistake: str) -> type:
    return type(f"MHA_{mistake}", (BookMHA,), {"mistake": mistake})


class NoOutProj(BookMHA):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        del self.out_proj

    def forward(self, x):
        b, T, _ = x.shape
        q, k, v = (self.split(layer(x), b, T) for layer in (self.W_query, self.W_key, self.W_value))
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask.bool()[:T, :T], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim**0.5, dim=-1))
        return (weights @ v).transpose(1, 2).reshape(b, T, self.d_out)


class MaskAsAttribute(BookMHA):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        mask = self.mask
        del self.mask
        self.mask = mask  # a plain attribute, not a buffer


class FusedNames(BookMHA):
    """Right arithmetic, wrong names: one fused qkv layer."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        del self.W_query, self.W_key, self.W_value
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)


class ReturnsWeights(BookMHA):
    def forward(self, x):
        return super().forward(x), None


class CorrectReshape(BookMHA):
    """Correct too: reshape instead of contiguous().view, separate mask built in forward."""

    def forward(self, x):
        b, T, _ = x.shape
        q = self.W_query(x).reshape(b, T, self.num_heads, -1).permute(0, 2, 1, 3)
        k = self.W_key(x).reshape(b, T, self.num_heads, -1).permute(0, 2, 1, 3)
        v = self.W_value(x).reshape(b, T, self.num_heads, -1).permute(0, 2, 1, 3)
        scores = q @ k.mT / k.shape[-1] ** 0.5  # (b, h, T, T)
        scores = scores.masked_fill(self.mask[:T, :T] == 1, float("-inf"))
        weights = self.dropout(scores.softmax(-1))
        return self.out_proj((weights @ v).permute(0, 2, 1, 3).reshape(b, T, -1))


@pytest.mark.parametrize("cls", [BookMHA, CorrectReshape, mh.MultiHeadAttention])
def test_correct_classes_pass(cls):
    assert_pass(ex.check_build_multihead(cls))


def test_the_book_order_reproduces_the_book_numbers():
    assert "prints the book's numbers too" in repr(ex.check_build_multihead(BookMHA))


MISTAKES = [
    ("no_scaling", "not scaled"),
    ("scale_d_out", "sqrt(d_out)"),
    ("split_no_transpose", "swap the tokens and the heads"),
    ("no_contiguous", "contiguous"),
    ("no_out_proj_call", "out_proj"),
    ("transposed_mask", "mask is transposed"),
    ("mask_after_softmax", "without renormalising"),
    ("dropout_in_eval", "dropout is applied in eval mode"),
    ("no_dropout", "nothing is dropped"),
    ("unsliced_mask", "cut to the input"),
]


@pytest.mark.parametrize(("mistake", "fragment"), MISTAKES)
def test_typical_mistakes_are_named(mistake, fragment):
    assert_not_yet(ex.check_build_multihead(wrong(mistake)), fragment)


def test_no_contiguous_names_the_view_error():
    text = repr(ex.check_build_multihead(wrong("no_contiguous")))
    assert "non-contiguous" in text and "contiguous before view" in text, text


@pytest.mark.parametrize(
    ("cls", "fragment"),
    [
        (NoOutProj, "step 10 of the table"),
        (FusedNames, "W_query"),
        (ReturnsWeights, "one tensor"),
    ],
)
def test_wrong_structure_is_named(cls, fragment):
    assert_not_yet(ex.check_build_multihead(cls), fragment)


def test_a_mask_kept_as_a_plain_attribute_is_named():
    """The brief asks for a buffer named mask (issue 29: a checker tests every rule its brief
    states); a plain attribute behaves right on one device and still gets [NOT YET]."""
    assert_not_yet(ex.check_build_multihead(MaskAsAttribute), "plain attribute", "register_buffer")


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        (None, "no answer yet"),
        (BookMHA(3, 2, 6, 0.0, 2), "not an instance"),
        ("MultiHeadAttention", "subclass of nn.Module"),
        (nn.Linear, "raised TypeError"),
        (42, "subclass of nn.Module"),
    ],
)
def test_odd_answers_never_raise(answer, fragment):
    assert_not_yet(ex.check_build_multihead(answer), fragment)


def test_the_empty_scaffold_of_the_lesson():
    class Scaffold(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__()

        def forward(self, x):
            raise NotImplementedError("write forward")

    assert_not_yet(ex.check_build_multihead(Scaffold), "no parameters yet")


def test_a_class_whose_forward_raises():
    class Raises(BookMHA):
        def forward(self, x):
            raise NotImplementedError("write forward")

    assert_not_yet(
        ex.check_build_multihead(Raises), "NotImplementedError", "forward is not written yet"
    )


def test_every_mistake_differs_from_the_correct_output():
    """The checker's own list of mistakes: each one is visible at its first test size."""
    from mhsa_helpers.exercises._build import MISTAKE_HINTS
    from mhsa_helpers.exercises.lesson06 import _reference_forward

    torch.manual_seed(0)
    module = mh.MultiHeadAttention(5, 12, 9, 0.0, 3)
    params = {k: v.detach() for k, v in module.named_parameters()}
    x = torch.randn(2, 7, 5)
    right = _reference_forward(params, x, 3)
    torch.testing.assert_close(right, module(x).detach())
    outputs = {m: _reference_forward(params, x, 3, m) for m in MISTAKE_HINTS}
    for mistake, out in outputs.items():
        assert not torch.allclose(out, right, atol=1e-4), mistake


def test_checker_leaves_global_rng_alone():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    ex.check_build_multihead(BookMHA)
    assert torch.equal(torch.rand(3), expected)


# -- predict, then run ----------------------------------------------------------------------------


def test_split_matmul_prediction():
    with mh.CountMatmuls() as counter:
        mh.MultiHeadAttention(3, 24, 6, 0.0, num_heads=12)(mh.load_journey().batch)
    assert_pass(ex.check_split_matmul_prediction(sum(counter.counts.values())))
    assert_not_yet(ex.check_split_matmul_prediction(None), "no prediction yet")
    assert_not_yet(ex.check_split_matmul_prediction(60), "not what happens")
    assert_not_yet(ex.check_split_matmul_prediction("6"), "whole number")


def test_survivor_prediction():
    torch.manual_seed(123)
    dropped = nn.Dropout(0.5)(torch.ones(6, 6))
    assert_pass(ex.check_survivor_prediction(dropped[dropped != 0].unique().item()))
    assert_not_yet(ex.check_survivor_prediction(None), "no prediction yet")
    assert_not_yet(ex.check_survivor_prediction(1), "not what happens")
    assert_not_yet(ex.check_survivor_prediction(0.5), "not what happens")
    assert_not_yet(ex.check_survivor_prediction([2]), "a number")


def test_matmul_prediction():
    torch.manual_seed(123)
    with mh.CountMatmuls() as counter:
        mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)(mh.load_journey().batch)
    assert_pass(ex.check_matmul_prediction(sum(counter.counts.values())))
    assert_not_yet(ex.check_matmul_prediction(None), "no prediction yet")
    assert_not_yet(ex.check_matmul_prediction(6), "not what happens")
    assert_not_yet(ex.check_matmul_prediction(2.5), "whole number")


def test_matmul_count_is_what_the_flop_counter_measures():
    """The exercise's answer, measured: a 12-head wrapper (768 -> 64 per head) on (8, 100, 768);
    torch's FlopCounterMode counts 2 FLOPs per multiply-add."""
    from torch.utils.flop_counter import FlopCounterMode

    with torch.device("meta"), FlopCounterMode(display=False) as flops:
        mh.MultiHeadAttentionWrapper(768, 64, 100, 0.0, num_heads=12)(torch.empty(8, 100, 768))
    assert flops.get_total_flops() % 2 == 0
    assert_pass(ex.check_matmul_count(flops.get_total_flops() // 2))
