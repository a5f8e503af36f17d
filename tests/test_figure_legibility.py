"""Every figure of the package is legible at 100 % zoom: 600 to 860 px wide, tick labels >= 9 pt,
every text >= 9 px as JupyterLab shows it (a PNG wider than its column is shrunk).

Measured as a lesson shows it: ``setup_lesson``'s 80 dpi, cropped to what is drawn (the inline
backend's ``bbox_inches="tight"``), in English and in Chinese. Each public figure function is
measured by ``test_i18n_figures.test_every_figure_in_both_languages`` on the figures it draws
anyway (``figure_checks.assert_legible``); here: the fast grid, and single figures' details.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch
from figure_checks import (
    MAX_WIDTH_PX,
    _close_figures,  # noqa: F401 (autouse fixture)
    lay_out_shown,
    png_width,
    shown_width,
    tick_sizes,
)

import mhsa_helpers as mh


@pytest.mark.parametrize(
    "shape", [(1, 2, 2), (2, 6, 6), (4, 12, 12), (6, 6)], ids=["tiny", "book", "four-heads", "one"]
)
def test_the_fast_grid_labels_tokens_at_9_points_at_least(shape):
    """The grid draws its token labels as text (no ticks): they too are 9 pt, and it is wide."""
    weights = torch.softmax(torch.randn(*shape), dim=-1)
    tokens = [f"tok{i}" for i in range(shape[-1])]
    fig = mh.plot_attention_grid(weights, tokens, title="grid")
    grid = fig.axes[0]
    labels = [t for t in grid.texts if t.get_text() in tokens]
    assert len(labels) >= 2 * shape[-1] - 1
    assert min(t.get_fontsize() for t in labels) >= 9
    assert min(size for _, size in tick_sizes(fig)) >= 9  # the colour bar
    assert shown_width(fig) >= 600


def test_the_laid_out_width_is_the_shown_png_s_width():
    """``lay_out_shown`` (the figure laid out, not rasterised: what the figure tests measure)
    gives the width of the PNG a notebook shows, to the pixel: one axes, and heads side by side
    (each measured on a figure of its own, made at the lessons' 80 dpi: a second layout of the
    same figure may move by a few pixels)."""
    inputs = mh.book_inputs()  # (6, 3)
    words = mh.book_words()
    heads = torch.softmax(torch.randn(2, 6, 6), -1)  # (h, T, T)
    figures = [
        lambda: mh.plot_attention(torch.softmax(inputs @ inputs.T, -1), words, title="one"),
        lambda: mh.plot_attention_heads(heads, words),
    ]
    for figure in figures:
        with matplotlib.rc_context({"figure.dpi": 80}):
            laid_out, shown = figure(), figure()
        assert abs(lay_out_shown(laid_out) - shown_width(shown)) <= 1


def test_an_axes_the_caller_passed_keeps_the_callers_figure():
    fig, ax = plt.subplots(figsize=(3, 3))
    mh.plot_attention(torch.softmax(torch.randn(3, 3), -1), ["a", "b", "c"], ax=ax)
    assert tuple(fig.get_size_inches()) == (3.0, 3.0)


def test_the_benchmark_axis_labels_only_the_measured_lengths():
    fig = mh.figures.plot_forward_times([32, 64, 128, 256], {"a": [1, 2, 4, 8], "b": [1, 1, 2, 3]})
    ax = fig.axes[0]
    fig.draw_without_rendering()
    shown = [t.get_text() for t in ax.get_xticklabels(minor=False) + ax.get_xticklabels(minor=True)]
    assert [t for t in shown if t] == ["32", "64", "128", "256"]


def test_the_fused_qkv_panels_tick_cells_and_have_colour_bars():
    weight = torch.randn(12, 3)
    fig = mh.figures.plot_fused_qkv(weight, torch.randn(6, 12))
    weight_ax, output_ax = fig.axes[0], fig.axes[1]
    assert [t for t in weight_ax.get_yticks()] == list(range(12))
    assert [t for t in weight_ax.get_xticks()] == [0, 1, 2]
    assert [t for t in output_ax.get_yticks()] == list(range(6))
    assert len(fig.axes) == 4  # two panels, two colour bars
    labels = {ax.get_ylabel() for ax in fig.axes[2:]}
    assert labels == {"weight", "value"}


def test_the_entropy_chart_shows_how_far_each_head_is_from_the_maximum():
    """Two heads at 1.0960 and 1.0965 of 1.0965 look identical as bars: the gap panel tells."""
    entropy = torch.tensor([1.0960, 1.0965])
    fig = mh.figures.plot_head_entropy(entropy, 1.0965, title="book")
    bars, gaps = fig.axes
    heights = [round(p.get_height(), 4) for p in bars.patches]
    assert heights == [1.096, 1.0965]
    gap_heights = [p.get_height() for p in gaps.patches]
    assert gap_heights[0] == pytest.approx(0.0005, abs=1e-6) and gap_heights[1] < 1e-6
    assert gaps.get_ylim()[1] < 0.01  # a scale of its own, where 0.0005 is a visible bar
    assert {"1.0960", "1.0965"} <= {t.get_text() for t in bars.texts}


@pytest.mark.parametrize(
    ("entropy", "maximum", "word"),
    [
        (torch.tensor([1.2]), 1.0965, "entropy"),
        (torch.tensor([-0.5]), 1.0965, "entropy"),
        (torch.tensor([0.5]), 0.0, "maximum"),
        (torch.tensor([0.5]), float("nan"), "maximum"),
        (torch.tensor([[0.5]]), 1.0, "entropy"),
        ([0.5], 1.0, "entropy"),
    ],
    ids=["above-the-maximum", "negative", "zero-maximum", "nan-maximum", "2-d", "a-list"],
)
def test_the_entropy_chart_names_a_bad_argument(entropy, maximum, word):
    with pytest.raises((TypeError, ValueError), match=word):
        mh.figures.plot_head_entropy(entropy, maximum)


def test_every_saved_figure_fits_jupyterlabs_column():
    """Every PNG a lesson or solution notebook saved (both editions) is at most MAX_WIDTH_PX
    wide: JupyterLab shrinks a wider one to its ~850-px column, and its text with it."""
    root = Path(__file__).resolve().parent.parent / "notebooks"
    wide = []
    for notebook in sorted(root.glob("**/*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        for index, cell in enumerate(cells):
            for output in cell.get("outputs", []):
                png = output.get("data", {}).get("image/png")
                if png and (width := png_width(base64.b64decode(png))) > MAX_WIDTH_PX:
                    wide.append(f"{notebook.relative_to(root)} cell {index}: {width} px")
    assert not wide, wide
