"""Assertions shared by the exercise-checker tests (tests/test_exercises_*.py)."""

from __future__ import annotations

from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex


def assert_pass(result: ex.CheckResult) -> None:
    assert result, repr(result)
    assert result.passed is True
    assert repr(result).startswith("[PASS] ")


def assert_not_yet(result: ex.CheckResult, *fragments: str) -> None:
    assert not result, repr(result)
    text = repr(result)
    assert text.startswith(("[NOT YET] ", "[TO DO] ")), text  # TO DO: no answer given yet
    assert str(result) == text
    for fragment in fragments:
        assert fragment in text, text


# Wrong answers more than one test file tries: a head that ignores its dropout argument.


class FixedDropoutCausal(mh.CausalAttention):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, qkv_bias)
        self.dropout = nn.Dropout(0.5)  # the argument ignored


class FixedDropoutWrapper(mh.MultiHeadAttentionWrapper):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        for head in self.heads:
            head.dropout = nn.Dropout(0.5)
