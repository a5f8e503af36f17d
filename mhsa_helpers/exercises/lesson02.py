"""Checkers for lesson 02, trainable query/key/value weights (查询、键、值).

* ``check_attn_weights_3(answer)`` -- the scaled attention weights of the query "starts" (x(3))
  with the seed-123 matrices of the lesson.
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

import torch
from torch import nn

from ..attention.self_attention import SelfAttentionV2
from ..data import book_inputs
from ._common import (
    CheckResult,
    fail,
    missing,
    number,
    ok,
    plain_tensor,
    prediction_result,
    tensor_answer,
)

__all__ = [
    "check_attn_weights_3",
    "check_build_self_attention",
    "check_prediction_saturation",
    "check_v1_to_v2",
]

_NAMES = ("W_query", "W_key", "W_value")


def _seed123_matrices() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # Same numbers as torch.manual_seed(123) then three torch.rand(3, 2), without touching the
    # global random state of the learner's notebook.
    generator = torch.Generator().manual_seed(123)
    W_query = torch.rand(3, 2, generator=generator)
    W_key = torch.rand(3, 2, generator=generator)
    W_value = torch.rand(3, 2, generator=generator)
    return W_query, W_key, W_value


def check_attn_weights_3(answer: object) -> CheckResult:
    """The scaled softmax weights of query x(3) "starts" against all six keys, shape (6,)."""
    name = "attention weights of 'starts'"
    inputs = book_inputs()  # (6, 3)
    W_query, W_key, _ = _seed123_matrices()
    queries = inputs @ W_query  # (6, 2)
    keys = inputs @ W_key  # (6, 2)
    scores = queries @ keys.T  # (6, 6)
    d_k = keys.shape[-1]
    weights = torch.softmax(scores / d_k**0.5, dim=-1)  # (6, 6)

    def close(got: torch.Tensor, want: torch.Tensor) -> bool:
        got = got.detach().to(torch.float64)
        return torch.allclose(got, want.to(torch.float64), atol=1e-4, rtol=0)

    def hint(got: torch.Tensor) -> str:
        if close(got, torch.softmax(scores[2], dim=-1)):
            return "not scaled: divide the scores by d_k**0.5 before the softmax."
        if close(got, scores[2]) or close(got, scores[2] / d_k**0.5):
            return "those are scores; apply torch.softmax(..., dim=-1) to turn them into weights."
        for row, word in enumerate(["Your", "journey", "starts", "with", "one", "step"]):
            if row != 2 and close(got, weights[row]):
                return f"that is the row of '{word}'; 'starts' is x(3) = inputs[2]."
        return (
            "query_3 = inputs[2] @ W_query; scores = query_3 @ keys.T; "
            "torch.softmax(scores / d_k**0.5, dim=-1), with the seed-123 W_query and W_key."
        )

    if isinstance(answer, torch.Tensor) and tuple(answer.shape) == (6, 6):
        return fail(name, "that is the whole (6, 6) matrix: take the row of 'starts' (index 2).")
    return tensor_answer(name, answer, weights[2], what="a (6,) tensor", hint=hint)


def check_v1_to_v2(answer: object, sa_v1: nn.Module, inputs: torch.Tensor) -> CheckResult:
    """``answer``: a V2-style module (``nn.Linear`` layers) carrying ``sa_v1``'s matrices."""
    name = "SelfAttentionV1 -> SelfAttentionV2 weight transfer"
    if answer is None:
        return missing(name, "your SelfAttentionV2 object after copying sa_v1's weights into it")
    if not isinstance(answer, nn.Module):
        return fail(name, f"expected a SelfAttentionV2 module, got {type(answer).__name__}.")
    matrices = {n: getattr(sa_v1, n, None) for n in _NAMES}
    if not all(isinstance(m, torch.Tensor) and m.dim() == 2 for m in matrices.values()):
        return fail(name, "the second argument must be the lesson's SelfAttentionV1 object sa_v1.")
    for n in _NAMES:
        layer = getattr(answer, n, None)
        if not isinstance(layer, nn.Linear):
            return fail(name, f"answer.{n} is not an nn.Linear: answer must be a SelfAttentionV2.")
        if layer.bias is not None:
            return fail(name, f"answer.{n} has a bias; V1 has none: build it with qkv_bias=False.")
        want = matrices[n].detach().T  # (d_out, d_in)
        w = layer.weight.detach()
        if tuple(w.shape) != tuple(want.shape):
            return fail(
                name, f"answer.{n}.weight has shape {tuple(w.shape)}, expected {tuple(want.shape)}."
            )
        if torch.equal(w, want.T) and not torch.equal(w, want):
            return fail(
                name,
                f"answer.{n}.weight holds sa_v1.{n} untransposed. nn.Linear computes "
                f"x @ weight.T, so weight must be sa_v1.{n}.T.",
            )
        if not torch.equal(w, want):
            for other in _NAMES:
                if other != n and torch.equal(w, matrices[other].detach().T):
                    return fail(name, f"answer.{n} holds sa_v1.{other}'s weights: match the names.")
            return fail(name, f"answer.{n}.weight differs from sa_v1.{n}.T.")
    try:
        with torch.no_grad():
            got = answer(inputs)
            want_out = sa_v1(inputs)
    except Exception as error:  # the learner's module may raise anything
        return fail(name, f"calling answer(inputs) raised {type(error).__name__}: {error}")
    if not plain_tensor(got) or tuple(got.shape) != tuple(want_out.shape):
        return fail(name, "answer(inputs) should return the (T, d_out) context vectors.")
    if not torch.allclose(got, want_out, atol=1e-6, rtol=0):
        return fail(name, "the weights match but the outputs differ: is forward V2's forward?")
    same = "bit for bit" if torch.equal(got, want_out) else "to 1e-6"
    return ok(name, f"correct: weight = W.T for all three layers, the outputs agree {same}.")


def check_prediction_saturation(prediction: object, reveal: bool = False) -> CheckResult:
    """The largest unscaled softmax weight (0..1) for the lesson's seed-123 query and 6 keys."""
    generator = torch.Generator().manual_seed(123)
    q = torch.randn(512, generator=generator)  # (d_k,)
    k = torch.randn(6, 512, generator=generator)  # (T, d_k)
    largest = float(torch.softmax(k @ q, dim=-1).max())
    value = number(prediction)
    if value is not None and not 0.0 <= value <= 1.0:
        value = None
    return prediction_result(
        "prediction: the largest weight without scaling",
        prediction,
        reveal=reveal,
        what="a number between 0 and 1 (one weight)",
        value=value,
        actual=f"{largest:.2f}",
        correct=value is not None and abs(value - largest) <= 0.05,
        explain=(
            "With d_k = 512 the scores are tens of units apart, and exp turns a gap of 20 into "
            "a factor of about 500 million: one weight takes (almost) everything."
        ),
    )


# -- build it: SelfAttentionV2 ------------------------------------------------------------------

_SIZES = ((3, 2, 6), (4, 4, 1), (8, 6, 5), (5, 3, 9))  # (d_in, d_out, T)


def _reference_variants(
    ref: SelfAttentionV2, x: torch.Tensor
) -> dict[str, tuple[torch.Tensor, str]]:
    """The outputs of the typical mistakes, computed with ``ref``'s weights, and their hints."""
    queries, keys, values = ref.W_query(x), ref.W_key(x), ref.W_value(x)  # (T, d_out) each
    scores = queries @ keys.T  # (T, T)
    d_k = keys.shape[-1]
    d_in = x.shape[-1]
    variants = {
        "no scaling": (
            torch.softmax(scores, dim=-1) @ values,
            "no 1/sqrt(d_k) scaling: divide the scores by keys.shape[-1] ** 0.5 before softmax.",
        ),
        "scaled by d_k": (
            torch.softmax(scores / d_k, dim=-1) @ values,
            "you divided by d_k; divide by its square root, keys.shape[-1] ** 0.5.",
        ),
        "softmax over queries": (
            torch.softmax(scores / d_k**0.5, dim=0) @ values,
            "softmax over dim=0 normalises each column; every query's row must sum to 1: dim=-1.",
        ),
        "keys @ queries.T": (
            torch.softmax(scores.T / d_k**0.5, dim=-1) @ values,
            "the score matrix is transposed: row i must be query i against every key, "
            "queries @ keys.T (not keys @ queries.T).",
        ),
        "weights.T": (
            torch.softmax(scores / d_k**0.5, dim=-1).T @ values,
            "the weights are transposed in the weighted sum: context = attn_weights @ values.",
        ),
        "queries as values": (
            torch.softmax(scores / d_k**0.5, dim=-1) @ queries,
            "the weighted sum mixes the queries; it must mix the values (self.W_value(x)).",
        ),
        "keys as values": (
            torch.softmax(scores / d_k**0.5, dim=-1) @ keys,
            "the weighted sum mixes the keys; it must mix the values (self.W_value(x)).",
        ),
    }
    if d_in != d_k:
        variants["scaled by d_in"] = (
            torch.softmax(scores / d_in**0.5, dim=-1) @ values,
            "you scaled by sqrt(d_in); the scaling uses the key size d_k = keys.shape[-1].",
        )
    return variants


def _make(cls: type, *args: object, **kwargs: object) -> tuple[nn.Module | None, str]:
    try:
        module = cls(*args, **kwargs)
    except NotImplementedError:
        return None, "the class is not written yet (it raises NotImplementedError)."
    except Exception as error:  # the learner's code may raise anything
        call = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
        return None, f"{cls.__name__}({call}) raised {type(error).__name__}: {error}"
    if not isinstance(module, nn.Module):
        return None, f"{cls.__name__}(...) must be an nn.Module: subclass nn.Module."
    return module, ""


def check_build_self_attention(cls: object) -> CheckResult:
    """Contract tests for a learner's ``SelfAttentionV2`` class (the book's semantics)."""
    name = "build SelfAttentionV2"
    if cls is None:
        return missing(name, "your class (write `answer = MySelfAttentionV2`, no parentheses)")
    if not isinstance(cls, type):
        return fail(
            name,
            f"expected a class, got {type(cls).__name__}: pass the class itself, "
            "not an object made from it.",
        )
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return _check_self_attention_class(cls, name)


def _check_self_attention_class(cls: type, name: str) -> CheckResult:
    for d_in, d_out, T in _SIZES:
        module, problem = _make(cls, d_in, d_out)
        if module is None:
            return fail(name, problem)
        layers = {n: getattr(module, n, None) for n in _NAMES}
        for n, layer in layers.items():
            if not isinstance(layer, nn.Linear):
                return fail(
                    name,
                    f"self.{n} should be nn.Linear(d_in, d_out, bias=qkv_bias), got "
                    f"{type(layer).__name__}. Use the book's names W_query, W_key, W_value.",
                )
            if (layer.in_features, layer.out_features) != (d_in, d_out):
                return fail(
                    name,
                    f"with d_in={d_in}, d_out={d_out}, self.{n} is nn.Linear("
                    f"{layer.in_features}, {layer.out_features}): it must map d_in -> d_out.",
                )
            if layer.bias is not None:
                return fail(name, f"self.{n} has a bias by default: use bias=qkv_bias, False.")
        ref = SelfAttentionV2(d_in, d_out)
        try:
            ref.load_state_dict(module.state_dict())
        except Exception:  # extra or missing parameters
            extra = sorted(set(module.state_dict()) - set(ref.state_dict()))
            return fail(
                name,
                f"the module has parameters the book's class has not: {extra}. "
                "SelfAttentionV2 holds only W_query, W_key, W_value.",
            )
        x = torch.rand(T, d_in)  # (T, d_in)
        try:
            got = module(x.clone())
        except Exception as error:  # the learner's code may raise anything
            return fail(
                name,
                f"forward on x of shape {(T, d_in)} (d_in={d_in}, d_out={d_out}) raised "
                f"{type(error).__name__}: {error}",
            )
        if not isinstance(got, torch.Tensor):
            return fail(name, f"forward returned {type(got).__name__}; return context_vec.")
        if not plain_tensor(got):
            return fail(name, f"forward returned a {type(got).__name__}; return a plain tensor.")
        if tuple(got.shape) != (T, d_out):
            return fail(
                name,
                f"forward on x {(T, d_in)} returned shape {tuple(got.shape)}, expected "
                f"(T, d_out) = {(T, d_out)}.",
            )
        if got.dtype != x.dtype or got.device != x.device:
            return fail(
                name,
                f"forward on a {x.dtype} input on {x.device} returned {got.dtype} on "
                f"{got.device}: keep the input's dtype and device (no .double(), no .to(...)).",
            )
        with torch.no_grad():
            want = ref(x)  # (T, d_out)
            if not torch.allclose(got.detach(), want, atol=1e-5, rtol=0):
                for output, hint in _reference_variants(ref, x).values():
                    shape_ok = tuple(output.shape) == tuple(got.shape)
                    if shape_ok and torch.allclose(got.detach(), output, atol=1e-5, rtol=0):
                        return fail(name, hint)
                return fail(
                    name,
                    f"with d_in={d_in}, d_out={d_out}, T={T} the output differs from "
                    "mh.SelfAttentionV2 holding the same weights. Recipe: keys, queries, values "
                    "from the three layers; attn_scores = queries @ keys.T; softmax of "
                    "attn_scores / keys.shape[-1] ** 0.5 over dim=-1; attn_weights @ values.",
                )
        problem = _same_in_eval_mode(module, x, want)
        if problem:
            return fail(name, problem)
        problem = _rows_sum_to_one(module, d_in, d_out, T)
        if problem:
            return fail(name, problem)
        problem = _gradients_reach_every_parameter(module, x) if T > 1 else ""
        if problem:
            return fail(name, problem)
    biased, problem = _make(cls, 3, 2, qkv_bias=True)
    if biased is None:
        return fail(name, f"the book's signature is (d_in, d_out, qkv_bias=False); {problem}")
    if not all(getattr(getattr(biased, n), "bias", None) is not None for n in _NAMES):
        return fail(name, "qkv_bias=True should give the three layers a bias: bias=qkv_bias.")
    sizes = ", ".join(f"({d_in}, {d_out})" for d_in, d_out, _ in _SIZES)
    return ok(
        name,
        f"correct: equals mh.SelfAttentionV2 for (d_in, d_out) in {sizes}, weights sum to 1 per "
        "row, gradients reach W_query, W_key and W_value, and qkv_bias works.",
    )


def _same_in_eval_mode(module: nn.Module, x: torch.Tensor, want: torch.Tensor) -> str:
    """SelfAttentionV2 has no dropout: ``.eval()`` must not change what forward computes."""
    module.eval()
    try:
        with torch.no_grad():
            got = module(x.clone())
    finally:
        module.train()
    if not (plain_tensor(got) and tuple(got.shape) == tuple(want.shape)) or not torch.allclose(
        got, want, atol=1e-5, rtol=0
    ):
        return (
            "after module.eval() the output changes (or is no longer right): SelfAttentionV2 has "
            "no dropout and no train/eval difference; forward must not depend on self.training."
        )
    return ""


def _rows_sum_to_one(module: nn.Module, d_in: int, d_out: int, T: int) -> str:
    """Values that are all 1 make every context entry equal the row sum of the weights."""
    x = torch.rand(T, d_in)
    x[:, 0] = 1.0  # (T, d_in), first feature constant
    W_value = module.W_value
    if not isinstance(W_value, nn.Linear):
        return "self.W_value must be an nn.Linear."
    with torch.no_grad():
        saved = W_value.weight.detach().clone()
        W_value.weight.zero_()
        W_value.weight[:, 0] = 1.0  # every value entry = x[:, 0] = 1
        try:
            out = module(x)  # (T, d_out): the row sums of the attention weights
        finally:
            W_value.weight.copy_(saved)
    if not plain_tensor(out) or not torch.allclose(out, torch.ones(T, d_out), atol=1e-5):
        return (
            "when every value is 1 the output should be all ones: the weights' rows must sum to 1."
        )
    return ""


def _gradients_reach_every_parameter(module: nn.Module, x: torch.Tensor) -> str:
    module.zero_grad(set_to_none=True)
    out = module(x)
    (out * torch.rand(out.shape)).sum().backward()
    for n in _NAMES:
        grad = getattr(module, n).weight.grad
        if grad is None or not torch.isfinite(grad).all() or grad.abs().sum() == 0:
            return (
                f"no gradient reaches {n}.weight: compute with the layers themselves (no "
                ".detach(), no torch.no_grad(), no .data) so that training can update them."
            )
    module.zero_grad(set_to_none=True)
    return ""
