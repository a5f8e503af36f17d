"""Checkers for lesson 12, a tiny character model that writes (字符级语言模型).

* ``check_cache_numbers(answer)`` -- how many numbers the KV caches of a smaller model (3 blocks,
  4 heads of head_dim 32, batch 1) hold after 100 tokens.
* ``check_top_k_probs(answer, logits, k, temperature)`` -- next-token probabilities with a
  temperature and top-k, as ``lm.generate`` samples them.
* ``check_punctuation_share(answer, weights, text)`` -- per head, the total weight on punctuation
  keys at or before each query, averaged over the queries that have one: what
  ``mh.lm.head_focus`` reports as "punctuation".
* ``check_own_text(answer, data)`` -- a run of ``lm.train_char_lm`` on another text
  (``data = lm.text_data(...)``) whose validation loss is at least halfway from that text's
  unigram count table down to its bigram table.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from functools import partial
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from ..i18n import Text, tr
from ..lm.analysis import head_focus
from ..lm.baselines import CountTable
from ..lm.generation import next_token_probs
from ..lm.model import CharTransformer, TransformerBlock
from ..lm.text import PUNCTUATION
from ..lm.training import CharLMRun, TextData
from ._build import (
    INPUT_CHANGED,
    NOT_A_MODULE_CLASS,
    UNWRITTEN_FUNCTION,
    BuildSpec,
    ContractError,
    ForwardTexts,
    build_checker,
    call_forward,
    causal,
    change_from,
    construct,
    fill,
    first_line,
    gradients_reach,
    load_by_names,
    no_gradient,
    not_a_known_mistake,
    on_x,
    pass_the_class,
    written,
)
from ._kinds import Number, number_checker, tensor_answer
from ._parse import A_PER_HEAD_TENSOR
from ._result import CheckResult, exercise, ok

__all__ = [
    "check_block",
    "check_cache_numbers",
    "check_get_batch",
    "check_own_text",
    "check_punctuation_share",
    "check_top_k_probs",
    "check_train_step",
]

_LAYERS, _HEADS, _HEAD_DIM, _TOKENS = 3, 4, 32, 100
_CACHE_NUMBERS = 2 * _LAYERS * _HEADS * _TOKENS * _HEAD_DIM  # 76_800

_TOP_K = tr("sampling probabilities with temperature and top-k", "带温度和 top-k 的采样概率")
_PUNCTUATION = tr("weight on punctuation, per head", "每个头在标点上的权重")
_OWN_TEXT = tr("a model trained on another text", "在另一段文本上训练的模型")


check_cache_numbers = number_checker(
    "check_cache_numbers",
    Number(
        name=tr("numbers in the KV caches after 100 tokens", "100 个词元之后 KV 缓存中数的个数"),
        what=tr(
            "an int: how many numbers all the KV caches hold together",
            "一个整数，即所有 KV 缓存里一共存了多少个数",
        ),
        expected=_CACHE_NUMBERS,
        right=tr(
            f"correct: {_CACHE_NUMBERS:,} numbers ({4 * _CACHE_NUMBERS:,} bytes).",
            f"正确：{_CACHE_NUMBERS:,} 个数（{4 * _CACHE_NUMBERS:,} 字节）。",
        ),
        wrong={
            _CACHE_NUMBERS // 2: tr(
                "that counts only the keys (or only the values); the cache holds both.",
                "这只数了键（或只数了值），缓存里两者都有。",
            ),
            _CACHE_NUMBERS // _LAYERS: tr(
                "that is one block's cache; each of the 3 blocks has its own.",
                "这只是一个块的缓存。3 个块各有自己的缓存。",
            ),
            2 * 4 * _HEADS * _TOKENS * _HEAD_DIM: tr(
                "that counts 4 blocks, as in our model; the smaller one has 3.",
                "这是按 4 个块算的，那是我们的模型。这个小模型只有 3 个块。",
            ),
            2 * _LAYERS * _HEADS * _TOKENS * 48: tr(
                "that uses our model's head_dim (48); here head_dim is 32.",
                "这里用了我们模型的 head_dim（48）。这个小模型的 head_dim 是 32。",
            ),
            _CACHE_NUMBERS * 4: tr(
                "that is bytes (float32 = 4 bytes); the question asks for numbers.",
                "这是字节数（float32 = 4 字节），题目问的是数的个数。",
            ),
            2 * _LAYERS * _HEADS * 128 * _HEAD_DIM: tr(
                "that fills the whole context_length, 128; the cache holds only the 100 tokens "
                "processed so far.",
                "这是按整个 context_length（128）算的。缓存里只有到目前为止处理过的 100 个词元。",
            ),
            _CACHE_NUMBERS // _HEADS: tr(
                "that is one head's part; each of the 4 heads caches keys and values of its own.",
                "这只是一个头的那一份。4 个头各自缓存自己的键和值。",
            ),
        },
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
            f"probs[{row}] 这一行之和是 {total:.4f}，不是 1，所以这不是概率。",
        )
    kept = (got > 0).sum(dim=-1)  # (b,)
    if bool((kept != k).any()):
        row = int((kept != k).nonzero()[0])
        count = int(kept[row])
        return tr(
            f"row {row} has {count} non-zero probabilities; top-k keeps exactly {k}.",
            f"probs[{row}] 这一行有 {count} 个非零概率，top-k 只保留 {k} 个。",
        )
    if not got.gather(-1, logits.topk(k, dim=-1).indices.to(got.device)).gt(0).all():
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
    expected = next_token_probs(logits, temperature=temperature, top_k=k)
    return tensor_answer(
        _TOP_K,
        answer,
        expected,
        what=tr(
            "a tensor of probabilities, one row for each row of the logits",
            "一个与 logits 逐行对应的概率张量",
        ),
        hint=lambda wrong: _top_k_wrong(wrong, logits, k),
        wrong={
            next_token_probs(logits, temperature=1.0, top_k=k): tr(
                "these are the probabilities at temperature 1: the temperature is missing.",
                "这是温度为 1 时的概率，漏掉了温度。",
            ),
            next_token_probs(logits * temperature, temperature=1.0, top_k=k): tr(
                "these come from logits multiplied by the temperature; a temperature "
                "below 1 should sharpen the distribution, this flattens it.",
                "这是 logits 乘以温度的结果。温度低于 1 应当让分布更尖，这里却更平了。",
            ),
            next_token_probs(logits, temperature=temperature): tr(
                f"every entry has a probability above 0; top-k keeps only {k} per row.",
                f"每个位置的概率都大于 0，top-k 每行只保留 {k} 个。",
            ),
            torch.where(expected > 0, torch.softmax(logits / temperature, dim=-1), 0.0): tr(
                "the kept values are the full softmax's, so a row sums to less than 1: "
                "the others were removed AFTER the softmax.",
                "保留的是完整 softmax 的值，所以每行之和小于 1。其余的是在 softmax 之后才去掉的。",
            ),
        },
    )


@exercise(_PUNCTUATION)
def check_punctuation_share(answer: object, weights: torch.Tensor, text: str) -> CheckResult:
    """Per head: mean over queries (with a punctuation key at or before them) of that weight."""
    expected = head_focus(weights, text).shares[0, :, 2]  # (h,)
    is_punct = torch.tensor([ch in PUNCTUATION for ch in text])  # (T,)
    per_query = (weights.detach().float() * is_punct).sum(dim=-1)  # (h, T)
    strictly_after = is_punct.cumsum(dim=0) - is_punct.long() > 0  # (T,): a mark before t
    return tensor_answer(
        _PUNCTUATION,
        answer,
        expected,
        what=A_PER_HEAD_TENSOR,
        hint=tr(
            "these are not the heads' punctuation shares: for each query, sum its weights on the "
            "keys in lm.PUNCTUATION; then average those sums over the queries that have a mark "
            "at or before them.",
            "这不是各个头在标点上的权重占比。对每个查询，把它落在 lm.PUNCTUATION 中的键上的权重"
            "加起来；再对那些在自身或之前有标点的查询求这些和的平均。",
        ),
        wrong={
            per_query.mean(dim=-1): tr(
                "average only over queries that have a punctuation mark at or before them "
                "(the first line's first characters have none).",
                "只对那些在自身或之前有标点的查询求平均（第一行开头的几个字符之前没有标点）。",
            ),
            per_query[:, strictly_after].mean(dim=-1): tr(
                "the queries averaged start one too late: a query counts from the first "
                "punctuation mark on, the mark itself included (a key at or before the query).",
                "求平均的查询晚了一个：从第一个标点开始的查询都要算上，包括这个标点本身"
                "（键在查询处或查询之前）。",
            ),
        },
    )


#: At most this many windows of the validation text are measured, 64 at a time (the lesson's
#: 20,000 held-out characters fit: a fraction of a second for a small model).
_OWN_TEXT_WINDOWS = 1024
_OWN_TEXT_BATCH = 64


@torch.no_grad()
def _measured_loss(model: CharTransformer, ids: torch.Tensor) -> float | None:
    """Mean next-character loss of ``model`` on consecutive windows of ``ids``, at most
    ``_OWN_TEXT_WINDOWS`` of them (a copy in eval mode); None when ``ids`` hold
    no full window. NaN for a broken model."""
    length = model.context_length
    count = min((ids.numel() - 1) // length, _OWN_TEXT_WINDOWS)
    if count < 1:
        return None
    ids = ids[: count * length + 1].to(model.tok_emb.weight.device)
    inputs, targets = (part.view(count, length) for part in (ids[:-1], ids[1:]))  # (n, T) each
    model = copy.deepcopy(model).eval()  # the learner's model keeps its mode
    total = sum(
        F.cross_entropy(model(x).flatten(0, 1).float(), y.flatten(), reduction="sum")
        for x, y in zip(inputs.split(_OWN_TEXT_BATCH), targets.split(_OWN_TEXT_BATCH))
    )
    return float(total) / (count * length)


@exercise(
    _OWN_TEXT,
    what=tr(
        "the CharLMRun your training returned",
        "你训练得到的训练记录（CharLMRun）",
    ),
)
def check_own_text(answer: object, data: object) -> CheckResult:
    """``answer``: a ``CharLMRun`` trained on ``data`` (``lm.text_data(...)``) whose validation loss
    is below the midpoint of the same text's unigram and bigram count tables.

    The run's model is measured on the validation text (up to 1,024 windows) here; the run's own
    ``val_losses`` are not trusted."""
    if not isinstance(data, TextData):
        raise ContractError(
            tr("pass the TextData you trained on as data.", "把训练用的 TextData 作为 data 传入。"),
        )
    if not isinstance(answer, CharLMRun):
        kind = type(answer).__name__
        raise ContractError(
            tr(
                f"expected the run lm.train_char_lm returns, got a {kind}.",
                f"需要 lm.train_char_lm 返回的训练记录（CharLMRun），收到的是 {kind}。",
            ),
        )
    if answer.tokenizer.chars != data.tokenizer.chars:
        raise ContractError(
            tr(
                "this run was trained on another text: pass data=own to lm.train_char_lm.",
                "这次训练用的是别的文本。调用 lm.train_char_lm 时要传 data=own。",
            ),
        )
    model = answer.model
    if not isinstance(model, CharTransformer) or model.vocab_size != data.tokenizer.vocab_size:
        raise ContractError(
            tr(
                "the run's model is not a CharTransformer of this text's vocabulary: pass the "
                "run lm.train_char_lm(..., data=own) returned.",
                "这次训练的模型不是这个文本词表上的 CharTransformer。"
                "请传入 lm.train_char_lm(..., data=own) 返回的训练记录。",
            ),
        )
    # The loss is measured here, on the validation text, not read from answer.val_losses.
    ids = data.val_ids[: _OWN_TEXT_WINDOWS * model.context_length + 1]  # what is measured
    val = _measured_loss(model, ids)
    if val is None:
        raise ContractError(
            tr(
                "the validation text is too short to measure the model on: hold out more "
                "(validation_share) or use a smaller context_length.",
                "验证文本太短，无法测量模型。请留出更多验证文本（validation_share），"
                "或用更小的 context_length。",
            ),
        )
    unigram, bigram = (CountTable(data.train_ids, n, model.vocab_size).loss(ids) for n in (1, 2))
    bar = (unigram + bigram) / 2  # halfway: it must have learned more than the frequencies
    if not val < bar:
        raise ContractError(
            tr(
                f"validation loss {val:.2f} is not below {bar:.2f}, halfway from the unigram "
                f"table's {unigram:.2f} down to the bigram table's {bigram:.2f}: the model has "
                "not yet learned much beyond how often each character occurs. Train more steps, "
                "or a larger model, or with a larger learning rate.",
                f"验证损失 {val:.2f} 没有低于 {bar:.2f}，即从一元计数表的 {unigram:.2f} "
                f"到二元计数表的 {bigram:.2f} 的一半处：模型学到的还不比每个字符出现的频率多多少。"
                "多训练一些步数，或用更大的模型，或调大学习率。",
            ),
        )
    return ok(
        _OWN_TEXT,
        tr(
            f"validation loss {val:.2f}: more than halfway from the unigram table's "
            f"{unigram:.2f} to the bigram table's {bigram:.2f}.",
            f"验证损失 {val:.2f}：从一元计数表的 {unigram:.2f} 向二元计数表的 {bigram:.2f} "
            "走过了一半以上。",
        ),
    )


# -- build it: the pre-norm block ----------------------------------------------------------------

#: (d_model, context_length, num_heads, b, T): T < context_length, two head counts.
_BLOCK_SIZES = ((8, 6, 2, 2, 5), (12, 9, 3, 1, 7))
_BLOCK_CALL = ForwardTexts(
    call=tr(": forward", "：forward 方法"),
    input_changed=tr(": ", "：") + INPUT_CHANGED,
    shape=tr(": output shape {got}, expected {want}.", "：输出形状是 {got}，应为 {want}。"),
)


def _block_variants(block: TransformerBlock, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The book's block and its typical slips, from the reference's own layers (eval mode)."""
    ln_1, attn, ln_2, ff = block.ln_1, block.attn, block.ln_2, block.ff
    assert ff is not None
    h = x + attn(ln_1(x))  # (b, T, d)
    post = ln_1(x + attn(x))  # (b, T, d)
    normed = ln_1(x)
    return {
        "right": h + ff(ln_2(h)),
        "post_norm": ln_2(post + ff(post)),
        "no_residual": ff(ln_2(attn(ln_1(x)))),
        "residual_of_normed": normed + attn(normed) + ff(ln_2(normed + attn(normed))),
        "one_norm": h + ff(ln_1(h)),
        "no_ff_residual": ff(ln_2(h)),
        "no_attn_residual": attn(ln_1(x)) + ff(ln_2(attn(ln_1(x)))),
    }


_BLOCK_MISTAKES = {
    "post_norm": tr(
        "that is the post-norm block (the 2017 paper's), the layer norm after the sum. "
        "Here the norm comes first, inside each branch, and the residual adds the branch's "
        "output to the untouched x.",
        "这是后置归一化的块（2017 年论文的做法），层归一化放在了相加之后。"
        "这里要先归一化，放在每个分支里面，残差再把分支的输出加到原封不动的 x 上。",
    ),
    "no_residual": tr(
        "the output is the branches alone: each branch's output is added to its input (the "
        "residual connection), for attention and for the feed-forward network.",
        "输出只有分支本身。每个分支的输出都要加回它的输入（残差连接），注意力和前馈网络都是。",
    ),
    "residual_of_normed": tr(
        "the residual adds to the normalised x: the norm is only the branch's input; the sum "
        "starts from x itself.",
        "残差加到了归一化之后的 x 上。归一化只是分支的输入，相加时要从 x 本身出发。",
    ),
    "one_norm": tr(
        "the feed-forward branch reads ln_1: each branch has its own layer norm, ln_2 for "
        "the feed-forward network.",
        "前馈分支用的是 ln_1。每个分支有自己的层归一化，前馈网络用 ln_2。",
    ),
    "no_ff_residual": tr(
        "the feed-forward branch is not added back: the second residual connection is missing.",
        "前馈分支没有加回去，少了第二个残差连接。",
    ),
    "no_attn_residual": tr(
        "the attention branch is not added back to x: the first residual connection is missing.",
        "注意力分支没有加回到 x 上，少了第一个残差连接。",
    ),
}


def _built_block(
    cls: type, sizes: tuple[int, ...], seed: int
) -> tuple[nn.Module, TransformerBlock, torch.Tensor]:
    """After ``torch.manual_seed(seed)``: the learner's block holding the book's weights (its two
    norms made to differ), the book's block, both in eval mode, and an input x (b, T, d_model)."""
    torch.manual_seed(seed)
    d_model, context_length, num_heads, b, T = sizes
    reference = TransformerBlock(d_model, context_length, num_heads, 0.0)
    with torch.no_grad():  # two norms that differ, so that using one for both shows
        for name, param in reference.named_parameters():
            if name.startswith(("ln_1.", "ln_2.")):
                param.normal_(1.0 if name.endswith("weight") else 0.0, 0.3)
    module = written(construct(cls, (d_model, context_length, num_heads, 0.0), {}))
    load_by_names(module, reference, missing=_BLOCK_MISSING, extra=_BLOCK_EXTRA)
    return module.eval(), reference.eval(), torch.randn(b, T, d_model)


_BLOCK_MISSING = tr(
    "no parameter named {names}: use the names ln_1, attn (mh.MultiHeadAttention), ln_2 and "
    "ff (mh.lm.FeedForward with a hidden width of 4 * d_model).",
    "没有名为 {names} 的参数。请用这些名字：ln_1、attn（mh.MultiHeadAttention）、ln_2 和 "
    "ff（mh.lm.FeedForward，隐藏层宽度 4 * d_model）。",
)
_BLOCK_EXTRA = tr(
    "unexpected parameters {names}: the block holds only ln_1, attn, ln_2 and ff.",
    "多出了参数 {names}。这个块只有 ln_1、attn、ln_2 和 ff。",
)


_FUTURE_LEAKS = tr(": the future leaks in.", "：未来的信息泄露进来了。")


@torch.no_grad()
def _block_equal(cls: type) -> None:
    for index, sizes in enumerate(_BLOCK_SIZES):
        module, reference, x = _built_block(cls, sizes, 1200 + index)  # x: (b, T, d_model)
        where = on_x(f"cls{(*sizes[:3], 0.0)}", tuple(x.shape))
        out = call_forward(module, (x,), _BLOCK_CALL, where=where, want_shape=tuple(x.shape))
        variants = _block_variants(reference, x)
        if not torch.allclose(out, variants.pop("right"), atol=1e-5):
            known = ((v, _BLOCK_MISTAKES[k]) for k, v in variants.items())
            not_a_known_mistake(out, known, atol=1e-5, rtol=1e-5, where=where)
            raise ContractError(
                where
                + tr(
                    ": the output differs from the pre-norm block with the same weights. Check "
                    "that each branch reads its own layer norm of its input and that both "
                    "branches are added back (the residual connections).",
                    "：输出与参考块不同。检查每个分支是否读的是自己那个层归一化后的输入，"
                    "以及两个分支是否都加回去了（残差连接）。",
                )
            )
        half = x.shape[1] // 2  # the tokens half.. new: the outputs before them stay
        later = call_forward(module, (change_from(x, half),), _BLOCK_CALL, where=where)
        causal(later, out, half, where + _FUTURE_LEAKS)


def _block_gradients(cls: type) -> None:
    module, _, x = _built_block(cls, _BLOCK_SIZES[0], 1210)
    out = call_forward(module.train(), (x,), _BLOCK_CALL)
    (out * torch.randn(out.shape)).sum().backward()
    gradients_reach([(n, p.grad) for n, p in module.named_parameters()], no_gradient)


check_block = build_checker(
    "check_block",
    BuildSpec(
        name=tr(
            "build it: the pre-norm Transformer block", "动手实现：前置归一化的 Transformer 块"
        ),
        missing_what=tr(
            "your class (the class itself, e.g. MyBlock)", "你的类（类本身，例如 MyBlock）"
        ),
        instance_hint=pass_the_class("check_block(MyBlock)"),
        not_class_hint=NOT_A_MODULE_CLASS,
        contracts=(_block_equal, _block_gradients),
        passed=tr(
            "correct: equal to mh.lm.TransformerBlock with the same weights at two sizes, "
            "causal, and every weight gets a gradient.",
            "正确：两种尺寸下都与权重相同的 mh.lm.TransformerBlock 一致，满足因果性，"
            "每个权重都能得到梯度。",
        ),
    ),
    """Contract tests for the learner's pre-norm block ``cls(d_model, context_length, num_heads,
    dropout)`` holding ``ln_1``, ``attn``, ``ln_2``, ``ff`` (the names of
    ``mh.lm.TransformerBlock``): x + attn(ln_1(x)), then + ff(ln_2(.)); the post-norm block and
    the other usual slips are named.""",
)


# -- build it: the training step (a batch, the loss, one AdamW step) -----------------------------

_IDS = torch.arange(100, 160)  # (60,): every window shows where it starts


def _batch_contract(fn: Callable[..., object]) -> None:
    for b, T in ((4, 8), (3, 59)):  # T = 59: a single start fits (0)
        seen: list[object] = []

        def first(*args: object, seen: list[object] = seen) -> object:
            seen.append(fn(*args))
            pair = seen[-1]
            return pair[0] if isinstance(pair, tuple) and len(pair) == 2 else pair

        got = call_forward(first, (_IDS, b, T), _BATCH_CALL, want_shape=(b, T), b=b, T=T)
        targets = seen[-1][1]  # type: ignore[index]
        shape = tuple(targets.shape) if isinstance(targets, torch.Tensor) else None
        if shape != (b, T):
            raise ContractError(fill(_BATCH_CALL.shape, got=shape, want=(b, T)))  # type: ignore[arg-type]
        if (got.dtype, targets.dtype) != (torch.long, torch.long):
            raise ContractError(
                fill(
                    tr(
                        "inputs are {x} and targets {y}: both must be character ids, integers "
                        "of the dtype of ids (torch.long), since the embedding looks them up by "
                        "index and cross_entropy takes int64 targets (torch.zeros makes "
                        "floats unless told a dtype; .int() makes int32).",
                        "inputs 的类型是 {x}，targets 是 {y}。"
                        "两者都必须是字符编号，即与 ids 同类型的整数（torch.long）："
                        "嵌入层按下标查找它们，cross_entropy 也要 int64 的目标"
                        "（torch.zeros 不指定 dtype 时建出的是浮点数，.int() 得到的是 int32）。",
                    ),
                    x=got.dtype,
                    y=targets.dtype,
                )
            )
        windows = got[:, :1] + torch.arange(T)  # (b, T): the windows that start where got does
        if not torch.equal(got, windows) or not (got.min() >= 100 and got.max() < 159):
            raise ContractError(
                tr(
                    "each row of inputs must be T consecutive characters of ids, a window "
                    "starting anywhere it "
                    "fits (the last start is len(ids) - T - 1, so that its target fits too).",
                    "inputs 的每一行都应是 ids 中连续的 T 个字符，即从任意放得下的位置开始的窗口"
                    "（最后一个起点是 len(ids) - T - 1，这样它的目标也放得下）。",
                )
            )
        if torch.equal(targets, got):
            raise ContractError(
                tr(
                    "targets equal inputs: the model would learn to copy. Each target is the NEXT "
                    "character, "
                    "the window shifted by one.",
                    "targets 与 inputs 相同，模型只会学着抄写。每个目标是下一个字符，"
                    "即窗口右移一位。",
                )
            )
        if not torch.equal(targets, windows + 1):
            raise ContractError(
                tr(
                    "targets must be the same window shifted by one character to the right: the "
                    "character "
                    "that follows each input.",
                    "targets 应是同一个窗口右移一个字符，即每个输入后面的那个字符。",
                )
            )
    calls = [tuple(fn(_IDS, 8, 8)[0][:, 0].tolist()) for _ in range(3)]  # type: ignore[index]
    steps = [{b - a for a, b in itertools.pairwise(starts)} for starts in calls]
    if len(set(calls)) == 1 or min(map(len, steps)) == 1:  # the same, or equal steps apart
        raise ContractError(
            tr(
                "the windows are not drawn at random: every row of a batch needs a start of its "
                "own, drawn anew at every call (torch.randint, one start per row), not one start "
                "plus equal steps, so that a batch holds unrelated windows and training sees the "
                "whole text.",
                "窗口不是随机抽取的。一批里的每一行都要有自己的起点，并且每次调用都重新抽取"
                "（torch.randint，每行一个起点），而不是一个起点再加上等距的步长。"
                "这样一批里才是互不相关的窗口，训练也才能看到整段文本。",
            )
        )
    # 400 starts drawn over ten calls cover (nearly) every one of the 52 places a window fits
    starts = {s for _ in range(10) for s in fn(_IDS, 40, 8)[0][:, 0].tolist()}  # type: ignore[index]
    if len(starts) < 45:
        raise ContractError(
            fill(
                tr(
                    "over ten calls of 40 windows each, the windows start at only {n} of the 52 "
                    "places where a window of 8 fits in 60 ids: draw every row's start at random "
                    "over the whole range, 0 to len(ids) - T - 1 (torch.randint's upper bound is "
                    "exclusive), so that training sees the whole text.",
                    "调用十次、每次 40 个窗口，窗口的起点却只落在 {n} 个位置上，"
                    "而 60 个编号里放得下长为 8 的窗口的位置有 52 个。每一行的起点都要在整个范围内"
                    "随机抽取，即 0 到 len(ids) - T - 1（torch.randint 不含上界），"
                    "这样训练才能看到整段文本。",
                ),
                n=len(starts),
            )
        )


_BATCH_CALL = ForwardTexts(
    call=tr("get_batch(ids, {b}, {T})", "调用 get_batch(ids, {b}, {T}) 时"),
    raised=tr(
        "get_batch(ids, {b}, {T}) raised {kind}: {said}. A window and its target take T + 1 "
        "characters: the last start that fits is len(ids) - T - 1, and it must be drawable "
        "(torch.randint's upper bound is exclusive).",
        "get_batch(ids, {b}, {T}) 抛出了 {kind}：{said}。一个窗口连同它的目标要占 T + 1 个字符，"
        "最后一个放得下的起点是 len(ids) - T - 1，它也要能被抽到（torch.randint 不含上界）。",
    ),
    not_tensor=tr(
        "get_batch must return two tensors (inputs, targets); the first is {kind}.",
        "get_batch 要返回两个张量 (inputs, targets)，第一个却是 {kind}。",
    ),
    not_written=UNWRITTEN_FUNCTION,
    shape=tr(
        "get_batch(ids, b, T) returned shape {got}; inputs and targets are (b, T) = {want}.",
        "get_batch(ids, b, T) 返回的形状是 {got}，inputs 和 targets 都应为 (b, T) = {want}。",
    ),
)

check_get_batch = build_checker(
    "check_get_batch",
    BuildSpec(
        name=tr("build it: get_batch", "动手实现：get_batch"),
        answer="function",
        function_name="get_batch",
        reject_classes=True,
        contracts=(_batch_contract,),
        passed=tr(
            "correct: random windows of T characters, anywhere they fit, and targets shifted "
            "by one.",
            "正确：从任意放得下的位置随机取 T 个字符的窗口，targets 右移一位。",
        ),
        seed=12,
    ),
    """``get_batch(ids, batch_size, T)`` -> (inputs, targets), each (batch_size, T): random windows
    of ``ids`` and the same windows shifted by one; the last start ``len(ids) - T - 1`` allowed.""",
)


def _book_step(
    model: nn.Module, optimizer: torch.optim.Optimizer, inputs, targets, slip: str | None = None
):
    """The book's step (``slip`` None, or "clip": the gradients clipped to norm 1), or the same
    step with one of the slips of ``_STEP_SLIPS``."""
    logits = model(inputs)  # (b, T, vocab)
    if slip == "shifted_again":  # position t against the character two ahead: (b, T - 1, vocab)
        logits, targets = logits[:, :-1], targets[:, 1:]
    if slip == "softmax":
        logits = logits.softmax(dim=-1)
    # the logits (b * T, vocab) against the targets (b * T,)
    loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
    optimizer.zero_grad()
    loss.backward()
    if slip == "clip":
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    for _ in range({"no_step": 0, "step_twice": 2}.get(slip or "", 1)):
        optimizer.step()
    return loss.item()


def _two_steps(
    step: Callable[..., object], model: nn.Module, batches: torch.Tensor
) -> tuple[nn.Module, list[Any]]:
    """``step(model, optimizer, inputs, targets)`` for each batch on a copy of ``model`` with an
    AdamW of its own: the copy and what each step returned; what the step raises is the hint, and
    so is a step whose every forward ran without recording a graph (under ``torch.no_grad()``)."""
    trained = copy.deepcopy(model)
    optimizer = torch.optim.AdamW(trained.parameters(), lr=1e-2, weight_decay=0.1)
    graphs: list[bool] = []  # per forward of the model: whether it recorded a graph
    trained.register_forward_hook(lambda *_: graphs.append(torch.is_grad_enabled()))
    try:
        return trained, [step(trained, optimizer, inputs, targets) for inputs, targets in batches]
    except NotImplementedError:
        raise ContractError(UNWRITTEN_FUNCTION, todo=True) from None
    except Exception as error:  # the learner's function may raise anything
        kind, said = type(error).__name__, first_line(str(error)).rstrip(".")
        flat = _STEP_FLATTEN if "target size" in said or "batch_size" in said else tr("", "")
        raise ContractError(fill(_STEP_RAISED + flat, kind=kind, said=said)) from None
    finally:  # a model run without a graph (torch.no_grad()) is the hint, whatever came of it
        if graphs and not any(graphs):
            raise ContractError(_STEP_NO_GRAPH)


def _weights(model: nn.Module) -> torch.Tensor:
    """Every parameter of ``model``, flattened into one vector."""
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def _step_contract(fn: Callable[..., object]) -> None:
    torch.manual_seed(1220)
    model = CharTransformer(vocab_size=11, d_model=8, num_heads=2, num_layers=1, context_length=6)
    # two steps' (inputs, targets), each (3, 6): (2, 2, 3, 6)
    batches = torch.randint(0, 11, (2, 2, 3, 6), generator=torch.Generator().manual_seed(1221))
    theirs, losses = _two_steps(fn, model, batches)
    if not theirs.training:
        raise ContractError(
            tr(
                "train_step switched the model to eval mode (model.eval()), which turns dropout "
                "off for the rest of training: a training step leaves the mode as it is (the "
                "loop calls model.train() once; eval mode is for measuring).",
                "train_step 把模型切换成了评估模式（model.eval()），之后的训练就都没有 dropout 了。"
                "训练的一步不改变模式（训练循环开头调用一次 model.train()，评估模式只用于测量）。",
            )
        )

    mine = _weights(theirs)

    def book(slip: str | None) -> list[Any] | None:
        """The losses of the book's step with ``slip`` (``_book_step``), if it ends on their
        weights."""
        ours, want = _two_steps(partial(_book_step, slip=slip), model, batches)
        return want if torch.allclose(mine, _weights(ours), atol=1e-6, rtol=1e-5) else None

    # the book's losses, with or without clipping, if theirs took the book's step
    matched = [want for want in map(book, (None, "clip")) if want is not None]
    if not matched:  # a known slip (the first: no step at all), or the generic hint
        raise ContractError(next((h for s, h in _STEP_SLIPS.items() if book(s)), _STEP_DIFFERS))
    got = [_as_number(x) for x in losses]
    if any(v is None or abs(v - w) > 1e-5 for v, w in zip(got, matched[-1], strict=True)):
        raise ContractError(fill(_STEP_LOSS[None in got], want=round(matched[-1][0], 4)))


def _as_number(loss: object) -> float | None:
    """The loss as the brief asks for it, a Python number (``loss.item()``); a tensor is not."""
    return float(loss) if isinstance(loss, (int, float)) and not isinstance(loss, bool) else None


_STEP_RAISED = tr(
    "train_step(model, optimizer, inputs, targets) raised {kind}: {said}.",
    "train_step(model, optimizer, inputs, targets) 抛出了 {kind}：{said}。",
)
_STEP_FLATTEN = tr(
    " The logits are (b, T, vocab) and the targets (b, T): cross_entropy wants one row per "
    "position, (b * T, vocab) against (b * T,).",
    "logits 的形状是 (b, T, vocab)，targets 是 (b, T)：cross_entropy 要的是每个位置一行，"
    "(b * T, vocab) 对 (b * T,)。",
)
_STEP_NO_GRAPH = tr(
    "the model ran under torch.no_grad(): no graph is recorded there, so backward() has nothing "
    "to go back through and no parameter gets a gradient. Compute the logits and the loss with "
    "gradients on; torch.no_grad() is for measuring, not for a training step.",
    "模型是在 torch.no_grad() 下运行的：那里不记录计算图，backward() 无从回溯，"
    "任何参数都得不到梯度。logits 和损失要在开启梯度时计算；"
    "torch.no_grad() 用于测量，不用于训练的一步。",
)
_STEP_DIFFERS = tr(
    "after two steps the parameters differ from two AdamW steps on the cross-entropy loss: is "
    "optimizer.zero_grad() called at every step? (Without it the gradients add up.) Is the "
    "loss the mean cross-entropy over every position?",
    "两步之后，参数与在交叉熵损失上做两步 AdamW 的结果不同。"
    "每一步都调用 optimizer.zero_grad() 了吗？"
    "（不清零，梯度会累加。）损失是所有位置上交叉熵的平均吗？",
)
_STEP_SLIPS = {
    "no_step": tr(
        "the parameters did not change: optimizer.step() found no gradients. backward() computes "
        "them and step() applies them; optimizer.zero_grad() clears them, so it comes before "
        "backward(), never between backward() and step().",
        "参数没有变：optimizer.step() 没有找到梯度。backward() 计算梯度，step() 用上它们；"
        "optimizer.zero_grad() 会清掉梯度，所以要放在 backward() 之前，"
        "不能放在 backward() 和 step() 之间。",
    ),
    "shifted_again": tr(
        "the logits are scored against the targets shifted once more: get_batch has already "
        "shifted them by one (targets[:, t] is the character after inputs[:, t]), so the logits "
        "of every position go against the targets at the same position, all T of them.",
        "logits 对应的是又右移了一位的目标。get_batch 已经把目标右移了一位"
        "（targets[:, t] 就是 inputs[:, t] 后面的字符），"
        "所以每个位置的 logits 对同一位置的目标，T 个位置都要算。",
    ),
    "softmax": tr(
        "the loss is computed from probabilities: F.cross_entropy takes the raw logits and "
        "applies the (log-)softmax itself, so a softmax before it squashes the scores twice and "
        "the gradients come out far too small.",
        "损失是从概率算出来的。F.cross_entropy 接收原始的 logits，自己会做（对数）softmax；"
        "在它之前再做一次 softmax，分数就被压缩了两次，梯度会小得多。",
    ),
    "step_twice": tr(
        "the optimizer takes two steps per batch: one training step is one backward() and then "
        "one optimizer.step(); a second step() applies the same gradients again.",
        "每一批优化器走了两步。一步训练是一次 backward()，再一次 optimizer.step()；"
        "多调用一次 step()，同样的梯度就又用了一遍。",
    ),
}
#: The hint for a right step whose loss is wrong: one measured after the step, or not a number
#: (indexed by whether a loss is not a number).
_STEP_LOSS = (
    tr(
        "the step is right, but the loss returned is not this batch's loss before the update: "
        "return the loss the step computed its gradients from ({want} for the first batch), not "
        "one measured after optimizer.step().",
        "这一步做对了，但返回的不是这一批在更新之前的损失。请返回用来算梯度的那个损失"
        "（第一批应是 {want}），而不是 optimizer.step() 之后再算的。",
    ),
    tr(
        "the step is right, but return the loss as a number (a Python float, not a tensor: "
        "loss.item()): it should be {want} for the first batch, measured before the step.",
        "这一步做对了，但要把损失作为一个数返回（普通的数，而不是张量：loss.item()）。"
        "第一批的损失应是 {want}，是在更新之前算的。",
    ),
)

check_train_step = build_checker(
    "check_train_step",
    BuildSpec(
        name=tr("build it: one training step", "动手实现：一步训练"),
        answer="function",
        function_name="train_step",
        reject_classes=True,
        contracts=(_step_contract,),
        passed=tr(
            "correct: the cross-entropy of every position, gradients cleared, backward, one "
            "AdamW step; the loss comes back as a number.",
            "正确：对每个位置求交叉熵，清零梯度，反向传播，做一步 AdamW，损失作为一个数返回。",
        ),
        seed=12,
    ),
    """``train_step(model, optimizer, inputs, targets)`` -> the loss (a float) of one step: the
    mean cross-entropy over every position, ``zero_grad``, ``backward``, (an optional clip to
    norm 1), ``optimizer.step()``. Compared after two AdamW steps with the book's step.""",
)
