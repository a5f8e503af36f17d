"""Checkers of lesson 11: correct answers pass; plausible wrong ones, odd ones and None do not."""

from __future__ import annotations

import pytest
import torch
from exercise_checks import assert_not_yet, assert_pass

from mhsa_helpers import exercises as ex

LENGTHS, T = torch.tensor([3, 1, 4]), 5


PADS = torch.arange(T) < (T - LENGTHS)[:, None]  # (b, T): True at the pads, left padding
FUTURE = torch.ones(T, T, dtype=torch.bool).triu(1)  # (T, T)
HIDDEN = FUTURE | PADS[:, None, :]  # (b, T_q, T_k)


def _loop_hidden():
    """The expected mask by a loop over sequences, queries and keys (no broadcasting)."""
    out = torch.zeros(3, T, T, dtype=torch.bool)
    for b, length in enumerate(LENGTHS.tolist()):
        for i in range(T):
            for j in range(T):
                out[b, i, j] = j > i or j < T - length
    return out


def test_blind_rows_right_answer_passes():
    assert int(HIDDEN.all(dim=-1).sum()) == 7  # the loop's mask agrees: one row per pad
    assert torch.equal(_loop_hidden(), HIDDEN)
    assert_pass(ex.check_blind_rows(7))
    assert_pass(ex.check_blind_rows(torch.tensor(7)))


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        (0, "right padding"),
        (3, "one row per sequence"),
        (4, "one row short"),
        (8, "real tokens"),
        (15, "then add up"),
        (7.5, "whole number"),
    ],
)
def test_blind_rows_wrong_answers(answer, fragment):
    assert_not_yet(ex.check_blind_rows(answer), fragment)


@pytest.mark.parametrize("answer", [None, "7", [7], True, float("nan")])
def test_blind_rows_odd_answers(answer):
    assert_not_yet(ex.check_blind_rows(answer))


def right_masked_softmax(scores, hidden):
    empty = hidden.all(dim=-1, keepdim=True)  # rows with nothing to see
    weights = torch.softmax(scores.masked_fill(hidden & ~empty, float("-inf")), dim=-1)
    return weights.masked_fill(empty, 0.0)


def right_by_hand(scores, hidden):
    shifted = scores - scores.max(dim=-1, keepdim=True).values
    numerators = torch.exp(shifted) * ~hidden
    return numerators / numerators.sum(dim=-1, keepdim=True).clamp_min(1e-30)


def plain_minus_inf(scores, hidden):
    return torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)


def nan_to_num_afterwards(scores, hidden):
    # The NaN of empty rows is replaced: right output, but the lesson's rule is never to make one.
    return plain_minus_inf(scores, hidden).nan_to_num(0.0)


def where_afterwards(scores, hidden):
    weights = plain_minus_inf(scores, hidden)
    return torch.where(weights.isnan(), torch.zeros_like(weights), weights)


@pytest.mark.parametrize("fn", [right_masked_softmax, right_by_hand])
def test_masked_softmax_right_answers_pass(fn):
    assert_pass(ex.check_masked_softmax(fn))


def large_negative_fill(scores, hidden):
    return torch.softmax(scores.masked_fill(hidden, -1e9), dim=-1)


def multiply_then_nan_to_num(scores, hidden):
    # Forward right (0 / 0 replaced by 0), but the backward pass divides by the empty sum again.
    numerators = torch.exp(scores - scores.max(dim=-1, keepdim=True).values) * ~hidden
    return (numerators / numerators.sum(dim=-1, keepdim=True)).nan_to_num(0.0)


def zero_after_plain_softmax(scores, hidden):
    return torch.softmax(scores, dim=-1).masked_fill(hidden, 0.0)


def naive_exp(scores, hidden):
    numerators = torch.exp(scores) * ~hidden
    return numerators / numerators.sum(dim=-1, keepdim=True).clamp_min(1e-30)


def fills_the_callers_scores(scores, hidden):
    # Right weights, but the caller's scores are filled in place (autograd refuses it on a leaf).
    empty = hidden.all(dim=-1, keepdim=True)
    scores.masked_fill_(hidden & ~empty, float("-inf"))
    return torch.softmax(scores, dim=-1).masked_fill(empty, 0.0)


@pytest.mark.parametrize(
    ("fn", "fragment"),
    [
        (plain_minus_inf, "NaN in the output"),
        (fills_the_callers_scores, "changed the scores it was given in place"),
        (large_negative_fill, "uniform"),
        (multiply_then_nan_to_num, "gradient is NaN"),
        (nan_to_num_afterwards, "never produce the NaN"),
        (where_afterwards, "never produce the NaN"),
        (zero_after_plain_softmax, "renormalise"),
        (naive_exp, "overflow"),
        (lambda scores, hidden: scores, "exactly 0"),
        (lambda scores, hidden: None, "NoneType"),
        (lambda scores, hidden: torch.zeros(2, 4), "shape"),
        (lambda scores: scores, "TypeError"),
        (lambda scores, hidden: 1 / 0, "ZeroDivisionError"),
    ],
)
def test_masked_softmax_wrong_answers(fn, fragment):
    assert_not_yet(ex.check_masked_softmax(fn), fragment)


@pytest.mark.parametrize("answer", [None, torch.zeros(2, 4, 4), "masked_softmax", 0])
def test_masked_softmax_odd_answers(answer):
    assert_not_yet(ex.check_masked_softmax(answer))


@pytest.mark.parametrize("check", [ex.check_chunk_mask])
def test_mask_checkers_name_a_meta_tensor(check):
    assert_not_yet(check(torch.ones(3, 5, 5, dtype=torch.bool, device="meta")), "meta tensor")
    assert_not_yet(check(torch.ones(3, 5, dtype=torch.bool, device="meta")), "meta tensor")
    assert_not_yet(check(torch.ones(2, 5, dtype=torch.bool, device="meta")), "meta tensor")


@pytest.mark.parametrize("message", ["", "write me"], ids=["bare", "with-a-message"])
def test_masked_softmax_stub_is_to_do_with_a_whole_sentence(message):
    """A stub raising NotImplementedError (with or without a message) is an unfinished answer,
    and its hint is a sentence, never "raised NotImplementedError: ." with nothing said."""

    def stub(scores, hidden):
        raise NotImplementedError(message)

    result = ex.check_masked_softmax(stub)
    assert not result.passed and result.todo
    for lang in ("en", "zh"):
        shown = result.render(lang)
        assert "not written yet" in shown or "还没有写好" in shown
        assert ": ." not in shown and "：。" not in shown
