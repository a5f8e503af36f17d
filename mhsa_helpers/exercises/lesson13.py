"""Checkers for lesson 13: the parts of today's open models (RoPE, RMSNorm, SwiGLU).

* ``check_apply_rope(apply_rope)`` -- build it: ``apply_rope(q, k, v, offset)`` returns the queries
  (b, h, T, head_dim) and keys (b, g, T, head_dim) rotated at positions ``offset .. offset + T - 1``
  (rotate-half pairs, ``theta_i = 10000 ** (-2 i / head_dim)``) and the values untouched, without
  calling ``mh.apply_rotary_pos_emb``.
* ``check_rms_norm(MyRMSNorm)`` -- build it: ``cls(d, eps=1e-6)`` with a ``weight`` (d,) of ones;
  ``forward(x)`` equals ``torch.nn.RMSNorm`` without calling torch's ``rms_norm``.
* ``check_swiglu(MySwiGLU)`` -- build it: ``cls(d_model, hidden_dim=None)`` with ``gate_proj``,
  ``up_proj``, ``down_proj`` (no biases; None: the 2/3 * 4 width rule, ``int(8 * d_model / 3)``);
  ``forward(x) = down_proj(silu(gate_proj(x)) * up_proj(x))``.
* ``check_far_keys(answer, attn, h, positions)`` -- exercise 1: the toy attention's keys on ``h``
  after k_norm and RoPE at ``positions`` (40..55, after a cache of 40 tokens), (1, g, T, head_dim).

Each contract runs over a grid of sizes (and of the constructor's arguments) in float32 and
float64, and names the mistakes of the issue: rotating v, the wrong half split, a missing offset,
subtracting the mean, GELU for SiLU, gate and up swapped, a width rule off by the 2/3.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from itertools import product
from unittest import mock

import torch
import torch.nn.functional as F
from torch import nn

from ..attention.modern import ModernAttention
from ..i18n import Text, tr
from ..layers.rope import apply_rotary_interleaved, rope_cos_sin, rotate_half
from ._build import (
    CALL_RAISED,
    MODULE_FORWARD,
    NOT_A_MODULE_CLASS,
    UNWRITTEN_FUNCTION,
    BuildSpec,
    ContractError,
    attempt,
    build_checker,
    call_forward,
    construct,
    linear_layer,
    never_calls,
    not_a_known_mistake,
    pass_the_class,
    written,
)
from ._kinds import tensor_answer
from ._parse import plain_tensor
from ._result import CheckResult, exercise, ok

__all__ = ["check_apply_rope", "check_far_keys", "check_rms_norm", "check_swiglu"]

DTYPES = (torch.float32, torch.float64)


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), atol=1e-5, rtol=1e-4))


# -- build it: apply_rope ------------------------------------------------------------------------


#: (b, h, g, T, head_dim, offset): offset 0 (no cache) and later chunks (a cache holding
#: tokens); g < h once (GQA: k and v have fewer heads than q).
_ROPE_SIZES = ((2, 3, 3, 4, 8, 0), (1, 4, 2, 3, 4, 5), (2, 1, 1, 1, 6, 7))


def _rotate(x: torch.Tensor, positions: torch.Tensor, mistake: str = "") -> torch.Tensor:
    """x (..., T, d) rotated at ``positions`` the right way, or with one named mistake ("sign":
    every pair turned the other way, by -m * theta_i)."""
    wrong = {"no_offset": positions - positions[0], "off_by_one": positions + 1, "sign": -positions}
    cos, sin = (t.to(x.dtype) for t in rope_cos_sin(wrong.get(mistake, positions), x.shape[-1]))
    if mistake == "interleaved":
        return apply_rotary_interleaved(x, cos, sin)
    return x * cos + rotate_half(x) * sin


_ROPE_MISTAKES: dict[str, Text] = {
    "interleaved": tr(
        "your rotation pairs neighbouring features (x[0::2], x[1::2]): that is the interleaved "
        "convention. Hugging Face's Llama, and this exercise, pair feature i with feature "
        "i + head_dim/2: split the last dimension into two halves (rotate_half).",
        "你的旋转把相邻的特征配成一对（x[0::2]、x[1::2]），这是交错配对的约定。"
        "Hugging Face 的 Llama 和本练习把第 i 个特征与第 i + head_dim/2 个配对："
        "把最后一维切成前后两半（rotate_half）。",
    ),
    "sign": tr(
        "every pair turns the wrong way (by -m * theta_i): check the two signs. A rotation by "
        "+m * theta_i adds the sin term, and rotate_half puts the second half, negated, in "
        "front of the first (section 1's rotation matrix, written for every pair at once).",
        "每一对都转反了（转过的是 -m * theta_i），检查两处符号：转过 +m * theta_i 时，"
        "sin 那一项是加上去的；rotate_half 把后一半取负，放到前一半前面"
        "（即第 1 节的旋转矩阵，对所有的对一起写出来）。",
    ),
    "no_offset": tr(
        "with offset > 0 your tokens are rotated as if they started at position 0: with a KV "
        "cache the new tokens sit at positions offset .. offset + T - 1, their true positions.",
        "offset > 0 时，你把词元当成从位置 0 开始来旋转。用 KV 缓存时，新词元位于"
        " offset .. offset + T - 1，这才是它们真正的位置。",
    ),
    "off_by_one": tr(
        "your positions are one too far: the first token of a sequence is at position offset "
        "(0 without a cache), not offset + 1.",
        "你的位置多了 1。序列的第一个词元位于 offset（没有缓存时是 0），不是 offset + 1。",
    ),
    "unrotated": tr(
        "these are returned unrotated: RoPE turns both the queries and the keys, so that their "
        "dot product sees the offset between two tokens.",
        "它们原样返回了，没有旋转。RoPE 要同时旋转查询和键，它们的点积才能看到两个词元的距离。",
    ),
}


def _name_rope(got: torch.Tensor, x: torch.Tensor, positions: torch.Tensor) -> Text:
    """The hint for ``got``, which is not ``x`` rotated at ``positions``: the known mistake it
    makes (unrotated: ``x`` itself, exactly), else what RoPE computes."""
    if torch.equal(got, x):
        return _ROPE_MISTAKES["unrotated"]
    for mistake in ("no_offset", "off_by_one", "interleaved", "sign"):
        if _close(got, _rotate(x, positions, mistake)):
            return _ROPE_MISTAKES[mistake]
    return tr(
        "not the rotation RoPE gives: pair i of the token at position m turns by "
        "the angle m * theta_i, theta_i = 10000 ** (-2i / head_dim); the angles "
        "come from mh.rope_cos_sin, the pairs from mh.rotate_half.",
        "不是 RoPE 的旋转。位置 m 上词元的第 i 对转过角度 m * theta_i，"
        "theta_i = 10000 ** (-2i / head_dim)。角度可以用 mh.rope_cos_sin 得到，"
        "配对用 mh.rotate_half。",
    )


def _call_rope(fn: Callable[..., object], *qkv: torch.Tensor, offset: int) -> list[torch.Tensor]:
    """``fn(q, k, v, offset)`` on copies of ``qkv`` (q, k, v): three plain tensors, each of its
    input's shape and dtype."""
    call = f"apply_rope(q, k, v, offset={offset}) with q {tuple(qkv[0].shape)}, {qkv[0].dtype}"
    given = [x.clone() for x in qkv]
    out = attempt(lambda: fn(*given, offset), CALL_RAISED, unwritten=UNWRITTEN_FUNCTION, call=call)
    if not all(torch.equal(a, b) for a, b in zip(given, qkv, strict=True)):
        raise ContractError(
            tr(
                "apply_rope changed q, k or v in place; compute new tensors (x * cos + ...).",
                "apply_rope 原地修改了 q、k 或 v。请计算新的张量（x * cos + ...）。",
            )
        )
    if not (isinstance(out, tuple | list) and len(out) == 3):
        kind = type(out).__name__
        raise ContractError(
            tr(
                f"apply_rope must return three tensors (q, k, v), got {kind}.",
                f"apply_rope 必须返回三个张量 (q, k, v)，收到的是 {kind}。",
            )
        )
    for name, got, want in zip("qkv", out, qkv, strict=True):
        if not plain_tensor(got) or (got.shape, got.dtype) != (want.shape, want.dtype):
            said = f"{tuple(got.shape)}, {got.dtype}" if plain_tensor(got) else type(got).__name__
            raise ContractError(
                tr(
                    f"apply_rope's {name} is {said}; return a plain tensor of {want.dtype} with "
                    f"{name}'s shape, {tuple(want.shape)}.",
                    f"apply_rope 返回的 {name} 是 {said}，应该返回与 {name} 形状相同"
                    f"（{tuple(want.shape)}）、类型为 {want.dtype} 的普通张量。",
                )
            )
    return list(out)


_V_STAYS = tr(
    ": RoPE acts on the queries and keys only, which make the scores; the values are what the "
    "weights average, and stay as they are.",
    "。RoPE 只作用于查询和键，它们决定分数；值是注意力权重拿来加权平均的内容，应保持原样。",
)


def _rotates_q_and_k_not_v(fn: Callable[..., object]) -> None:
    for (b, h, g, n, d, offset), dtype in product(_ROPE_SIZES, DTYPES):
        # q (b, h, T, d); k and v (b, g, T, d)
        q, k, v = (torch.randn(b, heads, n, d, dtype=dtype) for heads in (h, g, g))
        out_q, out_k, out_v = _call_rope(fn, q, k, v, offset=offset)
        where = tr(
            f" (test: offset={offset}, head_dim={d}, {dtype})",
            f"（测试：offset={offset}、head_dim={d}、{dtype}）",
        )
        positions = torch.arange(offset, offset + n)
        if not torch.equal(out_v, v):
            rotated = _close(out_v, _rotate(v, positions))
            how = (
                tr("v was rotated", "v 被旋转了") if rotated else tr("v was changed", "v 被改动了")
            )
            raise ContractError(how + _V_STAYS + where)
        for name, got, x in (("q", out_q, q), ("k", out_k, k)):
            if not _close(got, _rotate(x, positions)):
                said = tr(f"{name}: ", f"{name} 不对。") + _name_rope(got, x, positions)
                raise ContractError(said + where)


def _own_rotation(fn: Callable[..., object]) -> None:
    """The brief's rule "do not call mh.apply_rotary_pos_emb": a Python function, not a torch op,
    so the package's attribute is replaced by one that refuses during one call (as ``never_calls``
    watches torch's functions)."""
    x = torch.randn(1, 2, 3, 4)  # (b, h, T, head_dim)
    with mock.patch("mhsa_helpers.apply_rotary_pos_emb", side_effect=RuntimeError):
        attempt(partial(fn, x, x, x, 1), _BY_PACKAGE)


_BY_PACKAGE = tr(
    "the rotation is right, but it calls mh.apply_rotary_pos_emb, which the exercise asks you "
    "to write: multiply by the cos table, add rotate_half(x) times the sin table.",
    "旋转是对的，但它调用了 mh.apply_rotary_pos_emb，而题目要你自己写这一步：乘以 cos 表，"
    "再加上 rotate_half(x) 乘以 sin 表。",
)


check_apply_rope = build_checker(
    "check_apply_rope",
    BuildSpec(
        name=tr("build it: apply_rope", "动手实现 apply_rope"),
        answer="function",
        function_name="apply_rope",
        reject_classes=True,
        contracts=(_rotates_q_and_k_not_v, _own_rotation),
        passed=tr(
            "correct: at three sizes, offsets 0, 5 and 7, float32 and float64, q and k turn "
            "as in Hugging Face's apply_rotary_pos_emb and v stays as it is.",
            "正确。在三种尺寸、offset 为 0、5、7，float32 和 float64 下，q 和 k 的旋转与"
            " Hugging Face 的 apply_rotary_pos_emb 一致，v 保持不变。",
        ),
        seed=13,
    ),
    """Contract tests for a learner's ``apply_rope(q, k, v, offset)``: (q, k, v) with q and k
    (b, h, T, head_dim) rotated at positions offset.. (rotate-half pairs), v unchanged.""",
)


# -- build it: RMSNorm ---------------------------------------------------------------------------

_NORM_GRID = ((4, 1e-6), (8, 1e-2), (5, 0.5))  # (d, eps): a large eps shows where it goes

_NORM_FORWARD = replace(
    MODULE_FORWARD,
    dtype=tr(
        ": the output is {got_dtype}; keep x's {dtype}.",
        "：输出是 {got_dtype}，应该保持 x 的 {dtype}。",
    ),
    shape=tr(
        ": the output has shape {got}; keep x's shape {want}.",
        "：输出的形状是 {got}，应该保持 x 的形状 {want}。",
    ),
)


def _norm_mistakes(x: torch.Tensor, weight: torch.Tensor, eps: float) -> dict[torch.Tensor, Text]:
    """The outputs of the known RMSNorm mistakes on ``x``, each with its hint."""
    ms = x.pow(2).mean(-1, keepdim=True)
    centred = x - x.mean(-1, keepdim=True)
    return {
        centred / torch.sqrt(centred.pow(2).mean(-1, keepdim=True) + eps) * weight: tr(
            "you subtract the mean: that is LayerNorm. RMSNorm keeps the centre and divides by the "
            "root mean square sqrt(mean(x**2) + eps) only.",
            "你减去了均值，那是 LayerNorm。"
            "RMSNorm 不做中心化，只除以均方根 sqrt(mean(x**2) + eps)。",
        ),
        x / (ms.sqrt() + eps) * weight: tr(
            "eps is added after the square root; it goes inside: sqrt(mean(x**2) + eps) "
            "(torch.rsqrt(... + eps)).",
            "eps 加在了平方根外面。"
            "它应该在里面：sqrt(mean(x**2) + eps)（torch.rsqrt(... + eps)）。",
        ),
        x / ms.sqrt() * weight: tr(
            "the eps argument is not used (missing, or a constant in its place): add self.eps, the "
            "constructor's eps, to the mean square before the square root.",
            "没有用上参数 eps（漏掉了，或写成了一个常数）。应该在开平方之前把 self.eps"
            "（构造函数收到的 eps）加到均方上。",
        ),
        x / torch.sqrt(ms + eps): tr(
            "the learned scale is missing: multiply by self.weight (an nn.Parameter of ones, "
            "(d,)).",
            "少了可学习的缩放。应该乘以 self.weight（形状 (d,)、初值为 1 的 nn.Parameter）。",
        ),
        x / torch.sqrt(x.pow(2).sum(-1, keepdim=True) + eps) * weight: tr(
            "you divide by the length of the vector (a sum of squares): RMSNorm takes the mean of "
            "the squares over the last dimension (.mean(-1, keepdim=True)).",
            "你除以的是向量的长度（平方和）。"
            "RMSNorm 取最后一维上平方的平均（.mean(-1, keepdim=True)）。",
        ),
    }


_NORM_UNWRITTEN = tr(
    "the class is not written yet: its constructor creates no weight and its forward raises "
    "NotImplementedError. Write `__init__` and `forward`, then run the cell again.",
    "这个类还没有写完：构造函数还没有创建参数（nn.Parameter），forward 抛出了 "
    "NotImplementedError。请写好 `__init__` 和 `forward`，再运行这个单元格。",
)
_NORM_RAISED = tr("forward raised {kind}: {said}", "forward 抛出了 {kind}：{said}")

_NORM_BY_TORCH = tr(
    "your RMSNorm calls torch's own (F.rms_norm, or nn.RMSNorm's forward), which the exercise "
    "asks you to write: the mean of the squares over the last dimension, eps, the square root, "
    "the weight.",
    "你的 RMSNorm 调用了 torch 自带的实现（F.rms_norm，或 nn.RMSNorm 的 forward），而题目要你"
    "自己写：最后一维上平方的平均、eps、开平方、乘以 weight。",
)


def _equals_torch_rmsnorm(cls: type) -> None:
    for (d, eps), dtype in product(_NORM_GRID, DTYPES):
        call = f"cls({d}, eps={eps})"
        module = construct(cls, (d,), {"eps": eps})
        weight = getattr(module, "weight", None)
        if isinstance(weight, torch.Tensor) and not isinstance(weight, nn.Parameter):
            raise ContractError(
                tr(
                    "self.weight is a plain tensor; wrap it in nn.Parameter, or it is neither "
                    "learned (the optimizer never sees it) nor saved in the state_dict "
                    f"(test: {call}).",
                    "self.weight 是普通张量。要用 nn.Parameter 包起来，否则它既不会被"
                    f"学习（优化器看不到它），也不会存进 state_dict（测试：{call}）。",
                )
            )
        if weight is None:  # the stub (its forward raises NotImplementedError) or no weight
            attempt(partial(module, torch.ones(2, d)), _NORM_RAISED, unwritten=_NORM_UNWRITTEN)
        if not isinstance(weight, nn.Parameter) or not torch.equal(weight.detach(), torch.ones(d)):
            raise ContractError(
                tr(
                    f"the class needs self.weight, an nn.Parameter of shape ({d},) starting at "
                    f"ones, the name and start of torch.nn.RMSNorm's (test: {call}).",
                    f"这个类需要 self.weight，即形状为 ({d},)、初值全为 1 的 nn.Parameter，"
                    f"名字和初值都与 torch.nn.RMSNorm 相同（测试：{call}）。",
                )
            )
        module = module.to(dtype)
        nn.init.normal_(weight)
        x = 0.3 * torch.randn(3, 4, d, dtype=dtype) + 0.5  # (b, T, d): a mean, small values
        where = tr(f"{call}, {dtype}: ", f"{call}、{dtype}：")
        never_calls(module, (x,), {"rms_norm"}, _NORM_BY_TORCH)
        with torch.no_grad():
            out = call_forward(module, (x,), _NORM_FORWARD, where=where, want_shape=tuple(x.shape))
            if _close(out, F.rms_norm(x, (d,), weight, eps)):  # torch.nn.RMSNorm's forward
                continue
            known = _norm_mistakes(x, weight, eps)
        not_a_known_mistake(out, known.items(), atol=1e-5, rtol=1e-4, where=where)
        raise ContractError(
            where
            + tr(
                "not torch.nn.RMSNorm's output: check the three steps of section 2's formula, "
                "the mean of the squares over the last dimension (keepdim), eps inside "
                "the root, and the learned weight applied last.",
                "与 torch.nn.RMSNorm 的输出不同。请对照第 2 节公式的三步检查："
                "在最后一维上求平方的均值（keepdim），eps 加在根号里面，最后乘上可学习的 weight。",
            )
        )


check_rms_norm = build_checker(
    "check_rms_norm",
    BuildSpec(
        name=tr("build it: RMSNorm", "动手实现 RMSNorm"),
        missing_what=tr(
            "your class (the class itself, e.g. MyRMSNorm)", "你的类（类本身，例如 MyRMSNorm）"
        ),
        instance_hint=pass_the_class("check_rms_norm(MyRMSNorm)"),
        not_class_hint=NOT_A_MODULE_CLASS,
        contracts=(_equals_torch_rmsnorm,),
        passed=tr(
            "correct: for three widths and three eps, float32 and float64, your RMSNorm equals "
            "torch.nn.RMSNorm, weight included.",
            "正确。在三种宽度、三种 eps、float32 和 float64 下，你的 RMSNorm 与 torch.nn.RMSNorm"
            " 相同，包括 weight。",
        ),
        seed=13,
    ),
    """Contract tests for a learner's RMSNorm class: ``cls(d, eps=...)`` with ``weight`` (d,) of
    ones; forward equals ``torch.nn.RMSNorm`` (three widths and eps, two dtypes).""",
)


# -- build it: SwiGLU ----------------------------------------------------------------------------

_SWIGLU_GRID = ((6, None), (10, None), (12, None), (9, 10))  # (d_model, hidden_dim); 10: 26.67

_SWIGLU_FORWARD = replace(
    _NORM_FORWARD,
    shape=tr(
        ": the output has shape {got}; it must be {want}.", "：输出的形状是 {got}，应该是 {want}。"
    ),
)


def _width_hint(d: int, got: int, want: int) -> Text:
    if got == 4 * d:
        return tr(
            f"hidden width {got} = 4 * d_model is GPT-2's: three matrices of that width hold 1.5 "
            "times the parameters. The rule keeps two thirds of it: "
            f"int(2 * 4 * d_model / 3) = {want}.",
            f"隐藏宽度 {got} = 4 * d_model 是 GPT-2 的。三个这么宽的矩阵的参数是原来的 1.5 倍。"
            f"规则只取它的三分之二：int(2 * 4 * d_model / 3) = {want}。",
        )
    if got in (round(8 * d / 3), math.ceil(8 * d / 3)):
        return tr(
            f"hidden width {got} rounds 8 * d_model / 3 up; the rule truncates, as int() does: "
            f"{want}.",
            f"隐藏宽度 {got} 把 8 * d_model / 3 向上取整了。"
            f"规则是截断取整，和 int() 一样：{want}。",
        )
    if got in (int(2 * d / 3), int(4 * d / 3)):
        return tr(
            f"hidden width {got} drops the 4: the rule is two thirds of GPT-2's 4 * d_model, "
            f"int(2 * 4 * d_model / 3) = {want}.",
            f"隐藏宽度 {got} 漏掉了 4。规则是 GPT-2 的 4 * d_model 的三分之二："
            f"int(2 * 4 * d_model / 3) = {want}。",
        )
    return tr(
        f"hidden width {got}; with hidden_dim=None it is int(2 * 4 * d_model / 3) = {want}.",
        f"隐藏宽度是 {got}。hidden_dim=None 时应该是 int(2 * 4 * d_model / 3) = {want}。",
    )


def _swiglu_mistakes(g: torch.Tensor, u: torch.Tensor, down: nn.Linear) -> dict[torch.Tensor, Text]:
    """The outputs of the known SwiGLU mistakes, from the projections ``g`` (gate) and ``u`` (up),
    each with its hint."""
    return {
        down(F.gelu(g) * u): tr(
            "you use GELU: SwiGLU's gate goes through SiLU, x * sigmoid(x) (F.silu).",
            "你用的是 GELU。SwiGLU 的门要经过 SiLU，即 x * sigmoid(x)（F.silu）。",
        ),
        down(F.silu(u) * g): tr(
            "gate and up are swapped: SiLU acts on gate_proj(x), and up_proj(x) is what it gates.",
            "gate 和 up 调换了。SiLU 作用在 gate_proj(x) 上，被门控的是 up_proj(x)。",
        ),
        down(F.relu(g) * u): tr(
            "you use ReLU: the gate goes through SiLU (F.silu).",
            "你用的是 ReLU。门要经过 SiLU（F.silu）。",
        ),
        down(torch.sigmoid(g) * u): tr(
            "you gate with sigmoid(gate): SiLU is gate * sigmoid(gate) (F.silu).",
            "你用 sigmoid(gate) 作门。SiLU 是 gate * sigmoid(gate)（F.silu）。",
        ),
        down(F.silu(g)): tr(
            "up_proj is not used: multiply silu(gate_proj(x)) by up_proj(x) element by element.",
            "没有用到 up_proj。要把 silu(gate_proj(x)) 与 up_proj(x) 逐元素相乘。",
        ),
    }


#: The hints of ``linear_layer`` for SwiGLU's three layers (``{call}``: the constructor call).
_SWIGLU_LAYERS = {
    "absent": tr(
        "{call} needs self.{name}, an nn.Linear (Hugging Face's names: "
        "gate_proj, up_proj, down_proj).",
        "{call} 需要 self.{name}，一个 nn.Linear（Hugging Face 的名字："
        "gate_proj、up_proj、down_proj）。",
    ),
    "biased": tr(
        "{call}: self.{name} has a bias; Llama's SwiGLU has none (bias=False).",
        "{call}：self.{name} 有偏置。Llama 的 SwiGLU 没有偏置（bias=False）。",
    ),
}


def _is_swiglu(cls: type) -> None:
    for (d, hidden), dtype in product(_SWIGLU_GRID, DTYPES):
        call = f"cls({d})" if hidden is None else f"cls({d}, hidden_dim={hidden})"
        module = written(construct(cls, (d,), {} if hidden is None else {"hidden_dim": hidden}))
        want = int(2 * 4 * d / 3) if hidden is None else hidden
        names = ("gate_proj", "up_proj", "down_proj")
        gate, up, down = (
            linear_layer(module, n, None, False, **_SWIGLU_LAYERS, call=call) for n in names
        )
        shapes = (tuple(gate.weight.shape), tuple(up.weight.shape), tuple(down.weight.shape))
        if shapes != ((want, d), (want, d), (d, want)):
            got = gate.out_features
            if hidden is None and shapes == ((got, d), (got, d), (d, got)):
                raise ContractError(tr(f"{call}: ", f"{call}：") + _width_hint(d, got, want))
            raise ContractError(
                tr(
                    f"{call}: the weights have shapes {shapes}; gate_proj and up_proj map "
                    f"{d} -> {want}, down_proj {want} -> {d}.",
                    f"{call}：权重的形状是 {shapes}。gate_proj 和 up_proj 把 {d} 映射到 "
                    f"{want}，down_proj 把 {want} 映射回 {d}。",
                )
            )
        module = module.to(dtype)
        x = torch.randn(2, 3, d, dtype=dtype)  # (b, T, d_model)
        where = tr(f"{call}, {dtype}: ", f"{call}、{dtype}：")
        with torch.no_grad():
            out = call_forward(
                module, (x,), _SWIGLU_FORWARD, where=where, want_shape=tuple(x.shape)
            )
            if _close(out, down(F.silu(gate(x)) * up(x))):
                continue
            known = _swiglu_mistakes(gate(x), up(x), down)
        not_a_known_mistake(out, known.items(), atol=1e-5, rtol=1e-4, where=where)
        raise ContractError(
            where
            + tr(
                "not SwiGLU's output. The gate projection goes through SiLU (F.silu) and "
                "multiplies the up projection element by element; down_proj maps the product "
                "back.",
                "不是 SwiGLU 的输出。门投影经过 SiLU（F.silu）后与 up 投影逐元素相乘，"
                "down_proj 再把乘积映射回去。",
            )
        )


check_swiglu = build_checker(
    "check_swiglu",
    BuildSpec(
        name=tr("build it: SwiGLU", "动手实现 SwiGLU"),
        missing_what=tr(
            "your class (the class itself, e.g. MySwiGLU)", "你的类（类本身，例如 MySwiGLU）"
        ),
        instance_hint=pass_the_class("check_swiglu(MySwiGLU)"),
        not_class_hint=NOT_A_MODULE_CLASS,
        contracts=(_is_swiglu,),
        passed=tr(
            "correct: at three widths (the 2/3 * 4 rule twice, an explicit hidden_dim once), "
            "float32 and float64, your SwiGLU is Hugging Face's LlamaMLP.",
            "正确。在三种宽度下（两次按 2/3 * 4 规则，一次给定 hidden_dim），float32 和 float64，"
            "你的 SwiGLU 与 Hugging Face 的 LlamaMLP 相同。",
        ),
        seed=13,
    ),
    """Contract tests for a learner's SwiGLU class: ``cls(d_model, hidden_dim=None)``, gate_proj /
    up_proj / down_proj without bias, width int(8 d / 3) by default, forward
    down_proj(silu(gate_proj(x)) * up_proj(x)); three sizes, two dtypes.""",
)


# -- exercise 1: the toy attention's keys at the positions after a cache ------------------------

_FAR_KEYS = tr("the keys at the positions far", "位置 `far` 上的键")


def _toy_keys(attn: ModernAttention, h: torch.Tensor, norm: bool = True) -> torch.Tensor:
    """The keys (b, g, T, head_dim) of ``attn`` (a ModernAttention) on ``h``, before RoPE."""
    k = attn.k_proj(h).unflatten(-1, (attn.num_kv_groups, attn.head_dim))  # (b, T, g, head_dim)
    return (attn.k_norm(k) if norm and attn.k_norm else k).transpose(1, 2)  # (b, g, T, head_dim)


@exercise(
    _FAR_KEYS,
    what=tr(
        "a tensor of shape (batch, heads, T, head_dim): the keys at the positions far, after "
        "k_norm and RoPE",
        "一个形状为 (batch, heads, T, head_dim) 的张量：位于 `far`、经过 k_norm 和 RoPE 的键",
    ),
)
def check_far_keys(
    answer: object, attn: ModernAttention, h: torch.Tensor, positions: torch.Tensor
) -> CheckResult:
    """The keys of the toy attention ``attn`` on ``h`` (1, T, d_model), k_norm'ed and rotated at
    ``positions`` (T,); the keys at 0..T-1, unrotated, un-normed or one position off are named."""
    with torch.no_grad():
        keys = _toy_keys(attn, h)  # (1, g, T, head_dim), unrotated
        expected = _rotate(keys, positions)
        near = _rotate(keys, torch.arange(h.shape[1]))
        moved = (expected - near).abs().max().item()
        result = tensor_answer(
            _FAR_KEYS,
            answer,
            expected,
            what=tr("a tensor of keys", "一个由键组成的张量"),
            hint=tr(
                "these are not the toy attention's keys at far: project h_ex with k_proj, split "
                "the heads, apply k_norm (QK-norm comes before RoPE), then rotate at the "
                "positions far (mh.rope_cos_sin takes any positions).",
                "这不是玩具模型的注意力在 `far` 上的键。用 k_proj 投影 h_ex、拆分出各个头，"
                "先做 k_norm（QK 归一化在 RoPE 之前），再在位置 `far` 上旋转"
                "（mh.rope_cos_sin 可以接收任意位置）。",
            ),
            wrong={
                near: tr(
                    "these keys are rotated at positions 0..15: the tokens now sit after the 40 "
                    "cached ones, so RoPE must turn them at the positions far.",
                    "这些键是按位置 0..15 旋转的。现在这些词元排在缓存的 40 个词元之后，"
                    "RoPE 要按位置 `far` 来旋转它们。",
                ),
                keys: tr(
                    "these keys are not rotated at all: RoPE turns each key by its position.",
                    "这些键根本没有旋转。RoPE 要按每个键的位置旋转它。",
                ),
                _rotate(keys, positions, "off_by_one"): tr(
                    "your positions are one too far: the first of the 16 tokens sits at 40, "
                    "right after the 40 cached ones (at 0..39).",
                    "你的位置多了 1。16 个词元中的第一个位于 40，紧跟在缓存的 40 个词元"
                    "（位置 0..39）之后。",
                ),
                _rotate(_toy_keys(attn, h, norm=False), positions): tr(
                    "these keys skip QK-norm: the toy attention applies k_norm to each head's "
                    "keys before RoPE.",
                    "这些键跳过了 QK 归一化。玩具模型的注意力在 RoPE 之前对每个头的键做 k_norm。",
                ),
            },
        )
    if not result:
        return result
    return ok(
        _FAR_KEYS,
        tr(
            f"correct: the keys moved (up to {moved:.2f} from the keys at 0..15), but turn the "
            "queries to far as well and every score q . k equals the one at 0..15 with the same "
            "offset: the weight two back is the same.",
            f"正确：键变了（与位置 0..15 上的键最多相差 {moved:.2f}），但把查询也转到 `far` 上，"
            "每个分数 q . k 都与 0..15 上逐个偏移对应的分数相同，所以往前两个位置的权重不变。",
        ),
    )
