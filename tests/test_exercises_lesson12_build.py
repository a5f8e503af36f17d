"""Lesson 12's build-its (issue 29 §4): the pre-norm block, get_batch and one training step.

Each checker passes the book's answer and names the usual slips; a stub is [TO DO]."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from exercise_checks import assert_not_yet, assert_pass
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex
from mhsa_helpers.lm import FeedForward


class Block(nn.Module):
    def __init__(self, d_model, context_length, num_heads, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = mh.MultiHeadAttention(d_model, d_model, context_length, dropout, num_heads)
        self.ln_2 = nn.LayerNorm(d_model)
        self.ff = FeedForward(d_model, 4 * d_model, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.ff(self.ln_2(x))


class PostNorm(Block):
    def forward(self, x):
        x = self.ln_1(x + self.attn(x))
        return self.ln_2(x + self.ff(x))


class OneNorm(Block):
    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.ff(self.ln_1(x))


class NoResidual(Block):
    def forward(self, x):
        return self.ff(self.ln_2(self.attn(self.ln_1(x))))


class NoSecondResidual(Block):
    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return self.ff(self.ln_2(x))


def test_block_passes_the_book_block():
    assert_pass(ex.check_block(Block))
    assert_pass(ex.check_block(mh.lm.TransformerBlock))


@pytest.mark.parametrize(
    ("wrong", "words"),
    [
        (PostNorm, "post-norm"),
        (OneNorm, "reads ln_1"),
        (NoResidual, "residual connection"),
        (NoSecondResidual, "not added back"),
        (None, "no answer yet"),
        (Block(8, 6, 2, 0.0), "not an instance"),
    ],
)
def test_block_names_the_usual_slips(wrong, words):
    assert_not_yet(ex.check_block(wrong), words)


def get_batch(ids, batch_size, T):
    starts = torch.randint(0, len(ids) - T, (batch_size,))  # (b,)
    windows = ids[starts[:, None] + torch.arange(T + 1)]  # (b, T + 1)
    return windows[:, :-1], windows[:, 1:]


def targets_equal_inputs(ids, batch_size, T):
    starts = torch.randint(0, len(ids) - T, (batch_size,))
    windows = ids[starts[:, None] + torch.arange(T)]
    return windows, windows


def one_start_too_far(ids, batch_size, T):
    starts = torch.randint(0, len(ids) - T + 1, (batch_size,))
    windows = ids[starts[:, None] + torch.arange(T + 1)]
    return windows[:, :-1], windows[:, 1:]


def always_the_same_windows(ids, batch_size, T):
    starts = torch.zeros(batch_size, dtype=torch.long)
    windows = ids[starts[:, None] + torch.arange(T + 1)]
    return windows[:, :-1], windows[:, 1:]


def targets_shifted_back(ids, batch_size, T):
    inputs, _ = get_batch(ids, batch_size, T)
    return inputs, inputs - 1


def float_windows(ids, batch_size, T):  # filled into torch.zeros: float ids
    inputs, targets = get_batch(ids, batch_size, T)
    return inputs.float(), targets.float()


def int32_windows(ids, batch_size, T):  # cross_entropy refuses int32 targets
    inputs, targets = get_batch(ids, batch_size, T)
    return inputs.int(), targets.int()


def two_starts_repeated(ids, batch_size, T):
    starts = torch.randint(0, len(ids) - T, (2,)).repeat(batch_size)[:batch_size]
    windows = ids[starts[:, None] + torch.arange(T + 1)]
    return windows[:, :-1], windows[:, 1:]


def first_half_only(ids, batch_size, T):
    starts = torch.randint(0, max(1, (len(ids) - T) // 2), (batch_size,))
    windows = ids[starts[:, None] + torch.arange(T + 1)]
    return windows[:, :-1], windows[:, 1:]


def starts_at_multiples_of_t(ids, batch_size, T):
    starts = torch.randint(0, (len(ids) - 1) // T, (batch_size,)) * T
    windows = ids[starts[:, None] + torch.arange(T + 1)]
    return windows[:, :-1], windows[:, 1:]


def unfolded(ids, batch_size, T):  # another right way: every window, then a random choice
    windows = ids.unfold(0, T + 1, 1)  # (len(ids) - T, T + 1)
    chosen = windows[torch.randint(0, windows.shape[0], (batch_size,))]
    return chosen[:, :-1], chosen[:, 1:]


@pytest.mark.parametrize("right", [get_batch, unfolded])
def test_get_batch_passes_the_book_one(right):
    assert_pass(ex.check_get_batch(right))


@pytest.mark.parametrize(
    ("wrong", "words"),
    [
        (targets_equal_inputs, "copy"),
        (one_start_too_far, "len(ids) - T - 1"),
        (always_the_same_windows, "at random"),
        (targets_shifted_back, "shifted by one"),
        (float_windows, "torch.float32"),
        (int32_windows, "torch.int32"),
        (two_starts_repeated, "over the whole range"),
        (first_half_only, "over the whole range"),
        (starts_at_multiples_of_t, "over the whole range"),
        (None, "no answer yet"),
    ],
)
def test_get_batch_names_the_usual_slips(wrong, words):
    assert_not_yet(ex.check_get_batch(wrong), words)


def _loss(model, inputs, targets):
    logits = model(inputs)  # (b, T, vocab)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def train_step(model, optimizer, inputs, targets):
    loss = _loss(model, inputs, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def clipped_step(model, optimizer, inputs, targets):
    loss = _loss(model, inputs, targets)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()


def no_zero_grad(model, optimizer, inputs, targets):
    loss = _loss(model, inputs, targets)
    loss.backward()
    optimizer.step()
    return loss.item()


def no_flatten(model, optimizer, inputs, targets):
    loss = F.cross_entropy(model(inputs), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def no_step(model, optimizer, inputs, targets):
    loss = _loss(model, inputs, targets)
    optimizer.zero_grad()
    loss.backward()
    return loss.item()


def cleared_too_late(model, optimizer, inputs, targets):
    loss = _loss(model, inputs, targets)
    loss.backward()
    optimizer.zero_grad()  # between backward() and step(): step() finds no gradients
    optimizer.step()
    return loss.item()


def loss_after_the_step(model, optimizer, inputs, targets):
    loss = _loss(model, inputs, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return _loss(model, inputs, targets).item()  # measured after the update


def step_before_backward(model, optimizer, inputs, targets):
    loss = _loss(model, inputs, targets)
    optimizer.zero_grad()
    optimizer.step()
    loss.backward()
    return loss.item()


def shifted_again(model, optimizer, inputs, targets):  # get_batch already shifted the targets
    logits = model(inputs)[:, :-1]  # (b, T - 1, vocab)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def softmax_first(model, optimizer, inputs, targets):  # cross_entropy takes the raw logits
    probs = torch.softmax(model(inputs), dim=-1)  # (b, T, vocab)
    loss = F.cross_entropy(probs.reshape(-1, probs.shape[-1]), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def stepped_twice(model, optimizer, inputs, targets):
    loss = _loss(model, inputs, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    optimizer.step()  # the same gradients applied again
    return loss.item()


def logits_without_grad(model, optimizer, inputs, targets):  # backward() raises: no graph
    with torch.no_grad():
        logits = model(inputs)  # (b, T, vocab)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def step_without_grad(model, optimizer, inputs, targets):  # nothing to backward: no change
    with torch.no_grad():
        loss = _loss(model, inputs, targets)
    optimizer.zero_grad()
    if loss.requires_grad:
        loss.backward()
    optimizer.step()
    return loss.item()


def returns_nothing(model, optimizer, inputs, targets):
    train_step(model, optimizer, inputs, targets)


def switches_to_eval(model, optimizer, inputs, targets):  # dropout off for all of training
    model.eval()
    return train_step(model, optimizer, inputs, targets)


def unwritten(model, optimizer, inputs, targets):
    raise NotImplementedError


@pytest.mark.parametrize("right", [train_step, clipped_step])
def test_train_step_passes_the_book_step(right):
    assert_pass(ex.check_train_step(right))


@pytest.mark.parametrize(
    ("wrong", "words"),
    [
        (no_zero_grad, "zero_grad"),
        (no_flatten, "one row per position"),
        (no_step, "did not change"),
        (step_before_backward, "did not change"),
        (cleared_too_late, "never between backward() and step()"),
        (loss_after_the_step, "measured after optimizer.step()"),
        (returns_nothing, "loss as a number"),
        (shifted_again, "shifted once more"),
        (softmax_first, "takes the raw logits"),
        (stepped_twice, "two steps per batch"),
        (logits_without_grad, "no graph"),
        (step_without_grad, "no graph"),
        (switches_to_eval, "eval mode"),
        (unwritten, "not written yet"),
        (None, "no answer yet"),
    ],
)
def test_train_step_names_the_usual_slips(wrong, words):
    result = ex.check_train_step(wrong)
    assert_not_yet(result, words)
    named = (shifted_again, softmax_first, stepped_twice, logits_without_grad, step_without_grad)
    if wrong in named:  # the slip named, not the generic hint on zero_grad
        assert "zero_grad" not in result.render("en")
    if wrong is loss_after_the_step:  # a number was returned: the hint must not ask for one
        assert "not a tensor" not in result.render("en")


def test_a_shrunk_config_works_as_it_is():
    """12 Ex4 shrinks the steps "to be fast": the warm-up follows the steps (issue 29)."""
    assert mh.lm.CharLMConfig(steps=10).warmup_steps == 1
    assert mh.lm.CharLMConfig().warmup_steps == 40
    with pytest.raises(ValueError, match="warmup_steps"):
        mh.lm.CharLMConfig(steps=10, warmup_steps=10)
