"""Lesson 13's build-it checkers: the right answers pass, every named mistake gets its own hint.

The mistakes are those of the issue: rotating v, the wrong half split (interleaved pairs, or the
pair turned the other way), a missing position offset in the cache, subtracting the mean in
RMSNorm, GELU for SiLU, gate and up swapped, a width rule off by the 2/3. (That no checker raises
on odd input and none passes a wrong answer: tests/test_checkers_never_pass_wrong.py and
tests/test_empty_answers.py, which find these checkers by themselves.)
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex


def _tables(q: torch.Tensor, offset: int) -> tuple[torch.Tensor, torch.Tensor]:
    cos, sin = mh.rope_cos_sin(torch.arange(offset, offset + q.shape[-2]), q.shape[-1])
    return cos.to(q.dtype), sin.to(q.dtype)


def rope(q, k, v, offset=0):  # the rotation written out, as the brief asks
    cos, sin = _tables(q, offset)
    return q * cos + mh.rotate_half(q) * sin, k * cos + mh.rotate_half(k) * sin, v


def rope_by_package(q, k, v, offset=0):  # the call the brief rules out
    q, k = mh.apply_rotary_pos_emb(q, k, *_tables(q, offset))
    return q, k, v


def rope_rotating_v(q, k, v, offset=0):
    cos, sin = _tables(q, offset)
    return *mh.apply_rotary_pos_emb(q, k, cos, sin), mh.apply_rotary_pos_emb(v, v, cos, sin)[0]


def rope_without_offset(q, k, v, offset=0):
    return rope(q, k, v, 0)


def rope_one_too_far(q, k, v, offset=0):
    return rope(q, k, v, offset + 1)


def rope_interleaved(q, k, v, offset=0):
    cos, sin = _tables(q, offset)
    return mh.apply_rotary_interleaved(q, cos, sin), mh.apply_rotary_interleaved(k, cos, sin), v


def rope_wrong_sign(q, k, v, offset=0):
    cos, sin = _tables(q, offset)
    return q * cos - mh.rotate_half(q) * sin, k * cos - mh.rotate_half(k) * sin, v


def rope_only_q(q, k, v, offset=0):
    return rope(q, k, v, offset)[0], k, v


ROPE_MISTAKES = {
    "rotating v": (rope_rotating_v, "v was rotated"),
    "the package's rotation": (rope_by_package, "calls mh.apply_rotary_pos_emb"),
    "missing offset": (rope_without_offset, "as if they started at position 0"),
    "positions from 1": (rope_one_too_far, "one too far"),
    "interleaved pairs": (rope_interleaved, "neighbouring features"),
    "wrong half sign": (rope_wrong_sign, "turns the wrong way"),
    "keys not rotated": (rope_only_q, "k: these are returned unrotated"),
}


class Norm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(d)), eps

    def centre(self, x):
        return x

    def forward(self, x):
        x = self.centre(x)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class NormMinusMean(Norm):
    def centre(self, x):
        return x - x.mean(-1, keepdim=True)


class NormEpsOutside(Norm):
    def forward(self, x):
        return x / (x.pow(2).mean(-1, keepdim=True).sqrt() + self.eps) * self.weight


class NormNoWeight(Norm):
    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


NORM_MISTAKES = {
    "subtracting the mean": (NormMinusMean, "that is LayerNorm"),
    "eps outside the root": (NormEpsOutside, "after the square root"),
    "no weight": (NormNoWeight, "self.weight"),
}


class Swi(nn.Module):
    width = staticmethod(lambda d: int(8 * d / 3))
    act = staticmethod(F.silu)
    swap = False

    def __init__(self, d_model, hidden_dim=None):
        super().__init__()
        h = self.width(d_model) if hidden_dim is None else hidden_dim
        self.gate_proj = nn.Linear(d_model, h, bias=False)
        self.up_proj = nn.Linear(d_model, h, bias=False)
        self.down_proj = nn.Linear(h, d_model, bias=False)

    def forward(self, x):
        gate, up = self.gate_proj(x), self.up_proj(x)
        if self.swap:
            gate, up = up, gate
        return self.down_proj(self.act(gate) * up)


class SwiGelu(Swi):
    act = staticmethod(F.gelu)


class SwiSwapped(Swi):
    swap = True


class SwiGPT2Width(Swi):
    width = staticmethod(lambda d: 4 * d)


class SwiNoFour(Swi):
    width = staticmethod(lambda d: int(2 * d / 3))


class SwiRounded(Swi):
    width = staticmethod(lambda d: round(8 * d / 3))


SWIGLU_MISTAKES = {
    "GELU for SiLU": (SwiGelu, "you use GELU"),
    "gate and up swapped": (SwiSwapped, "gate and up are swapped"),
    "width without the 2/3": (SwiGPT2Width, "4 * d_model is GPT-2's"),
    "width without the 4": (SwiNoFour, "drops the 4"),
    "width rounded, not truncated": (SwiRounded, "the rule truncates"),
}

CASES = [
    *((ex.check_apply_rope, *case) for case in ROPE_MISTAKES.values()),
    *((ex.check_rms_norm, *case) for case in NORM_MISTAKES.values()),
    *((ex.check_swiglu, *case) for case in SWIGLU_MISTAKES.values()),
]
IDS = [*ROPE_MISTAKES, *NORM_MISTAKES, *SWIGLU_MISTAKES]


@pytest.mark.parametrize(("checker", "answer", "fragment"), CASES, ids=IDS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_named_mistake_gets_its_hint_and_never_passes(checker, answer, fragment, lang):
    mh.set_language(lang)
    try:
        result = checker(answer)
    finally:
        mh.set_language("en")
    assert not result
    assert "[NOT YET]" in str(result) or "[还没对]" in str(result)
    if lang == "en":
        assert fragment in str(result)


@pytest.mark.parametrize(
    ("checker", "answer"),
    [
        (ex.check_apply_rope, rope),
        (ex.check_rms_norm, Norm),
        (ex.check_rms_norm, mh.RMSNorm),
        (ex.check_swiglu, Swi),
        (ex.check_swiglu, mh.SwiGLU),
    ],
    ids=["apply_rope", "rms_norm", "rms_norm-package", "swiglu", "swiglu-package"],
)
def test_right_answers_and_the_package_parts_pass(checker, answer):
    result = checker(answer)
    assert result, str(result)
    assert str(result).startswith("[PASS]")


def test_the_rope_checker_reference_is_the_package_attention():
    """What check_apply_rope wants is what ModernAttention does to q and k (and not to v)."""
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 1, 2, 5, 4)
    cos, sin = mh.RotaryEmbedding(4, 16)(q, offset=3)
    want_q, want_k = mh.apply_rotary_pos_emb(q, k, cos, sin)
    got_q, got_k, got_v = rope(q, k, v, 3)
    assert torch.equal(got_q, want_q) and torch.equal(got_k, want_k) and got_v is v
