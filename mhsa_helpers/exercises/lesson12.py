"""Checkers for lesson 12, a tiny character model that writes (字符级语言模型).

* ``check_cache_numbers(answer)`` -- how many numbers the KV caches of a smaller model (3 blocks,
  4 heads of head_dim 32, batch 1) hold after 100 tokens.
* ``check_top_k_probs(answer, logits, k, temperature)`` -- next-token probabilities with a
  temperature and top-k, as ``lm.generate`` samples them.
* ``check_punctuation_share(answer, weights, text)`` -- per head, the total weight on punctuation
  keys at or before each query, averaged over the queries that have one: what
  ``mh.lm.head_focus`` reports as "punctuation".
* ``check_own_text(answer, data)`` -- a run of ``lm.train_char_lm`` on another text
  (``data = lm.text_data(...)``) whose validation loss is below that text's unigram count table.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

from ..i18n import Text, tr
from ..lm.analysis import head_focus
from ..lm.baselines import CountTable
from ..lm.generation import next_token_probs
from ..lm.model import CharTransformer
from ..lm.text import PUNCTUATION
from ..lm.training import CharLMRun, TextData
from ._kinds import Number, number_checker, tensor_answer
from ._parse import A_PER_HEAD_TENSOR
from ._result import CheckResult, exercise, fail, missing, ok

__all__ = [
    "check_cache_numbers",
    "check_own_text",
    "check_punctuation_share",
    "check_top_k_probs",
]

_LAYERS, _HEADS, _HEAD_DIM, _TOKENS = 3, 4, 32, 100
_CACHE_NUMBERS = 2 * _LAYERS * _HEADS * _TOKENS * _HEAD_DIM  # 76_800

_CACHE = tr("numbers in the KV caches after 100 tokens", "100 个词元之后 KV 缓存中数的个数")
_TOP_K = tr("sampling probabilities with temperature and top-k", "带温度和 top-k 的采样概率")
_PUNCTUATION = tr("weight on punctuation, per head", "每个头在标点上的权重")
_OWN_TEXT = tr("a model trained on another text", "在另一段文本上训练的模型")


check_cache_numbers = number_checker(
    "check_cache_numbers",
    Number(
        name=_CACHE,
        what=tr(
            "an int: how many numbers all the KV caches hold together",
            "一个整数，即所有 KV 缓存里一共存了多少个数",
        ),
        expected=_CACHE_NUMBERS,
        right=tr(
            f"correct: {_CACHE_NUMBERS:,} numbers ({4 * _CACHE_NUMBERS:,} bytes).",
            f"正确：{_CACHE_NUMBERS:,} 个数（{4 * _CACHE_NUMBERS:,} 字节）。",
        ),
        wrong=(
            (
                _CACHE_NUMBERS // 2,
                tr(
                    "that counts only the keys (or only the values); the cache holds both.",
                    "这只数了键（或只数了值），缓存里两者都有。",
                ),
            ),
            (
                _CACHE_NUMBERS // _LAYERS,
                tr(
                    "that is one block's cache; each of the 3 blocks has its own.",
                    "这只是一个块的缓存。3 个块各有自己的缓存。",
                ),
            ),
            (
                2 * 4 * _HEADS * _TOKENS * _HEAD_DIM,
                tr(
                    "that counts 4 blocks, as in our model; the smaller one has 3.",
                    "这是按 4 个块算的，那是我们的模型。这个小模型只有 3 个块。",
                ),
            ),
            (
                2 * _LAYERS * _HEADS * _TOKENS * 48,
                tr(
                    "that uses our model's head_dim (48); here head_dim is 32.",
                    "这里用了我们模型的 head_dim（48）。这个小模型的 head_dim 是 32。",
                ),
            ),
            (
                _CACHE_NUMBERS * 4,
                tr(
                    "that is bytes (float32 = 4 bytes); the question asks for numbers.",
                    "这是字节数（float32 = 4 字节），题目问的是数的个数。",
                ),
            ),
            (
                _CACHE_NUMBERS // _HEADS,
                tr(
                    "that is one head's part; each of the 4 heads caches keys and values of "
                    "its own.",
                    "这只是一个头的那一份。4 个头各自缓存自己的键和值。",
                ),
            ),
        ),
        otherwise=lambda value: tr(
            f"{value:,} is not how many numbers the 3 blocks' caches hold after 100 tokens.",
            f"{value:,} 不是 100 个词元之后 3 个块的缓存里数的个数。",
        ),
        whole=True,
        kind=lambda answer: tr(
            f"expected a whole number, got {answer!r} ({type(answer).__name__}).",
            f"需要一个整数，收到的是 {answer!r}（{type(answer).__name__}）。",
        ),
    ),
    """``answer``: an int, numbers in all caches (keys + values, 3 blocks) after 100 tokens.""",
)


def _top_k_wrong(answer: torch.Tensor, logits: torch.Tensor, k: int) -> Text:
    """What is wrong with probabilities of the right shape that are not the expected ones."""
    got = answer.detach().to(torch.float64)
    sums = got.sum(dim=-1)  # (b,)
    if not torch.allclose(sums, torch.ones_like(sums), atol=1e-4):
        row = int((sums - 1).abs().argmax())
        total = float(sums[row])
        return tr(
            f"row {row} sums to {total:.4f}, not 1: these are not probabilities.",
            f"第 {row} 行之和是 {total:.4f}，不是 1，所以这不是概率。",
        )
    kept = (got > 0).sum(dim=-1)  # (b,)
    if bool((kept != k).any()):
        row = int((kept != k).nonzero()[0])
        count = int(kept[row])
        return tr(
            f"row {row} has {count} non-zero probabilities; top-k keeps exactly {k}.",
            f"第 {row} 行有 {count} 个非零概率，top-k 只保留 {k} 个。",
        )
    largest = logits.detach().topk(k, dim=-1).indices  # (b, k)
    if not bool(torch.gather(got, -1, largest.to(got.device)).gt(0).all()):
        return tr(
            f"the non-zero probabilities are not at the {k} largest logits of each row.",
            f"非零概率不在每行最大的 {k} 个 logits 上。",
        )
    return tr(
        "the right entries are kept, but their values are off: check how the temperature enters.",
        "保留的位置对了，但数值不对。检查温度是怎样起作用的。",
    )


@exercise(_TOP_K)
def check_top_k_probs(
    answer: object, logits: torch.Tensor, k: int, temperature: float
) -> CheckResult:
    """softmax(logits / temperature) restricted to the ``k`` largest logits, (b, vocab)."""
    name = _TOP_K
    expected = next_token_probs(logits, temperature=temperature, top_k=k)
    if isinstance(answer, torch.Tensor) and answer.shape == expected.shape:
        got = answer.detach().to(torch.float64)
        near = lambda other: torch.allclose(got, other.to(torch.float64), atol=1e-4)  # noqa: E731
        if not near(expected):
            if near(next_token_probs(logits, temperature=1.0, top_k=k)):
                return fail(
                    name,
                    tr(
                        "these are the probabilities at temperature 1: the temperature is missing.",
                        "这是温度为 1 时的概率，漏掉了温度。",
                    ),
                )
            if near(next_token_probs(logits * temperature, temperature=1.0, top_k=k)):
                return fail(
                    name,
                    tr(
                        "these come from logits multiplied by the temperature; a temperature "
                        "below 1 should sharpen the distribution, this flattens it.",
                        "这是 logits 乘以温度的结果。温度低于 1 应当让分布更尖，这里却更平了。",
                    ),
                )
            if near(next_token_probs(logits, temperature=temperature)):
                return fail(
                    name,
                    tr(
                        f"every entry has a probability above 0; top-k keeps only {k} per row.",
                        f"每个位置的概率都大于 0，top-k 每行只保留 {k} 个。",
                    ),
                )
            full = torch.softmax(logits / temperature, dim=-1)
            if near(torch.where(expected > 0, full, torch.zeros_like(full))):
                return fail(
                    name,
                    tr(
                        "the kept values are the full softmax's, so a row sums to less than 1: "
                        "the others were removed AFTER the softmax.",
                        "保留的是完整 softmax 的值，所以每行之和小于 1。"
                        "其余的是在 softmax 之后才去掉的。",
                    ),
                )
    return tensor_answer(
        name,
        answer,
        expected,
        what=tr(
            "a tensor of probabilities, one row for each row of the logits",
            "一个概率张量，logits 的每一行对应它的一行",
        ),
        hint=lambda wrong: _top_k_wrong(wrong, logits, k),
    )


@exercise(_PUNCTUATION)
def check_punctuation_share(answer: object, weights: torch.Tensor, text: str) -> CheckResult:
    """Per head: mean over queries (with a punctuation key at or before them) of that weight."""
    name = _PUNCTUATION
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
        what=A_PER_HEAD_TENSOR,
        hint=tr(
            "these are not the heads' punctuation shares: each is a share of weight, between 0 "
            "and 1, on the keys in lm.PUNCTUATION only.",
            "这不是各个头在标点上的权重占比。每个值是落在 lm.PUNCTUATION 中的键上的权重之和，"
            "在 0 到 1 之间。",
        ),
    )


#: At most this many windows of the validation text are measured, 64 at a time (the lesson's
#: 20,000 held-out characters fit: a fraction of a second for a small model).
_OWN_TEXT_WINDOWS = 1024
_OWN_TEXT_BATCH = 64


@torch.no_grad()
def _measured_loss(model: CharTransformer, ids: torch.Tensor) -> float | None:
    """Mean next-character loss of ``model`` on consecutive windows of ``ids`` (eval mode, the
    model's mode restored); None when ``ids`` hold no full window. NaN for a broken model."""
    length = model.context_length
    count = (ids.numel() - 1) // length
    if count < 1:
        return None
    ids = ids.to(model.tok_emb.weight.device)
    inputs = ids[: count * length].view(count, length)  # (n, T)
    targets = ids[1 : count * length + 1].view(count, length)  # (n, T)
    was_training = model.training
    model.eval()
    total = 0.0
    try:
        for start in range(0, count, _OWN_TEXT_BATCH):
            logits = model(inputs[start : start + _OWN_TEXT_BATCH])  # (n_b, T, vocab)
            total += F.cross_entropy(
                logits.reshape(-1, logits.shape[-1]).float(),
                targets[start : start + _OWN_TEXT_BATCH].reshape(-1),
                reduction="sum",
            ).item()
    finally:
        model.train(was_training)
    return total / (count * length)


@exercise(_OWN_TEXT)
def check_own_text(answer: object, data: object) -> CheckResult:
    """``answer``: a ``CharLMRun`` trained on ``data`` (``lm.text_data(...)``) that beats the
    unigram count table of the same text on its validation part.

    The run's model is measured on the validation text (up to 1,024 windows) here; the run's own
    ``val_losses`` are not trusted."""
    name = _OWN_TEXT
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
                "这次训练用的是别的文本。调用 lm.train_char_lm 时要传 data=own。",
            ),
        )
    model = answer.model
    if not isinstance(model, CharTransformer) or model.vocab_size != data.tokenizer.vocab_size:
        return fail(
            name,
            tr(
                "the run's model is not a CharTransformer of this text's vocabulary: pass the "
                "run lm.train_char_lm(..., data=own) returned.",
                "这次训练的模型不是这个文本词表上的 CharTransformer。"
                "请传入 lm.train_char_lm(..., data=own) 返回的训练记录。",
            ),
        )
    # The loss is measured here, on the validation text, not read from answer.val_losses.
    ids = data.val_ids  # the whole validation text, or its first _OWN_TEXT_WINDOWS windows
    if ids.numel() > _OWN_TEXT_WINDOWS * model.context_length + 1:
        ids = ids[: _OWN_TEXT_WINDOWS * model.context_length + 1]
    val = _measured_loss(model, ids)
    if val is None:
        return fail(
            name,
            tr(
                "the validation text is too short to measure the model on: hold out more "
                "(validation_share) or use a smaller context_length.",
                "验证文本太短，无法测量模型。请留出更多验证文本（validation_share），"
                "或用更小的 context_length。",
            ),
        )
    vocab = data.tokenizer.vocab_size
    unigram = CountTable(data.train_ids, 1, vocab).loss(ids)
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
