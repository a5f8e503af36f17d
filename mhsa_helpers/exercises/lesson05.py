"""Checkers for lesson 05, multi-head attention (多头注意力) as a wrapper of separate heads.

* ``check_wrapper_parameters(answer)`` -- the parameters of a wrapper with d_in=768, 12 heads of
  d_out=64 and no bias: 12 * 3 * 768 * 64.
* ``check_head_output(answer)`` -- the output of the head built right after the book's 3-head
  wrapper (seed 123, d_out=2): the weights drawn fourth, a 4-head wrapper's head 4.
* ``check_matmul_count(answer)`` -- the multiply-adds (the work, not the calls) of one forward
  pass of a 12-head wrapper (d_in=768, d_out=64 per head) on a batch of 8 sequences of 100 tokens.
* ``check_matmul_prediction(prediction)`` -- the predict-then-run moment: matmul calls of a
  2-head wrapper.
"""

from __future__ import annotations

import torch

from ..attention.multihead import MultiHeadAttentionWrapper
from ..data import load_journey
from ..i18n import tr
from ._build import (
    NOT_A_MODULE_CLASS,
    BuildSpec,
    build_checker,
    pass_the_class,
)
from ._kinds import (
    Number,
    PredictionBeforeRun,
    number_checker,
    prediction_checker,
    tensor_answer,
)
from ._parse import not_a_whole_number
from ._result import CheckResult, exercise
from .lesson04 import CausalClass, head_class_passed, head_contracts

__all__ = [
    "check_head_output",
    "check_matmul_count",
    "check_matmul_prediction",
    "check_wrapper_class",
    "check_wrapper_parameters",
]


_PER_HEAD = 3 * 768 * 64  # W_query, W_key, W_value of one head: (768, 64) each, no bias

check_wrapper_parameters = number_checker(
    "check_wrapper_parameters",
    Number(
        name=tr("parameters of the 768-wide 12-head wrapper", "输出宽 768 的 12 头包装器的参数量"),
        what=tr("a whole number of parameters", "一个整数：参数的个数"),
        expected=12 * _PER_HEAD,
        right=tr(
            "correct: each head holds three 768 x 64 matrices, 147,456 numbers; 12 heads hold "
            "1,769,472, as many as three 768 x 768 matrices: the heads split the width.",
            "正确：每个头有三个 768 x 64 的矩阵，共 147,456 个数。12 个头共 1,769,472 个，"
            "和三个 768 x 768 的矩阵一样多：各个头分的是同一个宽度。",
        ),
        wrong={
            _PER_HEAD: tr(
                "that is one head; the wrapper holds 12 of them, each with its own weights.",
                "这是一个头的参数量。包装器里有 12 个头，各有各的权重。",
            ),
            (12 * 768 * 64, 768 * 64): tr(
                "each head has three projections: W_query, W_key and W_value.",
                "每个头有三个投影：W_query、W_key 和 W_value。",
            ),
            (4 * 768 * 768, 4 * 768 * 768 + 768): tr(
                "the wrapper has no output projection; it only concatenates the heads.",
                "包装器没有输出投影，它只是把各个头拼接起来。",
            ),
            (12 * _PER_HEAD + 3 * 768, 12 * _PER_HEAD + 12 * 3 * 64): tr(
                "qkv_bias is False by default: the projections have no bias.",
                "qkv_bias 默认是 False，这些投影没有偏置。",
            ),
            12 * 3 * 768 * 768: tr(
                "each head is d_out = 64 wide, not 768: the 12 heads share the 768 columns.",
                "每个头宽 d_out = 64，不是 768。这 768 列是 12 个头分的。",
            ),
        },
        otherwise=tr(
            "count one head's weight matrices (d_in x d_out each), then all the heads.",
            "先数一个头的权重矩阵（每个 d_in x d_out），再算所有的头。",
        ),
        whole=True,
        kind=not_a_whole_number,
    ),
    """The 12-head wrapper with d_in = 768, d_out = 64: 12 * 3 * 768 * 64 = 1,769,472.""",
)


check_matmul_prediction = prediction_checker(
    "check_matmul_prediction",
    PredictionBeforeRun(
        name=tr(
            "prediction: matmul calls of a 2-head wrapper", "预测：2 个头的包装器调用矩阵乘法的次数"
        ),
        expected=2 * (3 + 2),
        right=tr("right -- the next cell counts them.", "对了！下一个单元格会把它们数出来。"),
        wrong=tr(
            "not what happens. Run the next cell, then find in one head's forward (your "
            "MyCausalAttention of lesson 04) every nn.Linear call and every @ -- and remember "
            "the wrapper runs each head's forward.",
            "实际情况不是这样。运行下一个单元格，然后在一个头的 forward 里（你在第 04 课写的 "
            "MyCausalAttention）找出每一次 nn.Linear 调用和每一个 @。"
            "别忘了，包装器会运行每个头的 forward。",
        ),
        whole=True,
    ),
    "Prediction: matmul calls (``linear`` + ``@``) in one forward pass of a 2-head wrapper.",
)


def _wrapper_output() -> torch.Tensor:
    """The output (2, 6, 8) of the book's 4-head wrapper (seed 123, d_out=2) on the batch."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(123)
        wrapper = MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=4)
    with torch.no_grad():
        return wrapper(load_journey().batch)  # (2, 6, 3) -> (2, 6, 4 * 2)


_HEAD_OUTPUT = tr("the head built right after a 3-head wrapper", "紧接在 3 个头的包装器之后建的头")


@exercise(
    _HEAD_OUTPUT,
    what=tr(
        "the output on batch of the mh.CausalAttention built right after the wrapper",
        "紧接在包装器之后建的 mh.CausalAttention 在 batch 上的输出",
    ),
)
def check_head_output(answer: object) -> CheckResult:
    """The extra head's output, shape (2, 6, 2): after seed 123 a 3-head wrapper (d_out=2), then
    one more ``CausalAttention(3, 2, 6, 0.0)``, whose weights are a 4-head wrapper's head 4."""
    out = _wrapper_output()  # (2, 6, 8): the first three heads are the 3-head wrapper's
    return tensor_answer(
        _HEAD_OUTPUT,
        answer,
        out[..., 6:8],  # (2, 6, 2): the weights drawn fourth
        what=tr("a (2, 6, 2) tensor", "一个形状为 (2, 6, 2) 的张量"),
        wrong={
            out[..., 0:2]: tr(
                "that is the output of the FIRST head drawn after torch.manual_seed(123) (the "
                "wrapper's head 1): was the seed set again just before the extra head? Set it "
                "once, before the wrapper; the generator then goes on from where the wrapper's "
                "heads left it.",
                "这是设好 torch.manual_seed(123) 之后第一个抽权重的头（包装器的头 1）的输出。"
                "是不是在建这个新头之前又设了一次种子？种子只在包装器之前设一次，"
                "随机数生成器会从包装器的头用完的地方接着往下抽。",
            ),
            out[..., 2:4]: tr(
                "that is the wrapper's head 2: the answer is the head built after the wrapper, "
                "not one of its heads.",
                "这是包装器的头 2。答案是在包装器之后另建的头，不是包装器里的头。",
            ),
            out[..., 4:6]: tr(
                "that is the 3-head wrapper's head 3, its last head (or the head built after a "
                "2-head wrapper: build the wrapper with 3 heads): the answer is the head built "
                "after the wrapper, whose weights are drawn after all three of its heads.",
                "这是 3 个头的包装器的头 3，也就是它的最后一个头"
                "（或者你的包装器只有 2 个头，之后建的头正是它：请把包装器建成 3 个头）。"
                "答案是在包装器之后另建的头，它的权重是在包装器的三个头全部抽完之后才抽的。",
            ),
        },
        hint=tr(
            "these numbers are not the extra head's output: after torch.manual_seed(123) every "
            "head draws its weights from the generator in turn, the wrapper's three heads first, "
            "then the extra mh.CausalAttention(3, 2, 6, 0.0), with no second seed in between.",
            "这些数不是新建的那个头的输出。设好 torch.manual_seed(123) 之后，每个头依次从随机数"
            "生成器中抽权重：先是包装器的三个头，然后才是另建的 mh.CausalAttention(3, 2, 6, 0.0)，"
            "中间不再设种子。",
        ),
        shapes={
            (2, 6, 6): tr(
                "shape (2, 6, 6) is the 3-head wrapper's whole output (or one head's attention "
                "weights); the answer is the output of the head built after the wrapper, "
                "(2, 6, 2).",
                "形状 (2, 6, 6) 是 3 个头的包装器的整个输出（或一个头的注意力权重）。"
                "答案是在包装器之后另建的那个头的输出，形状 (2, 6, 2)。",
            ),
        },
    )


# 12 heads, d_in=768, d_out=64 per head, x (8, 100, 768): multiply-adds of one forward pass.
_B, _T, _D_IN, _HD, _H = 8, 100, 768, 64, 12
_PROJECTIONS = 3 * _H * _B * _T * _D_IN * _HD  # W_query, W_key, W_value of every head
_ATTENTION = 2 * _H * _B * _T * _T * _HD  # Q @ K^T and weights @ V of every head
_MACS = _PROJECTIONS + _ATTENTION  # 1,538,457,600

check_matmul_count = number_checker(
    "check_matmul_count",
    Number(
        name=tr(
            "multiply-adds of a 12-head wrapper on a (8, 100, 768) batch",
            "12 个头的包装器处理 (8, 100, 768) 批次时的乘加次数",
        ),
        what=tr("the number of multiply-adds (an int)", "乘加的次数（一个整数）"),
        expected=_MACS,
        right=tr(
            f"correct: {_PROJECTIONS:,} in the projections + {_ATTENTION:,} in Q @ K^T and "
            f"weights @ V = {_MACS:,}. Unlike the number of calls, the work grows with the batch "
            "and the sequence length.",
            f"正确：投影 {_PROJECTIONS:,} 次 + Q @ K^T 和 weights @ V 共 {_ATTENTION:,} 次 = "
            f"{_MACS:,}。与调用次数不同，计算量随批次大小和序列长度增长。",
        ),
        wrong={
            (60, 5): tr(
                "that counts the CALLS (nn.Linear and @). Here count the work inside them: "
                "the multiply-adds each product does.",
                "这数的是调用次数（nn.Linear 和 @）"
                "。这里要数的是调用内部的工作量，即每个乘积做了多少次乘加。",
            ),
            2 * _MACS: tr(
                "that is twice the answer: FLOP counters count a multiply and an add as 2 "
                "operations; a multiply-add is one.",
                "这是答案的两倍。FLOP 计数器把一次乘法和一次加法算作 2 次运算，"
                "而这里一次乘加只算一次。",
            ),
            _PROJECTIONS: tr(
                "these are the projections only; each head also computes Q @ K^T and weights @ V.",
                "这只是投影部分，每个头还要计算 Q @ K^T 和 weights @ V。",
            ),
            _ATTENTION: tr(
                "these are the attention products only; add the three projections of each head.",
                "这只是注意力部分的乘积，还要加上每个头的三次投影。",
            ),
            _MACS // _B: tr(
                "that is one sequence; the batch holds 8, and every product works on all of them.",
                "这只是一个序列。批次里有 8 个，每个乘积都要处理全部序列。",
            ),
            _MACS // _H: tr(
                "that is one head; the wrapper runs 12.",
                "这只是一个头，包装器要运行 12 个头。",
            ),
            _PROJECTIONS // 3 + _ATTENTION: tr(
                "only one projection per head is counted; each head has W_query, W_key and "
                "W_value.",
                "每个头只算了一次投影，每个头都有 W_query、W_key 和 W_value。",
            ),
        },
        otherwise=tr(
            "count head by head: a (b, T, n) @ (n, m) product does one multiply-add per entry "
            "of its (b, T, m) output and per term of the sum over n.",
            "按每个头来数：一个 (b, T, n) @ (n, m) 乘积，对输出 (b, T, m) 的每个元素、"
            "对 n 上求和的每一项，各做一次乘加。",
        ),
        whole=True,
        kind=not_a_whole_number,
    ),
    "12 heads, d_in=768, d_out=64, x (8, 100, 768): 3 projections + Q @ K^T + weights @ V in "
    "multiply-adds, 1,538,457,600.",
)


# -- build it: the wrapper of causal heads, on lesson 04's contracts -----------------------------

_WRAPPER = CausalClass(MultiHeadAttentionWrapper, 2)

check_wrapper_class = build_checker(
    "check_wrapper_class",
    BuildSpec(
        name=tr("build MultiHeadAttentionWrapper", "动手实现 MultiHeadAttentionWrapper"),
        missing_what=tr(
            "your class (the class itself, e.g. MyWrapper)", "你的类（类本身，例如 MyWrapper）"
        ),
        instance_hint=pass_the_class("check_wrapper_class(MyWrapper)"),
        not_class_hint=NOT_A_MODULE_CLASS,
        contracts=head_contracts(_WRAPPER),
        passed=head_class_passed(
            _WRAPPER,
            tr(
                "correct: 2 causal heads side by side, equal to mh.MultiHeadAttentionWrapper with "
                "the same weights at every size, dropout only in training, and every weight gets "
                "a gradient.",
                "正确：2 个因果注意力头并排拼接，各种尺寸下都与权重相同的 "
                "mh.MultiHeadAttentionWrapper 一致，dropout 只在训练时起作用，"
                "每个权重都能得到梯度。",
            ),
        ),
    ),
    """Contract tests for the learner's ``MultiHeadAttentionWrapper``.

    ``cls(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`` holding
    ``self.heads`` (an ``nn.ModuleList`` of causal heads with W_query, W_key, W_value), with
    ``forward(x)`` for x (b, T, d_in) -> (b, T, num_heads * d_out). Checked with 2 heads against
    ``mh.MultiHeadAttentionWrapper`` after copying the weights by the book's names.
    """,
)
