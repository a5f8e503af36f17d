"""Checkers of lessons 09 and 10: a correct answer passes; wrong, wrong-shape and None do not."""

from __future__ import annotations

import torch

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex


def not_yet(result) -> bool:
    return not result and repr(result).startswith(("[NOT YET]", "[TO DO]"))


def test_longest_context():
    longest = max(t for t in range(1, 5000) if 25 * t * t * 4 <= 2**30)  # by search, not sqrt
    assert longest == 3276
    assert ex.check_longest_context(longest)
    assert ex.check_longest_context(torch.tensor(longest))
    assert not_yet(r := ex.check_longest_context(longest + 1)) and "one token too many" in repr(r)
    assert not_yet(r := ex.check_longest_context(6553)) and "4 bytes" in repr(r)
    assert not_yet(r := ex.check_longest_context(16384)) and "25 heads" in repr(r)
    assert not_yet(r := ex.check_longest_context(1024)) and "context today" in repr(r)
    assert not_yet(ex.check_longest_context(3000))
    assert not_yet(ex.check_longest_context(torch.zeros(2, 2)))
    assert not_yet(ex.check_longest_context(True))
    assert not_yet(ex.check_longest_context(None))


def test_chunk_mask():
    keys, queries = torch.arange(2, 7), torch.arange(5, 7)  # positions
    right = (keys > queries[:, None]) | (keys <= queries[:, None] - 4)  # (2, 5), window of 4
    assert ex.check_chunk_mask(right)
    top_left = torch.ones(2, 5).triu(1).bool()
    assert not_yet(r := ex.check_chunk_mask(top_left)) and "is_causal" in repr(r)
    assert not_yet(r := ex.check_chunk_mask(~right)) and "inverted" in repr(r)
    causal = keys > queries[:, None]
    assert not_yet(r := ex.check_chunk_mask(causal)) and "plain causal" in repr(r)
    narrow = causal | (keys <= queries[:, None] - 3)
    assert not_yet(r := ex.check_chunk_mask(narrow)) and "3 positions" in repr(r)
    assert not_yet(ex.check_chunk_mask(right.float()))
    assert not_yet(ex.check_chunk_mask(torch.ones(5, 5).triu(1).bool()))  # wrong shape
    assert not_yet(ex.check_chunk_mask(torch.zeros(2, 5, dtype=torch.bool)))
    assert not_yet(ex.check_chunk_mask(None))


def test_kv_cache_groups():
    per_group = 2 * 48 * 128 * 2 * 6000 * 12  # K and V, layers, head_dim, float16, T, conversations
    budget = 24 * 2**30
    assert budget // per_group == 14  # 14 groups' worth fit, but 14 does not divide 40
    right = max(g for g in range(1, 41) if 40 % g == 0 and g * per_group <= budget)
    assert right == 10
    assert ex.check_kv_cache_bytes(right)
    assert ex.check_kv_cache_bytes(float(right))
    assert not_yet(r := ex.check_kv_cache_bytes(20)) and "do not fit" in repr(r)
    assert not_yet(r := ex.check_kv_cache_bytes(40)) and "MHA" in repr(r)
    assert not_yet(r := ex.check_kv_cache_bytes(8)) and "lesson's setting" in repr(r)
    assert not_yet(r := ex.check_kv_cache_bytes(14)) and "divisor of 40" in repr(r)
    assert not_yet(r := ex.check_kv_cache_bytes(13)) and "2**30" in repr(r)
    assert not_yet(r := ex.check_kv_cache_bytes(5)) and "2 bytes" in repr(r)
    assert not_yet(r := ex.check_kv_cache_bytes(7)) and "2 bytes" in repr(r)
    assert not_yet(r := ex.check_kv_cache_bytes(29)) and "keys and values" in repr(r)
    assert not_yet(r := ex.check_kv_cache_bytes(699)) and "48 layers" in repr(r)
    assert not_yet(r := ex.check_kv_cache_bytes(174)) and "12" in repr(r)
    assert not_yet(r := ex.check_kv_cache_bytes(41)) and "at most 40" in repr(r)
    assert not_yet(r := ex.check_kv_cache_bytes(6)) and "divide 40" in repr(r)
    assert not_yet(r := ex.check_kv_cache_bytes(4)) and "largest" in repr(r)
    assert not_yet(ex.check_kv_cache_bytes(10.5))
    assert not_yet(ex.check_kv_cache_bytes("10"))
    assert not_yet(ex.check_kv_cache_bytes(None))


def test_gqa_parameter_count():
    module = mh.GroupedQueryAttention(
        3584, 3584, 2, 0.0, num_heads=28, num_kv_groups=4, qkv_bias=True
    )
    package = sum(p.numel() for p in module.parameters())
    right = package - 3584  # the exercise's layer has no output bias
    assert right == 2 * 3584 * 3584 + 2 * 3584 * 512 + 3584 + 2 * 512
    assert ex.check_gqa_parameter_count(right)
    assert ex.check_gqa_parameter_count(torch.tensor(right))
    assert not_yet(r := ex.check_gqa_parameter_count(package)) and "output projection" in repr(r)
    no_bias = right - 3584 - 2 * 512
    assert not_yet(r := ex.check_gqa_parameter_count(no_bias)) and "biases of W_query" in repr(r)
    assert not_yet(ex.check_gqa_parameter_count(right - 1))
    assert not_yet(ex.check_gqa_parameter_count(0))
    assert not_yet(ex.check_gqa_parameter_count([right]))
    assert not_yet(ex.check_gqa_parameter_count(None))
