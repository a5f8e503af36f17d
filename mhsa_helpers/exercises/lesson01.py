"""Checkers for lesson 01, simplified self-attention (简化的自注意力).

* ``check_context_vector_new_token(answer)`` -- the context vector of a seventh token, "forward",
  appended to the book's six (its embedding is ``NEW_TOKEN_EMBEDDING``), over all seven tokens.
* ``check_softmax_rows(answer)`` -- a row-wise softmax function for (rows, cols) matrices that
  stays finite when one row is huge and another very negative.
* ``check_attention_received(answer)`` -- the column sums of the (6, 6) weights: how much
  attention each token receives in total.
* ``check_prediction_self_match(prediction, reveal=False)`` -- a predict-then-run moment: for how
  many of the six tokens is the largest score the one with itself?
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import torch

from ..data import book_inputs
from ..i18n import Text, tr
from ._build import (
    UNWRITTEN_FUNCTION,
    BuildSpec,
    ContractError,
    ForwardTexts,
    build_checker,
    call_forward,
    never_calls,
)
from ._kinds import Prediction, prediction_checker, tensor_answer
from ._result import CheckResult, exercise, shown

__all__ = [
    "NEW_TOKEN_EMBEDDING",
    "check_attention_received",
    "check_context_vector_new_token",
    "check_prediction_self_match",
    "check_softmax_rows",
]

#: The made-up 3-D embedding of "forward", the seventh token of lesson 01's exercise.
NEW_TOKEN_EMBEDDING = (0.60, 0.40, 0.20)


_CONTEXT_VECTOR_NEW_TOKEN = tr(
    "context vector of the new token 'forward'", "新词元 'forward' 的上下文向量"
)


@exercise(_CONTEXT_VECTOR_NEW_TOKEN)
def check_context_vector_new_token(answer: object) -> CheckResult:
    """The context vector of "forward" (``NEW_TOKEN_EMBEDDING``) over all seven tokens, (3,)."""
    inputs = book_inputs()  # (6, 3)
    new = torch.tensor(NEW_TOKEN_EMBEDDING)  # (3,)
    seven = torch.cat([inputs, new.unsqueeze(0)])  # (7, 3)
    scores = seven @ new  # (7,)
    return tensor_answer(
        _CONTEXT_VECTOR_NEW_TOKEN,
        answer,
        torch.softmax(scores, dim=0) @ seven,  # (3,)
        what=tr("a tensor: the context vector of the new token", "一个张量：新词元的上下文向量"),
        wrong={
            torch.softmax(inputs @ new, dim=0) @ inputs: tr(
                "you mixed only the book's six tokens: 'forward' is part of the sentence "
                "too, so stack it under them first (torch.cat) and let it attend to all seven.",
                "你只混合了书中的 6 个词元。'forward' 也是句子的一部分，"
                "先用 torch.cat 把它接在它们下面，"
                "再让它关注全部 7 个词元。",
            ),
            (scores / scores.sum()) @ seven: tr(
                "you used sum normalization; use torch.softmax(scores, dim=0) for the weights.",
                "你用的是除以总和的归一化，权重请用 torch.softmax(scores, dim=0) 计算。",
            ),
            scores @ seven: tr(
                "the scores are not normalized yet: apply torch.softmax before the weighted sum.",
                "注意力分数还没有归一化。求加权和之前先做 torch.softmax。",
            ),
            new: tr(
                "that is the embedding of 'forward' itself; its context vector mixes all seven.",
                "这是 'forward' 自己的嵌入向量，它的上下文向量要混合全部 7 个词元。",
            ),
        },
        hint=tr(
            "stack the seven embeddings (7, 3), score them against 'forward', softmax the "
            "seven scores, then take the weighted sum of the seven embeddings.",
            "把 7 个嵌入向量堆成 (7, 3)，分别与 'forward' 求点积得到注意力分数，"
            "对这 7 个分数做 softmax，再对 7 个嵌入向量求加权和。",
        ),
        shapes={
            (7, 3): tr(
                "that is the whole (7, 3) context matrix: take the row of 'forward'.",
                "这是整个 (7, 3) 的上下文矩阵，请取出 'forward' 那一行。",
            ),
        },
    )


_ROWS_CASES = (
    (
        tr("the journey scores (6, 6)", "书中 journey 句子的 (6, 6) 注意力分数"),
        (book_inputs() @ book_inputs().T).tolist(),
    ),
    (
        tr("a (2, 3) matrix of small scores", "一个分数都很小的 (2, 3) 矩阵"),
        [[0.5, -1.0, 2.0], [1.5, 0.0, 0.25]],
    ),
    (
        tr("a matrix with a huge row", "一个有一行数值极大的矩阵"),
        [[1000.0, 1001.0, 999.0], [0.1, 0.2, 0.3]],
    ),
    (tr("rows far apart", "一个各行数值相差极远的矩阵"), [[1000.0, 1001.0], [-1000.0, -1001.0]]),
    # exp overflows float32 past 88: only the row MAXIMUM brings every exponent to <= 0 (the row
    # minimum, mean, median or first entry leave one of 100 or more).
    (
        tr("rows with a wide spread", "一个行内数值相差很大的矩阵"),
        [[0.0, 100.0, 200.0], [300.0, 0.0, 150.0], [-200.0, 0.0, 200.0], [0.0, 0.0, 200.0]],
    ),
)


_ROWS_CALL = ForwardTexts(
    call=tr("on {label} your function", "在{label}上，你的函数"),
    not_written=UNWRITTEN_FUNCTION,
    input_changed=tr(
        "on {label} your function changed its input x in place (x -= ..., x.sub_(...)): the "
        "caller's scores are then gone. Compute a new tensor instead (x - ...).",
        "在{label}上，你的函数原地修改了输入 x（x -= ...、x.sub_(...)），"
        "调用者的分数就没了。请改为计算一个新张量（x - ...）。",
    ),
    shape=tr(
        "on {label} it returned shape {got}, not {want}: keep one weight per score (keepdim=True "
        "on the row max and the row sum).",
        "在{label}上，它返回的形状是 {got}，而不是 {want}。每个分数都要对应一个权重"
        "（求行最大值和行总和时都加上 keepdim=True）。",
    ),
)


def _row_max_dropped(on: Text) -> Callable[[RuntimeError, tuple[object, ...]], Text | None]:
    """The reading of a size mismatch on the input ``on`` names ("on a matrix with a huge row"):
    the row maximum lost its dimension."""

    def read(error: RuntimeError, args: tuple[object, ...]) -> Text | None:
        if "return_types" in str(error):
            return on + tr(
                " your function subtracted what x.max(dim=-1, keepdim=True) returns, and that "
                "is a pair (values, indices), not a tensor: take its .values (the tools cell "
                "above shows it).",
                "上，你的函数减去的是 x.max(dim=-1, keepdim=True) 的返回值。"
                "它是一对结果（values, indices），不是张量。"
                "请取它的 .values（见上面的工具单元格）。",
            )
        if "size of tensor" not in str(error) and "must match" not in str(error):
            return None
        kind = type(error).__name__
        return on + tr(
            f" it raised {kind}: {error}. x.max(dim=-1) drops the row dimension; "
            "keep it with keepdim=True so that it broadcasts per row.",
            f"上，它抛出了 {kind}：{error}。"
            "x.max(dim=-1) 会去掉行这一维，"
            "用 keepdim=True 把这一维保留下来，"
            "才能逐行广播。",
        )

    return read


def _rows_on_every_case(fn: Callable[..., object]) -> None:
    """``fn(x)`` is the row softmax of every case, finite at any scale."""
    for label, values in _ROWS_CASES:
        x = torch.tensor(values, dtype=torch.float32)
        on = tr("on ", "在") + label
        texts = replace(_ROWS_CALL, runtime=_row_max_dropped(on))
        got = call_forward(fn, (x.clone(),), texts, want_shape=tuple(x.shape), label=label)
        out, want = got.detach().to(torch.float64).cpu(), torch.softmax(x, dim=-1).double()
        # 5e-5: a stable softmax through logsumexp is 2e-5 off in float32 at scores near 1000
        if torch.allclose(out, want, atol=5e-5, rtol=0):
            continue
        if not torch.isfinite(got).all():
            # the softmax as written with one maximum for the whole matrix, and with none
            one_max, naive = (
                torch.exp(z) / torch.exp(z).sum(dim=-1, keepdim=True) for z in (x - x.max(), x)
            )
            overflow = torch.isnan(naive).any() and torch.equal(got.isfinite(), naive.isfinite())
            if not overflow and torch.equal(got.isfinite(), one_max.isfinite()):
                raise ContractError(
                    on
                    + tr(
                        " it returned nan: one maximum for the whole matrix is not enough, "
                        "a row far below it underflows to 0 / 0. Subtract each row's own maximum "
                        "(max over dim=-1, kept as a column with keepdim=True).",
                        "上，它返回了 nan。整个矩阵只减去一个最大值是不够的，"
                        "远低于它的那一行会下溢成 0 / 0。请让每一行减去它自己的最大值"
                        "（在 dim=-1 上取 max，并用 keepdim=True 保留成一列）。",
                    ),
                )
            values_got = shown(got.tolist())
            raise ContractError(
                on
                + tr(
                    f" it returned {values_got}: exp overflowed. Subtract each row's "
                    "maximum before torch.exp.",
                    f"上，它返回了 {values_got}，说明 exp 溢出了。在 torch.exp 之前，"
                    "先让每一行减去它的最大值。",
                ),
            )
        if torch.allclose(out, torch.softmax(x, dim=0).double(), atol=1e-6, rtol=0):
            raise ContractError(
                on
                + tr(
                    " the columns sum to 1, not the rows: use dim=-1.",
                    "上，和为 1 的是每一列，而不是每一行。请用 dim=-1。",
                ),
            )
        row = int((out - want).abs().amax(dim=-1).argmax())
        values_got, values_want = shown(got[row].tolist()), shown(want[row].tolist())
        raise ContractError(
            on
            + tr(
                f" row {row} is {values_got}, expected {values_want}: "
                "subtract the row maximum (keepdim=True), exp, divide by the row sum "
                "(keepdim=True).",
                f"上，第 {row} 行是 {values_got}，"
                f"应为 {values_want}。先减去每行的最大值（keepdim=True）"
                "，再取 exp，最后除以每行的和（keepdim=True）"
                "。",
            ),
        )


def _never_softmax(fn: Callable[..., object]) -> None:
    """The brief's rule: the function never calls torch's softmax (in any of its spellings)."""
    x = torch.tensor(_ROWS_CASES[0][1], dtype=torch.float32)
    never_calls(fn, (x,), {"softmax", "log_softmax", "_softmax", "special_softmax"}, _CALLS_SOFTMAX)


_CALLS_SOFTMAX = tr(
    "the numbers are right, but your function calls torch's softmax, and the exercise is to "
    "write it: build it from torch.exp, a row maximum and a row sum.",
    "数值是对的，但你的函数调用了 torch 自带的 softmax，而这个练习要你自己写它："
    "请用 torch.exp、每行的最大值和每行的和来实现。",
)


check_softmax_rows = build_checker(
    "check_softmax_rows",
    BuildSpec(
        name=tr("row-wise stable softmax", "逐行的数值稳定 softmax"),
        answer="function",
        function_name="softmax_rows",
        contracts=(_rows_on_every_case, _never_softmax),
        passed=tr(
            "correct: every row sums to 1 and stays finite, whatever its scale.",
            "正确：无论数值多大，每一行的和都是 1，而且都是有限值。",
        ),
    ),
    """A function ``f(x)`` for a 2-D float32 ``x``: softmax of every row, finite on any scale.""",
)


_ATTENTION_RECEIVED = tr("attention each token receives", "每个词元得到的注意力")


@exercise(_ATTENTION_RECEIVED)
def check_attention_received(answer: object) -> CheckResult:
    """The column sums of the (6, 6) simplified attention weights, shape (6,)."""
    inputs = book_inputs()
    scores = inputs @ inputs.T  # (6, 6)
    attn_weights = torch.softmax(scores, dim=-1)  # (6, 6)

    return tensor_answer(
        _ATTENTION_RECEIVED,
        answer,
        attn_weights.sum(dim=0),
        what=tr("a tensor: one number per token", "一个张量：每个词元一个数"),
        wrong={
            attn_weights.sum(dim=-1): tr(
                "those are the row sums (dim=-1): what each token GIVES, always 1. What a "
                "token receives is in its column: sum over the queries, dim=0.",
                "这是每一行的和（dim=-1），即每个词元分给别人的注意力，"
                "总是 1。一个词元得到的注意力在它那一列，"
                "要对所有查询求和，即 dim=0。",
            ),
            scores.sum(dim=0): tr(
                "those are sums of the raw scores; sum the softmax weights instead.",
                "这是原始注意力分数的和，请改为对 softmax 之后的注意力权重求和。",
            ),
        },
        hint=tr(
            "what token j receives is in column j of the weights: add up every query's weight "
            "on it, a sum over the rows (the query dimension).",
            "词元 j 得到的注意力在权重的第 j 列：把每个查询给它的权重加起来，"
            "也就是沿行（查询那一维）求和。",
        ),
    )


def _self_matches() -> int:
    """For how many of the six tokens the largest dot product is the one with itself."""
    inputs = book_inputs()
    scores = inputs @ inputs.T  # (6, 6)
    return int((scores.argmax(dim=-1) == torch.arange(6)).sum())


check_prediction_self_match = prediction_checker(
    "check_prediction_self_match",
    Prediction(
        name=tr("prediction: tokens most similar to themselves", "预测：与自己最相似的词元"),
        what=tr("a whole number: how many tokens", "一个整数，即这样的词元有几个"),
        actual=_self_matches,
        shows=lambda count: tr(f"{count} of 6", f"6 个词元中有 {count} 个"),
        explain=tr(
            "A dot product grows with the length of the vectors, not only with their "
            "direction: a longer neighbour pointing roughly the same way can beat the token "
            "itself.",
            "点积不仅取决于向量的方向，还会随向量的长度增大。"
            "一个方向大致相同、但更长的邻居，点积可能比词元和它自己的还大。",
        ),
        whole=True,
        between=(0, 6),
    ),
    "How many of the six tokens have their largest dot product with themselves? (0..6).",
)
