"""Checkers for lesson 12, a tiny character model that writes (字符级语言模型).

* ``check_cache_numbers(answer)`` -- how many numbers the KV caches of the demo model hold after
  100 tokens: 3 blocks, 4 heads of head_dim 32, keys and values, batch 1: 2 * 3 * 4 * 100 * 32.
* ``check_top_k_probs(answer, logits, k, temperature)`` -- next-token probabilities with a
  temperature and top-k: softmax(logits / temperature) over the k largest logits, 0 elsewhere.
* ``check_punctuation_share(answer, weights, text)`` -- per head, the total weight on punctuation
  keys at or before each query, averaged over the queries that have one: what
  ``mh.lm.head_focus`` reports as "punctuation".
* ``check_own_text(answer, data)`` -- a run of ``lm.train_char_lm`` on another text
  (``data = lm.text_data(...)``) whose validation loss is below that text's unigram count table.
"""

from __future__ import annotations

import torch

from ..i18n import tr
from ..lm.analysis import head_focus
from ..lm.baselines import CountTable
from ..lm.generation import next_token_probs
from ..lm.text import PUNCTUATION
from ..lm.training import CharLMRun, TextData
from ._common import CheckResult, fail, missing, ok, tensor_answer, whole_number

__all__ = [
    "check_cache_numbers",
    "check_own_text",
    "check_punctuation_share",
    "check_top_k_probs",
]

_LAYERS, _HEADS, _HEAD_DIM, _TOKENS = 3, 4, 32, 100
_CACHE_NUMBERS = 2 * _LAYERS * _HEADS * _TOKENS * _HEAD_DIM  # 76_800


def check_cache_numbers(answer: object) -> CheckResult:
    """``answer``: an int, numbers in all caches (keys + values, 3 blocks) after 100 tokens."""
    name = tr("numbers in the KV caches after 100 tokens", "100 个词元之后 KV 缓存中数的个数")
    if answer is None:
        return missing(
            name,
            tr(
                "an int: how many numbers all the KV caches hold together",
                "一个整数，即所有 KV 缓存里一共存了多少个数",
            ),
        )
    value = whole_number(answer)
    if value is None:
        kind = type(answer).__name__
        return fail(
            name,
            tr(
                f"expected a whole number, got {answer!r} ({kind}).",
                f"需要一个整数，收到的是 {answer!r}（{kind}）。",
            ),
        )
    if value == _CACHE_NUMBERS:
        return ok(
            name,
            tr(
                f"correct: {_CACHE_NUMBERS:,} numbers ({4 * _CACHE_NUMBERS:,} bytes).",
                f"正确：{_CACHE_NUMBERS:,} 个数（{4 * _CACHE_NUMBERS:,} 字节）。",
            ),
        )
    if value == _CACHE_NUMBERS // 2:
        return fail(
            name,
            tr(
                "both the keys and the values are cached: multiply by 2.",
                "键和值都要缓存：乘以 2。",
            ),
        )
    if value == _CACHE_NUMBERS // _LAYERS:
        return fail(
            name,
            tr(
                "each of the 3 blocks has its own attention, so its own cache.",
                "3 个块各有自己的注意力，所以各有自己的缓存。",
            ),
        )
    if value == 2 * 4 * _HEADS * _TOKENS * _HEAD_DIM:
        return fail(
            name,
            tr(
                "that counts 4 blocks, as in our model; the smaller one has 3.",
                "这是按 4 个块算的，那是我们的模型；这个小模型只有 3 个块。",
            ),
        )
    if value == 2 * _LAYERS * _HEADS * _TOKENS * 48:
        return fail(
            name,
            tr(
                "that uses our model's head_dim (48); here head_dim is 32.",
                "这里用了我们模型的 head_dim（48）；这个小模型的 head_dim 是 32。",
            ),
        )
    if value == _CACHE_NUMBERS * 4:
        return fail(
            name,
            tr(
                "that is bytes (float32 = 4 bytes); the question asks for numbers.",
                "这是字节数（float32 = 4 字节）；题目问的是数的个数。",
            ),
        )
    if value == _CACHE_NUMBERS // _HEADS:
        return fail(
            name,
            tr(
                "every one of the 4 heads caches its keys and values: d_model = 4 * 32.",
                "4 个头中的每一个都缓存自己的键和值：d_model = 4 * 32。",
            ),
        )
    return fail(
        name,
        tr(
            "count what one head caches for one token, then how many heads, blocks and tokens "
            "there are.",
            "先数一个头为一个词元缓存多少个数，再数有几个头、几个块、几个词元。",
        ),
    )


def check_top_k_probs(
    answer: object, logits: torch.Tensor, k: int, temperature: float
) -> CheckResult:
    """softmax(logits / temperature) restricted to the ``k`` largest logits, (b, vocab)."""
    name = tr(
        f"top-{k} probabilities at temperature {temperature}",
        f"温度为 {temperature} 时的 top-{k} 概率",
    )
    expected = next_token_probs(logits, temperature=temperature, top_k=k)
    if isinstance(answer, torch.Tensor) and answer.shape == expected.shape:
        got = answer.detach().to(torch.float64)
        near = lambda other: torch.allclose(got, other.to(torch.float64), atol=1e-4)  # noqa: E731
        if not near(expected):
            if near(next_token_probs(logits, temperature=1.0, top_k=k)):
                return fail(
                    name,
                    tr(
                        "the temperature is missing: divide the logits by it first.",
                        "漏掉了温度：先把 logits 除以温度。",
                    ),
                )
            if near(next_token_probs(logits * temperature, temperature=1.0, top_k=k)):
                return fail(
                    name,
                    tr(
                        "divide the logits by the temperature, don't multiply.",
                        "要把 logits 除以温度，而不是乘以温度。",
                    ),
                )
            if near(next_token_probs(logits, temperature=temperature)):
                return fail(
                    name,
                    tr(
                        "only the k largest logits may keep a probability above 0.",
                        "只有最大的 k 个 logits 可以保留大于 0 的概率。",
                    ),
                )
            full = torch.softmax(logits / temperature, dim=-1)
            if near(torch.where(expected > 0, full, torch.zeros_like(full))):
                return fail(
                    name,
                    tr(
                        "set the other logits to -inf BEFORE the softmax (rows sum to 1).",
                        "要在 softmax 之前把其余的 logits 设为 -inf（这样每行之和为 1）。",
                    ),
                )
    shape = tuple(logits.shape)
    return tensor_answer(
        name,
        answer,
        expected,
        what=tr(f"a {shape} tensor of probabilities", f"一个形状为 {shape} 的概率张量"),
        hint=tr(
            "scaled = logits / temperature; keep values >= the k-th largest "
            "(torch.topk), set the rest to -inf, then torch.softmax(dim=-1).",
            "scaled = logits / temperature；保留 >= 第 k 大值的那些（`torch.topk`），"
            "其余设为 -inf，然后 `torch.softmax(dim=-1)`。",
        ),
    )


def check_punctuation_share(answer: object, weights: torch.Tensor, text: str) -> CheckResult:
    """Per head: mean over queries (with a punctuation key at or before them) of that weight."""
    name = tr("weight on punctuation, per head", "每个头在标点上的权重")
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
                tr(
                    "average only over queries that have a punctuation mark at or before them "
                    "(the first line's first characters have none).",
                    "只对那些在自身或之前有标点的查询求平均（第一行开头的几个字符之前没有标点）。",
                ),
            )
    return tensor_answer(
        name,
        answer,
        expected,
        what=tr("a (num_heads,) tensor", "一个 (num_heads,) 张量"),
        hint=tr(
            "is_punct = a (T,) bool tensor of the keys in PUNCTUATION; sum each query row's "
            "weights over those keys; average over the queries that have a punctuation key.",
            "is_punct = 一个 (T,) 的 bool 张量，标出属于 PUNCTUATION 的键；把每个查询行在这些键上"
            "的权重加起来；再对有标点键的查询求平均。",
        ),
    )


def check_own_text(answer: object, data: object) -> CheckResult:
    """``answer``: a ``CharLMRun`` trained on ``data`` (``lm.text_data(...)``) that beats the
    unigram count table of the same text on its validation part."""
    name = tr("a model trained on another text", "在另一段文本上训练的模型")
    if answer is None:
        return missing(
            name,
            tr(
                "the CharLMRun your training returned",
                "你训练得到的训练记录（CharLMRun）",
            ),
        )
    if not isinstance(data, TextData):
        return fail(
            name,
            tr("pass the TextData you trained on as data.", "把训练用的 TextData 作为 data 传入。"),
        )
    if not isinstance(answer, CharLMRun):
        kind = type(answer).__name__
        return fail(
            name,
            tr(
                f"expected the run lm.train_char_lm returns, got a {kind}.",
                f"需要 lm.train_char_lm 返回的训练记录（CharLMRun），收到的是 {kind}。",
            ),
        )
    if answer.tokenizer.chars != data.tokenizer.chars:
        return fail(
            name,
            tr(
                "this run was trained on another text: pass data=own to lm.train_char_lm.",
                "这次训练用的是别的文本：调用 lm.train_char_lm 时要传 data=own。",
            ),
        )
    if not answer.val_losses:
        return fail(name, tr("the run has no validation loss.", "这次训练没有验证损失。"))
    vocab = data.tokenizer.vocab_size
    unigram = CountTable(data.train_ids, 1, vocab).loss(data.val_ids)
    val = answer.val_losses[-1][1]
    if not val < unigram:
        return fail(
            name,
            tr(
                f"validation loss {val:.2f} is not below the unigram table's {unigram:.2f}: "
                "train more steps (or with a larger learning rate).",
                f"验证损失 {val:.2f} 没有低于一元计数表的 {unigram:.2f}。"
                "多训练一些步数，或调大学习率。",
            ),
        )
    return ok(
        name,
        tr(
            f"validation loss {val:.2f}, below the unigram table's {unigram:.2f}.",
            f"验证损失 {val:.2f}，低于一元计数表的 {unigram:.2f}。",
        ),
    )
