"""The checkers of lessons 07-12 speak both languages.

For every checker, a right and a wrong answer: the result is the same in both languages (only the
words change), ``render("zh")`` holds Chinese characters and ``render("en")`` none, and the
English line is what the English lessons show (``[PASS] ...`` / ``[NOT YET] ...: hint: ...``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import pytest
import torch
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex
from mhsa_helpers import lm
from mhsa_helpers.exercises import CheckResult
from mhsa_helpers.i18n import using_language

CHINESE = re.compile(r"[\u4e00-\u9fff]")


def _weights4() -> torch.Tensor:
    """Four heads with different sharpness, (4, 5, 5)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        mha = mh.MultiHeadAttention(3, 8, 5, 0.0, num_heads=4)
        with torch.no_grad():
            _, weights = mha(4 * torch.rand(1, 5, 3), return_weights=True)
    return weights[0]


def _shift_ids() -> torch.Tensor:
    return torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(0))  # (b, T)


def _shift_right(k: int) -> torch.Tensor:
    ids = _shift_ids()
    targets = torch.full_like(ids, -100)
    targets[:, k:] = ids[:, :-k]
    return targets


def _top_k(logits: torch.Tensor, k: int, temperature: float) -> torch.Tensor:
    scaled = logits / temperature
    kth = scaled.topk(k, dim=-1).values[:, -1:]
    return torch.softmax(scaled.masked_fill(scaled < kth, float("-inf")), dim=-1)


PUNCT_TEXT = "\n明月照，\n花开。\n"


def _punct_weights() -> torch.Tensor:
    num = len(PUNCT_TEXT)
    weights = torch.rand(4, num, num, generator=torch.Generator().manual_seed(1)).tril()
    return weights / weights.sum(-1, keepdim=True)  # (h, T, T)


def _punct_right() -> torch.Tensor:
    weights = _punct_weights()
    is_punct = torch.tensor([ch in lm.PUNCTUATION for ch in PUNCT_TEXT])  # (T,)
    per_query = (weights * is_punct).sum(-1)  # (h, T)
    has_one = is_punct.cumsum(0) > 0
    return per_query[:, has_one].mean(-1)  # (h,)


def _fused() -> nn.Module:
    torch.manual_seed(0)
    return mh.FusedQKVMultiHeadAttention(4, 6, 5, 0.0, 2)


def right_masked_softmax(scores: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
    empty = hidden.all(dim=-1, keepdim=True)  # (..., 1)
    weights = torch.softmax(scores.masked_fill(hidden & ~empty, float("-inf")), dim=-1)
    return weights.masked_fill(empty, 0.0)


def plain_minus_inf(scores: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
    return torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)


class TupleForward(mh.FusedQKVMultiHeadAttention):
    """Right layers, but forward returns a tuple."""

    def forward(self, x):  # type: ignore[override]
        return super().forward(x), None


class NoOutProj(nn.Module):
    """A fused qkv layer and nothing else."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)

    def forward(self, x):
        return x


CHUNK = torch.tensor([[0, 0, 0, 0, 1], [1, 0, 0, 0, 0]]).bool()  # (2, 5), window of 4
FITS = 10  # K/V groups that fit in lesson 10's exercise 2
GQA = 3584 * 3584 * 2 + 2 * 3584 * 512 + 3584 + 2 * 512  # Q/K/V biases, no output bias
LOGITS = torch.randn(2, 10, generator=torch.Generator().manual_seed(0))

#: checker name -> (right answer, wrong answers): calls that build a CheckResult.
CASES: dict[str, tuple[Callable[[], CheckResult], list[Callable[[], CheckResult]]]] = {
    "keys_from_entropy": (
        lambda: ex.check_keys_from_entropy(4),
        [
            lambda: ex.check_keys_from_entropy(None),
            lambda: ex.check_keys_from_entropy(6),
            lambda: ex.check_keys_from_entropy(1),
            lambda: ex.check_keys_from_entropy(1.3863),
            lambda: ex.check_keys_from_entropy("4"),
        ],
    ),
    "head_entropy": (
        lambda: ex.check_head_entropy(
            -torch.special.xlogy(_weights4(), _weights4()).sum(-1), _weights4()
        ),
        [
            lambda: ex.check_head_entropy(None, _weights4()),
            lambda: ex.check_head_entropy(mh.head_entropy(_weights4()), _weights4()),
            lambda: ex.check_head_entropy(torch.zeros(4, 5), _weights4()),
            lambda: ex.check_head_entropy(torch.full((4,), float("nan")), _weights4()),
            lambda: ex.check_head_entropy(torch.zeros(4), _weights4()),
            lambda: ex.check_head_entropy([1.0], _weights4()),
        ],
    ),
    "sharpest_head": (
        lambda: ex.check_sharpest_head(int(mh.head_entropy(_weights4()).argmin()), _weights4()),
        [
            lambda: ex.check_sharpest_head(None, _weights4()),
            lambda: ex.check_sharpest_head(
                int(mh.head_entropy(_weights4()).argmin()) + 1, _weights4()
            ),
            lambda: ex.check_sharpest_head(int(mh.head_entropy(_weights4()).argmax()), _weights4()),
            lambda: ex.check_sharpest_head(1.5, _weights4()),
        ],
    ),
    "initial_loss": (
        lambda: ex.check_initial_loss(math.log(64)),
        [
            lambda: ex.check_initial_loss(None),
            lambda: ex.check_initial_loss(6.0),
            lambda: ex.check_initial_loss(-math.log(64)),
            lambda: ex.check_initial_loss(1.0),
            lambda: ex.check_initial_loss("4.16"),
        ],
    ),
    "probability_gain": (
        lambda: ex.check_probability_gain(64 * math.exp(-0.63)),
        [
            lambda: ex.check_probability_gain(None),
            lambda: ex.check_probability_gain(4.16 / 0.63),
            lambda: ex.check_probability_gain(3.53),
            lambda: ex.check_probability_gain(math.exp(-0.63)),
            lambda: ex.check_probability_gain(64 * 0.37),
            lambda: ex.check_probability_gain(64),
            lambda: ex.check_probability_gain(1.0),
            lambda: ex.check_probability_gain("61.5"),
        ],
    ),
    "shift_targets": (
        lambda: ex.check_shift_targets(_shift_right(2), _shift_ids(), 2),
        [
            lambda: ex.check_shift_targets(None, _shift_ids(), 2),
            lambda: ex.check_shift_targets([1, 2], _shift_ids(), 2),
            lambda: ex.check_shift_targets(torch.zeros(2, 7, dtype=torch.long), _shift_ids(), 2),
            lambda: ex.check_shift_targets(_shift_right(2).float(), _shift_ids(), 2),
            lambda: ex.check_shift_targets(
                torch.where(_shift_right(2) < 0, 0, _shift_right(2)), _shift_ids(), 2
            ),
            lambda: ex.check_shift_targets(torch.zeros(2, 8, dtype=torch.long), _shift_ids(), 2),
        ],
    ),
    "offset_attention": (
        lambda: ex.check_offset_attention(mh.offset_attention(_weights4(), 1), _weights4(), 1),
        [
            lambda: ex.check_offset_attention(None, _weights4(), 1),
            lambda: ex.check_offset_attention(
                mh.offset_attention(_weights4().transpose(-2, -1), 1), _weights4(), 1
            ),
            lambda: ex.check_offset_attention(torch.zeros(4), _weights4(), 1),
            lambda: ex.check_offset_attention(torch.zeros(3), _weights4(), 1),
        ],
    ),
    "longest_context": (
        lambda: ex.check_longest_context(3276),
        [
            lambda: ex.check_longest_context(None),
            lambda: ex.check_longest_context(3277),
            lambda: ex.check_longest_context(6553),
            lambda: ex.check_longest_context(16384),
            lambda: ex.check_longest_context(4634),
            lambda: ex.check_longest_context(3162),
            lambda: ex.check_longest_context(7),
            lambda: ex.check_longest_context("3276 tokens"),
        ],
    ),
    "key_block": (
        lambda: ex.check_key_block(_fused().qkv.weight[6:12].detach(), _fused()),
        [
            lambda: ex.check_key_block(None, _fused()),
            lambda: ex.check_key_block(_fused().qkv.weight[:6].detach(), _fused()),
            lambda: ex.check_key_block(_fused().qkv.weight[12:].detach(), _fused()),
            lambda: ex.check_key_block(_fused().qkv.weight.detach(), _fused()),
            lambda: ex.check_key_block(torch.zeros(6, 5), _fused()),
            lambda: ex.check_key_block(torch.zeros(6, 4), _fused()),
            lambda: ex.check_key_block([0.0], _fused()),
            lambda: ex.check_key_block(torch.zeros(6, 4), nn.Linear(2, 2)),
        ],
    ),
    "memory_growth": (
        lambda: ex.check_memory_growth(64),
        [
            lambda: ex.check_memory_growth(None),
            lambda: ex.check_memory_growth(8),
            lambda: ex.check_memory_growth(16),
            lambda: ex.check_memory_growth(3),
            lambda: ex.check_memory_growth("64x"),
        ],
    ),
    "build_fused_multihead": (
        lambda: ex.check_build_fused_multihead(mh.FusedQKVMultiHeadAttention),
        [
            lambda: ex.check_build_fused_multihead(mh.FusedQKVMultiHeadAttention(3, 4, 6, 0.0, 2)),
            lambda: ex.check_build_fused_multihead(NoOutProj),
            lambda: ex.check_build_fused_multihead(TupleForward),
        ],
    ),
    "chunk_mask": (
        lambda: ex.check_chunk_mask(CHUNK),
        [
            lambda: ex.check_chunk_mask(None),
            lambda: ex.check_chunk_mask(~CHUNK),
            lambda: ex.check_chunk_mask(torch.ones(2, 5).triu(1).bool()),
            lambda: ex.check_chunk_mask(CHUNK.float()),
            lambda: ex.check_chunk_mask(torch.ones(5, 5).triu(1).bool()),
            lambda: ex.check_chunk_mask(torch.zeros(2, 5, dtype=torch.bool)),
        ],
    ),
    "kv_cache_bytes": (
        lambda: ex.check_kv_cache_bytes(FITS),
        [
            lambda: ex.check_kv_cache_bytes(None),
            lambda: ex.check_kv_cache_bytes(20),
            lambda: ex.check_kv_cache_bytes(40),
            lambda: ex.check_kv_cache_bytes(8),
            lambda: ex.check_kv_cache_bytes(5),
            lambda: ex.check_kv_cache_bytes(29),
            lambda: ex.check_kv_cache_bytes(699),
            lambda: ex.check_kv_cache_bytes(13),
            lambda: ex.check_kv_cache_bytes(14),
            lambda: ex.check_kv_cache_bytes(41),
            lambda: ex.check_kv_cache_bytes(6),
            lambda: ex.check_kv_cache_bytes(4),
            lambda: ex.check_kv_cache_bytes(0),
            lambda: ex.check_kv_cache_bytes("10"),
        ],
    ),
    "gqa_parameter_count": (
        lambda: ex.check_gqa_parameter_count(GQA),
        [
            lambda: ex.check_gqa_parameter_count(None),
            lambda: ex.check_gqa_parameter_count(GQA + 3584),
            lambda: ex.check_gqa_parameter_count(GQA - 3584 - 2 * 512),
            lambda: ex.check_gqa_parameter_count(4 * 3584 * 3584 + 3 * 3584),
            lambda: ex.check_gqa_parameter_count(GQA - 1),
            lambda: ex.check_gqa_parameter_count(0),
            lambda: ex.check_gqa_parameter_count([GQA]),
        ],
    ),
    "projected_tokens": (
        lambda: ex.check_projected_tokens(114),
        [
            lambda: ex.check_projected_tokens(None),
            lambda: ex.check_projected_tokens(15),
            lambda: ex.check_projected_tokens(48),
            lambda: ex.check_projected_tokens(130),
            lambda: ex.check_projected_tokens(100),
            lambda: ex.check_projected_tokens(11.5),
        ],
    ),
    "blind_rows": (
        lambda: ex.check_blind_rows(7),
        [
            lambda: ex.check_blind_rows(None),
            lambda: ex.check_blind_rows(0),
            lambda: ex.check_blind_rows(3),
            lambda: ex.check_blind_rows(4),
            lambda: ex.check_blind_rows(8),
            lambda: ex.check_blind_rows(15),
            lambda: ex.check_blind_rows("7"),
        ],
    ),
    "masked_softmax": (
        lambda: ex.check_masked_softmax(right_masked_softmax),
        [
            lambda: ex.check_masked_softmax(plain_minus_inf),
            lambda: ex.check_masked_softmax(lambda scores, hidden: torch.softmax(scores, -1)),
            lambda: ex.check_masked_softmax(lambda scores, hidden: scores[0]),
            lambda: ex.check_masked_softmax(lambda scores, hidden: 1 / 0),
        ],
    ),
    "cache_numbers": (
        lambda: ex.check_cache_numbers(2 * 3 * 4 * 100 * 32),
        [
            lambda: ex.check_cache_numbers(None),
            lambda: ex.check_cache_numbers(3 * 4 * 100 * 32),
            lambda: ex.check_cache_numbers(2 * 4 * 100 * 32),
            lambda: ex.check_cache_numbers(4 * 76_800),
            lambda: ex.check_cache_numbers(2 * 3 * 100 * 32),
            lambda: ex.check_cache_numbers(7),
            lambda: ex.check_cache_numbers("76800"),
        ],
    ),
    "top_k_probs": (
        lambda: ex.check_top_k_probs(_top_k(LOGITS, 3, 0.7), LOGITS, 3, 0.7),
        [
            lambda: ex.check_top_k_probs(None, LOGITS, 3, 0.7),
            lambda: ex.check_top_k_probs(_top_k(LOGITS, 3, 1.0), LOGITS, 3, 0.7),
            lambda: ex.check_top_k_probs(torch.softmax(LOGITS / 0.7, -1), LOGITS, 3, 0.7),
            lambda: ex.check_top_k_probs(_top_k(LOGITS, 3, 0.7)[0], LOGITS, 3, 0.7),
            lambda: ex.check_top_k_probs(torch.zeros(2, 10), LOGITS, 3, 0.7),
        ],
    ),
    "punctuation_share": (
        lambda: ex.check_punctuation_share(_punct_right(), _punct_weights(), PUNCT_TEXT),
        [
            lambda: ex.check_punctuation_share(None, _punct_weights(), PUNCT_TEXT),
            lambda: ex.check_punctuation_share(
                (_punct_weights() * torch.tensor([c in lm.PUNCTUATION for c in PUNCT_TEXT]))
                .sum(-1)
                .mean(-1),
                _punct_weights(),
                PUNCT_TEXT,
            ),
            lambda: ex.check_punctuation_share(torch.zeros(4), _punct_weights(), PUNCT_TEXT),
            lambda: ex.check_punctuation_share(torch.zeros(3), _punct_weights(), PUNCT_TEXT),
        ],
    ),
}


def _both(call: Callable[[], CheckResult]) -> tuple[CheckResult, str, str]:
    result = call()
    return result, result.render("en"), result.render("zh")


def _assert_bilingual(result: CheckResult, en: str, zh: str) -> None:
    assert not CHINESE.search(en), en
    assert CHINESE.search(zh), zh
    assert not CHINESE.search(result.text.en), result.text.en
    assert CHINESE.search(result.exercise.zh), result.exercise.zh
    assert CHINESE.search(result.text.zh), result.text.zh


@pytest.mark.parametrize("checker", sorted(CASES))
def test_right_and_wrong_answers_in_both_languages(checker):
    """The right answer passes, each wrong one gets a hint, in both languages (the same
    result when the checker runs in a Chinese lesson)."""
    right, wrongs = CASES[checker]
    result, en, zh = _both(right)
    assert result, en
    assert en.startswith("[PASS] "), en
    assert zh.startswith("[通过] "), zh
    _assert_bilingual(result, en, zh)
    with using_language("zh"):
        again = right()
    assert bool(again) and again.text == result.text and again.exercise == result.exercise

    for index, wrong in enumerate(wrongs):
        result, en, zh = _both(wrong)
        assert not result, (index, en)
        todo = "no answer yet" in en or "no prediction yet" in en  # an empty answer
        assert en.startswith("[TO DO] " if todo else "[NOT YET] "), (index, en)
        assert zh.startswith("[未完成] " if todo else "[还没对] "), (index, zh)
        _assert_bilingual(result, en, zh)
        if "no answer yet" not in en:
            assert "hint: " in en and "提示：" in zh, (index, en, zh)
        with using_language("zh"):
            again = wrong()
            shown = repr(again)
        assert not again and shown == zh, (index, shown, zh)


def test_english_lines_stay_as_they_were():
    """A few English lines exactly as before the Chinese edition (English lessons unchanged)."""
    assert repr(ex.check_memory_growth(8)) == (
        "[NOT YET] prediction: weights memory for 8x the tokens: hint: that would be true for "
        "(b, h, T, head_dim) tensors; this one has T twice."
    )
    assert repr(ex.check_shift_targets(torch.zeros(2, 7, dtype=torch.long), _shift_ids(), 2)) == (
        "[NOT YET] shift-task targets (k=2): hint: shape (2, 7) but expected (2, 8), like ids."
    )
    assert repr(ex.check_chunk_mask(CHUNK.float())) == (
        "[NOT YET] mask of a chunk after a sliding-window cache: hint: expected dtype "
        "torch.bool, got torch.float32 (use .bool())."
    )
    assert repr(ex.check_build_fused_multihead(NoOutProj)) == (
        "[NOT YET] build a fused-QKV MultiHeadAttention: hint: forgot out_proj: add "
        "self.out_proj = nn.Linear(d_out, d_out) and apply it last."
    )
    with using_language("zh"):
        assert repr(ex.check_kv_cache_bytes(29)) == (
            "[还没对] 24 GiB 放得下的 K/V 组数。提示：键和值都要缓存，每层两个张量。"
        )
