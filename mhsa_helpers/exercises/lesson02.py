"""Checkers for lesson 02, trainable query/key/value weights (查询、键、值).

* ``check_context_vector_3(answer)`` -- the context vector of the query "starts" (x(3)) over the
  first three tokens only (the tokens it has read), with the seed-123 matrices of the lesson.
* ``check_v1_to_v2(answer, sa_v1, inputs)`` -- the other direction: a ``SelfAttentionV2`` carrying
  the weights of a ``SelfAttentionV1`` (``weight = W.T``) and computing the same output.
* ``check_build_self_attention(cls)`` -- "build it": the learner's ``SelfAttentionV2`` class,
  ``cls(d_in, d_out, qkv_bias=False)`` with ``forward(x)`` for x (T, d_in), run through contract
  tests (parameter names and shapes, output shape, equality with ``mh.SelfAttentionV2`` after
  copying the weights, rows of weights summing to 1, gradient flow, several sizes); the typical
  mistakes are named in the hint.
* ``check_prediction_saturation(prediction, reveal=False)`` -- predict-then-run: the largest
  softmax weight of the unscaled scores of one query against six keys of size 512.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.func import functional_call

from ..attention.self_attention import SelfAttentionV2
from ..data import book_inputs
from ..i18n import Text, listed, tr
from ._build import (
    INPUT_CHANGED,
    BuildSpec,
    ContractError,
    ForwardTexts,
    agrees,
    attempt,
    build_checker,
    call_forward,
    construct,
    fill,
    forward_on_copy,
    gradients_reach,
    linear_layer,
    not_a_known_mistake,
    rows_sum_to_one,
    written,
)
from ._kinds import Prediction, prediction_checker, tensor_answer
from ._parse import plain_tensor
from ._result import CheckResult, exercise, ok

__all__ = [
    "check_build_self_attention",
    "check_context_vector_3",
    "check_prediction_saturation",
    "check_v1_to_v2",
]

_NAMES = ("W_query", "W_key", "W_value")


_CONTEXT_VECTOR_3 = tr(
    "context vector of 'starts' over the tokens it has read",
    "'starts' 在它读过的词元上的上下文向量",
)


@exercise(_CONTEXT_VECTOR_3)
def check_context_vector_3(answer: object) -> CheckResult:
    """The context vector of query x(3) "starts" over "Your", "journey" and "starts" only, (2,):
    the scaled softmax over those three scores, then the weighted sum of their three values."""
    inputs = book_inputs()  # (6, 3)
    # Same numbers as torch.manual_seed(123) then three torch.rand(3, 2), without touching the
    # global random state of the learner's notebook.
    generator = torch.Generator().manual_seed(123)
    W_query, W_key, W_value = (torch.rand(3, 2, generator=generator) for _ in _NAMES)  # (3, 2)
    keys, values = inputs @ W_key, inputs @ W_value  # (6, 2) each

    def context(query: int, seen: int = 3, scale: float = 2**0.5, cut: bool = False) -> Any:
        scores = (inputs[query] @ W_query) @ keys[: 6 if cut else seen].T / scale
        return torch.softmax(scores, dim=-1)[:seen] @ values[:seen]  # (2,)

    return tensor_answer(
        _CONTEXT_VECTOR_3,
        answer,
        context(2),
        what=tr(
            "a tensor: the context vector of 'starts'",
            "一个张量：'starts' 的上下文向量",
        ),
        wrong={
            context(2, cut=True): tr(
                "the softmax ran over all six scores, and then three weights were kept: they "
                "no longer sum to 1. The tokens 'starts' has not read must not take part in the "
                "softmax at all.",
                "softmax 是在全部六个分数上做的，之后才留下三个权重，它们的和已经不是 1。"
                "'starts' 还没读到的词元根本不能参与 softmax。",
            ),
            context(2, seen=6): tr(
                "'starts' looked at all six tokens; it has read only the first three, so only "
                "their keys and values take part.",
                "'starts' 看了全部六个词元。它只读过前三个，所以只有这三个的键和值参与计算。",
            ),
            **dict.fromkeys(
                (context(1), context(1, seen=6), context(3)),
                tr(
                    "that is the query of another token: 'starts' is x^(3), the third row of "
                    "inputs (index 2).",
                    "这用的是另一个词元的查询。'starts' 是 x^(3)，即 inputs 的第三行（索引 2）。",
                ),
            ),
            context(2, scale=1.0): tr(
                "not scaled: divide the scores by d_k**0.5 before the softmax.",
                "没有缩放。请在 softmax 之前，先把注意力分数除以 d_k**0.5。",
            ),
            context(2, scale=3**0.5): tr(
                "scaled by sqrt(3), the size of the inputs d_in; the scaling uses the key size, "
                "d_k = keys.shape[-1] = 2.",
                "这是按 sqrt(3) 缩放的，3 是输入的维度 d_in。"
                "缩放要用键的维度 d_k = keys.shape[-1] = 2。",
            ),
        },
        hint=tr(
            "the steps of section 5's recipe, for 'starts' and its three tokens only: its "
            "query, the scores against the first three keys, scaled, the softmax over those "
            "three, then the weighted sum of the first three values.",
            "按第 5 节的步骤来，只用 'starts' 和它读过的三个词元：它的查询，与前三个键的分数，"
            "缩放，在这三个分数上做 softmax，最后对前三个值求加权和。",
        ),
        shapes={
            (3,): tr(
                "three numbers: the three weights, or a weighted sum of the raw inputs (3 numbers "
                "each)? The context vector is the weighted sum of the three values (x @ W_value, "
                "2 numbers each).",
                "这是三个数：是三个注意力权重，还是对原始输入（每个 3 个数）求的加权和？"
                "上下文向量是对三个值（x @ W_value，每个 2 个数）求的加权和。",
            ),
            (6, 2): tr(
                "that is a context vector for every token; the exercise asks for the one of "
                "'starts'.",
                "这是每个词元各一个上下文向量，题目要的是 'starts' 那一个。",
            ),
        },
    )


_V1_TO_V2 = tr(
    "SelfAttentionV1 -> SelfAttentionV2 weight transfer",
    "把 SelfAttentionV1 的权重迁移到 SelfAttentionV2",
)


#: The hints of ``linear_layer`` for the layers of the SelfAttentionV2 that carries V1's weights.
_V2_LAYER_TEXTS = {
    "absent": tr(
        "answer.{name} is not an nn.Linear: answer must be a SelfAttentionV2.",
        "answer.{name} 不是 nn.Linear：answer 必须是一个 SelfAttentionV2。",
    ),
    "biased": tr(
        "answer.{name} has a bias; V1 has none: build it with qkv_bias=False.",
        "answer.{name} 带有偏置，而 V1 没有。请用 qkv_bias=False 创建它。",
    ),
}


@exercise(
    _V1_TO_V2,
    what=tr(
        "your SelfAttentionV2 object after copying sa_v1's weights into it",
        "你的 SelfAttentionV2 对象（已把 sa_v1 的权重复制进去）",
    ),
)
def check_v1_to_v2(answer: object, sa_v1: nn.Module, inputs: torch.Tensor) -> CheckResult:
    """``answer``: a V2-style module (``nn.Linear`` layers) carrying ``sa_v1``'s matrices."""
    if not isinstance(answer, nn.Module):
        kind = type(answer).__name__
        raise ContractError(
            tr(
                f"expected a SelfAttentionV2 module, got {kind}.",
                f"需要一个 SelfAttentionV2 模块，收到的是 {kind}。",
            ),
        )
    matrices: dict[str, Any] = {n: getattr(sa_v1, n, None) for n in _NAMES}
    if not all(isinstance(m, torch.Tensor) and m.dim() == 2 for m in matrices.values()):
        raise ContractError(
            tr(
                "the second argument must be the lesson's SelfAttentionV1 object sa_v1.",
                "第二个参数必须是本课的 SelfAttentionV1 对象 sa_v1。",
            ),
        )
    for n in _NAMES:
        w = linear_layer(answer, n, None, False, **_V2_LAYER_TEXTS).weight.detach()
        want = matrices[n].detach().T  # (d_out, d_in)
        got_shape, want_shape = tuple(w.shape), tuple(want.shape)
        if got_shape != want_shape:
            raise ContractError(
                tr(
                    f"answer.{n}.weight has shape {got_shape}, expected {want_shape}.",
                    f"answer.{n}.weight 的形状是 {got_shape}，应为 {want_shape}。",
                ),
            )
        if torch.equal(w, want.T) and not torch.equal(w, want):
            raise ContractError(
                tr(
                    f"answer.{n}.weight holds sa_v1.{n} untransposed. nn.Linear computes "
                    f"x @ weight.T, so weight must be sa_v1.{n}.T.",
                    f"answer.{n}.weight 存的是没有转置的 sa_v1.{n}。nn.Linear 计算的是 "
                    f"x @ weight.T，所以 weight 必须是 sa_v1.{n}.T。",
                ),
            )
        if not torch.equal(w, want):
            for other in _NAMES:  # not n: its own matrix is the one w is not
                if torch.equal(w, matrices[other].detach().T):
                    raise ContractError(
                        tr(
                            f"answer.{n} holds sa_v1.{other}'s weights: match the names.",
                            f"answer.{n} 存的是 sa_v1.{other} 的权重。请按名字一一对应。",
                        ),
                    )
            raise ContractError(
                tr(
                    f"answer.{n} does not hold sa_v1's matrix yet. An nn.Linear keeps its weight "
                    "as (d_out, d_in), the other way round from V1's (d_in, d_out) matrix "
                    "(section 7); assign it as an nn.Parameter.",
                    f"answer.{n} 里还不是 sa_v1 的矩阵。nn.Linear 的 weight 形状是 (d_out, d_in)，"
                    "和 V1 的 (d_in, d_out) 矩阵存法相反（见第 7 节）。赋值时要用 nn.Parameter。",
                ),
            )
    with torch.no_grad():
        got, want_out = attempt(
            lambda: (answer(inputs), sa_v1(inputs)),
            tr(
                "calling answer(inputs) raised {kind}: {error}",
                "调用 answer(inputs) 时抛出了 {kind}：{error}",
            ),
        )
    if not plain_tensor(got) or tuple(got.shape) != tuple(want_out.shape):
        raise ContractError(
            tr(
                "answer(inputs) should return the (T, d_out) context vectors.",
                "answer(inputs) 应该返回形状为 (T, d_out) 的上下文向量。",
            ),
        )
    if not torch.allclose(got, want_out, atol=1e-6, rtol=0):
        raise ContractError(
            tr(
                "the weights match but the outputs differ: is forward V2's forward?",
                "权重一致，但输出不同。forward 用的是 V2 的 forward 吗？",
            ),
        )
    return ok(
        _V1_TO_V2,
        tr(
            "correct: weight = W.T for all three layers, the outputs agree bit for bit.",
            "正确：三个层都满足 weight = W.T，输出逐位完全相同。",
        )
        if torch.equal(got, want_out)
        else tr(
            "correct: weight = W.T for all three layers, the outputs agree to 1e-6.",
            "正确：三个层都满足 weight = W.T，输出在 1e-6 以内一致。",
        ),
    )


def _largest_unscaled_weight() -> float:
    """The largest softmax weight of the lesson's seed-123 query against 6 keys, unscaled."""
    generator = torch.Generator().manual_seed(123)
    q = torch.randn(512, generator=generator)  # (d_k,)
    k = torch.randn(6, 512, generator=generator)  # (T, d_k)
    return float(torch.softmax(k @ q, dim=-1).max())


check_prediction_saturation = prediction_checker(
    "check_prediction_saturation",
    Prediction(
        name=tr("prediction: the largest weight without scaling", "预测：不缩放时最大的注意力权重"),
        what=tr("a number (the largest weight you expect)", "一个数（你预计的最大权重）"),
        actual=_largest_unscaled_weight,
        shows=lambda largest: tr(f"{largest:.2f}", f"最大权重是 {largest:.2f}"),
        explain=tr(
            "With d_k = 512 the scores are tens of units apart, and exp turns a gap of 20 into "
            "a factor of about 500 million: one weight takes (almost) everything.",
            "d_k = 512 时，注意力分数之间相差几十，"
            "而 exp 会把 20 的差距变成大约 5 亿倍。"
            "一个权重（几乎）拿走了全部。",
        ),
        between=(0.0, 1.0),
        tol=0.05,
    ),
    "The largest unscaled softmax weight (0..1) for the lesson's seed-123 query and 6 keys.",
)


# -- build it: SelfAttentionV2 ------------------------------------------------------------------

_SIZES = ((3, 2, 6), (4, 4, 1), (8, 6, 5), (5, 3, 9))  # (d_in, d_out, T)


def _reference_variants(ref: SelfAttentionV2, x: torch.Tensor) -> dict[torch.Tensor, Text]:
    """The outputs of the typical mistakes, computed with ``ref``'s weights: ``{output: hint}``."""
    queries, keys, values = ref.W_query(x), ref.W_key(x), ref.W_value(x)  # (T, d_out) each
    scores = queries @ keys.T  # (T, T)
    d_k, d_in = keys.shape[-1], x.shape[-1]
    return {
        # no scaling
        torch.softmax(scores, dim=-1) @ values: tr(
            "no 1/sqrt(d_k) scaling: divide the scores by keys.shape[-1] ** 0.5 before softmax.",
            "没有乘 1/sqrt(d_k) 缩放。请在 softmax 之前，"
            "先把注意力分数除以 keys.shape[-1] ** 0.5。",
        ),
        # scaled by d_k
        torch.softmax(scores / d_k, dim=-1) @ values: tr(
            "you divided by d_k; divide by its square root, keys.shape[-1] ** 0.5.",
            "你除以的是 d_k，应该除以它的平方根 keys.shape[-1] ** 0.5。",
        ),
        # softmax over queries
        torch.softmax(scores / d_k**0.5, dim=0) @ values: tr(
            "softmax over dim=0 normalises each column; every query's row must sum to 1: dim=-1.",
            "在 dim=0 上做 softmax，归一化的是每一列。"
            "每个查询的那一行之和必须为 1，所以要用 dim=-1。",
        ),
        # keys @ queries.T
        torch.softmax(scores.T / d_k**0.5, dim=-1) @ values: tr(
            "the score matrix is transposed: row i must be query i against every key, "
            "queries @ keys.T (not keys @ queries.T).",
            "注意力分数矩阵被转置了。第 i 行必须是查询 i 与每个键的分数，"
            "即 queries @ keys.T（而不是 keys @ queries.T）"
            "。",
        ),
        # weights.T
        torch.softmax(scores / d_k**0.5, dim=-1).T @ values: tr(
            "the weights are transposed in the weighted sum: context = attn_weights @ values.",
            "加权求和时注意力权重被转置了。context = attn_weights @ values。",
        ),
        # queries as values
        torch.softmax(scores / d_k**0.5, dim=-1) @ queries: tr(
            "the weighted sum mixes the queries; it must mix the values (self.W_value(x)).",
            "加权求和混合的是查询，应该混合值（self.W_value(x)）。",
        ),
        # keys as values
        torch.softmax(scores / d_k**0.5, dim=-1) @ keys: tr(
            "the weighted sum mixes the keys; it must mix the values (self.W_value(x)).",
            "加权求和混合的是键，应该混合值（self.W_value(x)）。",
        ),
        # scaled by d_in (where d_in == d_k the right output, which a wrong one never equals)
        torch.softmax(scores / d_in**0.5, dim=-1) @ values: tr(
            "you scaled by sqrt(d_in); the scaling uses the key size d_k = keys.shape[-1].",
            "你按 sqrt(d_in) 缩放了，缩放要用键的维度 d_k = keys.shape[-1]。",
        ),
    }


_CONSTRUCT = {
    "raised": tr("{name}({args}) raised {kind}: {error}", "{name}({args}) 抛出了 {kind}：{error}"),
    "not_module": tr(
        "{name}(...) must be an nn.Module: subclass nn.Module.",
        "{name}(...) 必须是 nn.Module，请让它继承 nn.Module。",
    ),
    "not_written": tr(
        "the class is not written yet (it raises NotImplementedError).",
        "这个类还没有写完（它抛出了 NotImplementedError）。",
    ),
}

_FORWARD = ForwardTexts(
    raised=tr(
        "forward on x of shape {shape} (d_in={d_in}, d_out={d_out}) raised {kind}: {error}",
        "对形状为 {shape} 的 x 调用 forward（d_in={d_in}，d_out={d_out}）时抛出了 {kind}：{error}",
    ),
    not_tensor=tr(
        "forward returned {kind}; return context_vec.",
        "forward 返回的是 {kind}，请返回 context_vec。",
    ),
    subclass=tr(
        "forward returned a {kind}; return a plain tensor.",
        "forward 返回的是 {kind}，请返回普通的张量。",
    ),
    shape=tr(
        "forward on x {shape} returned shape {got}, expected (T, d_out) = {want}.",
        "对形状为 {shape} 的 x，forward 返回的形状是 {got}，应为 (T, d_out) = {want}。",
    ),
    dtype=tr(
        "forward on a {dtype} input on {device} returned {got_dtype} on "
        "{got_device}: keep the input's dtype and device (no .double(), no .to(...)).",
        "输入是 {device} 上的 {dtype}，"
        "forward 却返回了 {got_device} 上的 {got_dtype}。"
        "输出要保持输入的 dtype 和设备，不要用 .double() 或 .to(...)。",
    ),
    shape_first=True,
)


#: The hints of ``linear_layer`` for the three layers of the learner's SelfAttentionV2.
_LAYER_TEXTS = {
    "absent": tr(
        "self.{name} should be nn.Linear(d_in, d_out, bias=qkv_bias), got "
        "{kind}. Use the book's names W_query, W_key, W_value.",
        "self.{name} 应该是 nn.Linear(d_in, d_out, bias=qkv_bias)，收到的是 "
        "{kind}。请使用书中的名字 W_query、W_key、W_value。",
    ),
    "shape": tr(
        "with d_in={d_in}, d_out={d_out}, self.{name} is nn.Linear("
        "{fan_in}, {fan_out}): it must map d_in -> d_out.",
        "当 d_in={d_in}、d_out={d_out} 时，"
        "self.{name} 是 nn.Linear({fan_in}, {fan_out})。"
        "它必须把 d_in 映射到 d_out。",
    ),
    "biased": tr(
        "self.{name} has a bias by default: use bias=qkv_bias, False.",
        "self.{name} 默认带有偏置。请写 bias=qkv_bias，其默认值为 False。",
    ),
}


def _at_every_size(cls: type) -> None:
    """At each size: the layers, the book's output, no train/eval difference, rows sum to 1,
    gradients reach every weight."""
    for d_in, d_out, T in _SIZES:
        module = construct(cls, (d_in, d_out), {}, **_CONSTRUCT)
        written(module)  # W_query, W_key, W_value: nn.Linear(d_in, d_out) without a bias
        for n in _NAMES:
            linear_layer(module, n, (d_in, d_out), False, **_LAYER_TEXTS, d_in=d_in, d_out=d_out)
        if len({id(getattr(module, n)) for n in _NAMES}) < len(_NAMES):
            raise ContractError(
                tr(
                    "W_query, W_key and W_value are not three layers: at least two names hold "
                    "the same nn.Linear object (a = b = nn.Linear(...) makes one layer with two "
                    "names), so two of queries, keys and values share one weight matrix. Create "
                    "each layer with its own nn.Linear call.",
                    "W_query、W_key、W_value 并不是三个层：至少有两个名字指向同一个 nn.Linear 对象"
                    "（a = b = nn.Linear(...) 只建了一个层，起了两个名字），"
                    "于是查询、键、值中至少有两个共用同一个权重矩阵。"
                    "每个层都要单独调用一次 nn.Linear 来创建。",
                )
            )
        ref = SelfAttentionV2(d_in, d_out)
        try:
            ref.load_state_dict(module.state_dict())
        except Exception:  # extra or missing parameters
            extra = sorted(set(module.state_dict()) - set(ref.state_dict()))
            raise ContractError(
                tr(
                    f"the module has parameters the book's class has not: {extra}. "
                    "SelfAttentionV2 holds only W_query, W_key, W_value.",
                    f"这个模块有书中的类没有的参数：{extra}。"
                    "SelfAttentionV2 只包含 W_query、W_key、W_value。",
                )
            ) from None
        x = torch.rand(T, d_in)  # (T, d_in)
        named: dict[str, Any] = {"shape": (T, d_in), "d_in": d_in, "d_out": d_out}  # in the hints
        got = call_forward(module, (x.clone(),), _FORWARD, want_shape=(T, d_out), **named)
        with torch.no_grad():
            want = ref(x)  # (T, d_out)
            if not torch.allclose(got.detach(), want, atol=1e-5, rtol=0):
                not_a_known_mistake(got, _reference_variants(ref, x).items(), atol=1e-5)
                raise ContractError(
                    tr(
                        f"with d_in={d_in}, d_out={d_out}, T={T} the output differs from "
                        "mh.SelfAttentionV2 holding the same weights. The order: queries, keys and "
                        "values from their three layers; scores of every query with every key; "
                        "softmax over the keys of the scores scaled by the square root of the "
                        "keys' width; the weighted sum of the values.",
                        f"当 d_in={d_in}、d_out={d_out}、"
                        f"T={T} 时，输出与权重相同的 mh.SelfAttentionV2 不一致。"
                        "正确的顺序是：用各自的层算出查询、键和值，"
                        "算出每个查询与每个键的分数，"
                        "分数除以键宽度的平方根之后在键这一维上做 softmax，"
                        "最后对值做加权求和。",
                    )
                )
        _same_in_eval_mode(module, x, want)
        _rows_sum_to_one(module, d_in, d_out, T)
        if T > 1:
            _gradients_reach_every_parameter(module, x)


def _bias_works(cls: type) -> None:
    """``qkv_bias=True`` gives the three layers a bias, which forward uses: with non-zero biases
    the output equals the book's class, and every bias gets a gradient.

    (A key bias shifts all of one query's scores alike, so the softmax hides it: only its
    gradient shows whether forward uses it.)
    """
    signature = tr(
        "the book's signature is (d_in, d_out, qkv_bias=False); ",
        "书中的签名是 (d_in, d_out, qkv_bias=False)。",
    )
    texts = {key: signature + text for key, text in _CONSTRUCT.items()}
    module = construct(cls, (3, 2), {"qkv_bias": True}, **texts)
    if not all(getattr(getattr(module, n), "bias", None) is not None for n in _NAMES):
        raise ContractError(
            tr(
                "qkv_bias=True should give the three layers a bias: bias=qkv_bias.",
                "qkv_bias=True 时三个层都应该有偏置，即 bias=qkv_bias。",
            )
        )
    ref = SelfAttentionV2(3, 2, qkv_bias=True)
    with torch.no_grad():
        for n in _NAMES:
            getattr(ref, n).bias.copy_(torch.randn(2) * 2)
    try:
        module.load_state_dict(ref.state_dict())
    except Exception:  # extra parameters, already named for qkv_bias=False
        return
    x = torch.rand(6, 3)  # (T, d_in)
    module.zero_grad(set_to_none=True)
    out, changed = forward_on_copy(module, (x,))
    if changed:
        raise ContractError(INPUT_CHANGED)
    with torch.no_grad():
        want = ref(x)  # (T, d_out)
    unused = tr(
        "with qkv_bias=True and non-zero biases, ",
        "当 qkv_bias=True 且偏置不为零时，",
    )
    if not isinstance(out, torch.Tensor) or not plain_tensor(out) or out.shape != want.shape:
        raise ContractError(
            unused
            + tr(
                "forward no longer returns the (T, d_out) context vectors.",
                "forward 不再返回形状为 (T, d_out) 的上下文向量。",
            )
        )
    differs = unused + tr(
        "the output differs from mh.SelfAttentionV2 holding the same weights and biases: "
        "call the layers themselves (self.W_query(x)), not x @ self.W_query.weight.T, "
        "which leaves the bias out.",
        "输出与权重和偏置都相同的 mh.SelfAttentionV2 不一致。"
        "请直接调用这些层，如 self.W_query(x)。"
        "写成 x @ self.W_query.weight.T 会漏掉偏置。",
    )
    agrees(out.detach(), want, differs, rtol=0)
    (out * torch.rand(out.shape)).sum().backward()
    for n in _NAMES:
        if getattr(module, n).bias.grad is None:
            raise ContractError(
                unused
                + tr(
                    f"{n}.bias gets no gradient, so forward never uses it: call the layer itself "
                    f"(self.{n}(x)), not x @ self.{n}.weight.T.",
                    f"{n}.bias 没有得到梯度，说明 forward 根本没有用到它。"
                    f"请直接调用这个层，即 self.{n}(x)，"
                    f"而不是 x @ self.{n}.weight.T。",
                )
            )


_BUILD_SIZES_SHOWN = listed(f"({d_in}, {d_out})" for d_in, d_out, _ in _SIZES)

check_build_self_attention = build_checker(
    "check_build_self_attention",
    BuildSpec(
        name=tr("build SelfAttentionV2", "动手实现 SelfAttentionV2"),
        missing_what=tr(
            "your class (write `answer = MySelfAttentionV2`, no parentheses)",
            "你的类（写 `answer = MySelfAttentionV2`，不带括号）",
        ),
        instance_hint=tr(
            "expected a class, got an object (an instance) of {kind}: pass the class itself, "
            "without the parentheses, `answer = MySelfAttentionV2`.",
            "这里要的是类本身，你传入的是 {kind} 的一个对象（实例）。"
            "去掉括号，写 `answer = MySelfAttentionV2`。",
        ),
        not_class_hint=tr(
            "expected a class, got {kind}: pass the class itself, not an object made from it.",
            "需要一个类，收到的是 {kind}。请传入类本身，而不是用它创建的对象。",
        ),
        modules_only=False,
        seed=0,
        contracts=(_at_every_size, _bias_works),
        passed=fill(
            tr(
                "correct: equals mh.SelfAttentionV2 for (d_in, d_out) in {sizes}, weights sum to "
                "1 per row, gradients reach W_query, W_key and W_value, and qkv_bias works.",
                "正确：(d_in, d_out) 取 {sizes} 时都与 mh.SelfAttentionV2 一致，"
                "注意力权重每行之和为 1，梯度能传到 W_query、W_key 和 W_value，"
                "qkv_bias 也能正常工作。",
            ),
            sizes=_BUILD_SIZES_SHOWN,
        ),
    ),
    """Contract tests for a learner's ``SelfAttentionV2`` class (the book's semantics).""",
)


def _same_in_eval_mode(module: nn.Module, x: torch.Tensor, want: torch.Tensor) -> None:
    """SelfAttentionV2 has no dropout: ``.eval()`` must not change what forward computes."""
    with torch.no_grad():
        got = module.eval()(x.clone())
    module.train()
    same = plain_tensor(got) and got.shape == want.shape
    if not same or not torch.allclose(got, want, atol=1e-5, rtol=0):
        raise ContractError(
            tr(
                "after module.eval() the output changes (or is no longer right): SelfAttentionV2 "
                "has no dropout and no train/eval difference; forward must not depend on "
                "self.training.",
                "调用 module.eval() 之后，"
                "输出变了（或者不再正确）。SelfAttentionV2 没有 dropout，"
                "训练模式和评估模式没有区别，forward 不能依赖 self.training。",
            )
        )


def _rows_sum_to_one(module: nn.Module, d_in: int, d_out: int, T: int) -> None:
    """Values that are all 1 make every context entry equal the row sum of the weights."""
    x = torch.rand(T, d_in)
    x[:, 0] = 1.0  # (T, d_in), first feature constant
    picks_first = torch.zeros(d_out, d_in)
    picks_first[:, 0] = 1.0  # (d_out, d_in): every value entry = x[:, 0] = 1
    with torch.no_grad():  # out (T, d_out): the row sums of the attention weights
        out = functional_call(module, {"W_value.weight": picks_first}, (x,))
    rows = tr(
        "when every value is 1 the output should be all ones: the weights' rows must sum to 1.",
        "当每个值都是 1 时，输出应该全是 1。注意力权重的每一行之和必须为 1。",
    )
    if not plain_tensor(out) or out.shape != (T, d_out):
        raise ContractError(rows)
    rows_sum_to_one(out, rows, rtol=1e-5)


def _gradients_reach_every_parameter(module: nn.Module, x: torch.Tensor) -> None:
    module.zero_grad(set_to_none=True)
    out = module(x)
    (out * torch.rand(out.shape)).sum().backward()
    gradients_reach(
        ((n, getattr(module, n).weight.grad) for n in _NAMES), _no_gradient, finite=True
    )


def _no_gradient(n: str) -> Text:
    return tr(
        f"no gradient reaches {n}.weight: compute with the layers themselves (no "
        ".detach(), no torch.no_grad(), no .data) so that training can update them.",
        f"梯度没有传到 {n}.weight。请直接用这些层来计算，"
        "不要用 .detach()、torch.no_grad() 或 .data，"
        "这样训练才能更新它们。",
    )
