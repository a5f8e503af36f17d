"""The "build it" checker of lesson 09 and the W_key-block checker.

``check_build_fused_multihead`` must pass a correct fused-QKV class and give NOT YET, with a hint
naming the mistake, to each typical wrong class below (one small subclass per mistake).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex
from mhsa_helpers.i18n import using_language


class Fused(nn.Module):
    """A correct fused-QKV multi-head attention (what the solutions notebook writes)."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1))

    def heads(self, t, b, num_tokens):
        return t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

    def split(self, qkv):
        return qkv.split(self.d_out, dim=-1)

    def scale(self):
        return self.head_dim**0.5

    def hidden(self, num_tokens):
        return self.mask.bool()[:num_tokens, :num_tokens]

    def attend(self, scores, num_tokens):
        scores = scores.masked_fill(self.hidden(num_tokens), -torch.inf)
        return self.dropout(torch.softmax(scores / self.scale(), dim=-1))

    def merge(self, context, b, num_tokens):
        return context.transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)

    def project_out(self, merged):
        return self.out_proj(merged)

    def forward(self, x):
        b, num_tokens, _ = x.shape
        q, k, v = (self.heads(t, b, num_tokens) for t in self.split(self.qkv(x)))
        weights = self.attend(q @ k.transpose(-2, -1), num_tokens)  # (b, h, T, T)
        return self.project_out(self.merge(weights @ v, b, num_tokens))


class NoScaling(Fused):
    def scale(self):
        return 1.0


class ScaleByDOut(Fused):
    def scale(self):
        return self.d_out**0.5


class ViewWithoutTranspose(Fused):
    def heads(self, t, b, num_tokens):
        return t.reshape(b, self.num_heads, num_tokens, self.head_dim)

    def merge(self, context, b, num_tokens):
        return context.reshape(b, num_tokens, self.d_out)


class ViewStraightToHeads(Fused):
    def heads(self, t, b, num_tokens):
        return t.view(b, self.num_heads, num_tokens, self.head_dim)


class NoContiguous(Fused):
    def merge(self, context, b, num_tokens):
        return context.transpose(1, 2).view(b, num_tokens, self.d_out)


class ForgetsOutProj(Fused):
    def project_out(self, merged):
        return merged


class TransposedMask(Fused):
    def hidden(self, num_tokens):
        return self.mask.bool()[:num_tokens, :num_tokens].T


class MaskAfterSoftmax(Fused):
    def attend(self, scores, num_tokens):
        weights = torch.softmax(scores / self.scale(), dim=-1)
        return self.dropout(weights.masked_fill(self.hidden(num_tokens), 0.0))


class KeyQueryValueOrder(Fused):
    def split(self, qkv):
        k, q, v = qkv.split(self.d_out, dim=-1)
        return q, k, v


class DropoutInEval(Fused):
    def attend(self, scores, num_tokens):
        scores = scores.masked_fill(self.hidden(num_tokens), -torch.inf)
        weights = torch.softmax(scores / self.scale(), dim=-1)
        return F.dropout(weights, self.dropout.p, training=True)


class NoDropout(Fused):
    def attend(self, scores, num_tokens):
        scores = scores.masked_fill(self.hidden(num_tokens), -torch.inf)
        return torch.softmax(scores / self.scale(), dim=-1)


class DropoutOnOutput(Fused):
    def attend(self, scores, num_tokens):
        scores = scores.masked_fill(self.hidden(num_tokens), -torch.inf)
        return torch.softmax(scores / self.scale(), dim=-1)

    def project_out(self, merged):
        return self.out_proj(self.dropout(merged))


class SDPAWithDropout(Fused):
    """Correct too: SDPA drops attention weights inside the kernel (in train mode only)."""

    def forward(self, x):
        b, num_tokens, _ = x.shape
        q, k, v = (self.heads(t, b, num_tokens) for t in self.split(self.qkv(x)))
        p = self.dropout.p if self.training else 0.0
        context = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        return self.out_proj(self.merge(context, b, num_tokens))


class ThreeLayers(nn.Module):
    """Lesson 06's layout: W_query, W_key, W_value instead of one qkv."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.inner = mh.MultiHeadAttention(d_in, d_out, context_length, dropout, num_heads)
        self.W_query, self.W_key, self.W_value = (
            self.inner.W_query,
            self.inner.W_key,
            self.inner.W_value,
        )
        self.out_proj = self.inner.out_proj

    def forward(self, x):
        return self.inner(x)


class IgnoresQkvBias(Fused):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)


class DetachesValues(Fused):
    def forward(self, x):
        b, num_tokens, _ = x.shape
        q, k, v = (self.heads(t, b, num_tokens) for t in self.split(self.qkv(x)))
        weights = self.attend(q @ k.transpose(-2, -1), num_tokens).detach()
        return self.project_out(self.merge(weights @ v, b, num_tokens))


class ReturnsTuple(Fused):
    def forward(self, x):
        return super().forward(x), None


def not_yet(result) -> bool:
    return not result and repr(result).startswith(("[NOT YET]", "[TO DO]"))


def test_correct_class_passes():
    result = ex.check_build_fused_multihead(Fused)
    assert result, result
    assert "3 sizes" in repr(result)


def test_sdpa_with_dropout_passes():
    result = ex.check_build_fused_multihead(SDPAWithDropout)
    assert result, result


def test_the_package_class_passes():
    assert ex.check_build_fused_multihead(mh.FusedQKVMultiHeadAttention)
    assert ex.check_build_fused_multihead(mh.SDPAMultiHeadAttention)


@pytest.mark.parametrize(
    ("wrong", "words"),
    [
        (NoScaling, "not scaled"),
        (ScaleByDOut, "sqrt(d_out)"),
        (ViewWithoutTranspose, "without"),
        (NoContiguous, "while merging the heads"),
        (ViewStraightToHeads, "viewed straight to"),
        (ForgetsOutProj, "linear layer named out_proj"),
        (TransposedMask, "transposed"),
        (MaskAfterSoftmax, "renormalising"),
        (KeyQueryValueOrder, "order K, Q, V"),
        (DropoutInEval, "eval"),
        (NoDropout, "nothing is dropped"),
        (DropoutOnOutput, "after the weighted sum"),
        (ThreeLayers, "ONE fused"),
        (IgnoresQkvBias, "qkv_bias"),
        (DetachesValues, "no gradient reaches the query rows of qkv.weight"),
        (ReturnsTuple, "not a tuple"),
    ],
)
def test_typical_mistakes_get_not_yet_with_the_right_hint(wrong, words):
    result = ex.check_build_fused_multihead(wrong)
    assert not_yet(result), result
    assert words in repr(result), result


def test_view_without_transpose_hint_names_the_transpose():
    hint = repr(ex.check_build_fused_multihead(ViewWithoutTranspose))
    assert "swap the tokens and the heads" in hint


def test_no_out_proj_attribute_is_named():
    class NoOutProj(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__()
            self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)

        def forward(self, x):
            return self.qkv(x)[..., : self.qkv.out_features // 3]

    result = ex.check_build_fused_multihead(NoOutProj)
    assert not_yet(result) and "forgot out_proj" in repr(result)


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (None, "no answer yet"),
        (Fused(3, 4, 6, 0.0, 2), "not an instance"),
        ("Fused", "nn.Module"),
        (42, "nn.Module"),
        (torch.nn.Linear, "raised TypeError"),
    ],
)
def test_non_classes_get_not_yet_without_raising(answer, words):
    result = ex.check_build_fused_multihead(answer)
    assert not_yet(result), result
    assert words in repr(result), result


def test_constructor_that_raises_is_reported():
    class Broken(Fused):
        def __init__(self, *args, **kwargs):
            raise RuntimeError("not written yet")

    result = ex.check_build_fused_multihead(Broken)
    assert not_yet(result) and "not written yet" in repr(result)


# -- check_key_block --------------------------------------------------------------------------


@pytest.fixture
def fused_ex():
    torch.manual_seed(7)
    return mh.FusedQKVMultiHeadAttention(5, 6, 8, 0.0, num_heads=3)


def test_key_block_right_and_wrong(fused_ex):
    w = fused_ex.qkv.weight
    assert ex.check_key_block(w[6:12], fused_ex)
    assert ex.check_key_block(w.split(6)[1].detach().clone(), fused_ex)
    assert not_yet(r := ex.check_key_block(w[:6], fused_ex)) and "W_query" in repr(r)
    assert not_yet(r := ex.check_key_block(w[12:], fused_ex)) and "W_value" in repr(r)
    assert not_yet(r := ex.check_key_block(w[:, 1:4], fused_ex)) and "ROWS" in repr(r)
    assert not_yet(r := ex.check_key_block(w[6:12].T, fused_ex)) and "expected (6, 5)" in repr(r)
    assert not_yet(ex.check_key_block(w[6:12] + 1, fused_ex))
    assert not_yet(ex.check_key_block(None, fused_ex))
    assert not_yet(ex.check_key_block([1, 2], fused_ex))
    assert not_yet(ex.check_key_block(w[6:12], object()))


# -- lesson 08: the uniform guess's loss, and exercise 1's probability gain ---------------------


def test_initial_loss_accepts_the_printed_value_and_gain_names_the_mistakes():
    import math

    # the values the lesson prints, rounded to two decimals, pass in both languages; the next
    # hundredth does not
    for lang in ("en", "zh"):
        with using_language(lang):
            assert ex.check_initial_loss(4.16) and not ex.check_initial_loss(4.17)
            assert ex.check_probability_gain(34.1) and ex.check_probability_gain(math.exp(3.53))
            assert not ex.check_probability_gain(34.3)
    assert ex.check_probability_gain(64 * math.exp(-0.63))
    assert ex.check_probability_gain(torch.tensor(-0.63).exp() * 64)
    for wrong, hint in [
        (4.16 / 0.63, "ratio of the losses"),
        (4.16 - 0.63, "still a log"),
        (math.exp(-0.63), "compare it with the uniform"),
        (64 * (1 - 0.63), "1 - loss is not a probability"),
        (math.exp(4.25 - 0.63), "measured 4.25"),
        (64, "perfect model"),
        (1 / 64, "then divide"),
    ]:
        r = ex.check_probability_gain(wrong)
        assert not_yet(r) and hint in repr(r), (wrong, r)
    assert not_yet(ex.check_probability_gain(None))
    assert not_yet(ex.check_probability_gain("34.1"))


# -- predict-then-run checkers of lessons 09 and 10 ---------------------------------------------


def test_memory_growth_prediction():
    assert ex.check_memory_growth(64)
    assert ex.check_memory_growth(64.0)
    r = ex.check_memory_growth(8)
    assert not_yet(r) and "T twice" in repr(r)
    r = ex.check_memory_growth(16)
    assert not_yet(r) and "8^2" in repr(r)
    assert not_yet(ex.check_memory_growth(None))
    assert not_yet(ex.check_memory_growth("64"))
    assert not_yet(ex.check_memory_growth(63))


def test_projected_tokens_prediction():
    assert ex.check_projected_tokens(114)
    assert ex.check_projected_tokens(torch.tensor(114))
    r = ex.check_projected_tokens(15)
    assert not_yet(r) and "WITH a cache" in repr(r)
    r = ex.check_projected_tokens(48)
    assert not_yet(r) and "grows by one" in repr(r)
    r = ex.check_projected_tokens(126)
    assert not_yet(r) and "not 16" in repr(r)
    assert not_yet(ex.check_projected_tokens(None))
    assert not_yet(ex.check_projected_tokens(114.5))
    assert not_yet(ex.check_projected_tokens(True))


def test_checker_keeps_the_callers_random_state():
    torch.manual_seed(42)
    expected = torch.rand(3)
    torch.manual_seed(42)
    ex.check_build_fused_multihead(Fused)
    assert torch.equal(torch.rand(3), expected)
