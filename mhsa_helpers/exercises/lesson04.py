"""Checkers for lesson 04, dropout (随机失活) on attention weights.

* ``check_dropout_scale(answer)`` -- the factor a surviving entry is multiplied by when p = 0.2.
* ``check_zero_fraction(answer)`` -- the expected fraction of zeros in a 6x6 causal weight matrix
  after dropout with p = 0.5 (masked entries plus dropped ones).
* ``check_dropout_rate(answer)`` -- the rate p (0.3) of a dropout layer in its other place, on
  the context vectors (6, 2) of the book's seed-789 causal weights and values, read from what it
  returned (``exercise_dropped_context()``): a survivor is 1 / (1 - p) times its entry.
* ``check_survivor_prediction(prediction)`` -- the predict-then-run moment: the value of the
  entries of a 6x6 matrix of ones that survive ``nn.Dropout(0.5)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import torch
from torch import nn

from ..attention.causal import CausalAttention
from ..attention.functional import causal_mask, masked_attention
from ..attention.self_attention import SelfAttentionV2
from ..data import load_journey
from ..i18n import Text, tr
from ._build import (
    MASK_IN_INIT,
    MODULE_FORWARD,
    NOT_A_MODULE_CLASS,
    BuildSpec,
    ContractError,
    agrees,
    build_checker,
    call_forward,
    causal,
    change_from,
    construct,
    dropout_only_in_training,
    first_line,
    gradients_reach,
    head_forward,
    load_by_names,
    mask_buffer,
    mask_note,
    mistakes_hint,
    name_head_mistakes,
    no_gradient,
    on_x,
    pass_the_class,
    written,
)
from ._kinds import Number, PredictionBeforeRun, number_checker, prediction_checker

__all__ = [
    "CausalClass",
    "check_causal_attention_class",
    "check_dropout_rate",
    "check_dropout_scale",
    "check_survivor_prediction",
    "check_zero_fraction",
    "exercise_context",
    "exercise_dropped_context",
    "exercise_keep_pattern",
    "head_class_passed",
]

EXERCISE_P = 0.3


def exercise_keep_pattern() -> torch.Tensor:
    """The (6, 2) keep pattern of exercise 3 (True = kept), drawn with its own generator.

    The lesson builds the same tensor with the same line:
    ``torch.rand(6, 2, generator=torch.Generator().manual_seed(2025)) >= 0.3``.
    """
    return torch.rand(6, 2, generator=torch.Generator().manual_seed(2025)) >= EXERCISE_P


check_survivor_prediction = prediction_checker(
    "check_survivor_prediction",
    PredictionBeforeRun(
        name=tr("prediction: the value of a surviving entry", "预测：保留下来的元素的值"),
        expected=2.0,
        right=tr(
            "right -- the next cell shows it; section 2 explains why.",
            "对了！下一个单元格会展示出来，第 2 节会解释原因。",
        ),
        wrong=tr(
            "not what happens. Run the next cell and look at the entries that are not 0; then "
            "think about what happens to the average of the matrix when half of it is zeroed.",
            "实际情况不是这样。运行下一个单元格，看看那些不为 0 的元素，"
            "再想一想：矩阵有一半被置零后，它的平均值会怎样？",
        ),
        tol=1e-4,
    ),
    "Prediction: the survivors of ``nn.Dropout(0.5)`` on a 6x6 matrix of ones equal 2.",
)


check_dropout_scale = number_checker(
    "check_dropout_scale",
    Number(
        name=tr("dropout scale for p=0.2", "p=0.2 时 dropout 的缩放因子"),
        what=tr("the number a surviving entry is multiplied by", "保留下来的元素要乘的那个数"),
        expected=1.25,
        right=tr(
            "correct: 1 / (1 - 0.2) = 1.25, so the expected value stays the same.",
            "正确：1 / (1 - 0.2) = 1.25，这样期望值保持不变。",
        ),
        wrong={
            0.8: tr(
                "0.8 is the probability to survive, 1 - p. Survivors are DIVIDED by it.",
                "0.8 是保留下来的概率 1 - p。保留下来的元素要除以它，而不是乘以它。",
            ),
            5.0: tr(
                "that is 1 / p. The factor is 1 / (1 - p): divide by what survives.",
                "这是 1 / p。缩放因子是 1 / (1 - p)，即除以保留下来的比例。",
            ),
            2.0: tr(
                "2 is the factor for p = 0.5 (the book's example). Here p = 0.2.",
                "2 是 p = 0.5 时的缩放因子（书中的例子）。这里 p = 0.2。",
            ),
            0.2: tr(
                "0.2 is p itself, the fraction dropped. What keeps the mean at 1?",
                "0.2 就是 p 本身，即被丢弃的比例。怎样才能让平均值保持为 1？",
            ),
        },
        otherwise=tr(
            "a fraction 1 - p survives; scale it by 1 / (1 - p) to keep the mean.",
            "保留下来的元素占 1 - p，把它们乘以 1 / (1 - p)，平均值就不变。",
        ),
        tol=1e-4,
    ),
    "With p = 0.2, survivors are multiplied by 1 / (1 - 0.2) = 1.25.",
)


_ZERO_FRACTION = (15 + 21 * 0.5) / 36  # 0.7083

check_zero_fraction = number_checker(
    "check_zero_fraction",
    Number(
        name=tr("expected fraction of zeros", "零所占比例的期望值"),
        what=tr(
            "a fraction of the entries (a plain number, not a percentage)",
            "一个比例（普通的数，不是百分数）",
        ),
        expected=_ZERO_FRACTION,
        right=tr(
            f"correct: 15 masked + 21 * 0.5 dropped = 25.5 of 36 = {_ZERO_FRACTION:.4f}.",
            f"正确：15 个被掩码 + 21 * 0.5 个被丢弃 = 36 个中的 25.5 个 = {_ZERO_FRACTION:.4f}。",
        ),
        wrong={
            25.5: tr(
                "25.5 is the expected COUNT of zeros; divide by the 36 entries.",
                "25.5 是零的个数的期望值，还要除以全部 36 个元素。",
            ),
            lambda value: not 0.0 <= value <= 1.0: tr(
                "a fraction lies between 0 and 1: zeros divided by the 36 entries.",
                "比例在 0 到 1 之间，即零的个数除以 36 个元素。",
            ),
            0.5: tr(
                "dropout zeroes half of the entries, but 15 entries above the diagonal are "
                "already 0 (the causal mask) and stay 0.",
                "dropout 会把一半的元素置零，但对角线以上的 15 个元素已经是 0（因果掩码），"
                "而且一直是 0。",
            ),
            15 / 36: tr(
                "that counts only the 15 masked entries; dropout zeroes half of the 21 others.",
                "这只算了被掩码的 15 个元素。dropout 还会把其余 21 个元素中的一半置零。",
            ),
            10.5 / 36: tr(
                "that counts only the dropped entries; add the 15 masked ones.",
                "这只算了被丢弃的元素，还要加上被掩码的 15 个。",
            ),
        },
        otherwise=tr(
            "count the 15 masked zeros, then half of the 21 entries on/below the diagonal.",
            "先数被掩码的 15 个零，再加上对角线及其以下 21 个元素中的一半。",
        ),
        tol=5e-3,  # the value rounded to 2 decimals, 0.71, passes; no known slip is that close
    ),
    "Expected zeros in a 6x6 causal weight matrix after dropout p = 0.5: (15 + 21 * 0.5) / 36.",
)


def exercise_context() -> tuple[torch.Tensor, torch.Tensor]:
    """The seed-789 causal weights (6, 6) and the values (6, 2) of the lesson's ``sa_v2``."""
    inputs = load_journey().inputs  # (6, 3)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(789)
        sa_v2 = SelfAttentionV2(3, 2)
    with torch.no_grad():
        keys, queries, values = sa_v2.project(inputs)  # (6, 2) each
        _, weights = masked_attention(queries, keys, values, causal_mask(6).bool())  # (6, 6)
    return weights, values


def exercise_dropped_context() -> torch.Tensor:
    """What exercise 3's dropout layer (on the context vectors, rate ``EXERCISE_P``) returned in
    training mode: ``weights @ values`` kept where ``exercise_keep_pattern()`` is True and
    divided by 1 - p, the rest zero. (6, 2)."""
    weights, values = exercise_context()  # (6, 6), (6, 2)
    return weights @ values * exercise_keep_pattern() / (1 - EXERCISE_P)


check_dropout_rate = number_checker(
    "check_dropout_rate",
    Number(
        name=tr(
            "the rate of a dropout layer on the context vectors",
            "作用在上下文向量上的 dropout 层的丢弃率",
        ),
        what=tr("a number: the dropout rate p of the layer", "一个数：这一层的丢弃率 p"),
        expected=EXERCISE_P,
        right=tr(
            "correct: every survivor is 1 / (1 - p) = 1.43 times its context vector entry, so "
            "p = 0.3, although only 3 of the 12 entries (25%) were dropped this time.",
            "正确：每个保留下来的元素都是原上下文向量元素的 1 / (1 - p) = 1.43 倍，"
            "所以 p = 0.3，虽然这一次 12 个元素里只丢弃了 3 个（25%）。",
        ),
        wrong={
            # the share of zeros in this draw: 3 of 12
            (~exercise_keep_pattern()).float().mean().item(): tr(
                "that is the share of zeros in this one draw. p is a probability per entry, "
                "not an exact count (section 1): read it from the size of the survivors instead.",
                "这是这一次抽样中零所占的比例。p 是每个元素被丢弃的概率，不是某一次实际丢弃的比例"
                "（见第 1 节）。请从保留下来的元素的大小去推算它。",
            ),
            1 / (1 - EXERCISE_P): tr(
                "that is the factor the survivors were multiplied by, 1 / (1 - p); the rate p "
                "follows from it.",
                "这是保留下来的元素乘上的倍数 1 / (1 - p)，丢弃率 p 要从它反推出来。",
            ),
            1 - EXERCISE_P: tr(
                "that is the share of the entries the layer keeps, 1 - p; p is the share it drops.",
                "这是这一层保留的比例 1 - p，而 p 是丢弃的比例。",
            ),
            1 / (1 - EXERCISE_P) - 1: tr(
                "that is how much a survivor grew, 1 / (1 - p) - 1; solve 1 / (1 - p) = the "
                "factor for p.",
                "这是保留下来的元素增大的部分 1 / (1 - p) - 1。"
                "请由 1 / (1 - p) 等于这个倍数解出 p。",
            ),
        },
        otherwise=tr(
            "first the context vectors attn_weights @ values of section 4, before dropout; "
            "then compare a surviving entry of ctx_dropped with the same entry before: the "
            "layer multiplied it by 1 / (1 - p).",
            "先算出第 4 节 dropout 之前的上下文向量 attn_weights @ values，"
            "再把 ctx_dropped 中一个保留下来的元素和它原来的值比较："
            "这一层把它乘上了 1 / (1 - p)。",
        ),
        tol=5e-3,
    ),
    "The rate p of a dropout layer on lesson 04's context vectors, read from its output.",
)


# -- build it: the book's CausalAttention class (and, in lesson 05, the wrapper of such heads) ---


@dataclass(frozen=True)
class CausalClass:
    """A build-it class made of causal heads: how to build it and the book's class to compare.

    ``heads`` is 0 for ``CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=False)``,
    else the number of heads the wrapper
    ``cls(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`` is built with; its
    output concatenates the heads, (b, T, heads * d_out).
    """

    reference: type
    heads: int

    def args(self, d_in: int, d_out: int, context_length: int, dropout: float) -> tuple[Any, ...]:
        return (d_in, d_out, context_length, dropout, *([self.heads] if self.heads else []))


# (d_in, d_out, context_length, b, T): T < context_length, so an unsliced mask shows; d_out > 1
# so that sqrt(d_out) != d_out.
_HEAD_SIZES = ((3, 2, 6, 2, 6), (5, 4, 9, 3, 7), (4, 6, 5, 1, 5))


def _read_size_error(error: RuntimeError, args: tuple[object, ...]) -> Text | None:
    """A size mismatch in forward: in the product with the keys (``.T`` on a batch moves the
    batch dimension), else in the mask (not sliced to T)."""
    text, said = str(error), first_line(str(error)).rstrip(".")
    if "boolean masks" in text:
        return tr(
            f": forward raised RuntimeError: {said}. masked_fill takes a boolean mask (True = "
            "hide): build the mask with .bool(), or convert it with .bool() before masking.",
            f"：forward 抛出了 RuntimeError：{said}。masked_fill 只接受布尔掩码（True 表示遮住）。"
            "请用 .bool() 构造掩码，或者在做掩码之前用 .bool() 转换它。",
        )
    if "batch1" in text or "batch2" in text or "dimension 0" in text:
        return tr(
            f": forward raised RuntimeError: {said}. With a batch the keys are (b, T, d_out): "
            ".T and transpose(0, 1) move the batch dimension. Swap the last two dimensions "
            "only (transpose takes the two to swap).",
            f"：forward 抛出了 RuntimeError：{said}。有了批次，键的形状是 (b, T, d_out)，"
            ".T 和 transpose(0, 1) 都会挪动批次那一维。只交换最后两维即可"
            "（transpose 的两个参数就是要交换的两维）。",
        )
    if "must match the size" in text or "size of tensor" in text.lower():
        return tr(
            f": forward raised RuntimeError: {said}. The mask is made for context_length "
            "tokens: cut it to the input's T tokens before masking.",
            f"：forward 抛出了 RuntimeError：{said}。掩码是按 context_length 个词元创建的，"
            "做掩码之前要把它切成输入的 T 个词元。",
        )
    return None


_HEAD_FORWARD = replace(
    MODULE_FORWARD,
    runtime=_read_size_error,
    dtype=tr(
        ": forward returned {got_dtype} for a {dtype} input: keep the input's dtype.",
        "：输入是 {dtype}，forward 却返回了 {got_dtype}。输出要保持输入的 dtype。",
    ),
    shape=tr(": output shape {got}, expected {want}.", "：输出形状是 {got}，应为 {want}。"),
)

_WRONG_CONCAT = tr(
    ": the heads are concatenated along the wrong dimension: each head gives (b, T, d_out), "
    "and the wrapper puts them side by side, torch.cat([...], dim=-1).",
    "：各个头拼接的维度不对。每个头输出 (b, T, d_out)，"
    "包装器要把它们并排拼接起来，即 torch.cat([...], dim=-1)。",
)


_PARAMETER_MISSING = tr(
    "no parameter named {names}: use the book's names W_query, W_key, W_value "
    "(nn.Linear(d_in, d_out, bias=qkv_bias))",
    "没有名为 {names} 的参数。请使用书中的名字 W_query、"
    "W_key、W_value（nn.Linear(d_in, d_out, bias=qkv_bias)）",
)
_IN_EACH_HEAD = tr(
    " inside each head of self.heads (an nn.ModuleList of CausalAttention heads)",
    "，放在 self.heads（由 CausalAttention 头组成的 nn.ModuleList）的每个头里",
)
_PARAMETER_EXTRA = tr(
    "unexpected parameters {names}: the book's class has only W_query, W_key and "
    "W_value (biases only with qkv_bias=True).",
    "多出了参数 {names}，而书中的类只有 W_query、W_key 和 W_value"
    "（只有 qkv_bias=True 时才有偏置）。",
)


def _load_heads(spec: CausalClass, module: nn.Module, reference: nn.Module) -> None:
    """Copy the book's weights into ``module`` by their names, or say which name is wrong."""
    heads = getattr(module, "heads", None)
    if spec.heads and isinstance(heads, (list, tuple)) and heads:
        raise ContractError(
            tr(
                "self.heads is a plain Python list: nn.Module does not look inside it, so the "
                "heads' "
                "weights are not the module's parameters (the optimizer, .to() and .eval() miss "
                "them). "
                "Keep the heads in an nn.ModuleList.",
                "self.heads 是普通的 `list`：nn.Module 不会去看列表里面，"
                "所以各个头的权重不算模块的参数"
                "（优化器、.to() 和 .eval() 都看不到它们）。请把各个头放进 nn.ModuleList。",
            )
        )
    written(module)
    built = {n.split(".")[1] for n, _ in module.named_parameters() if n.startswith("heads.")}
    if spec.heads and isinstance(heads, nn.ModuleList) and len({id(h) for h in heads}) < len(heads):
        raise ContractError(
            tr(
                "self.heads holds the same head object several times, so all the heads share one "
                "set of "
                "weights and compute the same thing. Call the head's constructor once per head.",
                "self.heads 里是同一个头对象重复了几次，所以所有的头共用一套权重，"
                "算出的东西也一样。"
                "请为每个头各调用一次构造函数。",
            )
        )
    if spec.heads and built and len(built) != spec.heads:
        raise ContractError(
            tr(
                f"built with num_heads={spec.heads}, the class holds {len(built)} heads: "
                "build one new head per head, num_heads in all.",
                f"用 num_heads={spec.heads} 构建时，这个类里有 {len(built)} 个头。"
                "每个头都要新建一个，一共 num_heads 个。",
            )
        )
    missing = _PARAMETER_MISSING + (_IN_EACH_HEAD if spec.heads else tr("", "")) + tr(".", "。")
    load_by_names(module, reference, missing=missing, extra=_PARAMETER_EXTRA)


def _trial(
    spec: CausalClass,
    cls: type,
    sizes: tuple[int, ...],
    dropout: float,
    seed: int,
    dtype: torch.dtype = torch.float32,
    **kwargs: Any,
) -> tuple[nn.Module, nn.Module, torch.Tensor, Text, Callable[[torch.Tensor], torch.Tensor]]:
    """After ``torch.manual_seed(seed)``: the learner's module and the book's with the same
    weights, an input x (b, T, d_in) of ``dtype``, where the test runs (the call, x's shape) and
    ``run``, the learner's forward through ``_forward``."""
    d_in, d_out, context_length, b, T = sizes
    args = spec.args(d_in, d_out, context_length, dropout)
    torch.manual_seed(seed)
    reference = spec.reference(*args, **kwargs)
    module = construct(cls, args, dict(kwargs))
    if kwargs.get("qkv_bias") and not any(n.endswith("bias") for n, _ in module.named_parameters()):
        raise ContractError(_NO_BIASES[bool(spec.heads)])
    _load_heads(spec, module, reference)
    x = torch.randn(b, T, d_in, dtype=dtype)  # (b, T, d_in)
    where = on_x(f"{cls.__name__}{args}", (b, T, d_in))
    return module, reference, x, where, partial(_forward, spec, module, where=where)


def _forward(spec: CausalClass, module: nn.Module, x: torch.Tensor, where: Text) -> torch.Tensor:
    b, T, _ = x.shape
    # the width of one head: its W_query's (the names are the book's, load_by_names saw to it)
    width = next(p for n, p in module.named_parameters() if n.endswith("W_query.weight")).shape[0]
    want = (b, T, max(spec.heads, 1) * width)
    try:
        return call_forward(module, (x,), _HEAD_FORWARD, where=where, want_shape=want)
    except ContractError:
        out = module(x.clone()) if spec.heads else None
        wrong_dims = ((b * spec.heads, T, width), (b, T * spec.heads, width))
        if isinstance(out, torch.Tensor) and tuple(out.shape) in wrong_dims:
            raise ContractError(where + _WRONG_CONCAT) from None
        raise


def _head_mistakes(
    spec: CausalClass, reference: nn.Module, x: torch.Tensor, out: torch.Tensor, where: Text
) -> Text:
    heads = [m for m in reference.modules() if isinstance(m, CausalAttention)]  # in order

    def forward(mistakes: frozenset[str]) -> torch.Tensor:  # (b, T, heads * d_out)
        return torch.cat(
            [head_forward(h.W_query(x), h.W_key(x), h.W_value(x), mistakes) for h in heads], -1
        )

    outputs = forward(frozenset()).chunk(len(heads), dim=-1)
    for order in (torch.cat(outputs[::-1], dim=-1), torch.stack(outputs, dim=-1).flatten(-2)):
        if len(heads) > 1 and torch.allclose(out, order, atol=1e-5, rtol=1e-4):
            return where + tr(
                ": each head is right, but the outputs are not side by side in the order of "
                "self.heads: concatenate them along the last dimension, head 1 first.",
                "：每个头都对，但它们的输出没有按 self.heads 的顺序并排放好。"
                "请沿最后一维拼接，头 1 在最前面。",
            )
    mistakes = name_head_mistakes(out, forward)
    if mistakes:
        return where + tr(": ", "：") + mistakes_hint(mistakes)
    return where + tr(
        ": the output differs from the book's class with the same weights. The order: queries, "
        "keys and values from W_query, W_key, W_value; the scores with the keys' last two "
        "dimensions swapped; the future masked with -inf; softmax over the keys of the scores "
        "scaled by the square root of the keys' width; dropout; the weighted sum of the values.",
        "：输出与权重相同的书中的类不一致。请按这个顺序计算：用 W_query、"
        "W_key、W_value 算出查询、键和值，交换键的最后两维算出分数，"
        "用 -inf 遮住未来，分数除以键宽度的平方根之后在键这一维上做 softmax，"
        "做 dropout，最后对值做加权求和。",
    )


_FUTURE_LEAKS = tr(
    ": changing later tokens changed the outputs of earlier ones -- the future leaks in. Mask "
    "the scores above the diagonal with -inf before the softmax.",
    "：改动后面的词元，前面词元的输出也变了，"
    "说明未来的信息泄露进来了。"
    "请在 softmax 之前用 -inf 遮住对角线以上的注意力分数。",
)


#: A wrapper is built with another number of heads at each size (one that always builds 2 fails).
_HEAD_COUNTS = (2, 3, 1)
#: The dtypes the sizes run in: a class that computes in float32 whatever its input shows.
_HEAD_DTYPES = (torch.float32, torch.float64, torch.float32)
#: Dropout rates tried in training: a class that ignores its dropout argument (a hard-coded
#: nn.Dropout(0.5)) differs from the book's at 0.2 and drops something at 0.0.
_DROPOUT_RATES = (0.5, 0.2, 0.0)


#: The hint for a dropout rate other than the constructor's: in the class, in the heads of a
#: wrapper (indexed by bool(spec.heads), like _NO_BIASES).
_WRONG_RATE = (
    tr(
        " in training mode the output differs from the book's class built with the same dropout "
        "rate: use the dropout argument, self.dropout = nn.Dropout(dropout), not a fixed rate.",
        "，在训练模式下，输出与用同样丢弃率构建的书中的类不一致。"
        "请使用 dropout 参数，self.dropout = nn.Dropout(dropout)，不要写死一个丢弃率。",
    ),
    tr(
        ": the heads drop with another rate than the wrapper was built with: pass the wrapper's "
        "dropout argument on to every head's constructor.",
        "：各个头的丢弃率和构建包装器时给的不一样。请把包装器的 dropout 参数传给每个头的构造函数。",
    ),
)
_NO_BIASES = (
    tr(
        "built with qkv_bias=True, the class has no bias at all: build W_query, W_key and "
        "W_value with bias=qkv_bias.",
        "用 qkv_bias=True 构建时，这个类里一个偏置也没有。"
        "创建 W_query、W_key 和 W_value 时要写 bias=qkv_bias。",
    ),
    tr(
        "built with qkv_bias=True, the heads have no bias at all: pass the wrapper's qkv_bias "
        "argument on to every head's constructor.",
        "用 qkv_bias=True 构建时，各个头里一个偏置也没有。"
        "请把包装器的 qkv_bias 参数传给每个头的构造函数。",
    ),
)


def head_contracts(spec: CausalClass) -> tuple[Callable[[type], None], ...]:
    """The contracts of a class made of causal heads: equal to the book's at every size (the
    typical mistakes named), causal, dropout in training only, gradients to every weight.

    Every contract runs over a grid of the constructor's arguments: three sizes, a wrapper's
    number of heads (``_HEAD_COUNTS``), two dtypes and three dropout rates."""

    def variant(index: int) -> CausalClass:
        return replace(spec, heads=_HEAD_COUNTS[index]) if spec.heads else spec

    def equal_to_reference(cls: type) -> None:
        for index, (sizes, dtype) in enumerate(zip(_HEAD_SIZES, _HEAD_DTYPES)):
            spec_i, half = variant(index), sizes[-1] // 2
            module, reference, x, where, run = _trial(spec_i, cls, sizes, 0.0, 500 + index, dtype)
            module.to(dtype).eval()
            reference.to(dtype).eval()
            with torch.no_grad():
                out = run(x)
                agrees(out, reference(x), partial(_head_mistakes, spec_i, reference, x, out, where))
                # the tokens half.. new: the outputs before them stay
                causal(run(change_from(x, half)), out, half, where + _FUTURE_LEAKS)

    def dropout_in_training_only(cls: type) -> None:
        for index, p in enumerate(_DROPOUT_RATES):
            spec_i = variant(index)
            module, reference, x, where, run = _trial(spec_i, cls, _HEAD_SIZES[1], p, 600 + index)

            rates = {m.p for m in module.modules() if isinstance(m, nn.Dropout)}
            if rates and rates != {p}:
                raise ContractError(where + _WRONG_RATE[bool(spec.heads)])
            if p > 0:
                dropout_only_in_training(run, module, reference, x, where, seed=601 + index)
            else:  # p = 0: training mode drops nothing, as in the book's class
                module.train()
                with torch.no_grad():
                    torch.manual_seed(601)
                    agrees(run(x), reference.train()(x), where + _WRONG_RATE[0])

    def gradients_flow(cls: type) -> None:
        module, _, x, where, _ = _trial(spec, cls, _HEAD_SIZES[1], 0.0, 700, qkv_bias=True)
        out = _forward(spec, module.train(), x, where)
        (out * torch.randn(out.shape)).sum().backward()
        gradients_reach([(n, p.grad) for n, p in module.named_parameters()], no_gradient)

    def mask_is_a_buffer(cls: type) -> None:
        mask_buffer(_trial(spec, cls, _HEAD_SIZES[1], 0.0, 800)[0])

    contracts = (equal_to_reference, dropout_in_training_only, gradients_flow)
    return contracts + (() if spec.heads else (mask_is_a_buffer,))


def head_class_passed(spec: CausalClass, passed: Text) -> Callable[[type], Text]:
    """The PASS message of a wrapper of heads (whose brief asks for no buffer), with a note when
    its heads keep no mask buffer (lesson 04's class needs none: ``mask_buffer`` is one of its
    contracts, so its PASS message is the plain text)."""
    return lambda cls: (
        passed + mask_note(lambda: cls(*spec.args(3, 2, 6, 0.0)), unbuilt=MASK_IN_INIT)
    )


check_causal_attention_class = build_checker(
    "check_causal_attention_class",
    BuildSpec(
        name=tr("build CausalAttention", "动手实现 CausalAttention"),
        missing_what=tr(
            "your class (the class itself, e.g. MyCausalAttention)",
            "你的类（类本身，例如 MyCausalAttention）",
        ),
        instance_hint=pass_the_class("check_causal_attention_class(MyClass)"),
        not_class_hint=NOT_A_MODULE_CLASS,
        contracts=head_contracts(CausalClass(CausalAttention, 0)),
        passed=tr(
            "correct: equal to mh.CausalAttention with the same weights at every size, "
            "causal, dropout only in training (at the book's place), and every weight gets "
            "a gradient.",
            "正确：各种尺寸下都与权重相同的 mh.CausalAttention 一致，满足因果性，"
            "dropout 只在训练时起作用（而且在书中的位置），每个权重都能得到梯度。",
        ),
    ),
    """Contract tests for the learner's ``CausalAttention`` (the book's, with dropout).

    ``cls(d_in, d_out, context_length, dropout, qkv_bias=False)`` with ``forward(x)`` for x
    (b, T, d_in) -> (b, T, d_out). Weights are copied in from ``mh.CausalAttention`` by the book's
    names; a wrong output is matched against the typical mistakes (one or two at once).
    """,
)
