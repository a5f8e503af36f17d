"""Checkers for lesson 09, efficient attention (融合 QKV 投影, FlashAttention / SDPA).

* ``check_attention_matrix_bytes(answer)`` -- bytes of one layer's float32 attention-weight
  matrix (b, h, T, T) for GPT-2 XL: 25 heads, context 1024, batch 1.
* ``check_key_block(answer, fused)`` -- the W_key block (d_out, d_in) cut out of a fused module's
  ``qkv.weight`` (3 * d_out, d_in): the reverse of stacking.
* ``check_memory_growth(prediction)`` -- predict-then-run: how many times more bytes the
  (b, h, T, T) weights take for 8 x the tokens (64).
* ``check_build_fused_multihead(cls)`` -- "build it": the learner's class with one fused
  ``qkv`` projection and ``out_proj``, run through contract tests against
  ``mh.FusedQKVMultiHeadAttention``; a hint names the typical mistake it recognises.
"""

from __future__ import annotations

import traceback
from typing import Any

import torch
from torch import nn

from ..attention.efficient import FusedQKVMultiHeadAttention
from ._common import CheckResult, fail, missing, number, ok, plain_tensor
from ._contract import book_forward, class_answer, is_view_error

__all__ = [
    "check_attention_matrix_bytes",
    "check_build_fused_multihead",
    "check_key_block",
    "check_memory_growth",
]

_NAMES = ("W_query", "W_key", "W_value")


_HEADS, _T, _BATCH, _BYTES = 25, 1024, 1, 4
_ATTENTION_BYTES = _BATCH * _HEADS * _T * _T * _BYTES  # 104_857_600


def check_attention_matrix_bytes(answer: object) -> CheckResult:
    """``answer``: an int, the bytes of a float32 (1, 25, 1024, 1024) attention-weight tensor."""
    name = "attention-matrix bytes (GPT-2 XL, T=1024)"
    if answer is None:
        return missing(name, "an int: batch * heads * T * T * bytes per float32")
    value = number(answer)
    if value is None:
        return fail(name, f"expected a number of bytes (an int), got {type(answer).__name__}.")
    if value == _ATTENTION_BYTES:
        return ok(name, f"correct: {_ATTENTION_BYTES:,} bytes = 100 MiB per layer.")
    if value == _ATTENTION_BYTES // _BYTES:
        return fail(name, "that is the number of floats; a float32 takes 4 bytes.")
    if value == _ATTENTION_BYTES // _HEADS:
        return fail(name, "each of the 25 heads has its own (T, T) matrix.")
    if value in (_BATCH * 1600 * _T * _BYTES, _ATTENTION_BYTES // 2):
        return fail(name, "the matrix is (T, T) per head: T * T entries, not T * d or half of it.")
    return fail(name, "count batch * heads * T * T entries, then multiply by 4 bytes (float32).")


def check_key_block(answer: object, fused: nn.Module) -> CheckResult:
    """``answer``: the (d_out, d_in) W_key block of ``fused.qkv.weight`` (rows d_out..2 d_out)."""
    name = "W_key cut out of the fused weight"
    if answer is None:
        return missing(name, "a (d_out, d_in) tensor: the key rows of fused.qkv.weight")
    qkv = getattr(fused, "qkv", None)
    if not isinstance(qkv, nn.Linear) or qkv.out_features % 3 != 0:
        return fail(name, "the second argument must be the lesson's fused module `fused_ex`.")
    if not isinstance(answer, torch.Tensor):
        return fail(name, f"expected a torch.Tensor, got {type(answer).__name__}.")
    weight = qkv.weight.detach()  # (3 d_out, d_in)
    d_out = qkv.out_features // 3
    w_query, w_key, w_value = weight.split(d_out, dim=0)  # each (d_out, d_in)
    got = answer.detach()
    if tuple(got.shape) != tuple(w_key.shape):
        if got.dim() == 2 and got.shape[0] == weight.shape[0]:
            return fail(
                name,
                f"shape {tuple(got.shape)}: the blocks are stacked along the ROWS (dim=0) of "
                f"the (3 * d_out, d_in) weight; W_key is {tuple(w_key.shape)}.",
            )
        return fail(
            name, f"shape {tuple(got.shape)} but expected {tuple(w_key.shape)} = (d_out, d_in)."
        )
    if torch.equal(got, w_key):
        return ok(name, "correct: rows d_out .. 2 * d_out - 1 are W_key.")
    if torch.equal(got, w_query):
        return fail(name, "that is W_query (the first block); the order is query, key, value.")
    if torch.equal(got, w_value):
        return fail(name, "that is W_value (the last block); the order is query, key, value.")
    return fail(name, "take rows d_out:2 * d_out of fused_ex.qkv.weight (or .split(d_out)[1]).")


# -- Build it: a fused-QKV multi-head attention class ------------------------------------------

# (d_in, d_out, context_length, num_heads, b, T): the book's size, then two with head_dim 4.
_BUILD_SIZES = ((3, 4, 6, 2, 2, 6), (8, 12, 10, 3, 2, 9), (6, 16, 9, 4, 3, 7))
_ORDERS = {
    "K, Q, V": (1, 0, 2),
    "Q, V, K": (0, 2, 1),
    "V, K, Q": (2, 1, 0),
    "K, V, Q": (1, 2, 0),
    "V, Q, K": (2, 0, 1),
}


def _reference(
    qkv: nn.Linear, out_proj: nn.Linear, x: torch.Tensor, num_heads: int, mistake: str = ""
) -> torch.Tensor:
    """The correct forward pass, or the one with ``mistake``, for naming what went wrong.

    ``mistake``: a key of ``_ORDERS`` (the fused output split in another order) or one of
    ``_contract.MISTAKES``.
    """
    d_out = out_proj.in_features
    blocks = list(qkv(x).split(d_out, dim=-1))  # 3 x (b, T, d_out)
    if mistake in _ORDERS:
        blocks = [blocks[i] for i in _ORDERS[mistake]]
        mistake = ""
    queries, keys, values = blocks
    return book_forward(queries, keys, values, num_heads, out_proj, mistake or None)


_MISTAKE_HINTS = {
    "no_scaling": "the scores are not scaled: divide Q @ K^T by sqrt(head_dim) before softmax.",
    "scale_d_out": (
        "scaled by sqrt(d_out); each head's dot products have head_dim terms, so divide by "
        "sqrt(head_dim) = sqrt(d_out // num_heads)."
    ),
    "split_no_transpose_merge_plain": (
        "Q, K, V were reshaped to (b, h, T, head_dim) without a transpose, which mixes tokens "
        "between heads: "
        "view to (b, T, h, head_dim), then .transpose(1, 2) (and transpose back before merging)."
    ),
    "transposed_mask": (
        "the mask is transposed: it hides the PAST and shows the future. Hide j > i: "
        "torch.triu(ones(T, T), diagonal=1), True/1 = hidden."
    ),
    "no_mask": "no causal mask: fill the scores above the diagonal with -inf before softmax.",
    "mask_after_softmax": (
        "the future was zeroed after softmax without renormalising, so rows sum to less than 1: "
        "fill the scores with -inf BEFORE softmax."
    ),
    "no_out_proj": "the heads are merged but out_proj is never applied: return self.out_proj(...).",
}


def _hint_for(module: Any, x: torch.Tensor, got: torch.Tensor, num_heads: int, which: str) -> str:
    with torch.no_grad():
        for mistake in [*_MISTAKE_HINTS, *_ORDERS]:
            wrong = _reference(module.qkv, module.out_proj, x, num_heads, mistake)
            if torch.allclose(got, wrong, atol=1e-5, rtol=1e-4):
                if mistake in _ORDERS:
                    return (
                        f"the fused output was split in the order {mistake}; qkv.weight stacks "
                        "W_query, W_key, W_value, so split(d_out, dim=-1) gives Q, K, V."
                    )
                return _MISTAKE_HINTS[mistake]
    return (
        f"{which} differs from mh.FusedQKVMultiHeadAttention with the same weights; check the "
        "order project -> split Q, K, V -> (b, h, T, head_dim) -> scores / sqrt(head_dim) -> "
        "mask -> softmax -> dropout -> @ V -> merge -> out_proj."
    )


def _blocks(grad: torch.Tensor | None, d_out: int) -> tuple[torch.Tensor | None, ...]:
    """The Q, K, V row blocks of qkv.weight's gradient (or three Nones)."""
    return (None, None, None) if grad is None else tuple(grad.split(d_out, dim=0))


def _values_one(module: Any, d_out: int) -> None:
    """Set V = 1 everywhere (value rows of qkv 0, their bias 1) and out_proj = identity."""
    module.qkv.bias.zero_()
    module.qkv.weight[2 * d_out :].zero_()
    module.qkv.bias[2 * d_out :].fill_(1.0)
    module.out_proj.weight.copy_(torch.eye(d_out))
    module.out_proj.bias.zero_()


def _build(cls: type, sizes: tuple[int, ...], dropout: float, qkv_bias: bool) -> Any:
    """An instance of the learner's class (typed Any: its layers are checked at run time)."""
    d_in, d_out, context_length, num_heads = sizes[:4]
    module = cls(d_in, d_out, context_length, dropout, num_heads, qkv_bias=qkv_bias)
    if not isinstance(module, nn.Module):
        raise TypeError(f"{cls.__name__}(...) is not an nn.Module")
    return module


def _structure_hint(module: nn.Module, d_in: int, d_out: int, qkv_bias: bool) -> str | None:
    """What is missing or mis-shaped in the module's layers, or None if they are right."""
    qkv = getattr(module, "qkv", None)
    if not isinstance(qkv, nn.Linear):
        if any(isinstance(getattr(module, n, None), nn.Linear) for n in _NAMES):
            return (
                "three separate W_query/W_key/W_value layers: this exercise wants ONE fused "
                "nn.Linear(d_in, 3 * d_out) named `qkv`."
            )
        return (
            "no nn.Linear named `qkv`: create self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)."
        )
    if (qkv.in_features, qkv.out_features) != (d_in, 3 * d_out):
        return (
            f"qkv is nn.Linear({qkv.in_features}, {qkv.out_features}); it must map d_in={d_in} "
            f"to 3 * d_out = {3 * d_out}."
        )
    if (qkv.bias is not None) != qkv_bias:
        return "qkv must have a bias exactly when qkv_bias=True: nn.Linear(..., bias=qkv_bias)."
    out_proj = getattr(module, "out_proj", None)
    if not isinstance(out_proj, nn.Linear):
        return "forgot out_proj: add self.out_proj = nn.Linear(d_out, d_out) and apply it last."
    if (out_proj.in_features, out_proj.out_features) != (d_out, d_out):
        return f"out_proj must be nn.Linear(d_out, d_out) = nn.Linear({d_out}, {d_out})."
    if out_proj.bias is None:
        return (
            "out_proj always has a bias (the book's nn.Linear(d_out, d_out)), even if qkv has none."
        )
    names = {name for name, _ in module.named_parameters()}
    extra = names - {"qkv.weight", "qkv.bias", "out_proj.weight", "out_proj.bias"}
    if extra:
        return f"unexpected parameters {sorted(extra)}: the block has only qkv and out_proj."
    return None


def _view_hint(error: BaseException) -> str:
    """Name the ``.view`` on a non-contiguous tensor, from the learner's line if it shows."""
    frames = traceback.extract_tb(error.__traceback__)
    line = (frames[-1].line or "") if frames else ""
    said = "a .view raised `view size is not compatible with input tensor's size and stride`"
    if "transpose" in line and "contiguous" not in line:
        return (
            f"{said} while merging the heads: after .transpose(1, 2) the tensor is not "
            "contiguous; merge with .contiguous().view(b, T, d_out) (or .reshape)."
        )
    return (
        f"{said}. Either the heads were merged without .contiguous() (after .transpose(1, 2) "
        "use .contiguous().view(b, T, d_out)), or Q, K, V were viewed straight to "
        "(b, h, T, head_dim): view to (b, T, h, head_dim), then .transpose(1, 2)."
    )


def _run(module: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor | None, str | None]:
    """``module(x)``, or None and a hint naming what went wrong."""
    try:
        out = module(x)
    except RuntimeError as error:
        if is_view_error(error):
            return None, _view_hint(error)
        return None, f"forward raised RuntimeError: {error}"
    except Exception as error:  # the learner's code: report it, never raise
        return None, f"forward raised {type(error).__name__}: {error}"
    if isinstance(out, tuple):
        return None, "forward(x) must return one tensor (b, T, d_out), not a tuple."
    if not isinstance(out, torch.Tensor):
        return None, f"forward(x) returned {type(out).__name__}, not a tensor."
    if not plain_tensor(out):
        return None, f"forward(x) returned a {type(out).__name__}; return a plain torch.Tensor."
    if out.dtype != x.dtype or out.device != x.device:
        return None, (
            f"forward returned {out.dtype} on {out.device} for a {x.dtype} input on {x.device}: "
            "keep the input's dtype and device (no .double(), no .to(...))."
        )
    return out, None


def check_build_fused_multihead(cls: object) -> CheckResult:
    """Contract tests for a learner's fused-QKV multi-head attention class.

    ``cls(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`` with one
    ``qkv = nn.Linear(d_in, 3 * d_out)`` and ``out_proj``; ``forward(x)`` for x (b, T, d_in) ->
    (b, T, d_out). Checked at three sizes: layers and parameter names, output shape, equality with
    ``mh.FusedQKVMultiHeadAttention`` after copying ``qkv``/``out_proj``, causality, rows summing
    to 1, dropout only in train mode, gradient flow to every parameter. A mismatch is compared
    with the typical mistakes so the hint can name one.
    """
    name = "build a fused-QKV MultiHeadAttention"
    not_a_class = class_answer(
        cls,
        name,
        missing_what="your class (the class itself, e.g. `FusedMultiHeadAttention`)",
        instance_hint="pass the class itself, not an instance: drop the (...) after its name.",
        not_class_hint="expected a class derived from nn.Module, got {kind}.",
    )
    if not_a_class is not None:
        return not_a_class
    assert isinstance(cls, type)

    with torch.random.fork_rng(devices=[]):  # seeds inside, the caller's RNG state is kept
        return _contract_tests(cls, name)


def _contract_tests(cls: type, name: str) -> CheckResult:
    """The tests of ``check_build_fused_multihead``, run with seeded weights and inputs."""

    for sizes in _BUILD_SIZES:
        d_in, d_out, context_length, num_heads, b, num_tokens = sizes
        where = f"at d_in={d_in}, d_out={d_out}, num_heads={num_heads}"
        torch.manual_seed(0)
        reference = FusedQKVMultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads).eval()
        try:
            module = _build(cls, sizes, 0.0, False)
        except Exception as error:
            return fail(
                name,
                f"{cls.__name__}(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False) "
                f"raised {type(error).__name__}: {error}",
            )
        hint = _structure_hint(module, d_in, d_out, False)
        if hint:
            return fail(name, hint)
        state = {k: v for k, v in reference.state_dict().items() if k.split(".")[0] != "mask"}
        with torch.no_grad():
            module.qkv.weight.copy_(state["qkv.weight"])
            module.out_proj.load_state_dict(reference.out_proj.state_dict())
        module.eval()
        x = 2.0 * torch.randn(b, num_tokens, d_in, generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            out, hint = _run(module, x)
            if hint:
                return fail(name, hint)
            assert out is not None
            want = reference(x)  # (b, T, d_out)
        if tuple(out.shape) != tuple(want.shape):
            return fail(
                name,
                f"output shape {tuple(out.shape)} {where}; expected (b, T, d_out) = "
                f"{tuple(want.shape)}.",
            )
        if not torch.allclose(out, want, atol=1e-5, rtol=1e-4):
            return fail(name, _hint_for(module, x, out, num_heads, f"the output {where}"))
        later = x.clone()
        later[:, -1] += 3.0  # change only the last token
        with torch.no_grad():
            changed, hint = _run(module, later)
        if hint or changed is None:
            return fail(name, hint or "forward failed on a second input.")
        if not torch.allclose(changed[:, :-1], out[:, :-1], atol=1e-6, rtol=0):
            return fail(name, "changing the last token changed earlier outputs: the mask leaks.")

    d_in, d_out, context_length, num_heads, b, num_tokens = _BUILD_SIZES[1]
    x = torch.randn(b, num_tokens, d_in, generator=torch.Generator().manual_seed(2))

    # Rows sum to 1: with V = 1 everywhere (value weights 0, value bias 1) and out_proj = identity,
    # every output entry is the sum of one row of weights.
    try:
        ones = _build(cls, _BUILD_SIZES[1], 0.0, True).eval()
    except Exception as error:
        return fail(name, f"building with qkv_bias=True raised {type(error).__name__}: {error}")
    hint = _structure_hint(ones, d_in, d_out, True)
    if hint:
        return fail(name, hint)
    with torch.no_grad():
        _values_one(ones, d_out)
        row_sums, hint = _run(ones, x)
    if hint or row_sums is None:
        return fail(name, hint or "forward failed with qkv_bias=True.")
    if not torch.allclose(row_sums, torch.ones_like(row_sums), atol=1e-5, rtol=0):
        return fail(
            name,
            "attention rows do not sum to 1 (with V = 1 the output should be all ones): mask "
            "with -inf BEFORE softmax, and softmax over the last dim (the keys).",
        )

    # Dropout: off in eval mode, on in train mode.
    torch.manual_seed(0)
    reference = FusedQKVMultiHeadAttention(d_in, d_out, context_length, 0.5, num_heads).eval()
    try:
        dropping = _build(cls, _BUILD_SIZES[1], 0.5, False)
    except Exception as error:
        return fail(name, f"building with dropout=0.5 raised {type(error).__name__}: {error}")
    with torch.no_grad():
        dropping.qkv.weight.copy_(reference.qkv.weight)
        dropping.out_proj.load_state_dict(reference.out_proj.state_dict())
        dropping.eval()
        out, hint = _run(dropping, x)
        if hint or out is None:
            return fail(name, hint or "forward failed with dropout=0.5.")
        if not torch.allclose(out, reference(x), atol=1e-5, rtol=1e-4):
            return fail(
                name,
                "with dropout=0.5 in eval() mode the output changes: dropout must be off in eval "
                "mode. Use self.dropout = nn.Dropout(dropout) and call self.dropout(weights), not "
                "F.dropout(..., training=True).",
            )
        dropping.train()
        torch.manual_seed(3)
        out_train, hint = _run(dropping, x)
        if hint or out_train is None:
            return fail(name, hint or "forward failed in train mode.")
    if torch.allclose(out_train, out, atol=1e-6, rtol=0):
        return fail(
            name,
            "with dropout=0.5 in train() mode nothing is dropped: apply self.dropout to the "
            "attention weights before multiplying with V.",
        )
    # Dropout acts on the weights: with V = 1 everywhere and out_proj = identity, every feature of
    # one head then gets the same (dropped, rescaled) row sum; dropout on the output does not.
    try:
        ones = _build(cls, _BUILD_SIZES[1], 0.5, True).train()
    except Exception as error:
        return fail(name, f"building with qkv_bias=True raised {type(error).__name__}: {error}")
    with torch.no_grad():
        _values_one(ones, d_out)
        torch.manual_seed(4)
        row_sums, hint = _run(ones, x)
    if hint or row_sums is None:
        return fail(name, hint or "forward failed in train mode with qkv_bias=True.")
    per_head = row_sums.view(b, num_tokens, num_heads, d_out // num_heads)  # (b, T, h, head_dim)
    if not torch.allclose(per_head, per_head[..., :1].expand_as(per_head), atol=1e-5, rtol=0):
        return fail(
            name,
            "dropout is applied after the weighted sum (to the context or the output); the book "
            "drops attention WEIGHTS: weights = self.dropout(weights), then weights @ V.",
        )

    # Dropout rescales the kept weights by 1 / (1 - p): the row sums (V = 1) average about 1.
    wide = torch.randn(16, num_tokens, d_in, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        torch.manual_seed(6)
        wide_sums, hint = _run(ones, wide)  # (16, T, d_out)
    if hint or wide_sums is None:
        return fail(name, hint or "forward failed in train mode with qkv_bias=True.")
    # The first token sees only itself: its one weight is dropped (0) or kept as 1 / (1 - p) = 2.
    first = wide_sums[:, 0]  # (16, d_out)
    odd = first[((first - 0.0).abs() > 1e-4) & ((first - 2.0).abs() > 1e-4)]
    if odd.numel() or not (first.abs() < 1e-4).any() or not (first > 1.0).any():
        seen = sorted({round(v, 3) for v in first.flatten().tolist()})[:4]
        return fail(
            name,
            "with dropout=0.5 in train() mode the first token's single weight (it sees only "
            f"itself) should be 0 when dropped or 1 / (1 - 0.5) = 2 when kept; got {seen}. Use "
            "nn.Dropout(dropout), with the dropout argument, on the attention weights.",
        )
    mean = wide_sums.mean().item()
    if not abs(mean - 1.0) < 0.2:
        return fail(
            name,
            f"with dropout=0.5 in train() mode the attention rows sum to {mean:.2f} on average, "
            "not about 1: dropout must scale the kept weights by 1 / (1 - p). nn.Dropout does "
            "that for you; do not multiply by (1 - p) yourself.",
        )

    # Gradients reach every parameter; train mode without dropout computes what eval mode does.
    module = _build(cls, _BUILD_SIZES[1], 0.0, True).train()
    out, hint = _run(module, x)
    if hint or out is None:
        return fail(name, hint or "forward failed.")
    torch.manual_seed(0)
    same = FusedQKVMultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads, qkv_bias=True)
    with torch.no_grad():
        same.qkv.load_state_dict(module.qkv.state_dict())
        same.out_proj.load_state_dict(module.out_proj.state_dict())
        want = same.train()(x)
    if not torch.allclose(out.detach(), want, atol=1e-5, rtol=1e-4):
        return fail(
            name,
            "in train() mode with dropout=0.0 the output differs from the book's class, although "
            "it matched in eval() mode: forward must compute the same thing in both modes; only "
            "the dropout layer may behave differently, and it drops nothing with dropout=0.0: "
            "nn.Dropout(dropout), with the argument.",
        )
    out.square().sum().backward()
    grads = {param_name: p.grad for param_name, p in module.named_parameters()}
    qkv_grad = grads.pop("qkv.weight")
    for block, part in zip(("query", "key", "value"), _blocks(qkv_grad, d_out)):
        grads[f"the {block} rows of qkv.weight"] = part
    for param_name, grad in grads.items():
        if grad is None or not bool(grad.abs().sum() > 0):
            return fail(
                name,
                f"no gradient reaches {param_name}: every layer must be used in forward "
                "(and nothing detached).",
            )
    return ok(
        name,
        "correct: same outputs as mh.FusedQKVMultiHeadAttention at 3 sizes, causal, rows sum "
        "to 1, dropout only in train mode, gradients reach qkv and out_proj.",
    )


def check_memory_growth(prediction: object) -> CheckResult:
    """Predict-then-run: 8 x the tokens multiply the (b, h, T, T) weights' bytes by 8^2 = 64."""
    name = "prediction: weights memory for 8x the tokens"
    if prediction is None:
        return missing(name, "a number: how many times more bytes the (b, h, T, T) weights take")
    value = number(prediction)
    if value is None:
        return fail(name, f"expected a number, got {type(prediction).__name__}.")
    if value == 64:
        return ok(name, "right: the tensor is T x T per head, so 8x the tokens cost 8 * 8 = 64x.")
    if value == 8:
        return fail(
            name, "that would be true for (b, h, T, head_dim) tensors; this one has T twice."
        )
    if value in (16, 24, 512):
        return fail(name, "count how often T appears in (b, h, T, T): twice, so the factor is 8^2.")
    return fail(name, "write the bytes as b * h * T * T * 4 and replace T by 8 T.")
