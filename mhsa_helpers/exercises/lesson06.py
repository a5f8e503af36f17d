"""Checkers for lesson 06, multi-head attention with split matrices (one big W, split into heads).

* ``check_head_dim(answer)`` -- head_dim of the largest GPT-2 (d_out=1600, 25 heads).
* ``check_mha_parameter_count(answer)`` -- the inverse of the parameter count: the width d of a
  ``MultiHeadAttention`` (d_in = d_out = d, ``qkv_bias=True``) with 9,443,328 parameters.
* ``check_split_into_heads(answer, x)`` -- one sequence (T, d_out), without the batch axis the
  lesson splits, into 3 heads: (num_heads, T, head_dim).
* ``check_split_matmul_prediction(prediction)`` -- the predict-then-run moment: how many matmul
  calls a 12-head ``MultiHeadAttention`` makes.
* ``check_build_multihead(cls)`` -- the learner's whole ``MultiHeadAttention`` class, run through
  contract tests (shapes at several sizes, causality, rows summing to 1, equality with
  ``mh.MultiHeadAttention`` after copying the weights by the book's names, dropout in train mode
  only, gradients); a wrong class is matched against the typical mistakes, which the hint names.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

from ..attention.multihead import MultiHeadAttention
from ..data import load_journey, reference
from ..i18n import Text, tr
from ._build import (
    MISTAKE_HINTS,
    MODULE_FORWARD,
    NOT_A_MODULE_CLASS,
    BuildSpec,
    ContractError,
    agrees,
    attempt,
    book_forward,
    build_checker,
    call_forward,
    causal,
    change_from,
    construct,
    dropout_only_in_training,
    first_line,
    is_view_error,
    load_by_names,
    mask_buffer,
    name_mistake,
    no_gradient,
    not_a_known_mistake,
    on_x,
    pass_the_class,
    rows_sum_to_one,
)
from ._kinds import (
    Number,
    PredictionBeforeRun,
    number_checker,
    prediction_checker,
    tensor_answer,
)
from ._parse import not_a_whole_number, tensor_kind_hint
from ._result import CheckResult, exercise

__all__ = [
    "check_build_multihead",
    "check_head_dim",
    "check_mha_parameter_count",
    "check_split_into_heads",
    "check_split_matmul_prediction",
]


_AN_INT = tr(
    "head_dim is a count, an int, and that is a float: divide with //, d_out // num_heads "
    "(view and the layer sizes take ints).",
    "head_dim 是一个个数，应该是整数，而这是浮点数。请用整除 //，即 d_out // num_heads"
    "（view 和层的尺寸都只接受整数）。",
)

check_head_dim = number_checker(
    "check_head_dim",
    Number(
        name=tr("head_dim for d_out=4096, 32 heads", "d_out=4096、32 个头时的 head_dim"),
        what=tr("an int: the width of each head", "一个整数：每个头的宽度"),
        expected=128,
        right=tr(
            "correct: 4096 // 32 = 128, twice GPT-2's head width of 64.",
            "正确：4096 // 32 = 128，是 GPT-2 每头宽度 64 的两倍。",
        ),
        wrong={
            4096 * 32: tr(
                "in MultiHeadAttention d_out is the TOTAL width: divide it by the heads.",
                "在 MultiHeadAttention 中，d_out 是所有头加起来的宽度，要把它除以头数。",
            ),
            4096: tr(
                "4096 is the total width d_out; each of the 32 heads gets a slice.",
                "4096 是总宽度 d_out，32 个头各分到其中一段。",
            ),
            64: tr(
                "64 is GPT-2's head width; this model splits a different d_out.",
                "64 是 GPT-2 的每头宽度，这个模型拆分的是另一个 d_out。",
            ),
        },
        otherwise=tr(
            "head_dim = d_out // num_heads.", "head_dim = d_out // num_heads，即总宽度除以头数。"
        ),
        whole=True,
        kind=not_a_whole_number,
        screen=lambda answer: _AN_INT if isinstance(answer, float) else None,
    ),
    "A Llama-2-7B-sized block: d_out = 4096 split over 32 heads gives head_dim = 128.",
)


_MHA_PARAMETERS = 9_443_328
_D = 1536  # 4 * 1536**2 + 4 * 1536 == _MHA_PARAMETERS


def _between(low: float, high: float) -> Callable[[float], bool]:
    """A known wrong answer that may come out rounded or not: any value in ``(low, high)``."""
    return lambda value: low < value < high


check_mha_parameter_count = number_checker(
    "check_mha_parameter_count",
    Number(
        name=tr(
            "the width d of a MultiHeadAttention from its parameter count",
            "由参数量倒推 MultiHeadAttention 的宽度 d",
        ),
        what=tr("an int: the width d", "一个整数：宽度 d"),
        expected=_D,
        right=tr(
            f"correct: d = {_D}, and 4 * {_D}^2 + 4 * {_D} = {_MHA_PARAMETERS:,}.",
            f"正确：d = {_D}，4 * {_D}^2 + 4 * {_D} = {_MHA_PARAMETERS:,}。",
        ),
        wrong={
            lambda value: value < 0: tr(
                "d is a width, so it is positive; of the two solutions, take that one.",
                "d 是宽度，一定是正数。两个解里取正的那个。",
            ),
            _between(_D, _D + 0.6): tr(
                "that d fits a block whose W_query, W_key and W_value have no bias. With "
                "qkv_bias=True each of them has one too: count them, and d comes out whole.",
                "这个 d 对应的是 W_query、W_key、W_value 没有偏置的模块。qkv_bias=True 时"
                "它们各有一个偏置。把偏置算进去，d 就是整数。",
            ),
            _between(2 * _D - 2, 2 * _D + 2): tr(
                "that is the width of ONE square matrix with this many numbers; the block "
                "has four weight matrices (plus biases) sharing them.",
                "这是只用一个方阵装下这么多数时的宽度。"
                "而这些参数要分给模块里的四个权重矩阵（还有偏置）。",
            ),
            _between(_D * 1.1, _D * 1.2): tr(
                "don't forget out_proj: it is a (d, d) Linear with a bias, like the other three.",
                "别忘了 out_proj。它和另外三个一样，是一个带偏置的 (d, d) 线性层。",
            ),
            _D // 64: tr(
                "that is num_heads (at head_dim 64), not d. The parameter count does not "
                "depend on the heads at all; the question asks for the full width d.",
                "这是 num_heads（head_dim 为 64 时），不是 d。参数量与头数无关。"
                "题目问的是总宽度 d。",
            ),
            64: tr(
                "64 is GPT-2's head_dim, the width of one head; d is the width of the whole "
                "block, all heads together.",
                "64 是 GPT-2 的 head_dim，即一个头的宽度。d 是整个模块的宽度，所有头加在一起。",
            ),
            _between(_D * _D * 0.99, _D * _D * 1.01): tr(
                "that is about the size of one (d, d) matrix, not d: d is its side.",
                "这大约是一个 (d, d) 矩阵的大小，不是 d。d 是它的边长。",
            ),
            (768, 1024, 1280, 1600): tr(  # GPT-2's widths
                f"that is a GPT-2 width from section 9; its block has a different count "
                f"than {_MHA_PARAMETERS:,}.",
                f"这是第 9 节里 GPT-2 的一个宽度，它的模块参数量不是 {_MHA_PARAMETERS:,}。",
            ),
            lambda value: not value.is_integer(): tr(
                "d is a whole number of features; count every weight and bias exactly and "
                "it comes out whole.",
                "d 是特征的个数，一定是整数。把每个权重和偏置都算准，得到的就是整数。",
            ),
        },
        otherwise=tr(
            f"a block of that width does not have {_MHA_PARAMETERS:,} parameters. Count the "
            "parameters of your d, Q/K/V biases included, and compare.",
            f"这个宽度的模块没有 {_MHA_PARAMETERS:,} 个参数。把你的 d 的参数量算出来"
            "（包括 Q/K/V 的偏置），再比较一下。",
        ),
    ),
    "``MultiHeadAttention(d, d, ..., qkv_bias=True)`` with 9,443,328 parameters: d = 1536.",
)


_SPLIT_INTO_HEADS = tr(
    "split one sequence (no batch axis) into 3 heads", "把一个序列（没有批次轴）拆分成 3 个头"
)


#: The hints for the slips of splitting one sequence into heads, in the order they are tried:
#: transpose(1, 2) after the split, the split not swapped, a plain reshape.
_SPLIT_SLIPS = (
    tr(
        "transpose(1, 2) swapped heads and head_dim: without a batch axis the tokens "
        "are axis 0, not axis 1.",
        "transpose(1, 2) 交换的是头和 head_dim。没有批次轴时，词元是第 0 维，不是第 1 维。",
    ),
    tr(
        "the heads are split; now swap the token and head axes so that the heads come first.",
        "头已经拆开了，现在交换词元轴和头轴，让头排在最前面。",
    ),
    tr(
        "viewing straight into (num_heads, T, head_dim) mixes tokens and heads: split "
        "the last axis into heads first, then move the head axis to the front.",
        "直接 view 成 (num_heads, T, head_dim) 会把词元和头混在一起。"
        "应该先把最后一维拆成多个头，再把头这一维移到最前面。",
    ),
)


@exercise(_SPLIT_INTO_HEADS)
def check_split_into_heads(answer: object, x: torch.Tensor) -> CheckResult:
    """``x`` (T, d_out), one sequence without a batch axis -> (3, T, d_out // 3).

    The lesson splits a batch (b, T, d_out); here the token axis is axis 0, so the copied
    ``view(b, T, h, hd).transpose(1, 2)`` does not apply as it is.
    """
    h = 3  # num_heads
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or x.shape[-1] % h != 0:
        raise ContractError(
            tr(
                "the second argument must be the exercise's (T, d_out) tensor x.",
                "第二个参数必须是练习中形状为 (T, d_out) 的张量 x。",
            ),
        )
    T, d_out = x.shape
    head_dim = d_out // h
    expected = x.view(T, h, head_dim).transpose(0, 1)  # (h, T, head_dim)
    if T > 1 and torch.equal(x.reshape(h, T, head_dim), expected):
        raise ContractError(
            tr(
                "pass the exercise's x: with this x a wrong split would look right.",
                "请传入练习中的 x。换成这个 x，错误的拆分看起来也会是对的。",
            ),
        )

    split = x.view(T, h, head_dim)  # (T, h, head_dim): the heads cut, not yet moved
    slips = tuple(zip((split.transpose(1, 2), split, x.reshape(h, T, head_dim)), _SPLIT_SLIPS))
    # A plain tensor equal to a slip (in x's dtype, exactly) is named by its values first: at some
    # sizes two slips share a shape, or a slip has the expected one (T == num_heads).
    if isinstance(answer, torch.Tensor) and tensor_kind_hint(answer) is None:
        for slip, slip_hint in slips:
            if answer.shape == slip.shape and not torch.equal(slip, expected):
                not_a_known_mistake(answer.detach().to(slip), [(slip, slip_hint)], atol=0.0)
    # any other tensor of the shape of a slip that is not the expected one
    shapes = {tuple(slip.shape): slip_hint for slip, slip_hint in slips[:2]}
    shapes[(1, h, T, head_dim)] = tr(
        "x has no batch axis, and the answer has none either: drop the batch of one.",
        "x 没有批次轴，答案也不应该有。请去掉这个大小为 1 的批次轴。",
    )
    return tensor_answer(
        _SPLIT_INTO_HEADS,
        answer,
        expected,
        what=tr("a tensor: x split into heads", "一个张量：拆分成多个头之后的 x"),
        hint=tr(
            "split the last axis into (num_heads, head_dim), then swap the token and head axes.",
            "先把最后一维拆成 (num_heads, head_dim)，再交换词元轴和头轴。",
        ),
        atol=0.0,
        shapes=shapes,
    )


# -- predict, then run ----------------------------------------------------------------------------


check_split_matmul_prediction = prediction_checker(
    "check_split_matmul_prediction",
    PredictionBeforeRun(
        name=tr("prediction: matmul calls with 12 heads", "预测：12 个头时调用矩阵乘法的次数"),
        expected=4 + 2,
        right=tr(
            "right -- the next cell shows it for 1, 2, 4 and 12 heads.",
            "对了！下一个单元格会展示 1、2、4 和 12 个头时的次数。",
        ),
        wrong=tr(
            "not what happens. Run the next cell, then count in `forward` how many times each "
            "`nn.Linear` and each `@` runs -- does any line run once per head?",
            "实际情况不是这样。运行下一个单元格，然后数一数 `forward` 里"
            "每个 `nn.Linear` 和每个 `@` 各执行了几次。"
            "有哪一行是每个头都要执行一次的吗？",
        ),
        whole=True,
    ),
    """Prediction: matmul calls (``linear`` + ``@``) of one forward pass of a 12-head
    ``MultiHeadAttention``. The next cell of the lesson counts them; this only judges the guess.""",
)


# -- build it: the whole MultiHeadAttention class ------------------------------------------------

# (d_in, d_out, context_length, num_heads, b, T): head_dim > 1 and != d_out, so a wrong scale
# shows; T < context_length, so an unsliced mask shows; all five sizes distinct in the first.
_SIZES = [(5, 12, 9, 3, 2, 7), (3, 2, 6, 2, 2, 6), (4, 8, 10, 4, 3, 5), (6, 6, 4, 1, 1, 4)]


def _reference_forward(
    params: dict[str, torch.Tensor], x: torch.Tensor, num_heads: int, mistake: str | None = None
) -> torch.Tensor:
    """The book's forward, or the same with one typical ``mistake`` (one of ``MISTAKES``)."""
    queries, keys, values = (  # (b, T, d_out) each
        F.linear(x, params[f"{name}.weight"], params.get(f"{name}.bias"))
        for name in ("W_query", "W_key", "W_value")
    )
    out_proj = partial(F.linear, weight=params["out_proj.weight"], bias=params["out_proj.bias"])
    return book_forward(queries, keys, values, num_heads, out_proj, mistake)


#: The constructor's arguments (d_in, d_out, context_length, dropout, num_heads) of the tests
#: that run at one size.
_ONE_SIZE = (5, 12, 9, 0.0, 3)


_PARAMETERS_NONE = tr(
    "your class has no parameters yet: create W_query, W_key, W_value and out_proj in "
    "__init__ (nn.Linear layers), then write forward following the table.",
    "你的类还没有任何参数。请先在 __init__ 中创建 W_query、W_key、W_value 和 out_proj"
    "（都是 nn.Linear 层），再按照表格写 forward。",
)
_PARAMETER_MISSING = tr(
    "no parameter named {names}: use the book's names W_query, "
    "W_key, W_value (nn.Linear(d_in, d_out, bias=qkv_bias)) and out_proj.",
    "没有名为 {names} 的参数。请使用书中的名字 W_query、"
    "W_key、W_value（nn.Linear(d_in, d_out, bias=qkv_bias)）"
    "和 out_proj。",
)
_PARAMETER_EXTRA = tr(
    "unexpected parameters {names}: the book's class has only W_query, "
    "W_key, W_value (biases only with qkv_bias=True) and out_proj.",
    "多出了参数 {names}，而书中的类只有 W_query、W_key、W_value"
    "（只有 qkv_bias=True 时才有偏置）和 out_proj。",
)


def _pair(
    cls: type, seed: int, args: tuple[int, int, int, float, int] = _ONE_SIZE, qkv_bias: bool = False
) -> tuple[nn.Module, MultiHeadAttention]:
    """After ``torch.manual_seed(seed)``: ``cls(*args, qkv_bias=...)`` holding the parameters of
    the book's class built with the same arguments (copied by the book's names, checking them),
    and that book's module."""
    torch.manual_seed(seed)
    reference = MultiHeadAttention(*args, qkv_bias=qkv_bias)
    module = construct(cls, args, {"qkv_bias": qkv_bias})
    got = {name for name, _ in module.named_parameters()}
    if not got:
        raise ContractError(_PARAMETERS_NONE, todo=True)
    if "out_proj.weight" not in got:
        raise ContractError(
            tr(
                "there is no out_proj: step 10 of the table is missing, a (d_out -> d_out) "
                "linear layer named out_proj, applied to the merged heads.",
                "没有 out_proj。表格的第 10 步还没写：一个名为 out_proj 的 (d_out → d_out) "
                "线性层，作用在合并后的各个头上。",
            )
        )
    if "out_proj.bias" not in got:
        raise ContractError(
            tr(
                "out_proj has no bias: qkv_bias is about W_query, W_key and W_value only; "
                "out_proj always has one (bias=True, nn.Linear's default).",
                "out_proj 没有偏置。qkv_bias 只管 W_query、W_key 和 W_value，"
                "out_proj 总是带偏置（bias=True，也就是 nn.Linear 的默认值）。",
            )
        )
    load_by_names(module, reference, missing=_PARAMETER_MISSING, extra=_PARAMETER_EXTRA)
    return module, reference


def _read_runtime_error(error: RuntimeError, args: tuple[object, ...]) -> Text:
    """A RuntimeError in forward, with the usual cause named (``.view``, an unsliced mask)."""
    T = cast(torch.Tensor, args[0]).shape[1]
    text, said = str(error), first_line(str(error))
    if is_view_error(error) or "use .reshape" in text.lower():
        return tr(
            ": `view` raised on a non-contiguous tensor. After the transpose the context "
            "vectors are not contiguous in memory: make them contiguous before view, or use "
            f"reshape, which copies when it must. Torch said: {said}",
            "：对非连续存储的张量调用 `view` 出错了。转置之后，上下文向量在内存中不再连续。"
            "请先让它变得连续再用 view，或者改用必要时会复制的 reshape。"
            f"PyTorch 的报错：{said}",
        )
    if "dimension 1" in text or "dimension 0" in text or "batch" in text:
        return tr(
            f" with T={T} tokens: {said}. The heads do not line up in a product: queries and "
            "keys are (b, num_heads, T, head_dim), and the keys' transpose swaps their last two "
            "dimensions only, so the batch and head dimensions stay where they are.",
            f"，输入有 T={T} 个词元：{said}。乘积里的头没有对齐：查询和键的形状是 "
            "(b, num_heads, T, head_dim)，键的转置只交换最后两维，批次和头这两维要留在原处。",
        )
    sizes = [int(n) for n in re.findall(r"\((\d+)\)", text)] or [T + 1]
    if "must match the size" in text and max(sizes) <= T:
        return tr(
            f" with T={T} tokens: {said}. The mask is (T, T), but the scores are not: the "
            "heads are still behind the tokens. After view(b, T, num_heads, head_dim), swap "
            "the tokens and the heads, transpose(1, 2), so that each head holds (T, head_dim).",
            f"，输入有 T={T} 个词元：{said}。掩码是 (T, T)，分数却不是：头还排在词元后面。"
            "view(b, T, num_heads, head_dim) 之后，要用 transpose(1, 2) 交换词元和头，"
            "让每个头拿到 (T, head_dim)。",
        )
    if "must match the size" in text or "size of tensor" in text.lower():
        return tr(
            f" with T={T} tokens: {said}. The mask is made for context_length tokens: is it "
            "cut to the input's T tokens before masking?",
            f"，输入有 T={T} 个词元：{said}。掩码是按 context_length 个词元创建的，"
            "做掩码之前把它切成输入的 T 个词元了吗？",
        )
    kind = type(error).__name__
    return tr(f": forward raised {kind}: {said}", f"：forward 抛出了 {kind}：{said}")


_FORWARD = replace(
    MODULE_FORWARD,
    runtime=_read_runtime_error,
    dtype=tr(
        ": forward returned {got_dtype} on {got_device} for a {dtype} input on "
        "{device}: keep the input's dtype and device (no .double(), no .to(...)).",
        "：输入是 {device} 上的 {dtype}，"
        "forward 却返回了 {got_device} 上的 {got_dtype}。"
        "输出要保持输入的 dtype 和设备，不要用 .double() 或 .to(...)。",
    ),
    shape=tr(
        ": output shape {got}, expected (b, T, d_out) = {want}.",
        "：输出形状是 {got}，应为 (b, T, d_out) = {want}。",
    ),
)


def _run(module: nn.Module, x: torch.Tensor, where: Text) -> torch.Tensor:
    """``module(x)``, (b, T, d_out); any other outcome is a ``ContractError`` naming it."""
    width = dict(module.named_parameters())["out_proj.weight"].shape[0]  # _pair saw to it
    return call_forward(module, (x,), _FORWARD, where=where, want_shape=(*x.shape[:2], width))


def _diagnose(
    out: torch.Tensor, reference: MultiHeadAttention, x: torch.Tensor, where: Text
) -> Text:
    """Name the typical mistake whose output ``out`` reproduces (``reference``: the book's module
    with the same weights), or describe what is wrong."""
    params = {name: p.detach() for name, p in reference.named_parameters()}
    mistake = name_mistake(out, lambda m: _reference_forward(params, x, reference.num_heads, m))
    if mistake is not None:
        return where + tr(": ", "：") + MISTAKE_HINTS[mistake]
    if not torch.isfinite(out).all():
        return where + tr(
            ": the output has NaN or inf -- is a whole row of scores masked with -inf?",
            "：输出中有 NaN 或 inf。是不是有一整行注意力分数都被 -inf 遮住了？",
        )
    return where + tr(
        ": the output differs from the book's MultiHeadAttention with the same weights. "
        "Compare your forward step by step with the table of section 4 (shapes, mask, scale, "
        "merge, out_proj).",
        "：输出与权重相同的书中 MultiHeadAttention 不一致。请对照第 4 节的表格，"
        "一步一步检查你的 forward（形状、掩码、缩放、合并、out_proj）。",
    )


def _equal_to_reference(cls: type) -> None:
    """At every size: the book's parameters loaded, the same output, and causal (changing token
    t and later ones changes no output before t)."""
    for index, (d_in, d_out, context_length, num_heads, b, T) in enumerate(_SIZES):
        args = (d_in, d_out, context_length, 0.0, num_heads)
        where = on_x(f"{cls.__name__}{args}", (b, T, d_in))
        module, reference = _pair(cls, 100 + index, args)
        dtype = torch.float64 if index == len(_SIZES) - 1 else torch.float32  # two dtypes
        module.to(dtype).eval()
        reference.to(dtype).eval()
        x = torch.randn(b, T, d_in, dtype=dtype)  # (b, T, d_in)
        t = T // 2
        leaks = tr(
            f": changing tokens {t}.. changed the outputs of earlier tokens -- the future "
            "leaks in. Mask the scores above the diagonal with -inf before the softmax.",
            f"：改动第 {t} 个及之后的词元，前面词元的输出也变了，"
            "说明未来的信息泄露进来了。请在 softmax 之前用 -inf 遮住对角线以上的注意力分数。",
        )
        with torch.no_grad():
            out = _run(module, x, where)
            agrees(out, reference(x), partial(_diagnose, out, reference, x, where))
            causal(_run(module, change_from(x, t), where), out, t, where + leaks)  # tokens t.. new


_PASSED = tr(
    "correct: right shapes at every size, causal, rows sum to 1, equal to "
    "mh.MultiHeadAttention with the same weights (eval and seeded train mode), and every "
    "parameter gets a gradient.",
    "正确：各种尺寸下形状都对，满足因果性，每行之和为 1，与权重相同的 "
    "mh.MultiHeadAttention 结果一致（评估模式和固定随机种子的训练模式都一致），"
    "而且每个参数都能得到梯度。",
)


def _check_rows_and_bias(cls: type) -> None:
    """With qkv_bias=True, values fixed to 1 and an identity out_proj, the output is each head's
    row sums of the attention weights: all 1."""
    where = tr(
        "with qkv_bias=True, values all 1 and out_proj the identity",
        "当 qkv_bias=True、所有值都为 1、out_proj 为恒等映射时",
    )
    module, _ = _pair(cls, 200, qkv_bias=True)
    with torch.no_grad():
        params = dict(module.named_parameters())
        params["W_value.weight"].zero_()
        params["W_value.bias"].fill_(1.0)
        params["out_proj.weight"].copy_(torch.eye(12))
        params["out_proj.bias"].zero_()
        out = _run(module.eval(), torch.randn(2, 7, 5), where)  # (b, T, d_out): row sums per head
    rows_sum_to_one(out, partial(_rows_hint, where), rtol=1e-5)


def _rows_hint(where: Text, out: torch.Tensor) -> Text:
    low, high = out.min().item(), out.max().item()
    return where + tr(
        " the output should be all 1 (every row of attention weights sums to 1), "
        f"but ranges from {low:.4f} to {high:.4f}. Are the weights "
        "a softmax over the last dimension, with nothing zeroed after it?",
        "，输出应该全是 1（注意力权重的每一行之和都是 1），"
        f"但实际在 {low:.4f} 到 {high:.4f} 之间。注意力权重是不是在最后一维上做的 "
        "softmax，而且之后没有再把任何元素置零？",
    )


def _check_dropout(cls: type) -> None:
    """Dropout acts on the weights in training mode only, like the book's ``nn.Dropout``."""
    where = tr("with dropout=0.5", "当 dropout=0.5 时")
    module, ref = _pair(cls, 300, (5, 12, 9, 0.5, 3))
    x = torch.randn(2, 7, 5)  # (b, T, d_in)
    dropout_only_in_training(lambda x: _run(module, x, where), module, ref, x, where, seed=301)


def _check_gradients(cls: type) -> None:
    """Every parameter gets the same gradient as in the book's class."""
    where = tr("backward through your module", "对你的模块做反向传播")
    module, ref = _pair(cls, 400, qkv_bias=True)
    x = torch.randn(2, 7, 5)  # (b, T, d_in)
    probe = torch.randn(2, 7, 12)  # (b, T, d_out): a random loss direction
    out = _run(module.train(), x, where)  # (b, T, d_out)
    want = ref.train()(x)  # (b, T, d_out)
    train_differs = tr(
        "in training mode (module.train(), dropout=0.0) the output differs from the "
        "book's class, although it matched in eval mode: forward must compute the same "
        "thing in both modes; only the dropout layer may behave differently, and it drops "
        "nothing with dropout=0.0: nn.Dropout(dropout), with the argument.",
        "在训练模式下（module.train()，"
        "dropout=0.0），输出与书中的类不一致，"
        "在评估模式下却是一致的。forward 在两种模式下必须算出同样的结果。"
        "只有 dropout 层的行为可以不同，"
        "而 dropout=0.0 时它什么都不丢弃。"
        "请写 nn.Dropout(dropout)，"
        "把参数传进去。",
    )
    agrees(out, want, train_differs)
    attempt(
        lambda: (out * probe).sum().backward(),
        tr("{where} raised {kind}: {error}", "{where}时抛出了 {kind}：{error}"),
        where=where,
    )
    (want * probe).sum().backward()
    mine = dict(module.named_parameters())
    for name, param in ref.named_parameters():
        grad = mine[name].grad
        if grad is None:
            raise ContractError(no_gradient(name))
        if param.grad is not None and not torch.allclose(grad, param.grad, atol=1e-5, rtol=1e-4):
            raise ContractError(
                tr(
                    f"{name} gets a different gradient than in the book's class.",
                    f"{name} 得到的梯度与书中的类不同。",
                )
            )


def _book_numbers_note(cls: type) -> Text:
    """Whether seed 123 then ``cls(3, 2, 6, 0.0, 2)`` gives the book's printed numbers."""
    with contextlib.suppress(Exception):  # only the note depends on what the class does here
        torch.manual_seed(123)
        with torch.no_grad():
            out = cls(3, 2, 6, 0.0, 2).eval()(load_journey().batch)  # (2, 6, 2)
        book = reference("multihead_seed123_d_out2_heads2")  # (6, 2)
        if all(torch.allclose(seq, book, atol=1e-4) for seq in out):
            return tr(
                " With torch.manual_seed(123) it prints the book's numbers too.",
                "用 torch.manual_seed(123) 时，它打印出的数也和书中的一样。",
            )
    return tr(
        " (With torch.manual_seed(123) it does not print the book's numbers: create W_query, "
        "W_key, W_value, out_proj in that order if you want them.)",
        "（用 torch.manual_seed(123) 时，"
        "它打印出的数与书中的不同。如果想得到书中的数，"
        "请按 W_query、W_key、W_value、"
        "out_proj 的顺序创建它们。）",
    )


check_build_multihead = build_checker(
    "check_build_multihead",
    BuildSpec(
        name=tr("build MultiHeadAttention", "动手实现 MultiHeadAttention"),
        missing_what=tr(
            "your class (the class itself, e.g. MyMultiHeadAttention)",
            "你的类（类本身，例如 MyMultiHeadAttention）",
        ),
        instance_hint=pass_the_class("check_build_multihead(MyClass)"),
        not_class_hint=NOT_A_MODULE_CLASS,
        contracts=(
            _equal_to_reference,
            _check_rows_and_bias,
            _check_gradients,
            _check_dropout,
            lambda cls: mask_buffer(cls(3, 4, 6, 0.0, 2)),  # the mask is a buffer
        ),
        passed=lambda cls: _PASSED + _book_numbers_note(cls),
    ),
    """Run the learner's ``MultiHeadAttention`` class through the book's contract.

    ``cls(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`` with ``forward(x)``
    for x (b, T, d_in) -> (b, T, d_out). Parameters are copied in from ``mh.MultiHeadAttention``
    by the book's names, so every test compares like with like. The global random state is left
    as it was.
    """,
)
