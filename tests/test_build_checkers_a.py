"""New checkers of lessons 01-03: the build-it checkers (a learner's SelfAttentionV2 class, a
learner's causal-weights function), the predict-then-run checkers and the exercise variants.

Each build-it checker gets correct answers and the typical wrong ones, written here as small wrong
classes and functions; every wrong one must get NOT YET with the hint that names its mistake."""

from __future__ import annotations

import pytest
import torch
from exercise_checks import assert_not_yet, assert_pass
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex

INPUTS = mh.book_inputs()  # (6, 3)


# -- build it: SelfAttentionV2 -------------------------------------------------------------------


class BookV2(nn.Module):
    """The book's SelfAttentionV2, as the solutions notebook writes it."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def attention(self, queries, keys, values):
        attn_scores = queries @ keys.T  # (T, T)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values  # (T, d_out)

    def forward(self, x):
        return self.attention(self.W_query(x), self.W_key(x), self.W_value(x))


class ValuesFirstV2(BookV2):
    """Correct too: layers created in another order and forward written differently."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        nn.Module.__init__(self)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        return torch.softmax(torch.einsum("id,jd->ij", q, k) / k.shape[-1] ** 0.5, dim=-1) @ v


class NoScaling(BookV2):
    def attention(self, queries, keys, values):
        return torch.softmax(queries @ keys.T, dim=-1) @ values


class ScaledByDk(BookV2):
    def attention(self, queries, keys, values):
        return torch.softmax(queries @ keys.T / keys.shape[-1], dim=-1) @ values


class ScaledByDin(BookV2):
    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        return torch.softmax(q @ k.T / x.shape[-1] ** 0.5, dim=-1) @ v


class SoftmaxOverColumns(BookV2):
    def attention(self, queries, keys, values):
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=0) @ values


class KeysTimesQueries(BookV2):
    def attention(self, queries, keys, values):
        return torch.softmax(keys @ queries.T / keys.shape[-1] ** 0.5, dim=-1) @ values


class MixesKeys(BookV2):
    def attention(self, queries, keys, values):
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ keys


class Detached(BookV2):
    def forward(self, x):
        with torch.no_grad():
            q, k = self.W_query(x), self.W_key(x)
        return self.attention(q, k, self.W_value(x))


class WithBias(BookV2):
    def __init__(self, d_in, d_out, qkv_bias=True):
        super().__init__(d_in, d_out, qkv_bias)


class OneSharedLayer(BookV2):
    """One nn.Linear under three names: queries, keys and values share one weight matrix."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__(d_in, d_out, qkv_bias)
        self.W_query = self.W_key = self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)


class NoBiasArgument(BookV2):
    def __init__(self, d_in, d_out):
        super().__init__(d_in, d_out)


class RawParameters(nn.Module):
    """V1 style: raw matrices instead of nn.Linear."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        q, k, v = x @ self.W_query, x @ self.W_key, x @ self.W_value
        return torch.softmax(q @ k.T / k.shape[-1] ** 0.5, dim=-1) @ v


class OtherNames(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.query = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        return x


class ExtraLayer(BookV2):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__(d_in, d_out, qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x):
        return self.out_proj(super().forward(x))


class FixedSize(BookV2):
    def forward(self, x):
        return super().forward(x.view(6, 3))


class Scaffold(nn.Module):
    """What the lesson ships: the scaffold, not filled in yet."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        raise NotImplementedError


@pytest.mark.parametrize("cls", [BookV2, ValuesFirstV2, mh.SelfAttentionV2])
def test_build_self_attention_passes_correct_classes(cls):
    result = ex.check_build_self_attention(cls)
    assert_pass(result)
    assert "qkv_bias works" in repr(result)


@pytest.mark.parametrize(
    ("cls", "fragments"),
    [
        (NoScaling, ["no 1/sqrt(d_k) scaling"]),
        (ScaledByDk, ["divided by d_k", "square root"]),
        (ScaledByDin, ["sqrt(d_in)", "d_k"]),
        (SoftmaxOverColumns, ["dim=0", "dim=-1"]),
        (KeysTimesQueries, ["transposed", "queries @ keys.T"]),
        (MixesKeys, ["mixes the keys"]),
        (Detached, ["no gradient reaches W_query.weight"]),
        (WithBias, ["bias by default"]),
        (OneSharedLayer, ["not three layers", "its own nn.Linear call"]),
        (NoBiasArgument, ["qkv_bias=False", "TypeError"]),
        (RawParameters, ["nn.Linear", "got Parameter"]),
        (OtherNames, ["W_query", "book's names"]),
        (ExtraLayer, ["parameters the book's class has not", "out_proj"]),
        (FixedSize, ["raised RuntimeError"]),
        (Scaffold, ["not written yet"]),
    ],
)
def test_build_self_attention_names_the_mistake(cls, fragments):
    assert_not_yet(ex.check_build_self_attention(cls), *fragments)


class NotAModule:
    def __init__(self, d_in, d_out, qkv_bias=False):
        self.d_in = d_in


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        (None, "no answer yet"),
        (BookV2(3, 2), "expected a class"),
        ("SelfAttentionV2", "expected a class"),
        (NotAModule, "must be an nn.Module"),
    ],
)
def test_build_self_attention_odd_answers(answer, fragment):
    assert_not_yet(ex.check_build_self_attention(answer), fragment)


def test_build_self_attention_leaves_the_global_random_state_alone():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    ex.check_build_self_attention(BookV2)
    torch.testing.assert_close(torch.rand(3), expected)


# -- build it: causal weights ----------------------------------------------------------------------


def causal_weights(attn_scores, window=None):
    T = attn_scores.shape[-1]
    hidden = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # (T, T): the future
    if window is not None:
        hidden = hidden | torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-window)
    return torch.softmax(attn_scores.masked_fill(hidden, -torch.inf), dim=-1)


def three_step(attn_scores, window=None):
    T = attn_scores.shape[-1]
    keep = torch.tril(torch.ones(T, T))
    if window is not None:
        keep = keep * torch.triu(torch.ones(T, T), diagonal=-(window - 1))
    weights = torch.softmax(attn_scores, dim=-1) * keep
    return weights / weights.sum(dim=-1, keepdim=True)


def with_package(attn_scores, window=None):
    T = attn_scores.shape[-1]
    i, j = torch.arange(T)[:, None], torch.arange(T)
    hidden = mh.causal_mask(T).bool() | ((i - j >= window) if window else torch.zeros(T, T).bool())
    return torch.softmax(attn_scores.masked_fill(hidden, -torch.inf), dim=-1)


def ignores_window(attn_scores, window=None):
    return causal_weights(attn_scores)


def window_off_by_one(attn_scores, window=None):
    return causal_weights(attn_scores, None if window is None else window + 1)


def window_without_causal(attn_scores, window=None):
    if window is None:
        return causal_weights(attn_scores)
    T = attn_scores.shape[-1]
    old = torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-window)
    return torch.softmax(attn_scores.masked_fill(old, -torch.inf), dim=-1)


def no_renormalising(attn_scores):
    T = attn_scores.shape[-1]
    return torch.softmax(attn_scores, dim=-1) * torch.tril(torch.ones(T, T))


def transposed_mask(attn_scores):
    T = attn_scores.shape[-1]
    keep = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1).T
    return torch.softmax(attn_scores.masked_fill(keep, -torch.inf), dim=-1)


def masks_diagonal(attn_scores):
    T = attn_scores.shape[-1]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool))
    return torch.softmax(attn_scores.masked_fill(future, -torch.inf), dim=-1)


def forgets_result(attn_scores):
    T = attn_scores.shape[-1]
    attn_scores.clone().masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), -torch.inf)
    return torch.softmax(attn_scores, dim=-1)


def scales_again(attn_scores):
    return causal_weights(attn_scores / attn_scores.shape[-1] ** 0.5)


def wrong_dim(attn_scores):
    T = attn_scores.shape[-1]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    return torch.softmax(attn_scores.masked_fill(future, -torch.inf), dim=-2)


def fills_zero(attn_scores):
    T = attn_scores.shape[-1]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    return torch.softmax(attn_scores.masked_fill(future, 0.0), dim=-1)


def in_place(attn_scores):
    T = attn_scores.shape[-1]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    return torch.softmax(attn_scores.masked_fill_(future, -torch.inf), dim=-1)


def fixed_six(attn_scores):
    future = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
    return torch.softmax(attn_scores.masked_fill(future, -torch.inf), dim=-1)


def two_d_only(attn_scores):
    T = attn_scores.shape[0]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    return torch.softmax(attn_scores.masked_fill(future, -torch.inf), dim=1)


def detaches(attn_scores):
    return causal_weights(attn_scores.detach())


def scaffold(attn_scores):
    raise NotImplementedError


@pytest.mark.parametrize("fn", [causal_weights, three_step, with_package])
def test_build_causal_weights_passes_correct_functions(fn):
    assert_pass(ex.check_build_causal_weights(fn))


@pytest.mark.parametrize(
    ("fn", "fragments"),
    [
        (no_renormalising, ["without renormalising"]),
        (transposed_mask, ["transposed"]),
        (masks_diagonal, ["nan", "diagonal=1"]),
        (forgets_result, ["no mask was applied", "NEW tensor"]),
        (scales_again, ["already divided by sqrt(d_k)"]),
        (wrong_dim, ["dim=-2", "dim=-1"]),
        (fills_zero, ["-torch.inf"]),
        (in_place, ["changed the scores", "masked_fill_"]),
        (fixed_six, ["raised RuntimeError", "attn_scores.shape[-1]"]),
        (two_d_only, ["raised RuntimeError", "shape[-1]"]),
        (detaches, ["no gradient reaches the scores"]),
        (scaffold, ["not written yet"]),
        (ignores_window, ["window is ignored"]),
        (window_off_by_one, ["off by one"]),
        (window_without_causal, ["future is visible again"]),
        (lambda attn_scores: causal_weights(attn_scores), ["second argument", "window=None"]),
    ],
)
def test_build_causal_weights_names_the_mistake(fn, fragments):
    assert_not_yet(ex.check_build_causal_weights(fn), *fragments)


def test_build_causal_weights_catches_a_leaking_future():
    def leaks(attn_scores, window=None):
        weights = causal_weights(attn_scores, window)
        return weights + 0.0 * attn_scores[..., :1, -1:]  # harmless here ...

    assert_pass(ex.check_build_causal_weights(leaks))

    def leaks_for_real(attn_scores):
        w = causal_weights(attn_scores).clone()
        w[..., :, 0] = w[..., :, 0] + 1e-3 * torch.tanh(attn_scores[..., :1, -1:].squeeze(-1))
        return w / w.sum(dim=-1, keepdim=True)

    assert_not_yet(ex.check_build_causal_weights(leaks_for_real), "NOT YET")


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        (None, "no answer yet"),
        (torch.ones(6, 6), "expected a function"),
        (nn.Linear, "expected a function"),
        (lambda s: s.tolist(), "not a tensor"),
        (lambda s: s[..., :1], "shape"),
        (lambda s: s > 0, "dtype"),
    ],
)
def test_build_causal_weights_odd_answers(answer, fragment):
    assert_not_yet(ex.check_build_causal_weights(answer), fragment)


# -- predict, then run ---------------------------------------------------------------------------

PREDICTIONS = [
    (ex.check_prediction_self_match, 2, 5, "2 of 6"),
    (ex.check_prediction_saturation, 1.0, 0.4, "1.00"),
    (ex.check_prediction_changed_weights, 6, 30, "6 of 36"),
]


@pytest.mark.parametrize(("check", "right", "wrong", "shown"), PREDICTIONS)
def test_prediction_cell_never_reveals_the_answer(check, right, wrong, shown):
    empty = check(None)
    assert not empty and "no prediction yet" in repr(empty) and shown not in repr(empty)
    for guess in (right, wrong):
        noted = check(guess)
        assert not noted
        assert repr(noted).startswith("[NOTED] "), repr(noted)
        assert "written down" in repr(noted) and shown not in repr(noted)


@pytest.mark.parametrize(("check", "right", "wrong", "shown"), PREDICTIONS)
def test_prediction_is_judged_after_the_run(check, right, wrong, shown):
    assert_pass(check(right, reveal=True))
    assert shown in repr(check(right, reveal=True))
    assert_not_yet(check(wrong, reveal=True), "you predicted", shown)
    assert_not_yet(check(None, reveal=True), "no prediction was written", shown)


@pytest.mark.parametrize(
    ("check", "bad"),
    [
        (ex.check_prediction_self_match, 7),
        (ex.check_prediction_self_match, "two"),
        (ex.check_prediction_self_match, 2.5),
        (ex.check_prediction_saturation, 1.5),
        (ex.check_prediction_saturation, "high"),
        (ex.check_prediction_changed_weights, -1),
        (ex.check_prediction_changed_weights, True),
    ],
)
def test_prediction_of_the_wrong_kind(check, bad):
    for reveal in (False, True):
        assert_not_yet(check(bad, reveal=reveal), "expected")
    assert_not_yet(check(2, reveal="yes"), "reveal must be True or False")


def test_saturation_prediction_accepts_a_near_guess():
    assert_pass(ex.check_prediction_saturation(0.97, reveal=True))
    assert_not_yet(ex.check_prediction_saturation(0.9, reveal=True), "1.00")


# -- exercise variants -----------------------------------------------------------------------------


def test_context_vector_new_token():
    new = torch.tensor(ex.NEW_TOKEN_EMBEDDING)
    seven = torch.cat([INPUTS, new.unsqueeze(0)])  # (7, 3)
    right = torch.softmax(seven @ new, dim=0) @ seven
    assert_pass(ex.check_context_vector_new_token(right))
    assert_not_yet(ex.check_context_vector_new_token(None), "no answer yet")
    six_only = torch.softmax(INPUTS @ new, dim=0) @ INPUTS
    assert_not_yet(ex.check_context_vector_new_token(six_only), "only the book's six tokens")
    scores = seven @ new
    assert_not_yet(ex.check_context_vector_new_token(scores / scores.sum() @ seven), "sum norm")
    assert_not_yet(ex.check_context_vector_new_token(scores @ seven), "not normalized")
    assert_not_yet(ex.check_context_vector_new_token(new.clone()), "embedding of 'forward'")
    all_rows = torch.softmax(seven @ seven.T, dim=-1) @ seven
    assert_not_yet(ex.check_context_vector_new_token(all_rows), "(7, 3)")


def softmax_rows(x):
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


def test_softmax_rows():
    assert_pass(ex.check_softmax_rows(softmax_rows))
    # stable too, through logsumexp: 2e-5 off in float32 at scores near 1000, and passed
    assert_pass(
        ex.check_softmax_rows(lambda x: torch.exp(x - torch.logsumexp(x, -1, keepdim=True)))
    )
    assert_not_yet(ex.check_softmax_rows(lambda x: torch.softmax(x, dim=-1)), "torch's softmax")
    assert_not_yet(ex.check_softmax_rows(None), "no answer yet")
    assert_not_yet(ex.check_softmax_rows(softmax_rows(INPUTS)), "expected a function")

    def one_max(x):
        e = torch.exp(x - x.max())
        return e / e.sum(dim=-1, keepdim=True)

    assert_not_yet(ex.check_softmax_rows(one_max), "each row's own maximum")

    def no_keepdim(x):
        e = torch.exp(x - x.max(dim=-1).values)
        return e / e.sum(dim=-1, keepdim=True)

    assert_not_yet(ex.check_softmax_rows(no_keepdim), "keepdim=True")

    def columns(x):
        e = torch.exp(x - x.max(dim=0, keepdim=True).values)
        return e / e.sum(dim=0, keepdim=True)

    assert_not_yet(ex.check_softmax_rows(columns), "dim=-1")

    def naive(x):
        return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)

    assert_not_yet(ex.check_softmax_rows(naive), "overflowed")

    def flat_sum(x):
        e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
        return e / e.sum()

    assert_not_yet(ex.check_softmax_rows(flat_sum), "expected")


def test_attention_received():
    weights = torch.softmax(INPUTS @ INPUTS.T, dim=-1)
    assert_pass(ex.check_attention_received(weights.sum(dim=0)))
    assert_not_yet(ex.check_attention_received(None), "no answer yet")
    assert_not_yet(ex.check_attention_received(weights.sum(dim=-1)), "row sums", "dim=0")
    assert_not_yet(ex.check_attention_received((INPUTS @ INPUTS.T).sum(dim=0)), "raw scores")
    assert_not_yet(ex.check_attention_received(weights), "shape (6, 6)")


def test_v1_to_v2():
    torch.manual_seed(123)
    sa_v1 = mh.SelfAttentionV1(3, 2)
    torch.manual_seed(789)
    answer = mh.SelfAttentionV2(3, 2)
    answer.W_query.weight = nn.Parameter(sa_v1.W_query.T)
    answer.W_key.weight = nn.Parameter(sa_v1.W_key.T)
    answer.W_value.weight = nn.Parameter(sa_v1.W_value.T)
    assert_pass(ex.check_v1_to_v2(answer, sa_v1, INPUTS))
    assert_not_yet(ex.check_v1_to_v2(None, sa_v1, INPUTS), "no answer yet")
    assert_not_yet(ex.check_v1_to_v2(sa_v1, sa_v1, INPUTS), "not an nn.Linear")
    untouched = mh.SelfAttentionV2(3, 2)
    assert_not_yet(
        ex.check_v1_to_v2(untouched, sa_v1, INPUTS), "not hold sa_v1's matrix yet", "nn.Parameter"
    )
    square = mh.SelfAttentionV2(3, 3)
    torch.manual_seed(123)
    square_v1 = mh.SelfAttentionV1(3, 3)
    square.W_query.weight = nn.Parameter(square_v1.W_query.clone())
    assert_not_yet(ex.check_v1_to_v2(square, square_v1, INPUTS), "untransposed")
    swapped = mh.SelfAttentionV2(3, 2)
    swapped.W_query.weight = nn.Parameter(sa_v1.W_key.T)
    assert_not_yet(ex.check_v1_to_v2(swapped, sa_v1, INPUTS), "sa_v1.W_key's weights")
    biased = mh.SelfAttentionV2(3, 2, qkv_bias=True)
    assert_not_yet(ex.check_v1_to_v2(biased, sa_v1, INPUTS), "bias")
    assert_not_yet(ex.check_v1_to_v2(answer, answer, INPUTS), "SelfAttentionV1 object sa_v1")


def test_local_mask():
    ones = torch.ones(5, 5, dtype=torch.bool)
    right = torch.triu(ones, diagonal=1) | torch.tril(ones, diagonal=-2)
    assert_pass(ex.check_local_mask(right))
    assert_not_yet(ex.check_local_mask(right.float()), "masked_fill refuses", ".bool()")
    assert_not_yet(ex.check_local_mask(None), "no answer yet")
    assert_not_yet(ex.check_local_mask(~right), "KEEP")
    assert_not_yet(ex.check_local_mask(torch.triu(ones, diagonal=1)), "plain causal mask")
    assert_not_yet(ex.check_local_mask(torch.tril(ones, diagonal=-2)), "future is visible")
    assert_not_yet(ex.check_local_mask(right | torch.eye(5, dtype=torch.bool)), "diagonal")
    assert_not_yet(ex.check_local_mask(right[:4, :4]), "shape (4, 4)")
    assert_not_yet(ex.check_local_mask(right.float() * 2), "only True/False")
