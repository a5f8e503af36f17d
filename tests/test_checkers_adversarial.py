"""Adversarial answers for the exercise checkers: wrong in ways the plain tests do not try.

Each class or function here is wrong (or hostile) in a way that once slipped past a checker or
made it raise or hang: correct in eval mode only, the right values in the wrong dtype, a tensor
subclass that answers ``torch.allclose`` with True, dropout without its 1/(1-p) rescaling, a
finite fill value instead of -inf, ``sys.exit`` or an endless loop in ``forward``. Every one must
get ``[NOT YET]`` with a hint that names it; the correct variants beside them must still PASS."""

from __future__ import annotations

import signal
import time

import pytest
import torch
from exercise_checks import FixedDropoutCausal, FixedDropoutWrapper, assert_not_yet, assert_pass
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex
from mhsa_helpers.exercises import _common, _result


class AlwaysClose(torch.Tensor):
    """A tensor subclass that claims to equal anything."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.allclose, torch.equal):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})


# -- lesson 02: SelfAttentionV2 ------------------------------------------------------------------


class V2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        queries, keys = self.W_query(x), self.W_key(x)  # (T, d_out)
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)  # (T, T)
        return weights @ self.W_value(x)  # (T, d_out)


class V2WrongInEval(V2):
    def forward(self, x):
        out = super().forward(x)
        return out if self.training else out * 1.1


class V2Float64(V2):
    def forward(self, x):
        return super().forward(x).double()


class V2Liar(V2):
    def forward(self, x):
        return (super().forward(x) * 2).as_subclass(AlwaysClose)


class V2Exits(V2):
    def forward(self, x):
        raise SystemExit(1)


def test_self_attention_correct_still_passes():
    assert_pass(ex.check_build_self_attention(V2))


def attention_from(q, k, v):
    return torch.softmax(q @ k.T / k.shape[-1] ** 0.5, dim=-1) @ v  # (T, d_out)


class V2NoBiases(V2):  # multiplies by the weights: the biases are never added
    def forward(self, x):
        return attention_from(
            *(x @ getattr(self, n).weight.T for n in ("W_query", "W_key", "W_value"))
        )


class V2NoKeyBias(V2):  # the softmax hides a key bias: only its gradient shows it is unused
    def forward(self, x):
        return attention_from(self.W_query(x), x @ self.W_key.weight.T, self.W_value(x))


class V2NoValueBias(V2):
    def forward(self, x):
        return attention_from(self.W_query(x), self.W_key(x), x @ self.W_value.weight.T)


class V2QueryBiasTwice(V2):
    def forward(self, x):
        bias = 0 if self.W_query.bias is None else self.W_query.bias
        return attention_from(self.W_query(x) + bias, self.W_key(x), self.W_value(x))


@pytest.mark.parametrize(
    ("wrong", "words"),
    [
        (V2NoBiases, ["non-zero biases", "x @ self.W_query.weight.T"]),
        (V2NoKeyBias, ["W_key.bias gets no gradient"]),
        (V2NoValueBias, ["non-zero biases", "leaves the bias out"]),
        (V2QueryBiasTwice, ["non-zero biases"]),
    ],
)
def test_self_attention_must_use_its_biases(wrong, words):
    assert_not_yet(ex.check_build_self_attention(wrong), *words)


@pytest.mark.parametrize(
    ("wrong", "words"),
    [
        (V2WrongInEval, ["eval()", "self.training"]),
        (V2Float64, ["torch.float64", "dtype"]),
        (V2Liar, ["AlwaysClose", "plain tensor"]),
        (V2Exits, ["SystemExit"]),
    ],
)
def test_self_attention_adversarial(wrong, words):
    assert_not_yet(ex.check_build_self_attention(wrong), *words)


# -- lesson 03: causal weights -------------------------------------------------------------------


def causal(scores, window=None, fill=-torch.inf):
    T = scores.shape[-1]
    hidden = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # (T, T): the future
    if window is not None:  # local attention: also hide keys window or more steps back
        hidden = hidden | torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-window)
    return torch.softmax(scores.masked_fill(hidden, fill), dim=-1)


def fill_minus_20(scores, window=None):
    return causal(scores, window, -20.0)


def fill_lowest(scores, window=None):  # the dtype's lowest number lies below any score
    return causal(scores, window, torch.finfo(scores.dtype).min)


def float64_weights(scores):
    return causal(scores).double()


def touches_input(scores):
    scores.add_(0.0)  # no value changes, but the caller's tensor is written to
    return causal(scores)


def liar(scores):
    return (causal(scores) * 2).as_subclass(AlwaysClose)


def exits(scores):
    raise SystemExit


@pytest.mark.parametrize("right", [causal, fill_lowest])
def test_causal_weights_correct_still_pass(right):
    assert_pass(ex.check_build_causal_weights(right))


@pytest.mark.parametrize(
    ("wrong", "words"),
    [
        (fill_minus_20, ["finite", "-torch.inf"]),
        (float64_weights, ["torch.float64", "dtype"]),
        (touches_input, ["changed the scores", "in place"]),
        (liar, ["AlwaysClose", "plain torch.Tensor"]),
        (exits, ["SystemExit"]),
    ],
)
def test_causal_weights_adversarial(wrong, words):
    assert_not_yet(ex.check_build_causal_weights(wrong), *words)


@pytest.mark.parametrize("fill", [-1000.0, -1e4, -1e9, -1e20])
def test_causal_weights_refuse_every_finite_fill(fill):
    """The hint names -1000 as wrong: scores near -1e30 make any such fill take the weight."""
    assert_not_yet(
        ex.check_build_causal_weights(lambda scores, window=None: causal(scores, window, fill)),
        "finite",
        "-torch.inf",
    )


# -- lesson 01: a stable softmax subtracts the row MAXIMUM ---------------------------------------


def shifted_softmax(shift):
    def softmax_rows(x):
        e = torch.exp(x - shift(x))
        return e / e.sum(dim=-1, keepdim=True)

    return softmax_rows


@pytest.mark.parametrize(
    "shift",
    [
        lambda x: x.min(dim=-1, keepdim=True).values,
        lambda x: x.mean(dim=-1, keepdim=True),
        lambda x: x.median(dim=-1, keepdim=True).values,
        lambda x: x[:, :1],  # the first entry of each row
        lambda x: (x.max(dim=-1, keepdim=True).values + x.min(dim=-1, keepdim=True).values) / 2,
    ],
    ids=["row min", "row mean", "row median", "first entry", "mid-range"],
)
def test_softmax_rows_must_subtract_the_row_maximum(shift):
    assert_not_yet(ex.check_softmax_rows(shifted_softmax(shift)), "overflow", "maximum")


def test_softmax_rows_still_passes_the_row_maximum():
    assert_pass(ex.check_softmax_rows(shifted_softmax(lambda x: x.amax(dim=-1, keepdim=True))))


# -- lessons 06 and 09: multi-head classes -------------------------------------------------------


class MHA(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1))

    def project(self, x):
        return self.W_query(x), self.W_key(x), self.W_value(x)  # 3 x (b, T, d_out)

    def scale(self):
        return self.head_dim**0.5

    def mask_for(self, T):
        return self.mask.bool()[:T, :T]  # (T, T)

    def weights(self, scores):
        return self.dropout(torch.softmax(scores, dim=-1))  # (b, h, T, T)

    def forward(self, x):
        b, T, _ = x.shape
        shape = (b, T, self.num_heads, self.head_dim)
        q, k, v = (t.view(shape).transpose(1, 2) for t in self.project(x))  # (b, h, T, hd)
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask_for(T), -torch.inf)  # (b, h, T, T)
        context = self.weights(scores / self.scale()) @ v  # (b, h, T, head_dim)
        return self.out_proj(context.transpose(1, 2).reshape(b, T, self.d_out))  # (b, T, d_out)


class Fused(MHA):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1))

    def project(self, x):
        return self.qkv(x).split(self.d_out, dim=-1)  # 3 x (b, T, d_out)


def variant(base, name, **methods):
    return type(name, (base,), methods)


def unscaled_in_training(self):
    return self.head_dim**0.5 if not self.training else 1.0


def off_in_training_only(self, x):
    out = type(self).__mro__[1].forward(self, x)
    return out + 1e-3 if self.training and self.dropout.p == 0 else out


def no_rescale(self, scores):
    weights = torch.softmax(scores, dim=-1)
    return self.dropout(weights) * (1 - self.dropout.p) if self.training else weights


def rescale_twice(self, scores):
    weights = self.dropout(torch.softmax(scores, dim=-1))
    return weights / (1 - self.dropout.p) if self.training else weights


def mask_from_the_end(self, T):  # the bottom-right block of triu is triu too: correct
    return self.mask.bool()[-T:, -T:]


def float64_out(self, x):
    return type(self).__mro__[1].forward(self, x).double()


def liar_out(self, x):
    return (type(self).__mro__[1].forward(self, x) * 2).as_subclass(AlwaysClose)


def exits_forward(self, x):
    raise SystemExit


def sleeps(self, x):
    time.sleep(30)


def loops(self, x):
    while True:
        pass


CHECKERS = {MHA: ex.check_build_multihead, Fused: ex.check_build_fused_multihead}


@pytest.mark.parametrize("base", [MHA, Fused])
def test_multihead_correct_variants_still_pass(base):
    assert_pass(CHECKERS[base](base))
    assert_pass(CHECKERS[base](variant(base, "FromTheEnd", mask_for=mask_from_the_end)))


@pytest.mark.parametrize("base", [MHA, Fused])
@pytest.mark.parametrize(
    ("methods", "words"),
    [
        ({"scale": unscaled_in_training}, ["train", "mode", "both modes"]),
        ({"forward": off_in_training_only}, ["train", "mode", "both modes"]),
        ({"forward": float64_out}, ["torch.float64", "dtype"]),
        ({"forward": liar_out}, ["AlwaysClose"]),
        ({"forward": exits_forward}, ["SystemExit"]),
    ],
)
def test_multihead_adversarial(base, methods, words):
    assert_not_yet(CHECKERS[base](variant(base, "Wrong", **methods)), *words)


@pytest.mark.parametrize("base", [MHA, Fused])
@pytest.mark.parametrize("weights", [no_rescale, rescale_twice])
def test_dropout_must_rescale_by_one_over_one_minus_p(base, weights):
    words = ["1 / (1 - 0.5) = 2"] if base is Fused else ["training mode", "differs"]
    assert_not_yet(CHECKERS[base](variant(base, "Wrong", weights=weights)), *words)


def test_fused_out_proj_without_bias_is_named():
    class OutProjBiasFollowsQkv(Fused):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
            self.out_proj = nn.Linear(d_out, d_out, bias=qkv_bias)

    result = ex.check_build_fused_multihead(OutProjBiasFollowsQkv)
    assert_not_yet(result, "out_proj always has a bias")


# -- hangs and hostile objects, for every kind of checker ----------------------------------------


@pytest.mark.parametrize("forward", [sleeps, loops])
@pytest.mark.parametrize("base", [MHA, Fused])
def test_a_forward_that_never_returns_is_stopped(monkeypatch, base, forward):
    monkeypatch.setattr(_result, "TIME_LIMIT_S", 0.5)
    start = time.monotonic()
    result = CHECKERS[base](variant(base, "Hangs", forward=forward))
    assert time.monotonic() - start < 10
    assert_not_yet(result, "took more than 0.5 s")


def test_the_time_limit_leaves_an_outer_timer_armed(monkeypatch):
    monkeypatch.setattr(_result, "TIME_LIMIT_S", 0.5)
    fired = []

    def outer(*_):
        fired.append(True)

    previous = signal.signal(signal.SIGALRM, outer)
    try:
        signal.setitimer(signal.ITIMER_REAL, 100.0)
        assert_not_yet(ex.check_build_multihead(variant(MHA, "Hangs", forward=loops)))
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 90 < left <= 100
        assert signal.getsignal(signal.SIGALRM) is outer
        assert not fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Hostile:
    """Every dunder a checker might touch raises."""

    def _raise(self, *args, **kwargs):
        raise RuntimeError("hostile")

    __eq__ = __bool__ = __len__ = __repr__ = __str__ = __float__ = __index__ = _raise
    __iter__ = __hash__ = __getattr__ = _raise


ANSWERS = [
    Hostile(),
    torch.zeros(5, 5, dtype=torch.bool).as_subclass(AlwaysClose),
    torch.zeros(1).as_subclass(AlwaysClose),
    torch.zeros(6).as_subclass(AlwaysClose),
    (i for i in range(3)),
    10**1000,
    torch.empty(3, 3, device="meta"),
]


@pytest.mark.parametrize("name", [n for n in ex.__all__ if n.startswith("check_")])
def test_no_checker_passes_or_raises_on_hostile_answers(name):
    checker = getattr(ex, name)
    for answer in ANSWERS:
        result = checker(answer)
        assert type(result) in (ex.CheckResult, _common.PredictionNoted)
        assert not result
        assert not repr(result).startswith("[PASS]")


def test_a_tensor_subclass_answer_is_refused_by_name():
    liar_mask = torch.zeros(5, 5, dtype=torch.bool).as_subclass(AlwaysClose)
    assert_not_yet(ex.check_local_mask(liar_mask), "AlwaysClose", "plain torch.Tensor")


def test_functions_and_modules_returning_a_tensor_subclass_do_not_pass():
    def softmax_rows(x):
        return (torch.softmax(x, dim=-1) * 2).as_subclass(AlwaysClose)

    def masked_softmax(scores, hidden):
        weights = torch.softmax(scores.masked_fill(hidden, -torch.inf), dim=-1).nan_to_num(0.0)
        return (weights * 2).as_subclass(AlwaysClose)

    assert_not_yet(ex.check_softmax_rows(softmax_rows), "AlwaysClose")
    assert_not_yet(ex.check_masked_softmax(masked_softmax), "AlwaysClose")

    class Liar(mh.SelfAttentionV2):
        def forward(self, x):
            return (super().forward(x) * 2).as_subclass(AlwaysClose)

    torch.manual_seed(1)
    sa_v1 = mh.SelfAttentionV1(3, 2)
    answer = Liar(3, 2)
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            getattr(answer, name).weight.copy_(getattr(sa_v1, name).T)
    assert_not_yet(ex.check_v1_to_v2(answer, sa_v1, mh.book_inputs()), "context vectors")


def half_rate_dropout(base):
    class HalfRate(base):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
            self.dropout = nn.Dropout(dropout / 2)

    return HalfRate


def fixed_rate_dropout(base):
    class FixedRate(base):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
            self.dropout = nn.Dropout(0.5)

    return FixedRate


@pytest.mark.parametrize("base", [MHA, Fused])
def test_dropout_must_use_the_dropout_argument(base):
    half = ["1 / (1 - 0.5) = 2", "dropout argument"] if base is Fused else ["same seed"]
    assert_not_yet(CHECKERS[base](half_rate_dropout(base)), *half)
    assert_not_yet(CHECKERS[base](fixed_rate_dropout(base)), "dropout=0.0", "with the argument")


# -- lesson 07: the sharpest head, with ties and bools ---------------------------------------------


def _tied_weights():
    """Three heads (h, T, T); heads 0 and 2 are the same map, sharper than head 1."""
    generator = torch.Generator().manual_seed(7)
    sharp = torch.softmax(4 * torch.randn(5, 5, generator=generator), dim=-1)  # (T, T)
    flat = torch.softmax(0.1 * torch.randn(5, 5, generator=generator), dim=-1)  # (T, T)
    return torch.stack([sharp, flat, sharp])  # (3, T, T)


@pytest.mark.parametrize("head", [0, 2, torch.tensor(2), torch.tensor([0])])
def test_sharpest_head_accepts_every_head_of_a_tie(head):
    assert_pass(ex.check_sharpest_head(head, _tied_weights()))


@pytest.mark.parametrize(
    "answer",
    [True, torch.tensor(True), torch.tensor([True]), torch.tensor(0.0), 2.0],
    ids=["bool", "bool tensor", "one-element bool tensor", "float tensor", "float"],
)
def test_sharpest_head_refuses_bools_and_floats(answer):
    assert_not_yet(ex.check_sharpest_head(answer, _tied_weights()), "expected an int")


def test_sharpest_head_still_names_the_plot_numbering_and_the_flattest_head():
    weights = _tied_weights()
    assert_not_yet(ex.check_sharpest_head(1, weights), "from 1")  # "Head 1" = index 0
    assert_not_yet(ex.check_sharpest_head(3, weights), "from 1")  # "Head 3" = index 2
    flat_first = weights[[1, 0, 2]]  # (3, T, T): the flat head first, then the tied sharp ones
    assert_not_yet(ex.check_sharpest_head(0, flat_first), "most spread-out")


# -- lesson 11: the masked softmax on other scales and shapes --------------------------------------


def filled_softmax(fill):
    def masked_softmax(scores, hidden):
        empty = hidden.all(dim=-1, keepdim=True)  # rows with nothing to see
        weights = torch.softmax(scores.masked_fill(hidden & ~empty, fill), dim=-1)
        return weights.masked_fill(empty, 0.0)

    return masked_softmax


@pytest.mark.parametrize("fill", [-1000.0, -1e4, -1e9])
def test_masked_softmax_refuses_finite_fills(fill):
    assert_not_yet(ex.check_masked_softmax(filled_softmax(fill)), "finite fill", "-torch.inf")


@pytest.mark.parametrize("fill", [-torch.inf, torch.finfo(torch.float32).min])
def test_masked_softmax_passes_fills_below_every_score(fill):
    assert_pass(ex.check_masked_softmax(filled_softmax(fill)))


def three_dims_only(scores, hidden):
    _b, _t_q, _t_k = scores.shape  # raises on (b, h, T_q, T_k)
    return filled_softmax(-torch.inf)(scores, hidden)


def square_four_only(scores, hidden):
    return filled_softmax(-torch.inf)(scores.view(-1, 4, 4), hidden.view(-1, 4, 4))


def mask_rebuilt_as_square(scores, hidden):
    T = scores.shape[-1]
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)  # ignores the hidden it is given
    return filled_softmax(-torch.inf)(scores, hidden | causal)


@pytest.mark.parametrize(
    ("fn", "words"),
    [
        (three_dims_only, ["heads (2, 2, 3, 6)", "ValueError"]),
        (square_four_only, ["(3, 5, 5)", "RuntimeError"]),
        (mask_rebuilt_as_square, ["heads (2, 2, 3, 6)"]),
    ],
)
def test_masked_softmax_is_tested_on_several_shapes(fn, words):
    assert_not_yet(ex.check_masked_softmax(fn), *words)


# -- lessons 06, 09: a forward that writes to its input -------------------------------------------


def clamps_input(self, x):
    x.clamp_(-1, 1)  # changes the output by several units on the checker's inputs
    return type(self).__mro__[1].forward(self, x)


def touches_input_only(self, x):
    x.add_(0.0)  # same values, but the caller's tensor is written to
    return type(self).__mro__[1].forward(self, x)


def zeroes_first_feature(self, x):
    x[..., 0] = 0.0
    return type(self).__mro__[1].forward(self, x)


def scales_input(self, x):
    x.mul_(2.0)
    return type(self).__mro__[1].forward(self, x) / 2


@pytest.mark.parametrize(
    "forward", [clamps_input, touches_input_only, zeroes_first_feature, scales_input]
)
@pytest.mark.parametrize("base", [MHA, Fused])
def test_a_forward_that_changes_its_input_in_place_is_named(base, forward):
    result = CHECKERS[base](variant(base, "InPlace", forward=forward))
    assert_not_yet(result, "changed its input x in place")


def test_copying_the_input_first_is_fine():
    def copies_then_clamps(self, x):
        return type(self).__mro__[1].forward(self, x.clone().add_(0.0))

    assert_pass(ex.check_build_multihead(variant(MHA, "Copies", forward=copies_then_clamps)))


# -- the time limit: on any thread, even through a bare except ------------------------------------


def swallows_the_stop(self, x):
    try:
        while True:
            pass
    except:  # noqa: E722 -- a learner's bare except, on purpose
        return type(self).__mro__[1].forward(self, x)


def swallows_as_base_exception(self, x):
    try:  # noqa: SIM105 -- the way a learner writes it
        time.sleep(30)
    except BaseException:
        pass
    return type(self).__mro__[1].forward(self, x)


def swallows_and_returns_zeros(self, x):
    try:
        while True:
            pass
    except:  # noqa: E722
        return torch.zeros(x.shape[0], x.shape[1], self.d_out)


@pytest.mark.parametrize(
    "forward", [swallows_the_stop, swallows_as_base_exception, swallows_and_returns_zeros]
)
def test_a_bare_except_does_not_swallow_the_time_limit(monkeypatch, forward):
    monkeypatch.setattr(_result, "TIME_LIMIT_S", 0.5)
    start = time.monotonic()
    result = ex.check_build_multihead(variant(MHA, "Swallows", forward=forward))
    assert time.monotonic() - start < 30
    assert_not_yet(result, "took more than 0.5 s")


def sleeps_a_little(self, x):
    time.sleep(2)  # off the main thread a blocking call ends before the stop lands


@pytest.mark.parametrize("forward", [sleeps_a_little, loops, swallows_the_stop])
def test_the_time_limit_applies_off_the_main_thread(monkeypatch, forward):
    import threading

    monkeypatch.setattr(_result, "TIME_LIMIT_S", 0.5)
    results = []
    worker = threading.Thread(
        target=lambda: results.append(
            ex.check_build_fused_multihead(variant(Fused, "H", forward=forward))
        )
    )
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive()
    assert_not_yet(results[0], "took more than 0.5 s")


def test_a_stopped_check_names_the_exercise_in_the_lesson_language(monkeypatch):
    monkeypatch.setattr(_result, "TIME_LIMIT_S", 0.5)
    result = ex.check_build_multihead(variant(MHA, "Loops", forward=loops))
    chinese = result.render("zh")
    assert chinese.startswith("[还没对] 动手实现 MultiHeadAttention。")
    assert "build_multihead" not in chinese
    assert "超过 0.5 秒" in chinese


NAMED = [n for n in ex.__all__ if n.startswith("check_")]


@pytest.mark.parametrize("name", NAMED)
def test_every_checker_has_a_bilingual_exercise_name(name):
    named = getattr(ex, name).__wrapped__.exercise
    assert named.en and named.zh and named.zh != named.en, name


# -- build-its over a grid of their arguments (issue 30) -------------------------------------------


class TwoHeadsWrapper(mh.MultiHeadAttentionWrapper):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, 2, qkv_bias)  # num_heads ignored


@pytest.mark.parametrize(
    ("checker", "wrong", "words"),
    [
        (ex.check_causal_attention_class, FixedDropoutCausal, ["0.2", "dropout argument"]),
        (ex.check_wrapper_class, FixedDropoutWrapper, ["dropout argument"]),
        (ex.check_wrapper_class, TwoHeadsWrapper, ["num_heads=3", "holds 2 heads"]),
    ],
    ids=["causal-fixed-dropout", "wrapper-fixed-dropout", "wrapper-two-heads"],
)
def test_head_build_its_vary_dropout_and_heads(checker, wrong, words):
    assert_not_yet(checker(wrong), *words)
    assert_pass(checker(wrong.__mro__[1]))  # the book's class beside it still passes


def _causal_step(q, keys, values):
    """Causal attention of the last q.shape[-2] positions over every key (b, h, n, d)."""
    n, T = q.shape[-2], keys.shape[-2]
    hidden = torch.ones(T, T, dtype=torch.bool).triu(1)[T - n :]  # (n, T)
    scores = (q @ keys.transpose(-2, -1)) / q.shape[-1] ** 0.5
    return torch.softmax(scores.masked_fill(hidden, -torch.inf), dim=-1) @ values


class ChecksOnlyWhenFull:
    """Refuses a chunk only when the cache is already full: 3 + 4 tokens grow it to 7 of 5."""

    def __init__(self, max_len):
        self.max_len, self.keys, self.values = max_len, None, None

    def append_and_attend(self, q, k, v):
        cached = 0 if self.keys is None else self.keys.shape[-2]
        if cached >= self.max_len:
            raise ValueError("the cache is full")
        self.keys = k if self.keys is None else torch.cat([self.keys, k], dim=-2)
        self.values = v if self.values is None else torch.cat([self.values, v], dim=-2)
        return _causal_step(q, self.keys, self.values)


class ListAppendsBeforeChecking:
    """Keeps lists of chunks (no self.keys tensor) and appends a refused chunk before checking."""

    def __init__(self, max_len):
        self.max_len, self.ks, self.vs = max_len, [], []

    def append_and_attend(self, q, k, v):
        self.ks.append(k)
        self.vs.append(v)
        if sum(t.shape[-2] for t in self.ks) > self.max_len:
            raise ValueError("too long")
        return _causal_step(q, torch.cat(self.ks, -2), torch.cat(self.vs, -2))


class ListChecksFirst(ListAppendsBeforeChecking):
    def append_and_attend(self, q, k, v):
        if sum(t.shape[-2] for t in self.ks) + k.shape[-2] > self.max_len:
            raise ValueError("too long")
        return super().append_and_attend(q, k, v)


@pytest.mark.parametrize(
    ("wrong", "words"),
    [
        (ChecksOnlyWhenFull, ["holding 3 token(s) took 4 more", "not only when"]),
        (ListAppendsBeforeChecking, ["still appended"]),
    ],
    ids=["checks-only-when-full", "list-appends-first"],
)
def test_kv_cache_bound_is_checked_by_behaviour(wrong, words):
    assert_not_yet(ex.check_kv_cache_step(wrong), *words)
    assert_pass(ex.check_kv_cache_step(ListChecksFirst))


def repeat_into_zeros(x, n_rep):
    b, g, T, d = x.shape
    out = torch.zeros(b, g * n_rep, T, d)  # float32, whatever x is
    for i in range(g * n_rep):
        out[:, i] = x[:, i // n_rep]
    return out


def test_repeat_kv_keeps_the_dtype_it_was_given():
    assert_not_yet(ex.check_repeat_kv(repeat_into_zeros), "torch.float32", "torch.bfloat16")


def computes_in_float32(base):
    class Float32Only(base):
        def forward(self, x):
            return super().forward(x.float().to(x.dtype)).float()  # float32 whatever x is

    return Float32Only


@pytest.mark.parametrize("base", [MHA, Fused])
def test_multihead_build_its_try_a_second_dtype(base):
    assert_not_yet(CHECKERS[base](computes_in_float32(base)), "torch.float64")


# -- rules a brief states, not only its numbers (issue 29) ----------------------------------------


def rows_by_torch(x):
    return torch.softmax(x, dim=-1)


def rows_by_functional(x):
    return torch.nn.functional.softmax(x, dim=-1)


def rows_by_method(x):
    return x.softmax(-1)


def rows_by_log_softmax(x):
    return x.log_softmax(-1).exp()


def rows_by_hand(x):
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)  # (rows, cols)
    return e / e.sum(dim=-1, keepdim=True)


@pytest.mark.parametrize(
    "wrong", [rows_by_torch, rows_by_functional, rows_by_method, rows_by_log_softmax]
)
def test_softmax_rows_never_calls_torch_softmax(wrong):
    assert_not_yet(ex.check_softmax_rows(wrong), "calls torch's softmax")
    assert_pass(ex.check_softmax_rows(rows_by_hand))


def repeat_by_method(x, n_rep):
    return x.repeat_interleave(n_rep, dim=1)


def repeat_by_function(x, n_rep):
    return torch.repeat_interleave(x, n_rep, dim=1)


def repeat_by_index(x, n_rep):
    return x[:, torch.arange(x.shape[1]).repeat_interleave(n_rep)]


def repeat_by_expand(x, n_rep):
    b, g, T, d = x.shape
    return x[:, :, None].expand(b, g, n_rep, T, d).reshape(b, g * n_rep, T, d)


@pytest.mark.parametrize("wrong", [repeat_by_method, repeat_by_function, repeat_by_index])
def test_repeat_kv_without_repeat_interleave(wrong):
    assert_not_yet(ex.check_repeat_kv(wrong), "without repeat_interleave")
    assert_pass(ex.check_repeat_kv(repeat_by_expand))


def mask_kept(base, how):
    """``base`` with its ``mask`` buffer kept as a plain attribute, under another buffer name,
    or not kept at all (rebuilt in forward)."""

    class Kept(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            mask = self._buffers.pop("mask")
            if how == "attribute":
                self.mask = mask
            elif how == "renamed":
                self.register_buffer("future_mask", mask)

        def forward(self, x):
            if how == "forward":
                T = self.context_length if hasattr(self, "context_length") else 6
                self.register_buffer("mask", torch.ones(T, T).triu(1), persistent=False)
                out = super().forward(x)
                del self._buffers["mask"]
                return out
            if how == "renamed":
                self.mask = self.future_mask
            return super().forward(x)

    return Kept


@pytest.mark.parametrize(
    ("how", "words"),
    [
        ("attribute", ("plain attribute", "register_buffer")),
        ("renamed", ("buffer named mask",)),
        ("forward", ("buffer named mask",)),
    ],
)
@pytest.mark.parametrize(
    "checker",
    [
        (ex.check_causal_attention_class, mh.CausalAttention),
        (ex.check_build_multihead, mh.MultiHeadAttention),
    ],
    ids=["lesson04", "lesson06"],
)
def test_the_mask_is_a_buffer_named_mask(checker, how, words):
    check, base = checker
    assert_not_yet(check(mask_kept(base, how)), *words)
    assert_pass(check(base))


# -- hints that name the right cause (issue 29 §2) -----------------------------------------------


def wrapper_of(heads_of):
    """A wrapper whose ``self.heads`` is ``heads_of(make_head, num_heads)``."""

    class Wrapper(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__()

            def make():
                return mh.CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)

            self.heads = heads_of(make, num_heads)

        def forward(self, x):
            return torch.cat([head(x) for head in self.heads], dim=-1)

    return Wrapper


@pytest.mark.parametrize(
    ("heads_of", "words"),
    [
        (lambda make, n: [make() for _ in range(n)], "plain Python list"),
        (lambda make, n: tuple(make() for _ in range(n)), "plain Python list"),
        (lambda make, n: nn.ModuleList([make()] * n), "same head object"),
        (lambda make, n: nn.ModuleList([make()] * (n - 1) + [make()]), "same head object"),
    ],
    ids=["list", "tuple", "one-repeated", "one-repeated-and-one-more"],
)
def test_a_wrapper_s_heads_get_the_right_cause(heads_of, words):
    assert_not_yet(ex.check_wrapper_class(wrapper_of(heads_of)), words)


def causal_head(transpose):
    """Lesson 04's class with the keys transposed by ``transpose(keys)``."""

    class Head(mh.CausalAttention):
        def forward(self, x):
            T = x.shape[1]
            q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)  # (b, T, d_out)
            scores = (q @ transpose(k)).masked_fill(self.mask.bool()[:T, :T], -torch.inf)
            return self.dropout(torch.softmax(scores / k.shape[-1] ** 0.5, dim=-1)) @ v

    return Head


@pytest.mark.filterwarnings("ignore::UserWarning")  # x.T on a 3-D tensor is deprecated
@pytest.mark.parametrize(
    "transpose",
    [lambda k: k.T, lambda k: k.transpose(0, 1), lambda k: k.permute(2, 1, 0)],
    ids=["T", "transpose01", "permute"],
)
def test_keys_transposed_over_the_batch_get_the_transpose_hint(transpose):
    assert_not_yet(ex.check_causal_attention_class(causal_head(transpose)), "last two dimensions")


def split_head(transpose):
    """Lesson 06's class with the keys transposed by ``transpose(keys)`` (b, h, T, hd)."""

    class Split(mh.MultiHeadAttention):
        def forward(self, x):
            b, T, _ = x.shape
            q, k, v = (
                w(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)
                for w in (self.W_query, self.W_key, self.W_value)
            )  # (b, h, T, hd)
            scores = (q @ transpose(k)).masked_fill(self.mask.bool()[:T, :T], -torch.inf)
            weights = self.dropout(torch.softmax(scores / self.head_dim**0.5, dim=-1))
            return self.out_proj((weights @ v).transpose(1, 2).reshape(b, T, self.d_out))

    return Split


@pytest.mark.parametrize(
    "transpose",
    [lambda k: k.transpose(1, 2), lambda k: k.transpose(0, 3), lambda k: k.permute(0, 2, 3, 1)],
    ids=["12", "03", "permute"],
)
def test_split_keys_transposed_wrongly_get_the_heads_hint(transpose):
    assert_not_yet(ex.check_build_multihead(split_head(transpose)), "heads do not line up")


def fused_sdpa(dropout_p):
    """Lesson 09's fused class on F.scaled_dot_product_attention, ``dropout_p(self)`` its rate."""

    class Fused(mh.FusedQKVMultiHeadAttention):
        def forward(self, x):
            b, T, _ = x.shape
            q, k, v = self.project(x)  # each (b, h, T, hd)
            context = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=True, dropout_p=dropout_p(self)
            )  # (b, h, T, hd)
            return self.out_proj(context.transpose(1, 2).reshape(b, T, self.d_out))

    return Fused


@pytest.mark.parametrize(
    ("dropout_p", "words"),
    [
        (lambda m: m.dropout.p, "does not look at .training"),
        (lambda m: m.dropout.p if m.training else m.dropout.p / 2, "does not look at .training"),
        (lambda m: 0.0, "only through its dropout_p"),
    ],
    ids=["always-on", "halved-in-eval", "never"],
)
def test_sdpa_dropout_gets_an_sdpa_hint(dropout_p, words):
    assert_not_yet(ex.check_build_fused_multihead(fused_sdpa(dropout_p)), words)
    right = fused_sdpa(lambda m: m.dropout.p if m.training else 0.0)
    assert_pass(ex.check_build_fused_multihead(right))


# -- the beginner review of lessons 01-06: each wrong answer named by its own cause ---------------


@pytest.mark.parametrize(
    ("fn", "words"),
    [
        (lambda x: torch.special.softmax(x, -1), ["calls torch's softmax"]),
        (shifted_softmax(lambda x: x.max(dim=-1, keepdim=True)), [".values", "(values, indices)"]),
    ],
    ids=["torch.special.softmax", "max without .values"],
)
def test_softmax_rows_names_the_special_spelling_and_the_max_pair(fn, words):
    assert_not_yet(ex.check_softmax_rows(fn), *words)


def test_softmax_rows_refuses_a_function_that_writes_to_its_input():
    def in_place(x):
        x -= x.max(dim=-1, keepdim=True).values
        e = torch.exp(x)
        return e / e.sum(dim=-1, keepdim=True)

    assert_not_yet(ex.check_softmax_rows(in_place), "in place", "x - ...")


@pytest.mark.parametrize("scale", [2**0.5, 3**0.5, 6**0.5])
def test_causal_weights_scaled_twice_is_named_at_any_plain_scale(scale):
    """The scores come in scaled; dividing again by section 4's sqrt(d_k) = sqrt(2) (or by
    sqrt(T)) is named, not blamed on the mask; the case it failed on ends the hint."""

    def scaled_again(scores, window=None):
        return causal(scores, window) if scores.shape[-1] == 1 else causal(scores / scale, window)

    result = ex.check_build_causal_weights(scaled_again)
    if scale == 3**0.5:  # no known slip: the plain hint, but still not a pass
        assert not result.passed
    else:
        assert_not_yet(result, "scaled again", "(test: ")


def build_head(variant):
    """Lesson 05's wrapper of ``mh.CausalAttention`` heads, right or with one ``variant`` slip."""

    class Wrapper(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__()
            rate = 0.0 if variant == "fixed dropout" else dropout
            bias = False if variant == "no qkv_bias" else qkv_bias
            self.heads = nn.ModuleList(
                mh.CausalAttention(d_in, d_out, context_length, rate, bias)
                for _ in range(num_heads)
            )

        def forward(self, x):
            outputs = [head(x) for head in self.heads]
            if variant == "reversed":
                outputs = outputs[::-1]
            if variant == "interleaved":
                return torch.stack(outputs, dim=-1).flatten(-2)
            return torch.cat(outputs, dim=-1)

    return Wrapper


def test_wrapper_right_still_passes():
    assert_pass(ex.check_wrapper_class(build_head("right")))


@pytest.mark.parametrize(
    ("variant", "words"),
    [
        ("fixed dropout", ["dropout argument on to every head"]),
        ("no qkv_bias", ["qkv_bias argument on to every head"]),
        ("reversed", ["order of self.heads"]),
        ("interleaved", ["order of self.heads"]),
    ],
)
def test_wrapper_slips_are_named(variant, words):
    assert_not_yet(ex.check_wrapper_class(build_head(variant)), *words)


class FloatMask(nn.Module):
    """Lesson 04's class with the mask kept as 0/1 floats: masked_fill refuses it."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1))

    def forward(self, x):
        T = x.shape[1]
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        scores = (queries @ keys.transpose(1, 2)).masked_fill(self.mask[:T, :T], -torch.inf)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        return self.dropout(weights) @ values


def test_causal_class_with_a_float_mask_is_told_to_use_bool():
    assert_not_yet(ex.check_causal_attention_class(FloatMask), ".bool()", "FloatMask(3, 2, 6")


def test_a_finished_class_that_creates_no_parameter_is_not_a_stub():
    """X7: ``written`` reports [TO DO] only while forward is still the stub."""
    from mhsa_helpers.exercises._build import ContractError, written

    class Stub(nn.Module):
        def forward(self, x):
            raise NotImplementedError("write forward")

    class Finished(nn.Module):
        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)

    with pytest.raises(ContractError) as stop:
        written(Stub())
    assert stop.value.todo and "nn.Parameter" in stop.value.text.en
    assert written(Finished()) is not None
    with pytest.raises(ContractError) as unwritten:
        written(nn.Module())  # forward not even overridden: nn.Module's raises too
    assert unwritten.value.todo


def test_a_known_mistake_puts_the_test_setting_in_a_trailing_bracket():
    """X9: "hint. (test: setting)", never "setting: hint" with the colons stacked."""
    from mhsa_helpers.exercises._build import ContractError, not_a_known_mistake, on_x

    where = on_x("MyBlock(8, 6, 2, 0.0)", (2, 5, 8))
    with pytest.raises(ContractError) as stop:
        not_a_known_mistake(
            torch.zeros(2),
            [(torch.zeros(2), mh.tr(": post-norm: x.", "：后置归一化：x。"))],
            atol=0.0,
            where=where + mh.tr(": ", "："),
        )
    text = stop.value.text
    assert text.en == "post-norm: x. (test: MyBlock(8, 6, 2, 0.0) on x (2, 5, 8))"
    assert text.zh == "后置归一化：x。（测试：MyBlock(8, 6, 2, 0.0)，输入形状 (2, 5, 8)）"


@pytest.mark.parametrize(
    ("checker", "guess", "words"),
    [
        (ex.check_prediction_self_match, 9, ["between 0 and 6, got 9"]),
        (ex.check_prediction_self_match, -1, ["between 0 and 6"]),
        (ex.check_prediction_saturation, 2, ["between 0 and 1"]),
    ],
)
def test_a_prediction_out_of_range_is_told_the_range(checker, guess, words):
    assert_not_yet(checker(guess, reveal=True), *words)


def test_multihead_without_the_transpose_is_told_to_transpose():
    def no_transpose(self, x):
        b, T, _ = x.shape
        q, k, v = (
            f(x).view(b, T, self.num_heads, self.head_dim)
            for f in (self.W_query, self.W_key, self.W_value)
        )
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask_for(T), -torch.inf)
        weights = torch.softmax(scores / self.head_dim**0.5, dim=-1)
        return self.out_proj((weights @ v).reshape(b, T, self.d_out))

    wrong = variant(MHA, "NoTranspose", forward=no_transpose)
    assert_not_yet(ex.check_build_multihead(wrong), "transpose(1, 2)", "NoTranspose(5, 12")


def test_multihead_out_proj_without_bias_is_named():
    class NoOutBias(MHA):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
            self.out_proj = nn.Linear(d_out, d_out, bias=qkv_bias)

    assert_not_yet(ex.check_build_multihead(NoOutBias), "out_proj has no bias", "always")


def test_a_class_whose_forward_is_a_builtin_does_not_break_the_stub_test():
    """``written`` reads forward's code; a forward without one (a builtin) must not raise."""
    from mhsa_helpers.exercises._build import ContractError, written

    class BuiltinForward(nn.Module):
        forward = torch.relu

    with pytest.raises(ContractError) as stop:
        written(BuiltinForward())
    assert stop.value.todo
    assert not ex.check_causal_attention_class(BuiltinForward)


def test_missing_names_are_listed_in_each_language():
    class OtherNames(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
            super().__init__()
            self.q, self.k, self.v = (nn.Linear(d_in, d_out) for _ in range(3))

        def forward(self, x):
            return x

    result = ex.check_causal_attention_class(OtherNames)
    assert "W_query.weight, W_key.weight" in result.render("en")
    assert "W_query.weight、W_key.weight" in result.render("zh")
