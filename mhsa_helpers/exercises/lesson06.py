"""Checkers for lesson 06, multi-head attention with split matrices (one big W, split into heads).

* ``check_head_dim(answer)`` -- head_dim of the largest GPT-2 (d_out=1600, 25 heads).
* ``check_mha_parameter_count(answer)`` -- parameters of ``MultiHeadAttention`` at GPT-2 medium
  size (d_in = d_out = 1024, 16 heads, ``qkv_bias=True``).
* ``check_split_into_heads(answer, x)`` -- a (b, T, d_out) tensor split into 4 heads,
  (b, num_heads, T, head_dim), the way ``MultiHeadAttention.forward`` does it.
* ``check_split_matmul_prediction(prediction)`` -- the predict-then-run moment: how many matmul
  calls a 12-head ``MultiHeadAttention`` makes.
* ``check_build_multihead(cls)`` -- the learner's whole ``MultiHeadAttention`` class, run through
  contract tests (shapes at several sizes, causality, rows summing to 1, equality with
  ``mh.MultiHeadAttention`` after copying the weights by the book's names, dropout in train mode
  only, gradients); a wrong class is matched against the typical mistakes, which the hint names.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..attention.multihead import MultiHeadAttention
from ..data import load_journey, reference
from ._common import (
    CheckResult,
    fail,
    missing,
    ok,
    plain_tensor,
    prediction_before_run,
    tensor_answer,
    whole_number,
)
from ._contract import ContractError, book_forward, class_answer, first_line, is_view_error

__all__ = [
    "check_build_multihead",
    "check_head_dim",
    "check_mha_parameter_count",
    "check_split_into_heads",
    "check_split_matmul_prediction",
]


def check_head_dim(answer: object) -> CheckResult:
    """A Llama-2-7B-sized block: d_out = 4096 split over 32 heads gives head_dim = 128."""
    name = "head_dim for d_out=4096, 32 heads"
    if answer is None:
        return missing(name, "an int: the width of each head")
    value = whole_number(answer)
    if value is None:
        return fail(name, f"expected a whole number, got {answer!r}.")
    if value == 128:
        return ok(name, "correct: 4096 // 32 = 128, twice GPT-2's head width of 64.")
    if value == 4096 * 32:
        return fail(name, "in MultiHeadAttention d_out is the TOTAL width: divide it by the heads.")
    if value == 4096:
        return fail(name, "4096 is the total width d_out; each of the 32 heads gets a slice.")
    if value == 64:
        return fail(name, "64 is GPT-2's head width; this model splits a different d_out.")
    return fail(name, "head_dim = d_out // num_heads.")


def check_mha_parameter_count(answer: object) -> CheckResult:
    """``MultiHeadAttention(1024, 1024, ..., num_heads=16, qkv_bias=True)``: 4*d*d + 4*d."""
    name = "MultiHeadAttention parameters at GPT-2 medium size"
    d = 1024
    expected = 4 * d * d + 4 * d  # 4_198_400
    if answer is None:
        return missing(name, "an int: the number of parameters")
    value = whole_number(answer)
    if value is None:
        return fail(name, f"expected a whole number, got {answer!r}.")
    if value == expected:
        return ok(name, f"correct: 4 * 1024^2 + 4 * 1024 = {expected:,}.")
    if value == 4 * d * d + d:
        return fail(name, "with qkv_bias=True W_query, W_key and W_value have a bias too.")
    if value == 4 * d * d:
        return fail(name, "the weights are right; add the biases (out_proj always has one).")
    if value in (3 * d * d + 3 * d, 3 * d * d):
        return fail(name, "don't forget out_proj, a (d_out, d_out) Linear with a bias.")
    if value in (4 * d * d // 16 + 4 * d, 4 * (d * d // 16) + 4 * d):
        return fail(name, "the heads do not divide the parameters: the matrices stay d x d.")
    return fail(name, "W_query, W_key, W_value: d*d + d each; out_proj: d*d + d.")


def check_split_into_heads(answer: object, x: torch.Tensor) -> CheckResult:
    """``x`` (b, T, d_out) -> (b, 4, T, d_out // 4): view to (b, T, 4, hd), then transpose(1, 2)."""
    name = "split into 4 heads"
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] % 4 != 0:
        return fail(name, "the second argument must be the exercise's (b, T, d_out) tensor x.")
    b, T, d_out = x.shape
    head_dim = d_out // 4
    expected = x.view(b, T, 4, head_dim).transpose(1, 2)  # (b, h, T, head_dim)
    if T > 1 and torch.equal(x.reshape(b, 4, T, head_dim), expected):
        return fail(name, "pass the exercise's x: with this x a wrong split would look right.")

    def hint(got: torch.Tensor) -> str:
        if torch.equal(got.detach().cpu(), x.reshape(b, 4, T, head_dim)):
            return (
                "viewing straight into (b, h, T, head_dim) mixes tokens and heads: view to "
                "(b, T, h, head_dim) first, then transpose(1, 2)."
            )
        return "x.view(b, T, num_heads, head_dim).transpose(1, 2)."

    if answer is None:
        return missing(name, f"a ({b}, 4, {T}, {head_dim}) tensor")
    if isinstance(answer, torch.Tensor) and tuple(answer.shape) == (b, T, 4, head_dim):
        return fail(name, "the heads are split; now transpose(1, 2) to put heads before tokens.")
    return tensor_answer(
        name, answer, expected, what=f"a ({b}, 4, {T}, {head_dim}) tensor", hint=hint, atol=0.0
    )


# -- predict, then run ----------------------------------------------------------------------------


def check_split_matmul_prediction(prediction: object) -> CheckResult:
    """Prediction: matmul calls (``linear`` + ``@``) of one forward pass of a 12-head
    ``MultiHeadAttention``. The next cell of the lesson counts them; this only judges the guess."""
    value = whole_number(prediction)
    return prediction_before_run(
        "prediction: matmul calls with 12 heads",
        prediction,
        value=value,
        guess="an int",
        kind="a whole number",
        correct=value == 4 + 2,
        right="right -- the next cell shows it for 1, 2, 4 and 12 heads.",
        wrong=(
            "not what happens. Run the next cell, then count in `forward` how many times each "
            "`nn.Linear` and each `@` runs -- does any line run once per head?"
        ),
    )


# -- build it: the whole MultiHeadAttention class ------------------------------------------------

_EXERCISE_BUILD = "build MultiHeadAttention"
# (d_in, d_out, context_length, num_heads, b, T): head_dim > 1 and != d_out, so a wrong scale
# shows; T < context_length, so an unsliced mask shows; all five sizes distinct in the first.
_SIZES = [(5, 12, 9, 3, 2, 7), (3, 2, 6, 2, 2, 6), (4, 8, 10, 4, 3, 5), (6, 6, 4, 1, 1, 4)]
_MISTAKES = {
    "no_scaling": "the scores are not scaled: divide them by sqrt(head_dim) before the softmax.",
    "scale_d_out": (
        "the scores are divided by sqrt(d_out); each head's dot products are head_dim long, so "
        "divide by sqrt(head_dim) (keys.shape[-1] ** 0.5 after the split)."
    ),
    "split_no_transpose": (
        "the heads are cut with `view(b, num_heads, T, head_dim)` straight away, which mixes "
        "tokens and heads: view to (b, T, num_heads, head_dim), then transpose(1, 2)."
    ),
    "split_no_transpose_merge_plain": (
        "the heads are cut with `view(b, num_heads, T, head_dim)` straight away, which mixes "
        "tokens and heads: view to (b, T, num_heads, head_dim), then transpose(1, 2)."
    ),
    "merge_no_transpose": (
        "the heads are merged without transposing back: (b, h, T, head_dim) must become "
        "(b, T, h, head_dim) with transpose(1, 2) before contiguous().view(b, T, d_out)."
    ),
    "no_out_proj": "the merged heads never go through out_proj: return self.out_proj(context_vec).",
    "transposed_mask": (
        "the mask is transposed: it hides the past instead of the future. True/1 must sit ABOVE "
        "the diagonal (torch.triu(..., diagonal=1)), where the key comes after the query."
    ),
    "mask_after_softmax": (
        "the future is masked after the softmax without renormalising, so rows no longer sum to "
        "1: fill the scores with -inf BEFORE the softmax."
    ),
    "mask_with_zero": (
        "the future scores are set to 0, not -inf; exp(0) = 1 still gives the future weight. "
        "Use masked_fill_(mask, -torch.inf)."
    ),
    "no_mask": "there is no causal mask: fill the future scores with -inf before the softmax.",
    "softmax_wrong_dim": (
        "the softmax runs over the wrong dimension: normalise each row, softmax(..., dim=-1)."
    ),
}


def _reference_forward(
    params: dict[str, torch.Tensor], x: torch.Tensor, num_heads: int, mistake: str | None = None
) -> torch.Tensor:
    """The book's forward, or the same with one typical ``mistake`` (a key of ``_MISTAKES``)."""

    def project(name: str) -> torch.Tensor:
        return F.linear(x, params[f"{name}.weight"], params.get(f"{name}.bias"))  # (b, T, d_out)

    def out_proj(merged: torch.Tensor) -> torch.Tensor:
        return F.linear(merged, params["out_proj.weight"], params["out_proj.bias"])  # (b, T, d_out)

    queries, keys, values = project("W_query"), project("W_key"), project("W_value")
    return book_forward(queries, keys, values, num_heads, out_proj, mistake)


def _construct(
    cls: type,
    d_in: int,
    d_out: int,
    context_length: int,
    dropout: float,
    num_heads: int,
    qkv_bias: bool = False,
) -> nn.Module:
    args = f"cls({d_in}, {d_out}, {context_length}, {dropout}, {num_heads}, qkv_bias={qkv_bias})"
    try:
        module = cls(d_in, d_out, context_length, dropout, num_heads, qkv_bias=qkv_bias)
    except Exception as error:
        raise ContractError(f"{args} raised {type(error).__name__}: {error}") from None
    if not isinstance(module, nn.Module):
        raise ContractError(f"{args} returned a {type(module).__name__}, not an nn.Module.")
    return module


def _load_reference(module: nn.Module, reference: nn.Module) -> None:
    """Copy the reference's parameters into ``module`` by the book's names, checking them."""
    expected = {name: p.shape for name, p in reference.named_parameters()}
    got = {name: p.shape for name, p in module.named_parameters()}
    if not got:
        raise ContractError(
            "your class has no parameters yet: create W_query, W_key, W_value and out_proj in "
            "__init__ (nn.Linear layers), then write forward following the table."
        )
    if "out_proj.weight" not in got:
        raise ContractError(
            "there is no out_proj: add self.out_proj = nn.Linear(d_out, d_out) and apply it to "
            "the merged heads (forgetting out_proj)."
        )
    missing_names = [name for name in expected if name not in got]
    if missing_names:
        raise ContractError(
            f"no parameter named {', '.join(missing_names)}: use the book's names W_query, "
            "W_key, W_value (nn.Linear(d_in, d_out, bias=qkv_bias)) and out_proj."
        )
    extra = [name for name in got if name not in expected]
    if extra:
        raise ContractError(
            f"unexpected parameters {', '.join(extra)}: the book's class has only W_query, "
            "W_key, W_value (biases only with qkv_bias=True) and out_proj."
        )
    for name, shape in expected.items():
        if got[name] != shape:
            raise ContractError(f"{name} has shape {tuple(got[name])}, expected {tuple(shape)}.")
    buffers = dict(module.named_buffers())
    if "mask" not in buffers:
        raise ContractError(
            "no buffer named mask: create the causal mask once with "
            'self.register_buffer("mask", torch.triu(torch.ones(context_length, '
            "context_length), diagonal=1)) and slice it in forward."
        )
    with torch.no_grad():
        mine = dict(module.named_parameters())
        for name, param in reference.named_parameters():
            mine[name].copy_(param)


def _run(module: nn.Module, x: torch.Tensor, where: str) -> torch.Tensor:
    """``module(x)``, turning errors into hints that name the usual cause."""
    b, T, _ = x.shape
    try:
        out = module(x)
    except RuntimeError as error:
        text = str(error)
        if is_view_error(error) or "use .reshape" in text.lower():
            raise ContractError(
                f"{where}: `view` raised on a non-contiguous tensor. After transpose(1, 2) the "
                "context vectors are not contiguous in memory: merge the heads with "
                ".contiguous().view(b, T, d_out) (or .reshape). Torch said: "
                f"{first_line(text)}"
            ) from None
        if "must match the size" in text or "size of tensor" in text.lower():
            raise ContractError(
                f"{where} with T={T} tokens: {first_line(text)}. Is the mask sliced to the "
                "input's length, self.mask.bool()[:T, :T]?"
            ) from None
        raise ContractError(
            f"{where}: forward raised {type(error).__name__}: {first_line(text)}"
        ) from None
    except Exception as error:
        raise ContractError(f"{where}: forward raised {type(error).__name__}: {error}") from None
    if isinstance(out, tuple):
        raise ContractError(f"{where}: forward(x) must return one tensor, got a tuple.")
    if not isinstance(out, torch.Tensor):
        raise ContractError(f"{where}: forward(x) must return a tensor, got {type(out).__name__}.")
    if not plain_tensor(out):
        raise ContractError(f"{where}: forward(x) returned a {type(out).__name__}, not a tensor.")
    if out.dtype != x.dtype or out.device != x.device:
        raise ContractError(
            f"{where}: forward returned {out.dtype} on {out.device} for a {x.dtype} input on "
            f"{x.device}: keep the input's dtype and device (no .double(), no .to(...))."
        )
    out_proj = dict(module.named_parameters()).get("out_proj.weight")
    d_out = None if out_proj is None else out_proj.shape[0]
    if d_out is not None and tuple(out.shape) != (b, T, d_out):
        raise ContractError(
            f"{where}: output shape {tuple(out.shape)}, expected (b, T, d_out) = {(b, T, d_out)}."
        )
    return out


def _diagnose(
    out: torch.Tensor, params: dict[str, torch.Tensor], x: torch.Tensor, num_heads: int, where: str
) -> str:
    """Name the typical mistake whose output ``out`` reproduces, or describe what is wrong."""
    for mistake, hint in _MISTAKES.items():
        try:
            candidate = _reference_forward(params, x, num_heads, mistake)
        except RuntimeError:
            continue
        if torch.allclose(out, candidate, atol=1e-5, rtol=1e-4, equal_nan=True):
            return f"{where}: {hint}"
    if not torch.isfinite(out).all():
        return f"{where}: the output has NaN or inf -- is a whole row of scores masked with -inf?"
    return (
        f"{where}: the output differs from the book's MultiHeadAttention with the same weights. "
        "Compare your forward step by step with the table of section 4 (shapes, mask, scale, "
        "merge, out_proj)."
    )


def _check_causal(module: nn.Module, x: torch.Tensor, where: str) -> None:
    """Changing token t (and later ones) must not change any output before t."""
    T = x.shape[1]
    t = T // 2
    changed = x.clone()
    changed[:, t:] = torch.randn_like(changed[:, t:]) * 3
    with torch.no_grad():
        before, after = module(x), module(changed)
    if not torch.allclose(before[:, :t], after[:, :t], atol=1e-6):
        raise ContractError(
            f"{where}: changing tokens {t}.. changed the outputs of earlier tokens -- the future "
            "leaks in. Mask the scores above the diagonal with -inf before the softmax."
        )


def _check_build_multihead(cls: object) -> CheckResult:
    name = _EXERCISE_BUILD
    not_a_class = class_answer(
        cls,
        name,
        missing_what="your class (the class itself, e.g. MyMultiHeadAttention)",
        instance_hint="pass the class itself, not an instance: check_build_multihead(MyClass).",
        not_class_hint="expected a subclass of nn.Module, got {cls!r}.",
    )
    if not_a_class is not None:
        return not_a_class
    assert isinstance(cls, type)
    try:
        for index, (d_in, d_out, context_length, num_heads, b, T) in enumerate(_SIZES):
            where = f"cls({d_in}, {d_out}, {context_length}, 0.0, {num_heads}) on x {(b, T, d_in)}"
            torch.manual_seed(100 + index)
            reference = MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads).eval()
            module = _construct(cls, d_in, d_out, context_length, 0.0, num_heads)
            _load_reference(module, reference)
            module.eval()
            x = torch.randn(b, T, d_in)  # (b, T, d_in)
            with torch.no_grad():
                out = _run(module, x, where)
                want = reference(x)
            if not torch.allclose(out, want, atol=1e-5, rtol=1e-4):
                params = {k: v.detach() for k, v in reference.named_parameters()}
                raise ContractError(_diagnose(out.detach(), params, x, num_heads, where))
            _check_causal(module, x, where)
        _check_rows_and_bias(cls)
        _check_gradients(cls)
        _check_dropout(cls)
    except ContractError as stop:
        return fail(name, str(stop))
    return ok(
        name,
        "correct: right shapes at every size, causal, rows sum to 1, equal to "
        "mh.MultiHeadAttention with the same weights (eval and seeded train mode), and every "
        "parameter gets a gradient.",
    )


def _reference_for(
    d_in: int, d_out: int, context_length: int, dropout: float, num_heads: int, **kwargs: bool
) -> MultiHeadAttention:
    return MultiHeadAttention(d_in, d_out, context_length, dropout, num_heads, **kwargs)


def _check_rows_and_bias(cls: type) -> None:
    """With qkv_bias=True, values fixed to 1 and an identity out_proj, the output is each head's
    row sums of the attention weights: all 1."""
    where = "with qkv_bias=True, values all 1 and out_proj the identity"
    torch.manual_seed(200)
    ref = _reference_for(5, 12, 9, 0.0, 3, qkv_bias=True).eval()
    module = _construct(cls, 5, 12, 9, 0.0, 3, qkv_bias=True)
    _load_reference(module, ref)
    module.eval()
    with torch.no_grad():
        for mod in (module, ref):
            params = dict(mod.named_parameters())
            params["W_value.weight"].zero_()
            params["W_value.bias"].fill_(1.0)
            params["out_proj.weight"].copy_(torch.eye(12))
            params["out_proj.bias"].zero_()
        out = _run(module, torch.randn(2, 7, 5), where)  # (b, T, d_out): row sums per head
    if not torch.allclose(out, torch.ones_like(out), atol=1e-5):
        raise ContractError(
            f"{where} the output should be all 1 (every row of attention weights sums to 1), "
            f"but ranges from {out.min().item():.4f} to {out.max().item():.4f}. Are the weights "
            "a softmax over the last dimension, with nothing zeroed after it?"
        )


def _check_dropout(cls: type) -> None:
    """Dropout acts on the weights in training mode only, like the book's ``nn.Dropout``."""
    where = "with dropout=0.5"
    torch.manual_seed(300)
    ref = _reference_for(5, 12, 9, 0.5, 3)
    module = _construct(cls, 5, 12, 9, 0.5, 3)
    _load_reference(module, ref)
    x = torch.randn(2, 7, 5)  # (b, T, d_in)
    module.eval()
    ref.eval()
    with torch.no_grad():
        first, second = _run(module, x, where), _run(module, x, where)
        want = ref(x)
    if not torch.equal(first, second) or not torch.allclose(first, want, atol=1e-5, rtol=1e-4):
        raise ContractError(
            f"{where} in eval mode the output is random or differs from the dropout-free result: "
            "dropout is applied in eval mode. Use self.dropout = nn.Dropout(dropout) (not "
            "F.dropout, whose training=True is the default) so that .eval() switches it off."
        )
    module.train()
    ref.train()
    with torch.no_grad():
        torch.manual_seed(301)
        out_train = _run(module, x, where)
        torch.manual_seed(301)
        want_train = ref(x)
    if torch.allclose(out_train, want, atol=1e-6):
        raise ContractError(
            f"{where} in training mode nothing is dropped: apply self.dropout to the attention "
            "weights after the softmax."
        )
    if not torch.allclose(out_train, want_train, atol=1e-5, rtol=1e-4):
        raise ContractError(
            f"{where} in training mode the output differs from the book's class with the same "
            "seed: apply self.dropout to the attention weights, right after the softmax and "
            "before the product with the values (the book's place)."
        )


def _check_gradients(cls: type) -> None:
    """Every parameter gets the same gradient as in the book's class."""
    where = "backward through your module"
    torch.manual_seed(400)
    ref = _reference_for(5, 12, 9, 0.0, 3, qkv_bias=True)
    module = _construct(cls, 5, 12, 9, 0.0, 3, qkv_bias=True)
    _load_reference(module, ref)
    x = torch.randn(2, 7, 5)  # (b, T, d_in)
    probe = torch.randn(2, 7, 12)  # (b, T, d_out): a random loss direction
    module.train()
    ref.train()
    out = _run(module, x, where)
    want = ref(x)
    if not torch.allclose(out.detach(), want.detach(), atol=1e-5, rtol=1e-4):
        raise ContractError(
            "in training mode (module.train(), dropout=0.0) the output differs from the book's "
            "class, although it matched in eval mode: forward must compute the same thing in "
            "both modes; only the dropout layer may behave differently, and it drops nothing "
            "with dropout=0.0: nn.Dropout(dropout), with the argument."
        )
    try:
        (out * probe).sum().backward()
    except Exception as error:  # backward itself failed
        raise ContractError(f"{where} raised {type(error).__name__}: {error}") from None
    (want * probe).sum().backward()
    mine = dict(module.named_parameters())
    for name, param in ref.named_parameters():
        grad = mine[name].grad
        if grad is None:
            raise ContractError(
                f"{name} gets no gradient: is it used in forward, without .detach() or "
                "torch.no_grad()?"
            )
        if param.grad is not None and not torch.allclose(grad, param.grad, atol=1e-5, rtol=1e-4):
            raise ContractError(f"{name} gets a different gradient than in the book's class.")


def _book_numbers_note(cls: type) -> str:
    """Whether seed 123 then ``cls(3, 2, 6, 0.0, 2)`` gives the book's printed numbers."""
    try:
        torch.manual_seed(123)
        module = cls(3, 2, 6, 0.0, 2).eval()
        with torch.no_grad():
            out = module(load_journey().batch)  # (2, 6, 2)
        book = reference("multihead_seed123_d_out2_heads2")  # (6, 2)
        if all(torch.allclose(seq, book, atol=1e-4) for seq in out):
            return " With torch.manual_seed(123) it prints the book's numbers too."
    except Exception:
        pass
    return (
        " (With torch.manual_seed(123) it does not print the book's numbers: create W_query, "
        "W_key, W_value, out_proj in that order if you want them.)"
    )


def check_build_multihead(cls: object) -> CheckResult:
    """Run the learner's ``MultiHeadAttention`` class through the book's contract.

    ``cls(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`` with ``forward(x)``
    for x (b, T, d_in) -> (b, T, d_out). Parameters are copied in from ``mh.MultiHeadAttention``
    by the book's names, so every test compares like with like. The global random state is left
    as it was.
    """
    with torch.random.fork_rng(devices=[]):
        result = _check_build_multihead(cls)
        if result:
            result = ok(result.exercise, result.message + _book_numbers_note(cls))  # type: ignore[arg-type]
    return result
