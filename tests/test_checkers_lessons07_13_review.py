"""The beginner's and the native reader's review of lessons 07-13: each wrong answer they passed
is refused, each hint they found naming the wrong cause names the right one, and no hint hands
over the finished line."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from exercise_checks import assert_not_yet, assert_pass
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex
from mhsa_helpers import lm

torch.set_num_threads(1)


def _both(result: ex.CheckResult) -> str:
    return result.render("en") + result.render("zh")


# -- lesson 07 -----------------------------------------------------------------------------------


def _weights3() -> torch.Tensor:
    scores = torch.randn(3, 6, 6, generator=torch.Generator().manual_seed(0))
    mask = torch.ones(6, 6, dtype=torch.bool).triu(1)
    return torch.softmax(scores.masked_fill(mask, -torch.inf), dim=-1)  # (h, T, T)


def test_entropy_exercises():
    assert_not_yet(ex.check_keys_from_entropy(1.3863), "entropy itself")
    w = _weights3()
    rows = -torch.special.xlogy(w, w).sum(-1)  # (h, T)
    assert_pass(ex.check_head_entropy(rows, w))
    assert_not_yet(ex.check_head_entropy(mh.head_entropy(w), w), "every row")  # the package's mean
    assert_not_yet(ex.check_head_entropy(rows / torch.log(torch.tensor(2.0)), w), "base 2")
    naive = -(w * torch.log(w)).sum(-1)
    result = ex.check_head_entropy(naive, w)
    assert_not_yet(result, "xlogy")
    assert "xlogy(w, w)" not in _both(result)  # the API, not the line


# -- lessons 08-11: hints that named the line or the wrong cause ---------------------------------


def test_shift_targets_hints_give_no_slices():
    ids = torch.arange(16).view(2, 8)
    future = torch.full_like(ids, -100)
    future[:, :-3] = ids[:, 3:]
    for wrong in (ids, future, ids.flip(-1)):
        text = _both(ex.check_shift_targets(wrong, ids, 3))
        assert "[NOT YET]" in text and "[:, " not in text and "full_like" not in text, text


def test_key_block_fallback_names_the_block_not_the_slice():
    fused = mh.FusedQKVMultiHeadAttention(4, 6, 5, 0.0, num_heads=2)
    w = fused.qkv.weight.detach()
    assert_pass(ex.check_key_block(w[6:12], fused))
    text = _both(ex.check_key_block(w[5:11], fused))
    assert "second of the three" in text and "d_out:2" not in text and "split" not in text


def test_longest_context_names_the_float_it_got():
    assert_not_yet(ex.check_longest_context(3276.8), "3276.8")


def test_chunk_mask_hint_counts_the_window_right_in_chinese():
    hidden = torch.zeros(2, 5, dtype=torch.bool)  # queries 5, 6 on keys 2..6: no window
    hidden[0, 4] = True  # only the future key 6 of query 5
    text = ex.check_chunk_mask(hidden).render("zh")
    assert "4 个位置及更早" in text and "以上" not in text, text


def test_repeat_kv_wrong_axis_names_the_axis():
    def new_axis_first(x, n_rep):
        b, g, T, d = x.shape
        return x[:, None].expand(b, n_rep, g, T, d).reshape(b, g * n_rep, T, d)

    result = ex.check_repeat_kv(new_axis_first)
    assert_not_yet(result, "the whole set tiled", "where the axis of copies sits")
    assert "(b, g, n_rep, T, d)" not in _both(result)  # the recipe is not handed over
    assert "x.repeat" not in _both(result)


def test_masked_softmax_finite_fill_is_named_before_the_renormalising():
    def d2l_style(scores, hidden):
        return torch.softmax(scores.masked_fill(hidden, -1e9), dim=-1).masked_fill(hidden, 0.0)

    assert_not_yet(ex.check_masked_softmax(d2l_style), "finite fill")


# -- lesson 12 -----------------------------------------------------------------------------------


def _windows(ids, starts, T):
    w = ids[starts[:, None] + torch.arange(T + 1)]
    return w[:, :-1], w[:, 1:]


def test_get_batch_needs_a_start_per_row():
    def one_window(ids, b, T):  # one random start, copied to every row
        return _windows(ids, torch.randint(0, len(ids) - T, (1,)).repeat(b), T)

    def fixed(ids, b, T):  # distinct starts, but the same at every call
        return _windows(ids, torch.arange(b) % (len(ids) - T), T)

    def consecutive(ids, b, T):  # one random start, then the next b - 1 positions
        last = len(ids) - T - 1
        starts = torch.randint(0, max(1, last - b), (1,)) + torch.arange(b)
        return _windows(ids, starts.clamp(max=last), T)

    def spaced(ids, b, T):  # one random start, then equal steps
        last = len(ids) - T - 1
        starts = torch.randint(0, 4, (1,)) + torch.arange(b) * 5
        return _windows(ids, starts.clamp(max=last), T)

    for fn in (one_window, fixed, consecutive, spaced):
        assert_not_yet(ex.check_get_batch(fn), "start of its own")


def _loss(model, inputs, targets):
    logits = model(inputs)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def test_train_step_returning_the_tensor_is_refused():
    def tensor_step(model, optimizer, inputs, targets):
        loss = _loss(model, inputs, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    assert_not_yet(ex.check_train_step(tensor_step), "not a tensor")


def test_block_without_the_attention_residual_is_named():
    class NoAttnResidual(nn.Module):
        def __init__(self, d, context_length, num_heads, dropout=0.0):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = mh.MultiHeadAttention(d, d, context_length, dropout, num_heads)
            self.ff = lm.FeedForward(d, 4 * d, dropout)

        def forward(self, x):
            h = self.attn(self.ln_1(x))
            return h + self.ff(self.ln_2(h))

    assert_not_yet(ex.check_block(NoAttnResidual), "first residual")


def test_cache_numbers_of_the_whole_context_are_named():
    assert_not_yet(ex.check_cache_numbers(2 * 3 * 4 * 128 * 32), "context_length")


def test_punctuation_share_one_query_too_late_is_named():
    text = "\n春眠不觉晓，处处闻啼鸟。"
    w = torch.rand(2, len(text), len(text), generator=torch.Generator().manual_seed(1)).tril()
    w = w / w.sum(-1, keepdim=True)
    is_punct = torch.tensor([ch in lm.PUNCTUATION for ch in text])
    per_query = (w * is_punct).sum(-1)
    assert_pass(ex.check_punctuation_share(per_query[:, is_punct.cumsum(0) > 0].mean(-1), w, text))
    late = is_punct.cumsum(0) - is_punct.long() > 0
    assert_not_yet(ex.check_punctuation_share(per_query[:, late].mean(-1), w, text), "one too late")


# -- lesson 13 -----------------------------------------------------------------------------------


def _tables(q, offset):
    cos, sin = mh.rope_cos_sin(torch.arange(offset, offset + q.shape[-2]), q.shape[-1])
    return cos.to(q.dtype), sin.to(q.dtype)


def test_apply_rope_by_the_package_and_k_grown_to_h_heads_are_refused():
    def by_package(q, k, v, offset=0):
        q, k = mh.apply_rotary_pos_emb(q, k, *_tables(q, offset))
        return q, k, v

    def repeated(q, k, v, offset=0):  # k, v grown to h heads: not what apply_rope returns
        n = q.shape[1] // k.shape[1]
        cos, sin = _tables(q, offset)
        k = k.repeat_interleave(n, 1)
        return q * cos + mh.rotate_half(q) * sin, k * cos + mh.rotate_half(k) * sin, v

    assert_not_yet(ex.check_apply_rope(by_package), "calls mh.apply_rotary_pos_emb")
    assert_not_yet(ex.check_apply_rope(repeated), "k's shape")


class _Norm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(d)), eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class _ByTorch(_Norm):
    def forward(self, x):
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


class _PlainWeight(_Norm):
    def __init__(self, d, eps=1e-6):
        nn.Module.__init__(self)
        self.weight, self.eps = torch.ones(d), eps


class _FixedEps(_Norm):
    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class _NoWeight(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


def test_rms_norm_rules_and_causes():
    assert_pass(ex.check_rms_norm(_Norm))
    assert_not_yet(ex.check_rms_norm(_ByTorch), "torch's own")
    assert_not_yet(ex.check_rms_norm(nn.RMSNorm), "torch's own")
    assert_not_yet(ex.check_rms_norm(_PlainWeight), "plain tensor", "nn.Parameter")
    assert_not_yet(ex.check_rms_norm(_FixedEps), "self.eps")
    result = ex.check_rms_norm(_NoWeight)  # finished, but without a weight: not [TO DO]
    assert_not_yet(result, "needs self.weight")
    assert repr(result).startswith("[NOT YET]")


def test_far_keys_check_the_step_the_exercise_is_about():
    torch.manual_seed(0)
    attn = mh.ModernAttention(16, 8, num_heads=2, num_kv_groups=2, qk_norm=True).eval()
    with torch.no_grad():
        attn.k_norm.weight.normal_()
    h, far = torch.randn(1, 8, 16), torch.arange(40, 48)

    def keys(positions, norm=True):
        with torch.no_grad():
            k = attn.k_proj(h).view(1, 8, 2, attn.head_dim)
            k = (attn.k_norm(k) if norm else k).transpose(1, 2)
            cos, sin = mh.rope_cos_sin(positions, attn.head_dim)
            return k * cos + mh.rotate_half(k) * sin

    assert_pass(ex.check_far_keys(keys(far), attn, h, far))
    assert_not_yet(ex.check_far_keys(keys(torch.arange(8)), attn, h, far), "positions 0..15")
    assert_not_yet(ex.check_far_keys(keys(far * 0), attn, h, far), "not rotated")
    assert_not_yet(ex.check_far_keys(keys(far + 1), attn, h, far), "one too far")
    assert_not_yet(ex.check_far_keys(keys(far, norm=False), attn, h, far), "QK-norm")
    assert_not_yet(ex.check_far_keys(None, attn, h, far), "far")


def test_apply_rope_sign_slip_names_both_signs():
    def minus_sin(q, k, v, offset=0):
        cos, sin = _tables(q, offset)
        return q * cos - mh.rotate_half(q) * sin, k * cos - mh.rotate_half(k) * sin, v

    assert_not_yet(ex.check_apply_rope(minus_sin), "adds the sin term", "wrong way")
