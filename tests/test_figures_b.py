"""The figures of lessons 04-06 (``mh.figures``, module ``ui/figures/heads.py``): each has the
axes, titles and labels it promises, draws the numbers it is given, and rejects bad input with a
clear error."""

from __future__ import annotations

import pytest
import torch
from figure_checks import _close_figures, texts  # noqa: F401 (autouse fixture)
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers.ui.figures import heads as figs

WORDS = mh.load_journey().words


def test_all_figures_are_exported():
    for name in figs.__all__:
        assert getattr(mh.figures, name) is getattr(figs, name)
    assert len(figs.__all__) == 7


def test_plot_dropout_mask():
    weights = mh.reference("seed789_masked_renormalized")
    keep = mh.reference("dropout_seed123_ones") != 0
    fig = mh.figures.plot_dropout_mask(weights, keep, 0.5, WORDS)
    axes = fig.axes
    assert len(axes) == 3
    assert axes[0].get_title() == "Attention weights (eval)"
    assert axes[1].get_title() == "Keep mask, p = 0.5 (1 = kept)"
    assert axes[2].get_title() == "weights x mask x 1/(1-p) = x2.00"
    assert all(ax.get_xlabel() == "key (attended to)" for ax in axes)
    assert axes[0].get_ylabel() == "query (attending)"
    assert [t.get_text() for t in axes[0].get_yticklabels()] == WORDS
    assert "1/(1-p) = 2.00" in fig._suptitle.get_text()
    # the third panel shows the dropped weights: "Your" keeps 1.00 -> 2.00, "journey" loses all
    assert texts(axes[2])[0] == "2.00" and texts(axes[2])[6:8] == ["0.00", "0.00"]
    assert len(texts(axes[1])) == 36


@pytest.mark.parametrize(
    ("weights", "keep", "p", "error"),
    [
        (torch.ones(3, 3), torch.ones(3, 4), 0.5, ValueError),
        (torch.ones(3, 3), torch.ones(3, 3), 1.0, ValueError),
        (torch.ones(3, 3), torch.ones(3, 3), True, ValueError),
        ([[1.0]], torch.ones(1, 1), 0.5, TypeError),
        (torch.ones(3), torch.ones(3), 0.5, ValueError),
    ],
)
def test_plot_dropout_mask_rejects_bad_input(weights, keep, p, error):
    with pytest.raises(error):
        mh.figures.plot_dropout_mask(weights, keep, p)


def test_plot_dropout_scaling():
    torch.manual_seed(0)
    samples = {p: nn.Dropout(p)(torch.ones(100, 36)) for p in (0.1, 0.5, 0.9)}
    fig = mh.figures.plot_dropout_scaling(samples)
    ax_kept, ax_value = fig.axes
    assert ax_kept.get_title() == "Fewer entries survive, the mean stays 1"
    assert ax_value.get_title() == "Each survivor is scaled by 1/(1-p)"
    assert ax_kept.get_xlabel() == ax_value.get_xlabel() == "dropout rate p"
    assert ax_kept.get_ylabel() == "fraction / mean"
    assert ax_value.get_ylabel() == "value of a surviving 1"
    labels = [t.get_text() for t in ax_kept.get_legend().get_texts()]
    assert labels == ["1 - p", "measured: fraction kept", "measured: mean entry"]
    survivors = ax_value.lines[1].get_ydata()
    torch.testing.assert_close(torch.tensor(survivors).float(), torch.tensor([1 / 0.9, 2, 10.0]))
    with pytest.raises(ValueError):
        mh.figures.plot_dropout_scaling({})
    with pytest.raises(ValueError):
        mh.figures.plot_dropout_scaling({1.5: torch.ones(3)})


def test_plot_heads_concat():
    torch.manual_seed(123)
    wrapper = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)
    outs = [head(mh.load_journey().batch)[0].detach() for head in wrapper.heads]
    fig = mh.figures.plot_heads_concat(outs, WORDS)
    axes = fig.axes
    assert len(axes) == 3
    assert [ax.get_title() for ax in axes] == [
        "Head 1: (6, 2)",
        "Head 2: (6, 2)",
        "torch.cat(dim=-1): (6, 2 x 2 = 4)",
    ]
    assert axes[0].get_ylabel() == "token"
    assert axes[2].get_xlabel() == "column of the concatenated output"
    # the book's first row: head 1 gives -0.45, 0.22; the concatenation shows both heads
    assert texts(axes[0])[:2] == ["-0.45", "0.22"]
    assert texts(axes[2])[:2] == ["-0.45", "0.22"] and len(texts(axes[2])) == 24
    with pytest.raises(TypeError):
        mh.figures.plot_heads_concat(torch.ones(2, 6, 2))
    with pytest.raises(ValueError):
        mh.figures.plot_heads_concat([torch.ones(6, 2), torch.ones(5, 2)])


def test_plot_matmul_counts():
    counts = {
        "wrapper": {1: {"linear": 3, "matmul": 2}, 2: {"linear": 6, "matmul": 4}},
        "split": {1: {"linear": 4, "matmul": 2}, 2: {"linear": 4, "matmul": 2}},
    }
    fig = mh.figures.plot_matmul_counts(counts)
    (ax,) = fig.axes
    assert ax.get_xlabel() == "num_heads (the number of heads)"
    assert ax.get_ylabel() == "calls per forward pass"
    assert "Matrix multiplications per forward pass" in ax.get_title()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2"]
    assert texts(ax) == ["5", "10", "6", "6"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "wrapper: nn.Linear calls" in legend and "split: @ calls" in legend
    with pytest.raises(ValueError):
        mh.figures.plot_matmul_counts({})


def test_plot_head_split():
    torch.manual_seed(0)
    projection = torch.randn(6, 6)  # (T, d_out), 3 heads of 2
    heads = mh.split_heads(projection[None], 3)[0]  # (h, T, head_dim)
    merged = mh.merge_heads(heads[None])[0]  # (T, d_out)
    fig = mh.figures.plot_head_split(projection, heads, merged, WORDS)
    axes = fig.axes
    assert len(axes) == 5
    assert [ax.get_title() for ax in axes] == [
        "Projection (6, 6)",
        "Head 1 (6, 2)",
        "Head 2 (6, 2)",
        "Head 3 (6, 2)",
        "Merged back (6, 6)",
    ]
    assert axes[0].get_ylabel() == "token"
    assert axes[1].get_xlabel() == "head_dim"
    assert axes[0].get_xlabel() == axes[-1].get_xlabel() == "column (d_out)"
    assert "view(T, 3, 2) + transpose" in fig._suptitle.get_text()
    # head 2's first row is columns 2:4 of the projection's first row
    assert texts(axes[2])[:2] == [f"{v:.2f}" for v in projection[0, 2:4].tolist()]
    with pytest.raises(ValueError):
        mh.figures.plot_head_split(projection, heads, merged[:, :4])
    with pytest.raises(ValueError):
        mh.figures.plot_head_split(projection, heads[0], merged)


def test_plot_wrapper_vs_split():
    torch.manual_seed(123)
    wrapper = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)
    split = mh.multihead_from_wrapper(wrapper)
    fig = mh.figures.plot_wrapper_vs_split(
        [head.W_query.weight for head in wrapper.heads], split.W_query.weight
    )
    axes = fig.axes
    assert len(axes) == 3
    assert axes[0].get_title() == "Head 1: W_query (2, 3)"
    assert axes[1].get_title() == "Head 2: W_query (2, 3)"
    assert axes[2].get_title().startswith("Split: one W_query (4, 3)")
    assert all(ax.get_xlabel() == "input feature (d_in)" for ax in axes)
    assert axes[2].get_ylabel() == "output row (d_out)"
    # the big matrix shows head 1's numbers on top and head 2's below
    assert texts(axes[2]) == texts(axes[0]) + texts(axes[1])
    with pytest.raises(ValueError):
        mh.figures.plot_wrapper_vs_split([torch.ones(2, 3)], torch.ones(4, 3))
    with pytest.raises(TypeError):
        mh.figures.plot_wrapper_vs_split(torch.ones(2, 2, 3), torch.ones(4, 3))
