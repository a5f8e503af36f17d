"""Bad input found by fuzzing every public callable: each raises ValueError/TypeError naming it.

One test per class of problem: an argument that reached torch, matplotlib or Python internals
(RuntimeError, AttributeError, KeyError, IndexError), a message naming another argument than
the one the user passed, and bad input that was silently accepted (a flag that is not a bool,
NaN that became NaN output, a seed torch cannot take).
"""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import torch
from figure_checks import _close_figures  # noqa: F401 (autouse fixture)

import mhsa_helpers as mh
import mhsa_helpers.lm as lm
from mhsa_helpers.ui.explorers import explore_attention


def raises(exc, *words):
    """pytest.raises whose message must contain every word, in order."""
    return pytest.raises(exc, match=".*".join(re.escape(w) for w in words))


CACHED = [
    mh.MultiHeadAttention,
    mh.FusedQKVMultiHeadAttention,
    mh.SDPAMultiHeadAttention,
]


# -- the functional core -----------------------------------------------------------------------


@pytest.mark.parametrize("cls", CACHED)
@pytest.mark.parametrize("cache", ["cache", 3, {}, mh.KVCache])
def test_cache_that_is_not_a_kv_cache_is_a_type_error(cls, cache):
    layer = cls(3, 4, 6, 0.0, 2)
    with raises(TypeError, "cache must be a KVCache"):
        layer(torch.rand(1, 4, 3), cache=cache)


def test_gqa_cache_that_is_not_a_kv_cache_is_a_type_error():
    layer = mh.GroupedQueryAttention(3, 4, 6, 0.0, 2, 1)
    with raises(TypeError, "cache must be a KVCache", "str"):
        layer(torch.rand(1, 4, 3), cache="cache")


def test_kv_cache_rejects_integer_keys():
    keys = torch.ones(1, 2, 3, 4, dtype=torch.long)
    with raises(TypeError, "keys", "floating-point", "torch.int64"):
        mh.KVCache(4).update(keys, keys.clone())


q = torch.rand(1, 2, 4, 3)  # (b, h, T, head_dim)


@pytest.mark.parametrize(
    ("args", "error", "words"),
    [
        ((None, q, q), TypeError, ("queries", "NoneType")),
        ((q, torch.rand(1, 2, 4, 5), q), ValueError, ("queries and keys", "d_k")),
        ((q, q, torch.rand(1, 2, 5, 3)), ValueError, ("keys and values", "tokens")),
        ((q.long(), q.long(), q.long()), TypeError, ("queries", "floating-point")),
        ((q, q.double(), q), TypeError, ("one dtype",)),
        ((q, q, q, torch.zeros(4, 4)), TypeError, ("mask", "torch.bool")),
        ((q, q, q, torch.zeros(3, 3, dtype=torch.bool)), ValueError, ("mask", "(4, 4)")),
        ((q, q, q, None, "dropout"), TypeError, ("dropout", "str")),
        ((q[0, 0, 0], q[0, 0, 0], q[0, 0, 0]), ValueError, ("queries", "2 dimensions")),
    ],
)
def test_masked_attention_checks_its_arguments(args, error, words):
    with raises(error, *words):
        mh.masked_attention(*args)


def test_masked_attention_still_takes_a_broadcast_mask():
    mask = mh.causal_mask(4).bool()  # (T, T) for (b, h, T, T) scores
    context, weights = mh.masked_attention(q, q, q, mask)
    assert context.shape == (1, 2, 4, 3)
    torch.testing.assert_close(weights.sum(-1), torch.ones(1, 2, 4))


@pytest.mark.parametrize(
    ("x", "error"), [(None, TypeError), ([1.0], TypeError), (torch.rand(1, 4, 4), ValueError)]
)
def test_merge_heads_checks_x(x, error):
    with raises(error, "x must"):
        mh.merge_heads(x)


# -- models fed token ids ------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["False", 0, 1, None])
def test_tiny_lm_return_weights_must_be_a_bool(flag):
    model = mh.TinyAttentionLM(10, 8, 6, 2)
    with raises(TypeError, "return_weights"):
        model(torch.zeros(1, 4, dtype=torch.long), return_weights=flag)


@pytest.mark.parametrize(
    "model", [mh.TinyAttentionLM(10, 8, 6, 2), lm.CharTransformer(10, 8, 6, 2, 1)]
)
def test_ids_of_a_dtype_no_embedding_takes_or_on_another_device(model):
    with raises(TypeError, "ids", "integer dtype", "torch.uint8"):
        model(torch.zeros(1, 4, dtype=torch.uint8))
    with raises(ValueError, "ids is on meta", "model is on cpu"):
        model(torch.zeros(1, 4, dtype=torch.long, device="meta"))


def test_generate_names_the_prompt():
    model = lm.CharTransformer(10, 8, 6, 2, 1)
    with raises(TypeError, "prompt", "integer dtype"):
        lm.generate(model, torch.rand(1, 2), 3)
    with raises(ValueError, "prompt", "num_tokens >= 1"):
        lm.generate(model, torch.zeros(1, 0, dtype=torch.long), 3)
    with raises(ValueError, "token ids (prompt)", "[0, 10)"):
        lm.generate(model, torch.full((1, 2), 50), 3)


def test_decode_names_ids():
    tokenizer = lm.CharTokenizer("abc")
    with raises(ValueError, "ids must be in [0, 3)", "99"):
        tokenizer.decode([99])
    with raises(TypeError, "ids", "NoneType"):
        tokenizer.decode(None)


def test_train_char_lm_data_must_be_text_data():
    with raises(TypeError, "data must be a TextData", "str"):
        lm.train_char_lm(lm.CharLMConfig(steps=2, warmup_steps=1), progress=False, data="poems")


# -- seeds ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [2**70, -(2**64)])
def test_seed_torch_cannot_take_is_named(seed):
    state = torch.get_rng_state()
    with raises(ValueError, "seed must be in", "64-bit"):
        mh.setup_lesson(seed)
    with raises(ValueError, "seed must be in"):
        mh.train_repeat_task(seed=seed, progress=False)
    with raises(ValueError, "seed must be in"):
        mh.train_shift_task(seed=seed, progress=False)
    with raises(ValueError, "seed must be in"):
        explore_attention(seed=seed)
    assert torch.equal(state, torch.get_rng_state())


# -- plots and figures ---------------------------------------------------------------------------

W = torch.softmax(torch.rand(4, 4), dim=-1)  # (T_q, T_k)
WH = torch.softmax(torch.rand(2, 3, 4, 4), dim=-1)  # (b, h, T_q, T_k)


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"cmap": "nope"}, ValueError, "cmap"),
        ({"cmap": 3}, TypeError, "cmap"),
        ({"ax": "ax"}, TypeError, "ax"),
        ({"cbar": "no"}, TypeError, "cbar"),
        ({"annot": "yes"}, TypeError, "annot"),
        ({"vmax": float("nan")}, ValueError, "vmax"),
        ({"vmin": float("-inf")}, ValueError, "vmin"),
    ],
)
def test_plot_attention_checks_its_style_arguments(kwargs, error, name):
    with raises(error, name):
        mh.plot_attention(W, **kwargs)


@pytest.mark.parametrize("plot", ["plot_attention_heads", "plot_attention_grid"])
def test_head_plots_check_cmap_annot_and_meta(plot):
    draw = getattr(mh, plot)
    with raises(ValueError, "cmap", "nope"):
        draw(WH, cmap="nope")
    with raises(TypeError, "annot"):
        draw(WH, annot="no")
    with raises(ValueError, "meta tensor"):
        draw(torch.empty(2, 3, 4, 4, device="meta"))


def test_plot_attention_rejects_meta_weights():
    with raises(ValueError, "meta tensor"):
        mh.plot_attention(torch.empty(4, 4, device="meta"))


@pytest.mark.parametrize(
    ("name", "args", "error", "words"),
    [
        ("plot_cross_attention", (-W, list("abcd"), list("abcd")), ValueError, ("weights",)),
        ("plot_cross_attention", (W, None, list("abcd")), TypeError, ("query_tokens",)),
        ("plot_gqa_sharing", (torch.tensor([], dtype=torch.long),), ValueError, ("kv_head_of",)),
        ("plot_gqa_sharing", (torch.tensor([-1, 0]),), ValueError, ("kv_head_of",)),
        ("plot_heads_concat", ([W, W[:3]],), ValueError, ("head_outputs", "(3, 4)")),
        ("plot_kv_cache_growth", (None, None, None), TypeError, ("cache_lengths",)),
        ("plot_matmul_counts", ({"a": 1},), TypeError, ("counts['a']",)),
        ("plot_dropout_scaling", ({"a": torch.ones(3)},), ValueError, ("samples",)),
        ("plot_fused_qkv", (torch.empty(9, 3, device="meta"),), ValueError, ("weight",)),
    ],
)
def test_figures_name_the_bad_argument(name, args, error, words):
    with raises(error, *words):
        getattr(mh.figures, name)(*args)


# -- helpers -------------------------------------------------------------------------------------


def test_offset_attention_rejects_non_finite_weights():
    weights = torch.full((1, 2, 6, 6), float("nan"))
    with raises(ValueError, "weights", "NaN"):
        mh.offset_attention(weights, 1)


@pytest.mark.parametrize(
    ("sentences", "error"),
    [("x", TypeError), ({}, TypeError), ({"book": (["a"], torch.rand(2, 3))}, ValueError)],
)
def test_explorer_sentences_are_checked(sentences, error):
    with raises(error, "sentences"):
        explore_attention(sentences=sentences)
    with raises(error, "sentences"):
        mh.attention_explorer(sentences=sentences, draw=False)


def test_heads_explorer_names_inputs_and_tokens():
    with raises(ValueError, "inputs has a non-finite value"):
        mh.heads_explorer(list("ab"), torch.full((2, 3), float("nan")))
    with raises(TypeError, "inputs", "floating-point"):
        mh.heads_explorer(list("ab"), torch.ones(2, 3, dtype=torch.long))
    with raises(TypeError, "tokens", "int"):
        mh.heads_explorer(3, torch.rand(2, 3))


def test_dropout_explorer_tokens_must_be_labels():
    with raises(TypeError, "tokens", "int"):
        mh.dropout_explorer(W, 4)


def test_reference_name_must_be_a_string():
    with raises(TypeError, "name must be a str", "NoneType"):
        mh.reference(None)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "name"),
    [
        ((None, mh.SelfAttentionV1(3, 2), torch.rand(4, 3)), {}, TypeError, "ours"),
        ((mh.SelfAttentionV1(3, 2), lambda x: x, torch.rand(4, 3)), {}, TypeError, "reference"),
        ((mh.SelfAttentionV1(3, 2), mh.SelfAttentionV1(3, 2)), {}, TypeError, "inputs"),
        ((mh.SelfAttentionV1(3, 2), mh.SelfAttentionV1(3, 2), "x"), {}, TypeError, "inputs"),
        (
            (mh.SelfAttentionV1(3, 2), mh.SelfAttentionV1(3, 2), torch.rand(4, 3)),
            {"seed": "1"},
            TypeError,
            "seed",
        ),
    ],
)
def test_assert_same_module_checks_its_arguments(args, kwargs, error, name):
    with raises(error, name):
        mh.assert_same_module(*args, **kwargs)


@pytest.mark.parametrize(
    "make",
    [
        lambda: mh.SelfAttentionV2(3, 4),
        lambda: mh.CausalAttention(3, 4, 6, 0.0),
        lambda: mh.MultiHeadAttentionWrapper(3, 4, 6, 0.0, 2),
        lambda: mh.MultiHeadAttention(3, 4, 6, 0.0, 2),
        lambda: mh.SDPAMultiHeadAttention(3, 4, 6, 0.0, 2),
        lambda: mh.GroupedQueryAttention(3, 4, 6, 0.0, 2, 1),
    ],
)
def test_input_on_another_device_than_the_module_is_named(make):
    with raises(ValueError, "x is on meta", "parameters are on cpu"):
        make()(torch.empty(2, 4, 3, device="meta"))


def test_cross_attention_input_on_another_device_is_named():
    layer = mh.CrossMultiHeadAttention(3, 3, 4, 2)
    with raises(ValueError, "key_value is on meta"):
        layer(torch.rand(1, 4, 3), torch.empty(1, 4, 3, device="meta"))


def test_a_module_on_meta_still_works_out_output_shapes():
    layer = mh.MultiHeadAttention(3, 4, 6, 0.0, 2).to("meta")
    assert layer(torch.empty(2, 4, 3, device="meta")).shape == (2, 4, 4)


def test_load_checkpoint_of_a_file_that_is_no_checkpoint_is_named(tmp_path):
    path = tmp_path / "notes.pt"
    path.write_text("not a checkpoint")
    with raises(ValueError, "path=", "notes.pt", "not a checkpoint"):
        lm.load_checkpoint(path)


def test_char_lm_config_takes_numpy_scalars_and_stores_python_numbers():
    config = lm.CharLMConfig(
        d_model=np.int64(8),
        num_heads=np.int32(2),
        lr=np.float32(0.01),
        min_lr=np.float64(0.001),
        warmup_steps=np.int64(1),
        steps=np.int64(5),
        seed=np.int64(3),
    )
    values = [config.d_model, config.num_heads, config.warmup_steps, config.steps, config.seed]
    assert all(type(v) is int for v in values)
    assert type(config.lr) is float and config.lr == pytest.approx(0.01)
    with raises(ValueError, "seed must be in"):
        lm.CharLMConfig(seed=2**70)
    with raises(TypeError, "lr"):
        lm.CharLMConfig(lr=True)
