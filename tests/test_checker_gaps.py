"""Two slips the build-it checkers of lessons 06 and 09 now name (issue 19's checker gaps)."""

from __future__ import annotations

import torch
from torch import nn

from mhsa_helpers import exercises


def _fused_class(layout: str, scale_power: float) -> type[nn.Module]:
    """Lesson 09's fused-QKV class, viewed in ``layout`` and scaled by head_dim ** scale_power."""

    class Fused(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__()
            self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
            self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
            self.out_proj = nn.Linear(d_out, d_out)
            self.dropout = nn.Dropout(dropout)
            mask = torch.triu(torch.ones(context_length, context_length), 1)
            self.register_buffer("mask", mask)

        def forward(self, x):
            b, T, _ = x.shape
            qkv = self.qkv(x)  # (b, T, 3 * d_out)
            if layout == "per head":
                qkv = qkv.view(b, T, self.num_heads, 3, self.head_dim)  # (b, T, h, 3, hd)
                queries, keys, values = qkv.permute(3, 0, 2, 1, 4)  # 3 x (b, h, T, hd)
            else:
                qkv = qkv.view(b, T, 3, self.num_heads, self.head_dim)  # (b, T, 3, h, hd)
                queries, keys, values = qkv.permute(2, 0, 3, 1, 4)  # 3 x (b, h, T, hd)
            scores = queries @ keys.transpose(-2, -1)  # (b, h, T, T)
            scores = scores.masked_fill(self.mask.bool()[:T, :T], -torch.inf)
            weights = torch.softmax(scores / self.head_dim**scale_power, dim=-1)  # (b, h, T, T)
            context = self.dropout(weights) @ values  # (b, h, T, hd)
            context = context.transpose(1, 2).contiguous().view(b, T, self.d_out)
            return self.out_proj(context)  # (b, T, d_out)

    return Fused


def test_the_fused_checker_passes_the_right_class_and_names_each_slip() -> None:
    check = exercises.check_build_fused_multihead
    assert check(_fused_class("stacked", 0.5)).passed
    per_head = check(_fused_class("per head", 0.5))
    assert not per_head.passed
    assert "(b, T, num_heads, 3, head_dim)" in str(per_head)
    not_sqrt = check(_fused_class("stacked", 1.0))
    assert not not_sqrt.passed
    assert "head_dim itself" in not_sqrt.text.en or "d_k itself" in not_sqrt.text.en
    assert "本身" in not_sqrt.text.zh


class _SplitMaskInForward(nn.Module):
    """Lesson 06's class with its causal mask built in forward instead of a buffer."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        b, T, _ = x.shape
        q, k, v = (
            w(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)  # (b, h, T, hd)
            for w in (self.W_query, self.W_key, self.W_value)
        )
        scores = q @ k.transpose(2, 3)  # (b, h, T, T)
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # (T, T)
        scores = scores.masked_fill(future, -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim**0.5, dim=-1))  # (b, h, T, T)
        context = (weights @ v).transpose(1, 2).reshape(b, T, self.d_out)  # (b, T, d_out)
        return self.out_proj(context)  # (b, T, d_out)


def test_a_mask_built_in_forward_is_named_the_brief_asks_for_a_buffer() -> None:
    result = exercises.check_build_multihead(_SplitMaskInForward)
    assert not result.passed, result
    assert "register_buffer" in result.text.en and "register_buffer" in result.text.zh
