"""The conceptual figures of lessons 09-10 (mhsa_helpers.ui.figures.production).

Each test draws the figure from small real tensors and checks the axes, titles and labels that the
function's docstring promises, and that bad input is rejected with a clear error.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest
import torch
from figure_checks import _close_figures, texts  # noqa: F401 (autouse fixture)

import mhsa_helpers as mh
from mhsa_helpers.ui.figures import production


def test_every_production_figure_is_exported_by_mh_figures():
    for name in production.__all__:
        assert getattr(mh.figures, name) is getattr(production, name)
    assert len(production.__all__) == 9


def fused_module() -> mh.FusedQKVMultiHeadAttention:
    torch.manual_seed(123)
    mha = mh.MultiHeadAttention(3, 4, 6, 0.0, num_heads=2)
    return mh.FusedQKVMultiHeadAttention.from_multihead(mha)


def test_plot_fused_qkv_weight_only_has_three_labelled_blocks():
    fused = fused_module()
    fig = mh.figures.plot_fused_qkv(fused.qkv.weight)
    ax, bar = fig.axes  # the weight and its colour bar
    assert bar.get_ylabel() == "weight"
    assert ax.get_title() == "qkv.weight (12, 3): three stacked blocks"
    assert ax.get_xlabel() == "input feature (d_in)"
    assert ax.get_ylabel() == "row = output feature (3 * d_out)"
    assert [t.strip() for t in texts(ax)] == ["W_query", "W_key", "W_value"]
    assert len(ax.patches) == 3
    assert [p.get_height() for p in ax.patches] == [4, 4, 4]


def test_plot_fused_qkv_with_output_splits_columns_into_q_k_v():
    fused = fused_module()
    out = fused.qkv(mh.load_journey().batch)[0]  # (6, 12)
    fig = mh.figures.plot_fused_qkv(fused.qkv.weight, out)
    assert len(fig.axes) == 4  # two panels, then their colour bars
    ax_out = fig.axes[1]
    assert ax_out.get_title() == "qkv(x) (6, 12) = Q | K | V"
    assert ax_out.get_xlabel() == "output feature: split(d_out, dim=-1)"
    assert ax_out.get_ylabel() == "token position"
    assert texts(ax_out) == ["Q", "K", "V"]
    assert [p.get_width() for p in ax_out.patches] == [4, 4, 4]


def test_plot_fused_qkv_rejects_bad_shapes():
    with pytest.raises(ValueError, match="3 \\* d_out rows"):
        mh.figures.plot_fused_qkv(torch.zeros(4, 3))
    with pytest.raises(ValueError, match="columns"):
        mh.figures.plot_fused_qkv(torch.zeros(6, 3), torch.zeros(5, 4))
    with pytest.raises(TypeError, match="weight"):
        mh.figures.plot_fused_qkv([[1.0]])


def test_plot_attention_memory_two_lines_log_log():
    lengths = [32, 64, 128]
    quadratic = [4 * t * t for t in lengths]
    linear = [4 * t for t in lengths]
    fig = mh.figures.plot_attention_memory(lengths, quadratic, linear)
    (ax,) = fig.axes
    assert ax.get_title() == "Extra memory of attention"
    assert ax.get_xlabel() == "sequence length T"
    assert ax.get_ylabel() == "MiB"
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["explicit: (b, h, T, T) ~ T^2", "SDPA / flash: (b, h, T) ~ T"]
    first = ax.get_lines()[0].get_ydata()
    assert first[1] / first[0] == pytest.approx(4.0)
    with pytest.raises(ValueError, match="same length"):
        mh.figures.plot_attention_memory([1, 2], [1], [1, 2])


def test_plot_precision_error_values_and_relative_errors():
    torch.manual_seed(0)
    reference = torch.randn(2, 6, 4)
    fig = mh.figures.plot_precision_error(reference, reference.bfloat16())
    ax_values, ax_error = fig.axes
    assert fig._suptitle.get_text() == "bfloat16 under autocast vs float32"
    assert ax_values.get_title() == "48 output entries"
    assert ax_values.get_xlabel() == "float32 value"
    assert ax_values.get_ylabel() == "bfloat16 value"
    assert len(ax_values.collections[0].get_offsets()) == 48
    assert ax_error.get_title() == "Error relative to the largest output"
    assert ax_error.get_xlabel() == "|bfloat16 - float32| / largest |float32 value|"
    assert ax_error.get_ylabel() == "number of entries"
    assert sum(p.get_height() for p in ax_error.patches) == 48
    assert [line.get_label() for line in ax_error.get_lines()] == ["2^-8, bfloat16's step"]
    with pytest.raises(ValueError, match="same shape"):
        mh.figures.plot_precision_error(reference, reference[0])


def test_plot_relative_position_scores_one_line_per_offset():
    positions = torch.arange(5)
    scores = -0.5 * (positions[:, None] - positions[None, :]).float()  # (5, 5), ALiBi-like
    fig = mh.figures.plot_relative_position_scores(scores, title="ALiBi")
    ax_lines, ax_grid = fig.axes[:2]
    assert ax_lines.get_title() == "Scores by offset: flat lines"
    assert ax_lines.get_xlabel() == "query position i"
    assert ax_grid.get_xlabel() == "key position j" and ax_grid.get_ylabel() == "query position i"
    assert len(ax_lines.get_lines()) == 5
    for line in ax_lines.get_lines():
        assert len(set(line.get_ydata().tolist())) == 1  # flat: depends on the offset only
    assert fig._suptitle.get_text() == "ALiBi"
    with pytest.raises(ValueError, match="square"):
        mh.figures.plot_relative_position_scores(torch.zeros(2, 3))


def test_plot_cross_attention_draws_every_pair_and_labels_tokens():
    weights = torch.softmax(torch.randn(3, 4, generator=torch.Generator().manual_seed(0)), -1)
    fig = mh.figures.plot_cross_attention(weights, ["a", "b", "c"], ["w", "x", "y", "z"])
    (ax,) = fig.axes
    assert ax.get_title() == "Cross-attention: 3 x 4 weights, each row sums to 1"
    assert ax.get_xlabel() == "every query sees every key: no causal mask"
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "queries (decoder)",
        "keys/values (encoder)",
    ]
    assert len(ax.get_lines()) == 12
    assert texts(ax) == ["a", "b", "c", "w", "x", "y", "z"]
    with pytest.raises(ValueError, match="query tokens"):
        mh.figures.plot_cross_attention(weights, ["a"], ["w", "x", "y", "z"])


def test_plot_kv_cache_growth_bars_per_step():
    lengths = [4, 5, 6]
    fig = mh.figures.plot_kv_cache_growth(lengths, [4, 5, 6], [4, 1, 1])
    ax_cache, ax_cost = fig.axes
    assert ax_cache.get_title() == "KV cache: reused (grey) + added (orange)"
    assert ax_cache.get_xlabel() == "cached token position (keys and values)"
    assert ax_cache.get_ylabel() == "generation step"
    assert ax_cost.get_title() == "Work per step"
    assert ax_cost.get_ylabel() == "tokens through the Q/K/V projection"
    added = [p.get_width() for p in ax_cache.patches[1::2]]
    assert added == [4, 1, 1]
    heights = [p.get_height() for p in ax_cost.patches]
    assert heights == [4, 5, 6, 4, 1, 1]
    with pytest.raises(ValueError, match="same length"):
        mh.figures.plot_kv_cache_growth([1, 2], [1], [1, 2])


def test_plot_learned_alignment_boxes_the_expected_cells_and_states_the_shares():
    before = torch.full((4, 4), 0.25)  # (n_q, n_kv): a uniform head
    after = torch.eye(4).flip(-1) * 0.8 + 0.05  # 85 % on the reversed positions
    fig = mh.figures.plot_learned_alignment(before, after, [3, 2, 1, 0])
    ax_before, ax_after = fig.axes[:2]
    assert (
        ax_before.get_title()
        == "before training\n25.0% of the weight in the boxed cells (chance 25.0%)"
    )
    assert (
        ax_after.get_title()
        == "after training\n85.0% of the weight in the boxed cells (chance 25.0%)"
    )
    assert ax_after.get_xlabel() == "source position (keys, values)"
    assert ax_after.get_ylabel() == "target position (queries)"
    boxes = sorted((round(p.get_x() + 0.5), round(p.get_y() + 0.5)) for p in ax_after.patches)
    assert boxes == [(0, 3), (1, 2), (2, 1), (3, 0)]  # (source, target) of every expected cell
    assert [t.get_text() for t in ax_after.get_xticklabels()] == ["0", "1", "2", "3"]
    assert fig.axes[2].get_ylabel() == "mean weight"  # the colour bar
    with pytest.raises(ValueError, match="source positions"):
        mh.figures.plot_learned_alignment(before, after, [3, 2, 1, 4])
    with pytest.raises(ValueError, match="one shape"):
        mh.figures.plot_learned_alignment(before, after[:3], [3, 2, 1])
    with pytest.raises(TypeError, match="expected"):
        mh.figures.plot_learned_alignment(before, after, "3210")


@pytest.mark.parametrize(("groups", "kind"), [(2, "GQA"), (1, "MQA"), (8, "MHA")])
def test_plot_gqa_sharing_joins_each_query_head_to_its_kv_head(groups, kind):
    kv_head_of = torch.arange(groups).repeat_interleave(8 // groups)
    fig = mh.figures.plot_gqa_sharing(kv_head_of)
    (ax,) = fig.axes
    assert ax.get_title() == f"{kind}: num_heads=8, num_kv_groups={groups}"
    assert ax.get_xlabel() == f"8 query heads share {groups} K/V heads ({8 // groups} each)"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["K/V heads", "query heads"]
    assert len(ax.get_lines()) == 8
    assert sum(t.startswith("K/V ") for t in texts(ax)) == groups
    assert sum(t.startswith("Q") for t in texts(ax)) == 8
