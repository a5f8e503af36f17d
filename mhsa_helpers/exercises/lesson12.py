"""Checkers for lesson 12, a tiny character model that writes (字符级语言模型).

* ``check_cache_numbers(answer)`` -- how many numbers the KV caches of the demo model hold after
  100 tokens: 3 blocks, 4 heads of head_dim 32, keys and values, batch 1: 2 * 3 * 4 * 100 * 32.
* ``check_top_k_probs(answer, logits, k, temperature)`` -- next-token probabilities with a
  temperature and top-k: softmax(logits / temperature) over the k largest logits, 0 elsewhere.
* ``check_punctuation_share(answer, weights, text)`` -- per head, the total weight on punctuation
  keys at or before each query, averaged over the queries that have one: what
  ``mh.lm.head_focus`` reports as "punctuation".
"""

from __future__ import annotations

import torch

from ..lm.analysis import head_focus
from ..lm.generation import next_token_probs
from ..lm.text import PUNCTUATION
from ._common import CheckResult, fail, missing, ok, tensor_answer, whole_number

__all__ = ["check_cache_numbers", "check_punctuation_share", "check_top_k_probs"]

_LAYERS, _HEADS, _HEAD_DIM, _TOKENS = 3, 4, 32, 100
_CACHE_NUMBERS = 2 * _LAYERS * _HEADS * _TOKENS * _HEAD_DIM  # 76_800


def check_cache_numbers(answer: object) -> CheckResult:
    """``answer``: an int, numbers in all caches (keys + values, 3 blocks) after 100 tokens."""
    name = "numbers in the KV caches after 100 tokens"
    if answer is None:
        return missing(name, "an int: 2 (K and V) * blocks * heads * tokens * head_dim")
    value = whole_number(answer)
    if value is None:
        return fail(name, f"expected a whole number, got {answer!r} ({type(answer).__name__}).")
    if value == _CACHE_NUMBERS:
        return ok(name, f"correct: {_CACHE_NUMBERS:,} numbers ({4 * _CACHE_NUMBERS:,} bytes).")
    if value == _CACHE_NUMBERS // 2:
        return fail(name, "both the keys and the values are cached: multiply by 2.")
    if value == _CACHE_NUMBERS // _LAYERS:
        return fail(name, "each of the 3 blocks has its own attention, so its own cache.")
    if value == _CACHE_NUMBERS * 4:
        return fail(name, "that is bytes (float32 = 4 bytes); the question asks for numbers.")
    if value == _CACHE_NUMBERS // _HEADS:
        return fail(name, "every one of the 4 heads caches its keys and values: d_model = 4 * 32.")
    return fail(name, "multiply 2 (K, V) * 3 blocks * 4 heads * 100 tokens * 32 numbers.")


def check_top_k_probs(
    answer: object, logits: torch.Tensor, k: int, temperature: float
) -> CheckResult:
    """softmax(logits / temperature) restricted to the ``k`` largest logits, (b, vocab)."""
    name = f"top-{k} probabilities at temperature {temperature}"
    expected = next_token_probs(logits, temperature=temperature, top_k=k)
    if isinstance(answer, torch.Tensor) and answer.shape == expected.shape:
        got = answer.detach().to(torch.float64)
        near = lambda other: torch.allclose(got, other.to(torch.float64), atol=1e-4)  # noqa: E731
        if not near(expected):
            if near(next_token_probs(logits, temperature=1.0, top_k=k)):
                return fail(name, "the temperature is missing: divide the logits by it first.")
            if near(next_token_probs(logits * temperature, temperature=1.0, top_k=k)):
                return fail(name, "divide the logits by the temperature, don't multiply.")
            if near(next_token_probs(logits, temperature=temperature)):
                return fail(name, "only the k largest logits may keep a probability above 0.")
            full = torch.softmax(logits / temperature, dim=-1)
            if near(torch.where(expected > 0, full, torch.zeros_like(full))):
                return fail(
                    name, "set the other logits to -inf BEFORE the softmax (rows sum to 1)."
                )
    return tensor_answer(
        name,
        answer,
        expected,
        what=f"a {tuple(logits.shape)} tensor of probabilities",
        hint="scaled = logits / temperature; keep values >= the k-th largest "
        "(torch.topk), set the rest to -inf, then torch.softmax(dim=-1).",
    )


def check_punctuation_share(answer: object, weights: torch.Tensor, text: str) -> CheckResult:
    """Per head: mean over queries (with a punctuation key at or before them) of that weight."""
    name = "weight on punctuation, per head"
    expected = head_focus(weights, text).shares[0, :, 2]  # (h,)
    if (
        isinstance(answer, torch.Tensor)
        and answer.is_floating_point()
        and answer.shape == expected.shape
        and not torch.allclose(answer.detach().float(), expected, atol=1e-4)
    ):
        is_punct = torch.tensor([ch in PUNCTUATION for ch in text])  # (T,)
        per_query = (weights.detach().float() * is_punct).sum(dim=-1)  # (h, T)
        if torch.allclose(answer.detach().float(), per_query.mean(dim=-1), atol=1e-4):
            return fail(
                name,
                "average only over queries that have a punctuation mark at or before them "
                "(the first line's first characters have none).",
            )
    return tensor_answer(
        name,
        answer,
        expected,
        what="a (num_heads,) tensor",
        hint="is_punct = a (T,) bool tensor of the keys in PUNCTUATION; sum each query row's "
        "weights over those keys; average over the queries that have a punctuation key.",
    )
