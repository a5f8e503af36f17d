"""The lessons' interactive explorers: moving a slider re-runs the callback and re-draws.

ipywidgets catches exceptions raised inside a callback (it logs them), so every test asserts on
``w.result``, the callback's return value, and on values that only the new setting can give.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch
from ipywidgets import FloatSlider, IntSlider, interactive
from torch.testing import assert_close

import mhsa_helpers as mh
from mhsa_helpers.ui import explorers as widgets


def slider(w: interactive, description: str):
    """The control a browser test would find by its description text."""
    matches = [c for c in w.kwargs_widgets if c.description == description]
    assert len(matches) == 1, [c.description for c in w.kwargs_widgets]
    return matches[0]


# -- dropout_explorer ------------------------------------------------------------------------


def test_dropout_explorer_sliders():
    w = mh.dropout_explorer()
    assert isinstance(w, interactive)
    p = slider(w, "dropout")
    assert isinstance(p, FloatSlider)
    assert (p.min, p.max, p.step, p.value) == (0.0, 0.9, 0.1, 0.5)
    assert isinstance(slider(w, "seed"), IntSlider)
    assert slider(w, "seed").value == 123


def test_dropout_explorer_initial_result_matches_the_book_pattern():
    w = mh.dropout_explorer()
    weights = mh.reference("seed789_masked_renormalized")  # (6, 6)
    keep = mh.reference("dropout_seed123_ones") != 0  # the book's seed-123 pattern at p=0.5
    assert w.result.shape == (6, 6)
    assert_close(w.result, torch.where(keep, 2 * weights, torch.zeros(())), atol=1e-6, rtol=0)


@pytest.mark.parametrize("p", [0.1, 0.2, 0.5, 0.9])
def test_dropout_slider_rescales_survivors(p):
    w = mh.dropout_explorer()
    weights = mh.reference("seed789_masked_renormalized")
    slider(w, "dropout").value = 0.0 if p != 0.0 else 0.1
    w.result = None
    slider(w, "dropout").value = p  # what moving the slider does
    dropped = w.result
    assert isinstance(dropped, torch.Tensor) and dropped.shape == (6, 6)
    kept = dropped != 0
    assert not kept[weights == 0].any(), "masked entries must stay 0"
    assert_close(dropped[kept], weights[kept] / (1 - p), atol=1e-5, rtol=1e-5)
    expected = widgets.dropout_weights(weights, p, seed=123)
    assert torch.equal(dropped, expected)


def test_dropout_zero_is_identity_and_seed_changes_pattern():
    w = mh.dropout_explorer()
    weights = mh.reference("seed789_masked_renormalized")
    slider(w, "dropout").value = 0.0
    assert torch.equal(w.result, weights)
    slider(w, "dropout").value = 0.5
    first = w.result.clone()
    slider(w, "seed").value = 7
    assert not torch.equal(w.result, first)
    assert torch.equal(w.result, widgets.dropout_weights(weights, 0.5, seed=7))


def test_dropout_explorer_leaves_global_rng_alone():
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    w = mh.dropout_explorer()
    slider(w, "dropout").value = 0.3
    assert torch.equal(torch.rand(3), expected)


def test_dropout_explorer_custom_weights_and_errors():
    custom = torch.full((3, 3), 0.5)
    w = mh.dropout_explorer(custom, tokens=["a", "b", "c"])
    slider(w, "dropout").value = 0.8
    assert w.result.shape == (3, 3)
    assert_close(w.result[w.result != 0], torch.full_like(w.result[w.result != 0], 2.5))
    with pytest.raises(ValueError, match="tokens"):
        mh.dropout_explorer(custom, tokens=["a", "b"])
    with pytest.raises(ValueError, match="weights"):
        mh.dropout_explorer(torch.ones(2, 3, 3))
    with pytest.raises(ValueError, match="p must be in"):
        widgets.dropout_weights(custom, 1.0)


# -- heads_explorer --------------------------------------------------------------------------


def test_heads_explorer_slider():
    w = mh.heads_explorer()
    h = slider(w, "heads")
    assert isinstance(h, IntSlider)
    assert (h.min, h.max, h.value) == (1, 8, 2)
    assert w.result.shape == (2, 6, 6)


@pytest.mark.parametrize("heads", [1, 3, 8])
def test_heads_slider_redraws_one_map_per_head(heads):
    w = mh.heads_explorer()
    w.result = None
    slider(w, "heads").value = heads
    weights = w.result
    assert isinstance(weights, torch.Tensor) and weights.shape == (heads, 6, 6)
    assert_close(weights.sum(-1), torch.ones(heads, 6))
    assert (weights.triu(diagonal=1) == 0).all(), "causal: nothing above the diagonal"


def test_heads_match_the_book_wrapper():
    """Head k of the widget is head k of the book's seeded MultiHeadAttentionWrapper."""
    batch = mh.load_journey().batch
    torch.manual_seed(123)
    wrapper = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=3)
    w = mh.heads_explorer()
    slider(w, "heads").value = 3
    for k, head in enumerate(wrapper.heads):
        _, expected = head(batch, return_weights=True)  # (b, T, T)
        assert torch.equal(w.result[k], expected[0].detach())
    # the first head does not depend on how many heads follow it
    slider(w, "heads").value = 1
    assert torch.equal(w.result[0], widgets.wrapper_head_weights(batch, 5)[0])


def test_heads_explorer_custom_inputs():
    x = torch.randn(4, 5)  # (T, d_in)
    w = mh.heads_explorer(tokens=list("abcd"), inputs=x, d_out=3, seed=1, max_heads=4)
    assert slider(w, "heads").max == 4
    slider(w, "heads").value = 4
    assert w.result.shape == (4, 4, 4)
    with pytest.raises(ValueError, match="tokens"):
        mh.heads_explorer(tokens=list("abc"), inputs=x)
    with pytest.raises(TypeError, match="inputs"):
        mh.heads_explorer(inputs=[[1.0, 2.0]])
    with pytest.raises(ValueError, match="inputs must have shape"):
        mh.heads_explorer(inputs=torch.ones(3))


# -- drawing ---------------------------------------------------------------------------------


def test_explorers_show_their_picture_under_the_sliders_and_replace_it():
    for w, description, value in [
        (mh.heads_explorer(), "heads", 8),
        (mh.dropout_explorer(), "dropout", 0.7),
    ]:
        assert w.children[-1] is w.image  # the picture is under the controls
        first = bytes(w.image.value)
        assert first.startswith(b"\x89PNG")
        slider(w, description).value = value
        assert bytes(w.image.value).startswith(b"\x89PNG")
        assert bytes(w.image.value) != first  # the picture is replaced in place
        assert len(w.out.outputs) == 0  # nothing printed or displayed as output


def test_callbacks_close_their_figures():
    before = len(plt.get_fignums())
    w = mh.heads_explorer()
    slider(w, "heads").value = 5
    d = mh.dropout_explorer()
    slider(d, "dropout").value = 0.7
    assert len(plt.get_fignums()) == before


def test_redraw_of_eight_heads_replaces_the_picture():
    """The largest re-draw (its speed is measured in benchmarks/widgets.py)."""
    w = mh.heads_explorer()
    before = bytes(w.image.value)
    slider(w, "heads").value = 8
    assert w.result.shape == (8, 6, 6)
    assert bytes(w.image.value) != before and bytes(w.image.value).startswith(b"\x89PNG")
