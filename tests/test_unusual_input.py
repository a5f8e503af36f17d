"""Unusual but legitimate input works; bad input fails clearly, everywhere in the package.

* numpy scalars are accepted wherever a Python int/float is (as ``torch.nn.Linear`` does) and
  stored as Python numbers; bools are not numbers and strings are not flags;
* NaN/inf input: every attention class raises ``ValueError`` naming the first bad (batch,
  token); ``module.check_finite = False`` skips the check;
* ``torch.autocast``: two stacked layers run, close to float32;
* the helper functions (plots, entropy, explorers, functional core, trainers) raise
  ``ValueError``/``TypeError`` naming the argument and the value, before anything is drawn,
  computed or seeded, and leave the caller's RNG state untouched.
"""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from figure_checks import _close_figures  # noqa: F401 (autouse fixture)

import mhsa_helpers as mh
from mhsa_helpers.inspection import uniform_causal_entropy
from mhsa_helpers.training import TrainingConfig, train
from mhsa_helpers.ui.explorers import dropout_weights, explore_attention, wrapper_head_weights
from mhsa_helpers.ui.sentences import embed_words
from mhsa_helpers.validation import (
    as_float,
    as_int,
    check_dropout,
    check_positive_int,
)


def raises(exc, *words):
    """pytest.raises whose message must contain every word, in order."""
    return pytest.raises(exc, match=".*".join(re.escape(w) for w in words))


# Every attention class, built from numpy scalars where an int/float is expected.
def build(kind, n=int, f=float, qkv_bias=False):
    d_in, d_out, ctx, heads = n(3), n(4), n(6), n(2)
    p = f(0.0)
    return {
        "v1": lambda: mh.SelfAttentionV1(d_in, d_out),
        "v2": lambda: mh.SelfAttentionV2(d_in, d_out, qkv_bias=qkv_bias),
        "causal": lambda: mh.CausalAttention(d_in, d_out, ctx, p, qkv_bias=qkv_bias),
        "wrapper": lambda: mh.MultiHeadAttentionWrapper(d_in, d_out, ctx, p, heads, qkv_bias),
        "multihead": lambda: mh.MultiHeadAttention(d_in, d_out, ctx, p, heads, qkv_bias),
        "fused": lambda: mh.FusedQKVMultiHeadAttention(d_in, d_out, ctx, p, heads, qkv_bias),
        "sdpa": lambda: mh.SDPAMultiHeadAttention(d_in, d_out, ctx, p, heads, qkv_bias),
        "gqa": lambda: mh.GroupedQueryAttention(d_in, d_out, ctx, p, heads, n(1), qkv_bias),
        "cross": lambda: mh.CrossMultiHeadAttention(d_in, d_in, d_out, heads, p, qkv_bias),
    }[kind]()


KINDS = ["v1", "v2", "causal", "wrapper", "multihead", "fused", "sdpa", "gqa", "cross"]
TEACHING = ["v1", "v2", "causal", "wrapper", "multihead"]
PRODUCTION = ["fused", "sdpa", "gqa", "cross"]
CLASSES = {
    "fused": mh.FusedQKVMultiHeadAttention,
    "sdpa": mh.SDPAMultiHeadAttention,
    "gqa": mh.GroupedQueryAttention,
    "cross": mh.CrossMultiHeadAttention,
}


def run(module, x):
    if isinstance(module, mh.CrossMultiHeadAttention):
        return module(x, x)
    return module(x)


def example_input(kind, batch=2, tokens=6):
    shape = (tokens, 3) if kind in ("v1", "v2") else (batch, tokens, 3)
    return torch.rand(shape)


# -- numpy scalars and flags ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_numpy_scalars_build_the_same_module_as_python_numbers(kind):
    torch.manual_seed(0)
    ours = build(kind, n=np.int64, f=np.float32)
    torch.manual_seed(0)
    plain = build(kind)
    assert repr(ours) == repr(plain)  # sizes stored as Python ints: same repr
    for name, value in vars(ours).items():
        if not name.startswith("_"):
            assert not isinstance(value, np.generic), f"{name} kept a numpy scalar: {value!r}"
    x = example_input(kind)
    torch.testing.assert_close(run(ours.eval(), x), run(plain.eval(), x), rtol=0, atol=0)


def test_number_helpers_convert_numpy_scalars_and_reject_bools():
    assert as_int("n", np.int32(4)) == 4 and type(as_int("n", np.int64(4))) is int
    assert type(as_float("lr", np.float32(0.5))) is float
    assert check_dropout(np.float64(0.25)) == 0.25 and type(check_dropout(np.float32(0))) is float
    assert check_positive_int("d_in", np.uint8(3)) == 3
    for value in (True, np.bool_(True), 4.0, "4", None, torch.tensor(4)):
        with raises(TypeError, "d_in must be an int", "d_in="):
            check_positive_int("d_in", value)
    for value in (True, np.bool_(False), "0.1", None):
        with raises(TypeError, "dropout"):
            check_dropout(value)
    with raises(ValueError, "dropout", "1.0"):
        check_dropout(np.float32(1.0))


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "v1"])
def test_qkv_bias_must_be_a_real_bool(kind):
    for flag in ["False", "True", 0, 1, None, np.bool_(True)]:
        with raises(TypeError, "qkv_bias must be True or False", f"qkv_bias={flag!r}"):
            build(kind, qkv_bias=flag)


# -- non-finite input --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["causal", "wrapper", "multihead"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_teaching_classes_name_the_first_non_finite_position(kind, bad):
    module = build(kind)
    x = torch.rand(3, 6, 3)
    x[1, 3, 2] = bad
    x[2, 0, 0] = bad  # a later batch row: the first bad position is (1, 3)
    calls = []
    for layer in module.modules():
        if isinstance(layer, torch.nn.Linear):
            layer.register_forward_pre_hook(lambda *args: calls.append(1))
    with raises(ValueError, f"x has a non-finite value ({bad})", "at batch 1, token 3"):
        module(x)
    assert calls == []  # raised before any projection


@pytest.mark.parametrize("kind", ["v1", "v2"])
def test_unbatched_teaching_classes_name_the_token(kind):
    x = torch.rand(6, 3)
    x[4, 0] = float("nan")
    with raises(ValueError, "x has a non-finite value (nan) at token 4"):
        build(kind)(x)


@pytest.mark.parametrize("kind", PRODUCTION)
def test_production_variants_check_like_every_class_and_can_skip_it(kind):
    module = build(kind).eval()
    assert module.check_finite is True
    x = torch.rand(2, 6, 3)
    x[0, 2, 1] = float("nan")
    with raises(ValueError, "non-finite value (nan)", "at batch 0, token 2"):
        run(module, x)
    module.check_finite = False  # the opt-out, where the host read costs too much
    assert torch.isnan(run(module, x)).any()  # NaN then flows through


def test_finite_input_is_not_affected_and_check_can_be_switched_off():
    module = build("multihead").eval()
    x = torch.rand(2, 6, 3)
    out = module(x)
    assert torch.isfinite(out).all()
    x[0, 5, 0] = float("nan")
    module.check_finite = False
    out = module(x)
    # Why the teaching classes check: 0 * NaN = NaN, so the masked-out last token still turns
    # every earlier position of its sequence into NaN (the other sequence is unaffected).
    assert torch.isnan(out[0]).all()
    assert torch.isfinite(out[1]).all()


# -- autocast ----------------------------------------------------------------------------------


def two_layers(kind):
    torch.manual_seed(0)
    if kind == "multihead":
        layers = [mh.MultiHeadAttention(8, 8, 6, 0.0, 2) for _ in range(2)]
    elif kind == "sdpa":
        layers = [mh.SDPAMultiHeadAttention(8, 8, 6, 0.0, 2) for _ in range(2)]
    else:
        layers = [mh.GroupedQueryAttention(8, 8, 6, 0.0, 4, 2) for _ in range(2)]
    return torch.nn.Sequential(*layers).eval()


@pytest.mark.parametrize("kind", ["multihead", "sdpa", "gqa"])
def test_two_stacked_layers_run_under_cpu_autocast(kind):
    model = two_layers(kind)
    x = torch.randn(2, 6, 8)
    with torch.no_grad():
        want = model(x)  # float32
        with torch.autocast("cpu", dtype=torch.bfloat16):
            got = model(x)
    assert got.dtype == torch.bfloat16
    # bfloat16 keeps 8 bits of mantissa: about 2 significant digits through two layers.
    torch.testing.assert_close(got.float(), want, atol=5e-2, rtol=5e-2)


def test_outside_autocast_a_dtype_mismatch_still_raises():
    layer = mh.MultiHeadAttention(8, 8, 6, 0.0, 2)
    with raises(TypeError, "torch.bfloat16", "torch.float32"):
        layer(torch.randn(2, 6, 8, dtype=torch.bfloat16))
    with torch.autocast("cpu", dtype=torch.bfloat16), raises(TypeError, "torch.float64"):
        layer(torch.randn(2, 6, 8, dtype=torch.float64))  # autocast never casts float64


# -- the functional core -------------------------------------------------------------------------


def test_causal_mask_and_split_heads_name_their_arguments():
    with raises(ValueError, "context_length", "-1"):
        mh.causal_mask(-1)
    with raises(TypeError, "context_length", "2.5"):
        mh.causal_mask(2.5)
    assert torch.equal(mh.causal_mask(np.int64(3)), mh.causal_mask(3))
    with raises(ValueError, "divisible by num_heads", "(2, 3, 10)", "num_heads=4"):
        mh.split_heads(torch.rand(2, 3, 10), 4)
    with raises(ValueError, "num_heads", "0"):
        mh.split_heads(torch.rand(2, 3, 10), 0)
    with raises(ValueError, "(b, T, width)", "(3, 10)"):
        mh.split_heads(torch.rand(3, 10), 2)
    assert mh.split_heads(torch.rand(2, 3, 10), np.int64(5)).shape == (2, 5, 3, 2)


# -- plots ---------------------------------------------------------------------------------------


def test_plot_attention_checks_tokens_also_with_query_tokens():
    weights = torch.full((2, 3), 1 / 3)
    with raises(ValueError, "tokens must have one label per key position (3)", "got 2"):
        mh.plot_attention(weights, ["a", "b"], query_tokens=["x", "y"])
    with raises(ValueError, "query_tokens must have 2 labels", "got 3"):
        mh.plot_attention(weights, ["a", "b", "c"], query_tokens=["x", "y", "z"])
    with raises(TypeError, "tokens must be a sequence of labels", "str"):
        mh.plot_attention(weights, "a b c", query_tokens=["x", "y"])
    fig = mh.plot_attention(weights, ["a", "b", "c"], query_tokens=["x", "y"])
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["x", "y"]


@pytest.mark.parametrize(
    ("plot", "weights", "words"),
    [
        (mh.plot_attention_heads, torch.ones(0, 4, 4), ("at least one head", "(0, 4, 4)")),
        (mh.plot_attention_grid, torch.ones(0, 4, 4), ("at least one head", "(0, 4, 4)")),
        (mh.plot_attention_heads, -torch.rand(2, 4, 4) - 0.1, ("non-negative",)),
        (mh.plot_attention_grid, -torch.rand(2, 4, 4) - 0.1, ("non-negative",)),
        (mh.plot_attention_grid, torch.full((4, 4), float("nan")), ("NaN",)),
        (mh.plot_attention, -torch.rand(4, 4) - 0.1, ("vmin=0.0", "non-negative")),
        (mh.plot_attention, torch.ones(4, 0), ("at least one", "(4, 0)")),
    ],
)
def test_plots_reject_empty_and_negative_weights_before_matplotlib(plot, weights, words):
    before = plt.get_fignums()
    with raises(ValueError, *words):
        plot(weights)
    assert plt.get_fignums() == before  # no half-built figure left behind


def test_plot_attention_still_draws_scores_when_asked():
    scores = torch.randn(4, 4) - 5.0
    fig = mh.plot_attention(scores, vmin=None)
    assert len(fig.axes) == 2
    with raises(ValueError, "vmin=1.0", "vmax=0.5"):
        mh.plot_attention(torch.rand(3, 3), vmin=1.0, vmax=0.5)


def test_plot_numbers_accept_numpy_scalars():
    weights = torch.rand(3, 2, 4, 4).softmax(-1)
    fig = mh.plot_attention_grid(weights, batch_index=np.int64(2), max_cols=np.int32(1))
    assert len(fig.axes) == 2
    with raises(TypeError, "batch_index", "1.0"):
        mh.plot_attention_grid(weights, batch_index=1.0)
    with raises(TypeError, "max_cols", "True"):
        mh.plot_attention_heads(weights[0], max_cols=True)


# -- head_entropy and friends --------------------------------------------------------------------


def test_head_entropy_rejects_rows_that_do_not_sum_to_one():
    weights = torch.full((2, 3, 3), 1 / 3)
    weights[1, 2] = torch.tensor([1.0, 1.0, 1.0])  # sums to 3: "entropy" would be negative
    with raises(ValueError, "weights[1, 2]", "sums to 3"):
        mh.head_entropy(weights)
    batched = torch.full((2, 2, 3, 3), 1 / 3)
    batched[1, 0, 0] = 0.1  # sums to 0.3: neither a distribution nor a query without keys
    with raises(ValueError, "weights[1, 0, 0]", "sums to 0.3"):
        mh.head_entropy(batched)
    good = torch.full((2, 3, 3), 1 / 3)
    torch.testing.assert_close(mh.head_entropy(good), torch.log(torch.tensor([3.0, 3.0])))


def test_entropy_and_offset_accept_numpy_ints():
    assert uniform_causal_entropy(np.int64(4)) == uniform_causal_entropy(4)
    with raises(TypeError, "num_tokens", "4.0"):
        uniform_causal_entropy(4.0)
    weights = torch.eye(5)[None]  # (1, 5, 5)
    torch.testing.assert_close(mh.offset_attention(weights, np.int64(0)), torch.ones(1))
    with raises(TypeError, "k must be an int", "True"):
        mh.offset_attention(weights, True)


# -- explorers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"heads": 0}, ValueError, ("heads must be in [1, 8]", "heads=0")),
        ({"heads": 9}, ValueError, ("heads must be in [1, 8]", "heads=9")),
        ({"heads": 2.0}, TypeError, ("heads must be an int", "2.0")),
        ({"dropout": 0.95}, ValueError, ("dropout must be in [0.0, 0.9]", "0.95")),
        ({"dropout": -0.1}, ValueError, ("dropout must be in [0.0, 0.9]", "-0.1")),
        ({"scale": 0.1}, ValueError, ("scale must be in [0.5, 8.0]", "0.1")),
        ({"scale": 100}, ValueError, ("scale must be in [0.5, 8.0]", "100")),
        ({"seed": 1000}, ValueError, ("seed must be in [0, 999]", "1000")),
        ({"seed": -1}, ValueError, ("seed must be in [0, 999]", "-1")),
        ({"sentence": "poem"}, ValueError, ("sentence must be one of", "'book'", "'poem'")),
        ({"mode": "test"}, ValueError, ("mode must be one of", "'eval', 'train'", "'test'")),
        ({"max_heads": 0}, ValueError, ("max_heads", "0")),
        ({"draw": "no"}, TypeError, ("draw must be True or False", "'no'")),
    ],
)
def test_attention_explorer_rejects_values_outside_the_sliders(kwargs, error, words):
    with raises(error, *words):
        mh.attention_explorer(**{"draw": False, **kwargs})


def test_attention_explorer_accepts_numpy_values_at_the_edges():
    w = mh.attention_explorer(
        heads=np.int64(8),
        dropout=np.float32(0.9),
        scale=np.float64(8.0),
        seed=np.int32(999),
        draw=False,
    )
    view = w.result
    assert view.ok and view.num_heads == 8 and type(view.num_heads) is int
    assert type(view.dropout) is float and type(view.seed) is int


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"heads": 0}, ValueError, ("heads must be >= 1", "heads=0")),
        ({"heads": -3}, ValueError, ("heads must be >= 1", "heads=-3")),
        ({"sentence": "nope"}, ValueError, ("sentence must be one of", "'nope'")),
        ({"dropout": 1.0}, ValueError, ("dropout", "1.0")),
        ({"scale": float("nan")}, ValueError, ("scale", "nan")),
        ({"seed": "1"}, TypeError, ("seed must be an int", "'1'")),
    ],
)
def test_explore_attention_rejects_bad_arguments(kwargs, error, words):
    with raises(error, *words):
        explore_attention(**kwargs)


def test_explore_attention_non_divisor_is_a_message():
    view = explore_attention(heads=5)
    assert not view.ok and "do not divide" in view.message


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"heads": 0}, ValueError, ("heads must be in [1, 8]", "heads=0")),
        ({"k": 6}, ValueError, ("k must be in [1, 5]", "k=6")),
        ({"seed": 100}, ValueError, ("seed must be in [0, 99]", "seed=100")),
        ({"d_model": 0}, ValueError, ("d_model", "0")),
    ],
)
def test_training_explorer_rejects_values_outside_the_sliders(kwargs, error, words):
    with raises(error, *words):
        mh.training_explorer(**kwargs)


def test_dropout_and_heads_explorers_reject_bad_arguments():
    with raises(ValueError, "seed must be in [0, 999]", "seed=1000"):
        mh.dropout_explorer(seed=1000)
    with raises(ValueError, "non-negative"):
        mh.dropout_explorer(-torch.ones(3, 3))
    with raises(TypeError, "tokens", "str"):
        mh.dropout_explorer(torch.full((3, 3), 0.5), tokens="abc")
    with raises(ValueError, "max_heads", "0"):
        mh.heads_explorer(max_heads=0)
    with raises(ValueError, "d_out", "0"):
        mh.heads_explorer(d_out=0)
    batch = mh.load_journey().batch
    with raises(ValueError, "batch_index must be in [0, 2)", "batch_index=2"):
        wrapper_head_weights(batch, 2, batch_index=2)
    assert wrapper_head_weights(batch, np.int64(2), seed=np.int64(123)).shape == (2, 6, 6)
    dropped = dropout_weights(torch.ones(4, 4), np.float32(0.5), seed=np.int64(1))
    assert set(dropped.unique().tolist()) <= {0.0, 2.0}
    with raises(TypeError, "d_in", "2.0"):
        embed_words(["a"], d_in=2.0)
    with raises(TypeError, "words must be strings", "3"):
        embed_words(["a", 3])


# -- trainers and TinyAttentionLM ----------------------------------------------------------------


BAD_TRAINER_ARGS = [
    ({"lr": True}, TypeError, ("lr must be a number", "lr=True")),
    ({"lr": "0.01"}, TypeError, ("lr must be a number", "'0.01'")),
    ({"lr": 0.0}, ValueError, ("lr must be a positive finite number", "lr=0.0")),
    ({"lr": float("inf")}, ValueError, ("lr", "inf")),
    ({"epochs": 0}, ValueError, ("epochs must be >= 1", "epochs=0")),
    ({"epochs": True}, TypeError, ("epochs must be an int", "True")),
    ({"batch_size": 2.0}, TypeError, ("batch_size must be an int", "2.0")),
    ({"steps_per_epoch": -1}, ValueError, ("steps_per_epoch", "-1")),
    ({"num_heads": 5}, ValueError, ("d_model must be divisible by num_heads", "num_heads=5")),
    ({"d_model": 30}, ValueError, ("d_model must be divisible by num_heads", "d_model=30")),
    ({"vocab_size": 0}, ValueError, ("vocab_size", "0")),
    ({"context_length": np.bool_(True)}, TypeError, ("context_length must be an int",)),
    ({"seed": 1.5}, TypeError, ("seed must be an int", "1.5")),
    ({"progress": "no"}, TypeError, ("progress must be True or False", "'no'")),
]


@pytest.mark.parametrize("trainer", [mh.train_repeat_task, mh.train_shift_task])
@pytest.mark.parametrize(("kwargs", "error", "words"), BAD_TRAINER_ARGS)
def test_trainers_reject_bad_arguments_and_leave_the_rng_alone(trainer, kwargs, error, words):
    torch.manual_seed(42)
    state = torch.get_rng_state()
    with raises(error, *words):
        trainer(**{"progress": False, **kwargs})
    assert torch.equal(torch.get_rng_state(), state)


def test_shift_trainer_rejects_bad_k_before_the_rng():
    state = torch.get_rng_state()
    for k, error in ((0, ValueError), (12, ValueError), (True, TypeError), ("2", TypeError)):
        with pytest.raises(error, match="k"):
            mh.train_shift_task(k=k, progress=False)
    assert torch.equal(torch.get_rng_state(), state)


def test_trainer_success_leaves_the_rng_alone_and_accepts_numpy_numbers():
    torch.manual_seed(7)
    state = torch.get_rng_state()
    result = mh.train_repeat_task(
        epochs=np.int64(1), steps_per_epoch=np.int32(2), lr=np.float32(3e-3), progress=False
    )
    assert torch.equal(torch.get_rng_state(), state)
    assert len(result.losses) == 2
    assert type(result.config["lr"]) is float and type(result.config["epochs"]) is int
    plain = mh.train_repeat_task(epochs=1, steps_per_epoch=2, lr=float(np.float32(3e-3)))
    assert plain.losses == result.losses


def test_explorer_callbacks_leave_the_rng_alone():
    torch.manual_seed(3)
    state = torch.get_rng_state()
    w = mh.training_explorer(heads=2, k=1)
    w.controls["seed"].value = 5
    w.manual_button.click()  # the "Train" button
    assert w.result["result"] is not None
    assert w.result["offset"].shape == (2,)
    a = mh.attention_explorer(draw=False, mode="train", dropout=0.5)
    a.controls["seed"].value = 9
    d = mh.dropout_explorer()
    d.children[0].value = 0.7
    h = mh.heads_explorer()
    h.children[0].value = 3
    assert torch.equal(torch.get_rng_state(), state)


def test_tiny_lm_size_errors_name_d_model():
    with raises(ValueError, "d_model must be divisible by num_heads", "d_model=30", "num_heads=4"):
        mh.TinyAttentionLM(64, 30, 12, 4)
    model = mh.TinyAttentionLM(np.int64(16), np.int64(8), np.int32(6), np.int64(2), np.float32(0))
    assert "vocab_size=16, d_model=8" in repr(model) and type(model.d_model) is int


def test_tiny_lm_forward_never_reads_the_tensor_on_the_host(monkeypatch):
    """No .item()/int(tensor) per step: the NaN check is off, ids are checked only on CPU."""
    model = mh.TinyAttentionLM(16, 8, 6, 2)
    assert model.attn.check_finite is False
    ids = torch.randint(0, 16, (2, 6))
    reads = []
    monkeypatch.setattr(torch.Tensor, "__int__", lambda self: reads.append(self) or 0)
    monkeypatch.setattr(torch.Tensor, "__bool__", lambda self: reads.append(self) or True)
    monkeypatch.setattr(torch.Tensor, "item", lambda self: reads.append(self) or 0)
    model.check_ids(ids, check_values=False)
    with torch.no_grad():
        model.attn(model.tok_emb(ids) + model.pos_emb(torch.arange(6)))
    assert reads == []
    monkeypatch.undo()
    with raises(ValueError, "token ids must be in [0, 16)", "from 0 to 16"):
        model(torch.tensor([[0, 16]]))  # CPU: checked by default
    with raises(ValueError, "[0, 16)"):
        model.check_ids(torch.tensor([[-1]]), check_values=True)


def test_batch_generators_and_setup_lesson_name_bad_sizes():
    from mhsa_helpers.training import make_repeat_batch, make_shift_batch

    ids, targets = make_repeat_batch(np.int64(2), np.int64(4), np.int64(8))
    assert ids.shape == targets.shape == (2, 4)
    with raises(ValueError, "k must be smaller than context_length=4", "k=4"):
        make_shift_batch(2, 4, 8, 4)
    with raises(ValueError, "k must be >= 1", "k=0"):
        make_shift_batch(2, 4, 8, 0)
    with raises(TypeError, "vocab_size must be an int", "8.0"):
        make_repeat_batch(2, 4, 8.0)
    threads = torch.get_num_threads()
    try:
        with raises(ValueError, "threads must be >= 1", "threads=0"):
            mh.setup_lesson(threads=0)
        with raises(TypeError, "seed must be an int", "'123'"):
            mh.setup_lesson(seed="123")
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("kind", KINDS)
def test_meta_tensors_give_shapes_without_values(kind):
    with torch.device("meta"):
        module = build(kind)
        out = run(module, example_input(kind, batch=2, tokens=5))
    width = 8 if kind == "wrapper" else 4  # the wrapper's d_out is per head: 2 heads x 4
    assert out.is_meta and out.shape[-2:] == (5, width)


def test_a_run_that_fails_midway_restores_the_rng_and_threads(two_threads):
    config = TrainingConfig(2, 8, 6, 16, 1, 3, 4, 1e-2, 0)
    calls = []

    def make_batch(generator):
        calls.append(torch.rand(1))  # draws from the global RNG, as careless code might
        if len(calls) == 2:
            raise RuntimeError("batch failed")
        ids = torch.randint(0, 16, (4, 6), generator=generator)
        return ids, ids

    torch.manual_seed(11)
    state, threads = torch.get_rng_state(), torch.get_num_threads()
    assert threads == two_threads  # not the one thread training uses
    with raises(RuntimeError, "batch failed"):
        train("custom", make_batch, config, progress=False)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.get_num_threads() == threads
    with raises(TypeError, "config must be a TrainingConfig", "dict"):
        train("custom", make_batch, {"lr": 0.1})


def test_head_entropy_accepts_half_precision_softmax_rows():
    logits = torch.randn(4, 12, 12, generator=torch.Generator().manual_seed(0))
    weights = logits.softmax(-1).to(torch.bfloat16)  # rows sum to 1 only to ~3 digits
    entropy = mh.head_entropy(weights)
    torch.testing.assert_close(
        entropy.float(), mh.head_entropy(logits.softmax(-1)), atol=0.05, rtol=0
    )
