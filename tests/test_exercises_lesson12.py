"""Checkers of lesson 12: a right answer passes; plausible wrong ones, wrong shapes, None do not."""

from __future__ import annotations

import dataclasses

import torch
from exercise_checks import assert_not_yet, assert_pass

from mhsa_helpers import exercises as ex
from mhsa_helpers import lm


def test_cache_numbers():
    assert_pass(ex.check_cache_numbers(2 * 3 * 4 * 100 * 32))
    assert_pass(ex.check_cache_numbers(torch.tensor(76_800)))
    assert_pass(ex.check_cache_numbers(76_800.0))
    assert_not_yet(ex.check_cache_numbers(3 * 4 * 100 * 32), "holds both")
    assert_not_yet(ex.check_cache_numbers(2 * 4 * 100 * 32), "3 blocks")
    assert_not_yet(ex.check_cache_numbers(4 * 76_800), "bytes")
    assert_not_yet(ex.check_cache_numbers(2 * 3 * 100 * 32), "4 heads")
    assert_not_yet(ex.check_cache_numbers(2 * 3 * 4 * 99 * 32), "is not how many")
    assert_not_yet(ex.check_cache_numbers(76_800.5))
    assert_not_yet(ex.check_cache_numbers(True))
    assert_not_yet(ex.check_cache_numbers("76800"))
    assert_not_yet(ex.check_cache_numbers(None), "no answer yet")


def test_top_k_probs():
    logits = torch.randn(2, 10, generator=torch.Generator().manual_seed(0))  # (b, vocab)
    k, temperature = 3, 0.7
    scaled = logits / temperature
    kth = scaled.topk(k, dim=-1).values[:, -1:]
    right = torch.softmax(scaled.masked_fill(scaled < kth, float("-inf")), dim=-1)
    assert_pass(ex.check_top_k_probs(right, logits, k, temperature))
    no_temperature = torch.softmax(logits.masked_fill(scaled < kth, float("-inf")), dim=-1)
    assert_not_yet(ex.check_top_k_probs(no_temperature, logits, k, temperature), "temperature")
    times = logits * temperature
    multiplied = torch.softmax(
        times.masked_fill(times < times.topk(k, -1).values[:, -1:], float("-inf")), -1
    )
    assert_not_yet(ex.check_top_k_probs(multiplied, logits, k, temperature), "multiplied")
    no_top_k = torch.softmax(scaled, dim=-1)
    assert_not_yet(ex.check_top_k_probs(no_top_k, logits, k, temperature), "keeps only 3")
    zeroed_after = torch.where(right > 0, no_top_k, torch.zeros_like(no_top_k))
    assert_not_yet(ex.check_top_k_probs(zeroed_after, logits, k, temperature), "AFTER")
    smallest = torch.softmax(
        scaled.masked_fill(scaled > -(-scaled).topk(k, -1).values[:, -1:], float("-inf")), -1
    )
    assert_not_yet(ex.check_top_k_probs(smallest, logits, k, temperature), "largest logits")
    halved = right.clone()
    halved[:, :] = right / 2
    assert_not_yet(ex.check_top_k_probs(halved, logits, k, temperature), "sums to")
    hot = logits / 2.0
    too_hot = torch.softmax(
        hot.masked_fill(hot < hot.topk(k, -1).values[:, -1:], float("-inf")), -1
    )
    assert_not_yet(ex.check_top_k_probs(too_hot, logits, k, temperature), "temperature enters")
    four = scaled.topk(k + 1, dim=-1).values[:, -1:]
    top_four = torch.softmax(scaled.masked_fill(scaled < four, float("-inf")), dim=-1)
    assert_not_yet(ex.check_top_k_probs(top_four, logits, k, temperature), "keeps exactly 3")
    assert_not_yet(ex.check_top_k_probs(right[0], logits, k, temperature), "shape")
    assert_not_yet(ex.check_top_k_probs(right.log(), logits, k, temperature))
    assert_not_yet(ex.check_top_k_probs(None, logits, k, temperature), "no answer yet")
    assert_not_yet(ex.check_top_k_probs(right.tolist(), logits, k, temperature))


def test_punctuation_share():
    text = "\n明月照，\n花开。\n"
    num = len(text)
    weights = torch.rand(4, num, num, generator=torch.Generator().manual_seed(1)).tril()
    weights = weights / weights.sum(-1, keepdim=True)  # (h, T, T), causal rows summing to 1
    is_punct = torch.tensor([ch in lm.PUNCTUATION for ch in text])  # (T,)
    per_query = (weights * is_punct).sum(-1)  # (h, T)
    has_one = is_punct.cumsum(0) > 0  # (T,): a punctuation key at or before the query
    right = per_query[:, has_one].mean(-1)  # (h,)
    assert_pass(ex.check_punctuation_share(right, weights, text))
    assert_pass(ex.check_punctuation_share(right.double(), weights, text))
    all_queries = per_query.mean(-1)
    assert_not_yet(ex.check_punctuation_share(all_queries, weights, text), "only over queries")
    newline_too = (weights * torch.tensor([c in lm.PUNCTUATION or c == "\n" for c in text])).sum(-1)
    assert_not_yet(ex.check_punctuation_share(newline_too[:, has_one].mean(-1), weights, text))
    mean_not_sum = (weights * is_punct).mean(-1)[:, has_one].mean(-1)
    assert_not_yet(ex.check_punctuation_share(mean_not_sum, weights, text))
    transposed = (weights.transpose(-2, -1) * is_punct).sum(-1)[:, has_one].mean(-1)
    assert_not_yet(ex.check_punctuation_share(transposed, weights, text), "lm.PUNCTUATION")
    assert_not_yet(ex.check_punctuation_share(per_query, weights, text), "shape")
    assert_not_yet(ex.check_punctuation_share(None, weights, text), "no answer yet")
    assert_not_yet(ex.check_punctuation_share(0.3, weights, text))


def test_own_text():
    data = lm.text_data(lm.load_song_ci()[:40_000])  # enough text for a bigram table to generalise
    config = lm.CharLMConfig(
        d_model=32,
        num_heads=2,
        num_layers=1,
        context_length=16,
        dropout=0.0,
        batch_size=16,
        steps=400,
        lr=1e-2,
        min_lr=1e-3,
        warmup_steps=10,
        eval_every=400,
    )
    run = lm.train_char_lm(config, data=data, progress=False)
    assert_pass(ex.check_own_text(run, data))
    assert_not_yet(ex.check_own_text(None, data), "CharLMRun")
    assert_not_yet(ex.check_own_text(run.model, data), "CharTransformer")
    assert_not_yet(
        ex.check_own_text(run, lm.text_data(lm.load_song_ci()[50_000:58_000])), "data=own"
    )
    untrained = lm.train_char_lm(
        lm.CharLMConfig(**{**config.__dict__, "steps": 2, "warmup_steps": 1, "eval_every": 2}),
        data=data,
        progress=False,
    )
    assert_not_yet(ex.check_own_text(untrained, data), "unigram")
    untrained.val_losses = [(2, 0.01)]  # a record that claims a low loss is not believed
    assert_not_yet(ex.check_own_text(untrained, data), "unigram")
    run.val_losses = []  # the model itself is measured: its record is not needed
    assert_pass(ex.check_own_text(run, data))
    short = dataclasses.replace(data, val_ids=data.val_ids[:10])
    assert_not_yet(ex.check_own_text(run, short), "too short")
    assert_not_yet(ex.check_own_text(run, "data"), "TextData")


def test_hints_name_the_mistake_without_giving_the_method():
    """No hint of the cache or the top-k exercise spells out how to compute the answer."""
    logits = torch.randn(2, 10, generator=torch.Generator().manual_seed(0))  # (b, vocab)
    answers = [None, 1, 3 * 4 * 100 * 32, 2 * 4 * 100 * 32, 2 * 3 * 100 * 32, 12345]
    results = [ex.check_cache_numbers(a) for a in answers]
    wrong = [None, torch.zeros(2, 10), torch.softmax(logits, -1), torch.full((2, 10), 0.1)]
    results += [ex.check_top_k_probs(a, logits, 3, 0.7) for a in wrong]
    for result in results:
        for lang in ("en", "zh"):
            text = result.render(lang)
            assert not result and "torch." not in text and "2 * 3" not in text, text
            assert "/ temperature" not in text and "-inf" not in text and "* 32" not in text, text
