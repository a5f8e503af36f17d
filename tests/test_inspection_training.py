"""Head entropy, the attention explorer, TinyAttentionLM and the two toy training tasks."""

from __future__ import annotations

import math

import matplotlib
import pytest
import torch

import mhsa_helpers as mh
from mhsa_helpers.inspection import attention_share, uniform_causal_entropy
from mhsa_helpers.training import make_repeat_batch, make_shift_batch
from mhsa_helpers.ui.explorers import explore_attention
from mhsa_helpers.ui.sentences import embed_words, example_sentences

matplotlib.use("Agg")


def uniform_causal(num_tokens: int) -> torch.Tensor:
    """Row i spreads evenly over keys 0..i: (T, T)."""
    lower = torch.tril(torch.ones(num_tokens, num_tokens))
    return lower / lower.sum(dim=-1, keepdim=True)


# --------------------------------------------------------------------------- head_entropy


def test_entropy_of_one_hot_rows_is_exactly_zero():
    eye = torch.eye(6).expand(3, 6, 6)  # each query looks only at itself
    assert torch.equal(mh.head_entropy(eye), torch.zeros(3))
    previous = torch.zeros(6, 6)
    previous[0, 0] = 1.0
    previous[torch.arange(1, 6), torch.arange(0, 5)] = 1.0  # the previous token
    assert torch.equal(mh.head_entropy(previous[None]), torch.zeros(1))


@pytest.mark.parametrize("num_tokens", [1, 2, 6, 12])
def test_entropy_of_uniform_causal_rows_is_mean_log_i_plus_1(num_tokens):
    weights = uniform_causal(num_tokens).to(torch.float64)[None]  # (1, T, T)
    expected = sum(math.log(i + 1) for i in range(num_tokens)) / num_tokens
    got = mh.head_entropy(weights)
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, torch.tensor([expected], dtype=torch.float64))
    assert uniform_causal_entropy(num_tokens) == pytest.approx(expected)


def test_entropy_full_uniform_rows_is_log_t():
    weights = torch.full((2, 5, 5), 0.2)
    torch.testing.assert_close(mh.head_entropy(weights), torch.full((2,), math.log(5)))


def test_entropy_4d_is_mean_over_batch_and_rows_per_head():
    one_hot = torch.eye(4)
    uniform = uniform_causal(4)
    weights = torch.stack(
        [torch.stack([one_hot, uniform]), torch.stack([uniform, uniform])]
    )  # (b=2, h=2, 4, 4)
    u = uniform_causal_entropy(4)
    torch.testing.assert_close(mh.head_entropy(weights), torch.tensor([u / 2, u]))
    torch.testing.assert_close(mh.head_entropy(weights[0]), torch.tensor([0.0, u]))


def test_entropy_of_real_weights_is_between_zero_and_causal_maximum():
    torch.manual_seed(0)
    mha = mh.MultiHeadAttention(3, 8, 6, 0.0, num_heads=4)
    _, weights = mha(3 * torch.rand(2, 6, 3), return_weights=True)  # (2, 4, 6, 6)
    entropy = mh.head_entropy(weights)
    assert entropy.shape == (4,)
    assert not entropy.requires_grad
    assert (entropy >= 0).all()
    assert (entropy <= uniform_causal_entropy(6) + 1e-6).all()


@pytest.mark.parametrize(
    ("weights", "error", "match"),
    [
        ([[0.5, 0.5]], TypeError, "torch.Tensor"),
        (torch.ones(3, 3, dtype=torch.long), TypeError, "floating-point"),
        (torch.ones(3), ValueError, "num_heads, T_q, T_k"),
        (torch.ones(1, 1, 2, 3, 3), ValueError, "got weights.shape"),
        (torch.ones(0, 3, 3), ValueError, "empty"),
        (torch.tensor([[[1.5, -0.5], [0.5, 0.5]]]), ValueError, "negative"),
        (torch.tensor([[[float("nan"), 1.0], [0.5, 0.5]]]), ValueError, "NaN"),
    ],
)
def test_entropy_rejects_bad_input(weights, error, match):
    with pytest.raises(error, match=match):
        mh.head_entropy(weights)


# --------------------------------------------------------------------------- explorer


@pytest.fixture(scope="module")
def explorer():
    return mh.attention_explorer(heads=2, scale=3.0, draw=False)


def test_explorer_has_heads_and_dropout_sliders(explorer):
    import ipywidgets as widgets

    by_name = {w.description: w for w in explorer.kwargs_widgets}
    assert isinstance(by_name["heads"], widgets.IntSlider)
    assert isinstance(by_name["dropout"], widgets.FloatSlider)
    assert explorer.kwargs_widgets[0] is explorer.controls["heads"]
    assert explorer.kwargs_widgets[1] is explorer.controls["dropout"]
    assert {"seed", "sentence", "mode", "scale"} <= set(by_name)


def test_explorer_heads_slider_changes_the_result(explorer):
    explorer.controls["sentence"].value = "book"
    explorer.controls["heads"].value = 4
    view = explorer.result
    assert isinstance(view, mh.ExplorerView)
    assert view.ok and view.num_heads == 4 and view.head_dim == 6
    assert view.weights.shape == (4, 6, 6)
    torch.testing.assert_close(view.weights.sum(-1), torch.ones(4, 6))
    assert torch.equal(view.weights.triu(1), torch.zeros(4, 6, 6))
    explorer.kwargs_widgets[0].value = 8  # what moving the slider does
    assert explorer.result.weights.shape == (8, 6, 6)
    assert explorer.result.entropy.shape == (8,)


@pytest.mark.parametrize("heads", [5, 7])
def test_explorer_invalid_head_count_shows_a_message_not_an_error(explorer, heads):
    explorer.controls["heads"].value = heads
    view = explorer.result
    assert view.num_heads == heads  # the callback ran (ipywidgets would swallow an exception)
    assert not view.ok and view.weights is None
    assert "do not divide d_out = 24" in view.message
    explorer.controls["heads"].value = 2  # and it recovers
    assert explorer.result.ok


def test_explorer_dropout_acts_only_in_train_mode(explorer):
    explorer.controls["heads"].value = 2
    explorer.controls["mode"].value = "eval"
    explorer.controls["dropout"].value = 0.5
    eval_view = explorer.result
    assert torch.equal(eval_view.shown, eval_view.weights)  # dropout is off in eval mode
    explorer.controls["mode"].value = "train"
    train_view = explorer.result
    assert torch.equal(train_view.weights, eval_view.weights)  # weights are taken before dropout
    dropped = train_view.shown
    kept = dropped != 0
    assert (~kept & (train_view.weights > 0)).any()  # some weights were dropped
    torch.testing.assert_close(dropped[kept], 2 * train_view.weights[kept])  # survivors x 1/(1-p)
    explorer.controls["dropout"].value = 0.0
    explorer.controls["mode"].value = "eval"


def test_explorer_views_are_reproducible_and_leave_the_global_rng_alone():
    torch.manual_seed(42)
    before = torch.rand(1)
    torch.manual_seed(42)
    a = explore_attention(4, 0.3, 2.0, 7, "longer", "train")
    after = torch.rand(1)
    b = explore_attention(4, 0.3, 2.0, 7, "longer", "train")
    assert torch.equal(before, after)
    assert torch.equal(a.shown, b.shown)
    assert a.words == mh.ui.sentences.LONGER_SENTENCE.split()
    assert len(a.words) == 11
    assert explore_attention(4, seed=8).weights is not None
    assert not torch.equal(explore_attention(4, seed=8).weights, explore_attention(4).weights)


def test_explorer_sentences_and_embeddings_are_deterministic():
    sentences = example_sentences()
    words, inputs = sentences["book"]
    assert words == mh.load_journey().words
    assert torch.equal(inputs, mh.load_journey().inputs)
    words, inputs = sentences["longer"]
    assert inputs.shape == (11, 3)
    assert torch.equal(inputs[0], inputs[4])  # "The" and "the": same word, same embedding
    assert torch.equal(inputs[5], inputs[8])  # "mat" twice
    assert torch.equal(embed_words(["cat"]), embed_words(["cat"]))
    with pytest.raises(TypeError):
        embed_words("a sentence")


def test_explorer_draws_a_figure():
    """The draw=True path, without a notebook (its speed is measured in benchmarks/widgets.py)."""
    import matplotlib.pyplot as plt

    drawing = mh.attention_explorer(heads=8, sentence="longer")
    assert drawing.result.ok and drawing.result.seconds > 0
    first = bytes(drawing.image.value)
    assert first.startswith(b"\x89PNG")
    drawing.controls["heads"].value = 4
    assert bytes(drawing.image.value) != first  # the picture is replaced in place
    assert "4 heads x head_dim 6" in drawing.message.value
    drawing.controls["heads"].value = 5
    assert drawing.image.layout.display == "none"
    assert "do not divide" in drawing.message.value
    assert plt.get_fignums() == []


# --------------------------------------------------------------------------- TinyAttentionLM


def test_tiny_lm_shapes_and_weights():
    torch.manual_seed(0)
    model = mh.TinyAttentionLM(vocab_size=64, d_model=32, context_length=12, num_heads=4)
    ids = torch.randint(0, 64, (3, 10))
    logits = model(ids)
    assert logits.shape == (3, 10, 64)
    logits2, weights = model(ids, return_weights=True)
    assert torch.equal(logits, logits2)
    assert weights.shape == (3, 4, 10, 10)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 4, 10))
    assert model.head_dim == 8
    assert "num_heads=4" in repr(model)


def test_tiny_lm_is_causal():
    torch.manual_seed(0)
    model = mh.TinyAttentionLM(16, 8, 6, 2)
    ids = torch.randint(0, 16, (1, 6))
    changed = ids.clone()
    changed[0, -1] = (ids[0, -1] + 1) % 16
    torch.testing.assert_close(model(ids)[:, :-1], model(changed)[:, :-1])


@pytest.mark.parametrize(
    ("ids", "error", "match"),
    [
        ([[1, 2, 3]], TypeError, "torch.Tensor"),
        (torch.zeros(1, 3), TypeError, "integer dtype"),
        (torch.zeros(1, 3, dtype=torch.bool), TypeError, "integer dtype"),
        (torch.zeros(3, dtype=torch.long), ValueError, "batch, num_tokens"),
        (torch.zeros(1, 0, dtype=torch.long), ValueError, "at least one token"),
        (torch.zeros(1, 13, dtype=torch.long), ValueError, "context_length=12"),
        (torch.tensor([[0, 64]]), ValueError, r"\[0, 64\)"),
        (torch.tensor([[-1, 3]]), ValueError, r"\[0, 64\)"),
    ],
)
def test_tiny_lm_rejects_bad_ids(ids, error, match):
    model = mh.TinyAttentionLM(64, 32, 12, 4)
    with pytest.raises(error, match=match):
        model(ids)


def test_tiny_lm_rejects_bad_sizes():
    with pytest.raises(ValueError, match="divisible by num_heads"):
        mh.TinyAttentionLM(64, 32, 12, 5)
    with pytest.raises(TypeError, match="vocab_size"):
        mh.TinyAttentionLM(64.0, 32, 12, 4)
    with pytest.raises(ValueError, match="dropout"):
        mh.TinyAttentionLM(64, 32, 12, 4, dropout=1.0)


def test_batches():
    gen = torch.Generator().manual_seed(0)
    ids, targets = make_repeat_batch(5, 12, 64, gen)
    assert ids.shape == targets.shape == (5, 12)
    assert torch.equal(ids, targets)
    assert (ids == ids[:, :1]).all()
    ids, targets = make_shift_batch(4, 12, 64, 3, gen)
    assert (targets[:, :3] == -100).all()
    assert torch.equal(targets[:, 3:], ids[:, :-3])


# --------------------------------------------------------------------------- training


@pytest.mark.parametrize("seed", [0, 1, 7, 123])
def test_repeat_task_claim_holds_for_any_seed(seed):
    result = mh.train_repeat_task(seed=seed, progress=False)
    assert isinstance(result, mh.TrainingResult)
    assert len(result.losses) == 3 * result.config["steps_per_epoch"]
    assert len(result.epoch_losses) == 3
    assert abs(result.losses[0] - math.log(64)) < 0.3, result.losses[0]  # about 4.16
    assert result.epoch_losses[-1] < 1.0, result.epoch_losses
    assert result.epoch_losses[0] > result.epoch_losses[1] > result.epoch_losses[2]
    assert not result.model.training


def test_training_is_deterministic_and_does_not_change_threads(two_threads):
    threads = torch.get_num_threads()
    assert threads == two_threads  # not the one thread training uses
    a = mh.train_repeat_task(seed=3, epochs=1, progress=False)
    b = mh.train_repeat_task(seed=3, epochs=1, progress=False)
    assert a.losses == b.losses
    assert torch.get_num_threads() == threads
    for p, q in zip(a.model.parameters(), b.model.parameters()):
        assert torch.equal(p, q)


def test_training_progress_bar_writes_to_stderr(capsys):
    mh.train_repeat_task(epochs=1, steps_per_epoch=3, progress=True)
    assert "repeat task" in capsys.readouterr().err


@pytest.mark.parametrize(("k", "seed"), [(1, 0), (2, 1), (3, 2)])
def test_shift_task_makes_a_head_specialise_on_offset_k(k, seed):
    untrained = mh.TinyAttentionLM(64, 32, 12, 4)
    assert offset_attention_max(untrained, k) < 0.5
    result = mh.train_shift_task(k=k, seed=seed, progress=False)
    assert result.epoch_losses[-1] < 0.5
    per_head = mh.offset_attention(result.model, k)
    assert per_head.shape == (4,)
    assert per_head.max() > 0.8, per_head
    other = 1 if k != 1 else 2
    assert mh.offset_attention(result.model, other).max() < 0.2


def offset_attention_max(model, k):
    return float(mh.offset_attention(model, k).max())


def test_offset_attention_on_weights():
    weights = torch.zeros(2, 5, 5)
    weights[0, 0, 0] = weights[0, 1, 0] = 1.0
    weights[0, torch.arange(2, 5), torch.arange(0, 3)] = 1.0  # head 1: two back
    weights[1] = torch.eye(5)  # head 2: itself
    torch.testing.assert_close(mh.offset_attention(weights, 2), torch.tensor([1.0, 0.0]))
    torch.testing.assert_close(mh.offset_attention(weights, 0), torch.tensor([0.2, 1.0]))
    batched = weights.expand(3, 2, 5, 5)
    torch.testing.assert_close(mh.offset_attention(batched, 2), torch.tensor([1.0, 0.0]))
    with pytest.raises(ValueError, match=r"k must be in \[0, 5\)"):
        mh.offset_attention(weights, 5)
    with pytest.raises(TypeError, match="TinyAttentionLM"):
        mh.offset_attention([[1.0]], 0)
    with pytest.raises(ValueError, match="ids is only used"):
        mh.offset_attention(weights, 1, ids=torch.zeros(1, 5, dtype=torch.long))


def test_attention_share_is_the_weight_on_the_marked_keys_over_queries_that_have_one():
    """The head metric behind ``lm.head_focus``; on the previous key it is ``offset_attention``
    over the queries t >= 1."""
    weights = torch.softmax(torch.randn(2, 3, 5, 5), dim=-1)  # (L, h, T, T)
    previous = torch.eye(5, dtype=torch.bool).roll(-1, dims=1).tril(-1)  # key t - 1 of query t
    share = attention_share(weights, previous)  # (L, h)
    assert share.shape == (2, 3)
    for layer in range(2):
        torch.testing.assert_close(share[layer], mh.offset_attention(weights[layer], 1))
    every_key = torch.ones(5, 5, dtype=torch.bool)
    torch.testing.assert_close(attention_share(weights, every_key), torch.ones(2, 3))
    assert attention_share(weights, torch.zeros(5, 5, dtype=torch.bool)).isnan().all()
    with pytest.raises(TypeError, match="keys must be a bool"):
        attention_share(weights, previous.float())
    with pytest.raises(ValueError, match="keys must have shape"):
        attention_share(weights, previous[:4])


def test_shift_task_rejects_bad_k():
    with pytest.raises(ValueError, match="smaller than context_length"):
        mh.train_shift_task(k=12, progress=False)
    with pytest.raises(TypeError, match="k must be an int"):
        mh.train_shift_task(k=1.5, progress=False)
