"""Conceptual figures of lessons 01-03 (``mhsa_helpers.ui.figures.basics``): each has the axes,
titles and labels it promises, shows the numbers of the tensors it is given, and rejects bad input
with a clear error."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest
import torch
from figure_checks import _close_figures, texts  # noqa: F401 (autouse fixture)

import mhsa_helpers as mh
from mhsa_helpers.ui.figures import basics

INPUTS = mh.book_inputs()  # (6, 3)
WORDS = mh.book_words()


def tick_labels(ax, axis: str = "x") -> list[str]:
    ticks = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return [t.get_text() for t in ticks]


def seed123_matrices() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(123)
    return tuple(torch.rand(3, 2, generator=generator) for _ in range(3))  # type: ignore[return-value]


def test_every_figure_is_exported_from_mh_figures():
    assert set(basics.__all__) <= set(mh.figures.__all__)
    for name in basics.__all__:
        assert callable(getattr(mh.figures, name))


def test_dot_products_stacks_one_part_per_feature_and_writes_the_scores():
    fig = mh.figures.plot_dot_products(INPUTS[1], INPUTS, WORDS, query_index=1)
    (ax,) = fig.axes
    assert ax.get_xlabel() == "key token"
    assert ax.get_ylabel() == "score = query . key"
    assert "'journey'" in ax.get_title()
    assert tick_labels(ax) == WORDS
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "feature 1",
        "feature 2",
        "feature 3",
    ]
    assert len(ax.patches) == 3 * 6 + 1  # 3 stacked parts per key, and the query's outline
    assert texts(ax) == [f"{s:.4f}" for s in (INPUTS @ INPUTS[1]).tolist()]
    assert "1.4950" in texts(ax)  # the book's score of "journey" with itself


def test_dot_products_handles_negative_products():
    query = torch.tensor([1.0, -1.0])
    keys = torch.tensor([[1.0, 2.0], [0.5, -0.5]])
    fig = mh.figures.plot_dot_products(query, keys)
    ax = fig.axes[0]
    assert texts(ax) == ["-1.0000", "1.0000"]
    assert ax.get_ylim()[0] < -1.0  # room for the negative part
    assert tick_labels(ax) == ["1", "2"]


def test_softmax_steps_shows_scores_then_weights_that_sum_to_one():
    scores = INPUTS @ INPUTS[1]
    fig = mh.figures.plot_softmax_steps(scores, WORDS)
    ax_scores, ax_weights = fig.axes
    assert ax_scores.get_title() == "Attention scores (any size)"
    assert ax_weights.get_title() == "Attention weights: softmax, sum = 1.00"
    assert ax_scores.get_ylabel() == "score" and ax_weights.get_ylabel() == "weight"
    assert ax_scores.get_xlabel() == ax_weights.get_xlabel() == "key token"
    heights = [p.get_height() for p in ax_weights.patches]
    torch.testing.assert_close(torch.tensor(heights, dtype=torch.float32), scores.softmax(0))
    assert texts(ax_weights)[1] == "0.24"  # the book's 0.2379 for "journey"
    legend = [t.get_text() for t in ax_weights.get_legend().get_texts()]
    assert legend == ["scores / sum", "softmax"]


def test_weighted_sum_totals_are_the_context_vector():
    weights = torch.softmax(INPUTS @ INPUTS[1], dim=0)
    fig = mh.figures.plot_weighted_sum(weights, INPUTS, WORDS)
    ax_w, ax_c = fig.axes
    assert ax_w.get_title().startswith("Attention weights")
    assert ax_w.get_xlabel() == "token" and ax_w.get_ylabel() == "weight"
    assert ax_c.get_xlabel() == "feature of the context vector"
    assert ax_c.get_ylabel() == "sum of weight x vector"
    assert "weighted sum" in ax_c.get_title()
    assert texts(ax_c) == ["0.4419", "0.6515", "0.5683"]  # the book's z(2)
    assert [t.get_text() for t in ax_c.get_legend().get_texts()] == WORDS
    assert len(ax_c.patches) == 6 * 3
    fig = mh.figures.plot_weighted_sum(weights, INPUTS, WORDS, title="z(2)")
    assert fig.axes[1].get_title() == "z(2)"


def test_self_similarity_counts_the_rows_won_by_the_diagonal():
    fig = mh.figures.plot_self_similarity(INPUTS @ INPUTS.T, WORDS)
    (ax,) = fig.axes
    assert ax.get_title() == "2 of 6 tokens score highest with themselves"
    assert ax.get_xlabel() == "query token" and ax.get_ylabel() == "score"
    assert texts(ax) == ["itself", "itself", "journey", "journey", "starts", "journey"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["score with itself", "largest score in the row"]
    fig = mh.figures.plot_self_similarity(torch.eye(3))
    assert fig.axes[0].get_title() == "3 of 3 tokens score highest with themselves"


def test_qkv_projections_show_every_matrix_with_its_shape():
    W_query, W_key, W_value = seed123_matrices()
    fig = mh.figures.plot_qkv_projections(INPUTS, W_query, W_key, W_value, WORDS)
    assert len(fig.axes) == 9
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == [
        "inputs (6, 3)",
        "W_query (3, 2)",
        "queries (6, 2)",
        "inputs (6, 3)",
        "W_key (3, 2)",
        "keys (6, 2)",
        "inputs (6, 3)",
        "W_value (3, 2)",
        "values (6, 2)",
    ]
    assert fig.axes[0].get_ylabel() == "token" and fig.axes[0].get_xlabel() == "d_in"
    assert fig.axes[1].get_ylabel() == "d_in" and fig.axes[1].get_xlabel() == "d_out"
    assert fig.axes[2].get_xlabel() == "d_out"
    assert tick_labels(fig.axes[2], "y") == WORDS
    # query_2 = [0.4306, 1.4551] in the book: row 2 of the queries panel
    assert texts(fig.axes[2])[2:4] == ["0.43", "1.46"]
    assert "inputs @ W = result" in fig.get_suptitle()


def test_scaling_effect_titles_give_the_largest_weights():
    scores = torch.tensor([0.0, 10.0, 20.0, 30.0])
    fig = mh.figures.plot_scaling_effect(scores, 64)
    raw, scaled = fig.axes
    assert raw.get_title() == "softmax(scores): largest weight 1.00"
    largest = torch.softmax(scores / 8, dim=0).max()
    assert scaled.get_title() == f"softmax(scores / sqrt(64)): largest weight {largest:.2f}"
    assert raw.get_ylabel() == "attention weight"
    assert raw.get_xlabel() == scaled.get_xlabel() == "key"
    assert texts(scaled) == [f"{w:.2f}" for w in torch.softmax(scores / 8, dim=0).tolist()]


def test_causal_scores_grey_out_exactly_the_future():
    scores = torch.arange(16, dtype=torch.float32).view(4, 4)
    fig = mh.figures.plot_causal_scores(scores, ["a", "b", "c", "d"])
    (ax,) = fig.axes
    assert ax.get_xlabel() == "key (attended to)"
    assert ax.get_ylabel() == "query (attending)"
    assert "future" in ax.get_title()
    cells = texts(ax)
    assert cells.count("future") == 6  # 4 * 3 / 2 entries above the diagonal
    assert cells[:4] == ["0.00", "future", "future", "future"]
    assert cells[-4:] == ["12.00", "13.00", "14.00", "15.00"]
    assert tick_labels(ax) == ["a", "b", "c", "d"]


def test_mask_paths_end_in_the_same_matrix():
    W_query, W_key, _ = seed123_matrices()
    scaled = (INPUTS @ W_query) @ (INPUTS @ W_key).T / 2**0.5  # (6, 6)
    fig = mh.figures.plot_mask_paths(scaled, WORDS)
    assert len(fig.axes) == 6
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == [
        "1. softmax of full rows",
        "2. times tril(ones): future -> 0",
        "3. divide by row sums",
        "1. masked_fill(future, -inf)",
        "one step, no renormalising",
        "2. softmax: the same matrix",
    ]
    three_step, one_step = fig.axes[2], fig.axes[5]
    assert texts(three_step) == texts(one_step)
    assert texts(fig.axes[3]).count("-inf") == 15
    assert texts(three_step)[:6] == ["1.00", "0.00", "0.00", "0.00", "0.00", "0.00"]
    for ax in (fig.axes[0], fig.axes[3], fig.axes[5]):
        assert ax.get_xlabel() == "key" and ax.get_ylabel() == "query"
    assert fig.get_suptitle() == "Two paths to the same causal attention weights"


@pytest.mark.parametrize(
    ("call", "error", "fragment"),
    [
        (lambda: mh.figures.plot_dot_products([1.0], INPUTS), TypeError, "query"),
        (lambda: mh.figures.plot_dot_products(INPUTS[0][:2], INPUTS), ValueError, "keys"),
        (lambda: mh.figures.plot_dot_products(INPUTS[0], INPUTS, WORDS[:5]), ValueError, "tokens"),
        (
            lambda: mh.figures.plot_dot_products(INPUTS[0], INPUTS, query_index=6),
            ValueError,
            "query_index",
        ),
        (lambda: mh.figures.plot_softmax_steps(INPUTS, WORDS), ValueError, "scores"),
        (
            lambda: mh.figures.plot_softmax_steps(torch.arange(6), WORDS),
            TypeError,
            "floating-point",
        ),
        (lambda: mh.figures.plot_weighted_sum(torch.ones(5), INPUTS), ValueError, "vectors"),
        (lambda: mh.figures.plot_self_similarity(INPUTS), ValueError, "square"),
        (
            lambda: mh.figures.plot_qkv_projections(INPUTS, *[torch.ones(2, 3)] * 3),
            ValueError,
            "layer.weight.T",
        ),
        (lambda: mh.figures.plot_scaling_effect(INPUTS[0], 0), ValueError, "d_k"),
        (lambda: mh.figures.plot_scaling_effect(INPUTS[0], True), ValueError, "d_k"),
        (lambda: mh.figures.plot_causal_scores(INPUTS), ValueError, "square"),
        (lambda: mh.figures.plot_mask_paths(torch.ones(2, 3)), ValueError, "scaled_scores"),
        (lambda: mh.figures.plot_mask_paths(torch.ones(2, 2), "ab"), ValueError, "tokens"),
    ],
)
def test_bad_input_is_a_clear_error(call, error, fragment):
    with pytest.raises(error, match=fragment):
        call()
