"""Checkers of lessons 09 and 10: a correct answer passes; wrong, wrong-shape and None do not."""

from __future__ import annotations

import torch

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex


def not_yet(result) -> bool:
    return not result and repr(result).startswith("[NOT YET]")


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
    right = torch.ones(5, 5).triu(1).bool()[3:]
    assert ex.check_chunk_mask(right)
    top_left = torch.ones(2, 5).triu(1).bool()
    assert not_yet(r := ex.check_chunk_mask(top_left)) and "is_causal" in repr(r)
    assert not_yet(r := ex.check_chunk_mask(~right)) and "inverted" in repr(r)
    assert not_yet(ex.check_chunk_mask(right.float()))
    assert not_yet(ex.check_chunk_mask(torch.ones(5, 5).triu(1).bool()))  # wrong shape
    assert not_yet(ex.check_chunk_mask(torch.zeros(2, 5, dtype=torch.bool)))
    assert not_yet(ex.check_chunk_mask(None))


def test_kv_cache_bytes():
    right = 2 * 80 * 8 * 128 * 4096 * 2
    assert right == 5 * 2**28  # 1.25 GiB
    assert ex.check_kv_cache_bytes(right)
    assert ex.check_kv_cache_bytes(float(right))
    assert not_yet(r := ex.check_kv_cache_bytes(right // 2)) and "values" in repr(r)
    assert not_yet(r := ex.check_kv_cache_bytes(right * 8)) and "multi-head" in repr(r)
    assert not_yet(ex.check_kv_cache_bytes(right + 1))
    assert not_yet(ex.check_kv_cache_bytes("1 GiB"))
    assert not_yet(ex.check_kv_cache_bytes(None))


def test_gqa_parameter_count():
    module = mh.GroupedQueryAttention(128, 128, 2, 0.0, num_heads=64, num_kv_groups=8)
    small = sum(p.numel() for p in module.parameters())
    assert small == 2 * 128 * 128 + 2 * 128 * 16 + 128  # the same formula at a small size
    right = 2 * 8192 * 8192 + 2 * 8192 * 1024 + 8192
    assert ex.check_gqa_parameter_count(right)
    assert ex.check_gqa_parameter_count(torch.tensor(right))
    assert not_yet(r := ex.check_gqa_parameter_count(4 * 8192 * 8192 + 8192)) and "MHA" in repr(r)
    assert not_yet(ex.check_gqa_parameter_count(right - 8192))
    assert not_yet(ex.check_gqa_parameter_count(0))
    assert not_yet(ex.check_gqa_parameter_count([right]))
    assert not_yet(ex.check_gqa_parameter_count(None))
