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


def test_kv_cache_conversations():
    per_token = 2 * 48 * 8 * 128 * 2  # K and V, layers, K/V heads, head_dim, float16 bytes
    right = (24 * 2**30) // (per_token * 6000)
    assert right == 21
    assert ex.check_kv_cache_bytes(right)
    assert ex.check_kv_cache_bytes(float(right))
    assert not_yet(r := ex.check_kv_cache_bytes(22)) and "round down" in repr(r)
    assert not_yet(r := ex.check_kv_cache_bytes(4)) and "MHA" in repr(r)
    assert not_yet(ex.check_kv_cache_bytes(21.8))
    assert not_yet(ex.check_kv_cache_bytes("21"))
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
