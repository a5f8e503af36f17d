"""Heatmaps: plot_attention, plot_attention_heads (seaborn) and plot_attention_grid (fast)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch
from figure_checks import _close_figures, texts  # noqa: F401 (autouse fixture)

import mhsa_helpers as mh
from mhsa_helpers.ui.explorers import wrapper_head_weights
from mhsa_helpers.ui.plotting import figure_png


def heads(num_heads: int) -> torch.Tensor:
    """(num_heads, 6, 6): the causal weights of the book's seeded wrapper."""
    return wrapper_head_weights(mh.load_journey().batch, num_heads)


# -- plot_attention --------------------------------------------------------------------------


def test_plot_attention_one_matrix_with_colorbar_and_labels(journey):
    weights = heads(1)[0]  # (6, 6)
    fig = mh.plot_attention(weights, journey.words, title="one head")
    ax, bar = fig.axes
    assert bar.get_label() == "<colorbar>"
    assert ax.get_title() == "one head"
    assert [t.get_text() for t in ax.get_xticklabels()] == journey.words
    assert [t.get_text() for t in ax.get_yticklabels()] == journey.words
    assert len(ax.texts) == 36  # T <= 8: every cell is annotated
    assert texts(ax)[0] == f"{weights[0, 0]:.2f}"


@pytest.mark.parametrize(
    ("weights", "tokens", "error", "match"),
    [
        ([[1.0]], None, TypeError, "weights must be a torch.Tensor"),
        (torch.ones(2, 3, 3), None, ValueError, r"weights must have shape \(T_q, T_k\)"),
        (torch.ones(3, 3), ["a", "b"], ValueError, "tokens must have one label per key"),
    ],
)
def test_plot_attention_rejects_bad_input(weights, tokens, error, match):
    with pytest.raises(error, match=match):
        mh.plot_attention(weights, tokens)


# -- plot_attention_heads --------------------------------------------------------------------


def test_plot_attention_heads_one_axes_per_head_and_a_colorbar(journey):
    weights = heads(3)
    fig = mh.plot_attention_heads(weights, journey.words, suptitle="three")
    *panels, bar = fig.axes
    assert bar.get_label() == "<colorbar>"
    assert len(panels) == 3 and all(ax.get_visible() for ax in panels)
    assert [ax.get_title() for ax in panels] == ["Head 1", "Head 2", "Head 3"]
    assert fig._suptitle.get_text() == "three"
    vmax = float(weights.max())
    for ax, head in zip(panels, weights):
        (mesh,) = ax.collections
        assert mesh.get_clim() == (0.0, vmax)  # one shared colour scale
        assert torch.equal(torch.as_tensor(mesh.get_array()).reshape(6, 6), head)


def test_plot_attention_heads_grid_hides_unused_axes(journey):
    fig = mh.plot_attention_heads(heads(5), journey.words, max_cols=4, annot=False)
    *panels, _ = fig.axes
    assert len(panels) == 8  # 2 rows of 4
    assert [ax.get_title() for ax in panels if ax.get_visible()] == [
        f"Head {i}" for i in range(1, 6)
    ]
    assert not any(ax.get_visible() for ax in panels[5:])


def test_plot_attention_heads_takes_a_batch_and_batch_index(journey):
    batch = torch.stack([heads(2), torch.rand(2, 6, 6)])  # (b=2, h=2, 6, 6)
    fig = mh.plot_attention_heads(batch, journey.words, batch_index=1)
    got = torch.as_tensor(fig.axes[0].collections[0].get_array()).reshape(6, 6)
    assert torch.equal(got, batch[1, 0])
    assert not torch.equal(batch[0, 0], batch[1, 0])


@pytest.mark.parametrize(
    ("weights", "kwargs", "error", "match"),
    [
        ([[[1.0]]], {}, TypeError, "weights must be a torch.Tensor"),
        (torch.ones(6, 6), {}, ValueError, r"weights must have shape \(num_heads, T_q, T_k\)"),
        (torch.ones(1, 1, 2, 6, 6), {}, ValueError, r"got weights.shape=\(1, 1, 2, 6, 6\)"),
        (
            torch.ones(2, 2, 6, 6),
            {"batch_index": 2},
            ValueError,
            r"batch_index must be in \[0, 2\)",
        ),
        (torch.ones(2, 6, 6), {"tokens": ["a", "b"]}, ValueError, "tokens must have one label"),
        (torch.ones(2, 6, 6), {"max_cols": 0}, ValueError, "max_cols must be >= 1, got max_cols=0"),
    ],
)
def test_plot_attention_heads_rejects_bad_input(weights, kwargs, error, match):
    with pytest.raises(error, match=match):
        mh.plot_attention_heads(weights, **kwargs)


# -- plot_attention_grid ---------------------------------------------------------------------


def test_grid_draws_every_head_into_one_axes(journey):
    weights = heads(4)
    fig = mh.plot_attention_grid(weights, journey.words, title="4 heads")
    ax, bar = fig.axes  # the grid and the colour bar
    assert ax.images[-1].colorbar.ax is bar
    assert fig._suptitle.get_text() == "4 heads"
    assert [t for t in texts(ax) if t.startswith("Head")] == [
        "Head 1",
        "Head 2",
        "Head 3",
        "Head 4",
    ]
    assert len(ax.images) == 4
    vmax = float(weights.max())
    for image, head in zip(ax.images, weights):
        assert image.get_clim() == (0.0, vmax)  # one shared colour scale
        assert torch.equal(torch.as_tensor(image.get_array()), head)
    assert texts(ax).count("journey") == 1 + 4  # query labels once, key labels under each column
    assert all(ord(c) < 128 for t in texts(ax) for c in t), "no CJK glyphs in figures"


def test_grid_wraps_after_max_cols_and_labels_keys_under_each_column(journey):
    fig = mh.plot_attention_grid(heads(6), journey.words, max_cols=4)
    ax = fig.axes[0]
    assert len(ax.images) == 6
    assert [t for t in texts(ax) if t.startswith("Head")] == [f"Head {i}" for i in range(1, 7)]
    assert texts(ax).count("step") == 2 + 4  # 2 rows of query labels, 4 columns of key labels
    rows = {image.get_extent()[3] for image in ax.images}  # the top edge of each panel
    assert len(rows) == 2


def test_grid_one_matrix_with_numbers_in_the_non_zero_cells(journey):
    weights = mh.ui.explorers.dropout_weights(mh.reference("seed789_masked_renormalized"), 0.5)
    fig = mh.plot_attention_grid(weights, journey.words, annot=True)
    ax = fig.axes[0]
    assert len(ax.images) == 1
    assert not [t for t in texts(ax) if t.startswith("Head")]  # one matrix: no head titles
    numbers = [t for t in texts(ax) if t[0].isdigit()]
    assert len(numbers) == int((weights != 0).sum())
    assert f"{weights[0, 0]:.2f}" in numbers
    unannotated = mh.plot_attention_grid(weights, journey.words)
    assert not [t for t in texts(unannotated.axes[0]) if t[0].isdigit()]


def test_grid_takes_a_batch_and_batch_index_and_default_labels():
    batch = torch.stack([heads(2), torch.rand(2, 6, 6)])  # (b=2, h=2, 6, 6)
    fig = mh.plot_attention_grid(batch, batch_index=1)
    ax = fig.axes[0]
    assert torch.equal(torch.as_tensor(ax.images[0].get_array()), batch[1, 0])
    assert texts(ax).count("6") == 1 + 2  # default labels 1..T


def test_grid_queries_are_the_last_tokens_when_fewer_than_keys():
    weights = torch.full((1, 2, 4), 0.25)  # (h, T_q=2, T_k=4): the last two queries
    ax = mh.plot_attention_grid(weights, list("abcd")).axes[0]
    assert texts(ax).count("a") == 1 and texts(ax).count("d") == 2


@pytest.mark.parametrize(
    ("weights", "kwargs", "error", "match"),
    [
        ([[1.0]], {}, TypeError, "weights must be a torch.Tensor"),
        (torch.ones(6), {}, ValueError, r"weights must have shape \(T_q, T_k\), \(num_heads"),
        (torch.ones(1, 1, 2, 6, 6), {}, ValueError, r"got weights.shape=\(1, 1, 2, 6, 6\)"),
        (
            torch.ones(2, 2, 6, 6),
            {"batch_index": 2},
            ValueError,
            r"batch_index must be in \[0, 2\)",
        ),
        (torch.ones(2, 2, 6, 6), {"batch_index": -1}, ValueError, "batch_index must be in"),
        (torch.ones(6, 6), {"tokens": ["a", "b"]}, ValueError, "tokens must have one label"),
        (torch.ones(2, 6, 6), {"max_cols": 0}, ValueError, "max_cols must be >= 1, got max_cols=0"),
    ],
)
def test_grid_rejects_bad_input(weights, kwargs, error, match):
    with pytest.raises(error, match=match):
        mh.plot_attention_grid(weights, **kwargs)


def test_grid_renders_to_png_and_closes_the_figure():
    """What a slider does on every move (its speed is measured in benchmarks/widgets.py)."""
    weights = torch.rand(8, 11, 11).tril()
    words = mh.ui.sentences.LONGER_SENTENCE.split()
    png = figure_png(mh.plot_attention_grid(weights, words, title="8 heads"))
    assert png.startswith(b"\x89PNG")
    assert plt.get_fignums() == []  # figure_png closes the figure
