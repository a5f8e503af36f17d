"""Conceptual figures of lessons 09-10: the attention block as production models run it.

* ``plot_fused_qkv(weight, output)`` -- the fused (3 d_out, d_in) weight as three stacked blocks
  W_query / W_key / W_value, and its output cut into Q | K | V columns (lesson 09);
* ``plot_attention_memory(lengths, weights_bytes, sdpa_bytes)`` -- memory of the (b, h, T, T)
  weights (~T^2) against what SDPA keeps (~T), on log-log axes (lesson 09);
* ``plot_forward_times(lengths, times_ms)`` -- measured forward times against T, log-log, the
  axis labelled with the measured lengths (lesson 09's benchmark);
* ``plot_precision_error(reference, low)`` -- a bfloat16 result against the float32 one, entry by
  entry, and its errors relative to the largest output (lesson 09);
* ``plot_relative_position_scores(scores)`` -- a (T, T) score matrix whose value depends only on
  the offset i - j, the mark of RoPE and ALiBi, drawn as one line per diagonal (lesson 10);
* ``plot_cross_attention(weights, query_tokens, key_tokens)`` -- cross-attention as lines from
  each target token to every source token, width and darkness = weight (lesson 10);
* ``plot_kv_cache_growth(cache_lengths, projected_without, projected_with)`` -- the cache one
  token longer at every step, and the tokens each step must project with and without it;
* ``plot_gqa_sharing(kv_head_of)`` -- query heads joined to the K/V head they share (GQA / MQA);
* ``plot_learned_alignment(before, after, expected)`` -- a cross-attention head's mean weights
  before and after training, the expected source position of each target position boxed, with
  the share of weight there and the chance level (lesson 10).

Every function takes tensors or numbers a lesson computed, returns a matplotlib ``Figure`` with
titled and labelled axes, and leaves showing it to the caller (``plt.show()``). Titles and labels
follow the lesson language (``fonts.figure_text``: English where no CJK font is installed); token
labels no font can draw become positions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

from ...i18n import Text
from ..fonts import figure_label, figure_text, token_labels, with_cjk_font
from ..legibility import legible
from ._common import float_tensor

__all__ = [
    "plot_attention_memory",
    "plot_cross_attention",
    "plot_forward_times",
    "plot_fused_qkv",
    "plot_gqa_sharing",
    "plot_kv_cache_growth",
    "plot_learned_alignment",
    "plot_precision_error",
    "plot_relative_position_scores",
]

_QKV_NAMES = ("W_query", "W_key", "W_value")
_QKV_COLOURS = ("tab:blue", "tab:orange", "tab:green")


@legible
@with_cjk_font
def plot_fused_qkv(weight: torch.Tensor, output: torch.Tensor | None = None) -> Figure:
    """The fused QKV weight as three stacked (d_out, d_in) blocks, and its output split in three.

    Args:
        weight: ``qkv.weight``, (3 * d_out, d_in): rows W_query, then W_key, then W_value.
        output: optional ``qkv(x)`` of one sequence, (T, 3 * d_out): columns Q | K | V.

    Returns a figure with one axis (the weight) or two (weight, output).
    """
    w = float_tensor("weight", weight, 2)
    if w.shape[0] % 3 != 0:
        raise ValueError(f"weight must have 3 * d_out rows, got weight.shape={tuple(w.shape)}")
    d_out, d_in = w.shape[0] // 3, w.shape[1]
    panels = 1 if output is None else 2
    fig, axes = plt.subplots(
        1, panels, figsize=(max(4.4 * panels + 1.2, 8.0), 4.4), layout="constrained", squeeze=False
    )
    ax = axes[0, 0]
    limit = float(w.abs().max()) or 1.0
    image = ax.imshow(w.numpy(), cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
    _index_ticks(ax, d_in, 3 * d_out)
    fig.colorbar(image, ax=ax, shrink=0.85, label=figure_text("weight", "权重"))
    for i, (name, colour) in enumerate(zip(_QKV_NAMES, _QKV_COLOURS)):
        ax.add_patch(Rectangle((-0.5, i * d_out - 0.5), d_in, d_out, fill=False, lw=3, ec=colour))
        ax.text(d_in - 0.4, (i + 0.5) * d_out - 0.5, f" {name}", va="center", color=colour)
    rows = 3 * d_out
    ax.set_title(
        figure_text(
            f"qkv.weight ({rows}, {d_in}): three stacked blocks",
            f"qkv.weight ({rows}, {d_in})：三个堆叠的块",
        )
    )
    ax.set_xlabel(figure_text("input feature (d_in)", "输入特征（d_in）"))
    ax.set_ylabel(figure_text("row = output feature (3 * d_out)", "行 = 输出特征（3 * d_out）"))
    ax.set_xlim(-0.5, d_in + 0.9 * max(1, d_in / 3))
    if output is not None:
        out = float_tensor("output", output, 2)
        if out.shape[1] != 3 * d_out:
            raise ValueError(
                f"output must have 3 * d_out = {3 * d_out} columns, got output.shape="
                f"{tuple(out.shape)}"
            )
        ax_out = axes[0, 1]
        limit = float(out.abs().max()) or 1.0
        image = ax_out.imshow(out.numpy(), cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
        _index_ticks(ax_out, 3 * d_out, out.shape[0])
        fig.colorbar(image, ax=ax_out, shrink=0.85, label=figure_text("value", "数值"))
        for i, (name, colour) in enumerate(zip("QKV", _QKV_COLOURS)):
            ax_out.add_patch(
                Rectangle((i * d_out - 0.5, -0.5), d_out, out.shape[0], fill=False, lw=3, ec=colour)
            )
            ax_out.text(  # above the top edge, below the title (x: data, y: axes fraction)
                (i + 0.5) * d_out - 0.5,
                1.01,
                name,
                ha="center",
                va="bottom",
                color=colour,
                weight="bold",
                transform=ax_out.get_xaxis_transform(),
            )
        ax_out.set_title(f"qkv(x) ({out.shape[0]}, {3 * d_out}) = Q | K | V", pad=20)
        ax_out.set_xlabel(
            figure_text("output feature: split(d_out, dim=-1)", "输出特征：split(d_out, dim=-1)")
        )
        ax_out.set_ylabel(figure_text("token position", "词元位置"))
    return fig


def _index_ticks(ax: Axes, columns: int, rows: int) -> None:
    """Integer ticks on the cells of an image (0, 1, 2, ...; every k-th when there are many).

    ``imshow`` otherwise ticks its pixel edges (-0.5, 0.5, ...), which index nothing.
    """
    for count, set_ticks in ((columns, ax.set_xticks), (rows, ax.set_yticks)):
        step = max(1, -(-count // 12))  # at most about 12 labels
        set_ticks(range(0, count, step))
    ax.set_xlim(-0.5, ax.get_xlim()[1])
    ax.set_ylim(rows - 0.5, -0.5)


@legible
@with_cjk_font
def plot_attention_memory(
    lengths: Sequence[int],
    weights_bytes: Sequence[float],
    sdpa_bytes: Sequence[float],
    *,
    title: str | Text | None = None,
) -> Figure:
    """Bytes of the explicit (b, h, T, T) weights against SDPA's per-row memory, log-log.

    ``weights_bytes[i]`` and ``sdpa_bytes[i]`` belong to sequence length ``lengths[i]``. The
    slopes show the point: doubling T multiplies the weights by 4 and SDPA's memory by 2.
    """
    if not (len(lengths) == len(weights_bytes) == len(sdpa_bytes) >= 2):
        raise ValueError(
            "lengths, weights_bytes and sdpa_bytes must have the same length (at least 2), got "
            f"{len(lengths)}, {len(weights_bytes)}, {len(sdpa_bytes)}"
        )
    fig, ax = plt.subplots(figsize=(6, 3.8), layout="constrained")
    mib = 2**20
    explicit = figure_text("explicit: (b, h, T, T) ~ T^2", "显式权重：(b, h, T, T) ~ T^2")
    sdpa = figure_text("SDPA / flash: (b, h, T) ~ T", "SDPA 或 FlashAttention：(b, h, T) ~ T")
    ax.plot(lengths, [b / mib for b in weights_bytes], marker="o", label=explicit)
    ax.plot(lengths, [b / mib for b in sdpa_bytes], marker="o", label=sdpa)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(list(lengths), [str(t) for t in lengths])
    ax.set_xlabel(figure_text("sequence length T", "序列长度 T"))
    ax.set_ylabel("MiB")
    ax.set_title(
        figure_label(title) or figure_text("Extra memory of attention", "注意力的额外内存")
    )
    ax.legend()
    return fig


@legible
@with_cjk_font
def plot_forward_times(
    lengths: Sequence[int],
    times_ms: Mapping[str, Sequence[float]],
    *,
    title: str | Text | None = None,
) -> Figure:
    """Measured forward times against sequence length, one line per implementation, log-log.

    ``times_ms[name][i]`` is the time of ``name`` at ``lengths[i]``, in milliseconds. The x axis
    is labelled with the measured lengths only (no "3x10^1" minor labels between them).
    """
    lengths = [int(t) for t in lengths]
    if len(lengths) < 2 or any(t < 1 for t in lengths):
        raise ValueError(f"lengths must be at least 2 positive sequence lengths, got {lengths}")
    if not isinstance(times_ms, Mapping) or not times_ms:
        raise TypeError(
            f"times_ms must be a dict name -> times (ms), got {type(times_ms).__name__}"
        )
    for name, series in times_ms.items():
        values = [float(t) for t in series]
        if len(values) != len(lengths) or not all(0 < t < float("inf") for t in values):
            raise ValueError(
                f"times_ms[{name!r}] must hold {len(lengths)} positive finite times (ms), one per "
                f"length, got {values}"
            )
    fig, ax = plt.subplots(figsize=(8.0, 4.0), layout="constrained")
    for name, series in times_ms.items():
        ax.plot(lengths, [float(t) for t in series], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(FixedLocator(lengths))
    ax.xaxis.set_major_formatter(FixedFormatter([str(t) for t in lengths]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(figure_text("sequence length T", "序列长度 T"))
    ax.set_ylabel(figure_text("forward time (ms)", "前向计算时间（毫秒）"))
    ax.set_title(figure_label(title) or figure_text("Forward time", "前向计算时间"))
    ax.legend()
    return fig


@legible
@with_cjk_font
def plot_precision_error(reference: torch.Tensor, low: torch.Tensor) -> Figure:
    """A low-precision result (e.g. bfloat16 under autocast) against the float32 one.

    Args:
        reference: the float32 result, any shape.
        low: the same computation in lower precision, same shape.

    Left: every entry, low-precision value against float32 value; on the diagonal means equal.
    Right: histogram of |low - reference| / max |reference|, with bfloat16's relative step 2^-8
    (8 significant bits) as a dashed line: errors of that size are rounding, not a bug.
    """
    if not isinstance(reference, torch.Tensor) or not isinstance(low, torch.Tensor):
        raise TypeError("reference and low must be torch.Tensors")
    if reference.shape != low.shape:
        raise ValueError(
            f"reference and low must have the same shape, got {tuple(reference.shape)} and "
            f"{tuple(low.shape)}"
        )
    ref = reference.detach().double().cpu().flatten()
    approx = low.detach().double().cpu().flatten()
    scale = float(ref.abs().max()) or 1.0
    relative = (approx - ref).abs() / scale
    fig, (ax_values, ax_error) = plt.subplots(1, 2, figsize=(9.5, 3.8), layout="constrained")
    ax_values.scatter(ref.numpy(), approx.numpy(), s=6, alpha=0.5)
    equal = figure_text("equal", "相等")
    ax_values.plot([-scale, scale], [-scale, scale], color="gray", linestyle="--", label=equal)
    ax_values.set_xlabel(figure_text("float32 value", "float32 值"))
    ax_values.set_ylabel(figure_text("bfloat16 value", "bfloat16 值"))
    entries = ref.numel()
    ax_values.set_title(figure_text(f"{entries} output entries", f"{entries} 个输出元素"))
    ax_values.legend()
    ax_error.hist(relative.numpy(), bins=40, color="tab:blue")
    step = figure_text("2^-8, bfloat16's step", "2^-8，bfloat16 的步长")
    ax_error.axvline(2**-8, color="gray", linestyle="--", label=step)
    ax_error.set_xlabel(
        figure_text(
            "|bfloat16 - float32| / largest |float32 value|",
            "|bfloat16 - float32| / 最大的 |float32 值|",
        )
    )
    ax_error.set_ylabel(figure_text("number of entries", "元素个数"))
    ax_error.set_title(figure_text("Error relative to the largest output", "相对于最大输出的误差"))
    ax_error.legend()
    fig.suptitle(
        figure_text("bfloat16 under autocast vs float32", "autocast 下的 bfloat16 与 float32 对比")
    )
    return fig


@legible
@with_cjk_font
def plot_relative_position_scores(
    scores: torch.Tensor, *, title: str | Text | None = None
) -> Figure:
    """Each diagonal (offset i - j) of a causal (T, T) score matrix as one line over i.

    With RoPE or ALiBi the score of query i and key j depends on i - j only (for equal content),
    so every line is flat. Left panel: the scores by offset; right: the same matrix as a grid.
    """
    s = float_tensor("scores", scores, 2)
    if s.shape[0] != s.shape[1]:
        raise ValueError(f"scores must be square (T, T), got scores.shape={tuple(s.shape)}")
    num_tokens = s.shape[0]
    fig, (ax_lines, ax_grid) = plt.subplots(1, 2, figsize=(9.5, 3.8), layout="constrained")
    cmap = plt.get_cmap("viridis")
    for offset in range(num_tokens):
        rows = torch.arange(offset, num_tokens)
        values = s[rows, rows - offset]
        ax_lines.plot(
            rows.numpy(),
            values.numpy(),
            marker="o",
            color=cmap(offset / max(1, num_tokens - 1)),
            label=f"i - j = {offset}",
        )
    ax_lines.set_xlabel(figure_text("query position i", "查询位置 i"))
    ax_lines.set_ylabel(figure_text("score of key j = i - offset", "键 j = i - offset 的分数"))
    ax_lines.set_title(
        figure_text("Scores by offset: flat lines", "按偏移量画分数，得到一条条水平线")
    )
    ax_lines.legend(fontsize=9, ncol=2)
    masked = s.clone()
    masked[torch.ones(num_tokens, num_tokens).triu(1).bool()] = float("nan")
    image = ax_grid.imshow(masked.numpy(), cmap="viridis")
    fig.colorbar(image, ax=ax_grid, shrink=0.8)
    ax_grid.set_xlabel(figure_text("key position j", "键位置 j"))
    ax_grid.set_ylabel(figure_text("query position i", "查询位置 i"))
    ax_grid.set_title(
        figure_text("The same scores: constant along diagonals", "同样的分数沿对角线不变")
    )
    if title:
        fig.suptitle(figure_label(title))
    return fig


@legible
@with_cjk_font
def plot_cross_attention(
    weights: torch.Tensor, query_tokens: Sequence[str], key_tokens: Sequence[str]
) -> Figure:
    """Cross-attention as a bipartite picture: target tokens (left) to source tokens (right).

    ``weights`` is one (n_q, n_kv) matrix; every target token is joined to every source token
    (no mask), each line as wide and as dark as its weight; the strongest one per row is red.
    """
    w = float_tensor("weights", weights, 2)
    if float(w.min()) < 0 or float(w.max()) > 1:
        raise ValueError(
            f"weights must be attention weights in [0, 1], got values from {float(w.min()):.4g} "
            f"to {float(w.max()):.4g}"
        )
    for name, labels in (("query_tokens", query_tokens), ("key_tokens", key_tokens)):
        if isinstance(labels, str) or not isinstance(labels, Sequence):
            raise TypeError(f"{name} must be a list of labels, got {type(labels).__name__}")
    n_q, n_kv = w.shape
    if len(query_tokens) != n_q or len(key_tokens) != n_kv:
        raise ValueError(
            f"need {n_q} query tokens and {n_kv} key tokens for weights of shape {tuple(w.shape)}, "
            f"got {len(query_tokens)} and {len(key_tokens)}"
        )
    fig, ax = plt.subplots(figsize=(5.5, 0.55 * max(n_q, n_kv) + 1.6), layout="constrained")

    def height(i: int, n: int) -> float:
        return 1.0 - (i + 0.5) / n

    best = w.argmax(dim=-1)
    for i in range(n_q):
        for j in range(n_kv):
            weight = float(w[i, j])
            ax.plot(
                [0, 1],
                [height(i, n_q), height(j, n_kv)],
                color="tab:red" if j == int(best[i]) else "tab:blue",
                linewidth=0.5 + 6 * weight,
                alpha=0.15 + 0.85 * weight,
            )
    for i, token in enumerate(token_labels(query_tokens)):
        ax.text(-0.03, height(i, n_q), token, ha="right", va="center")
    for j, token in enumerate(token_labels(key_tokens)):
        ax.text(1.03, height(j, n_kv), token, ha="left", va="center")
    ax.set_xlim(-0.4, 1.4)
    ax.set_ylim(0, 1)
    ax.set_xticks(
        [0, 1],
        [
            figure_text("queries (decoder)", "查询（解码器）"),
            figure_text("keys/values (encoder)", "键/值（编码器）"),
        ],
    )
    ax.set_yticks([])
    ax.set_xlabel(
        figure_text(
            "every query sees every key: no causal mask", "每个查询都看得到每个键，没有因果掩码"
        )
    )
    ax.set_title(
        figure_text(
            f"Cross-attention: {n_q} x {n_kv} weights, each row sums to 1",
            f"交叉注意力：{n_q} × {n_kv} 个权重，每行之和为 1",
        )
    )
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    return fig


@legible
@with_cjk_font
def plot_kv_cache_growth(
    cache_lengths: Sequence[int],
    projected_without: Sequence[int],
    projected_with: Sequence[int],
) -> Figure:
    """The KV cache after each generation step, and the tokens each step projects.

    Args:
        cache_lengths: tokens held by the cache after each step (the prompt, then +1 per step).
        projected_without / projected_with: tokens that went through the Q/K/V projection at
            each step without and with a cache.

    Left: one row per step, grey = cached keys/values reused, orange = added at this step.
    Right: tokens projected per step, growing without a cache, 1 with it after the prompt.
    """
    for name, seq in (
        ("cache_lengths", cache_lengths),
        ("projected_without", projected_without),
        ("projected_with", projected_with),
    ):
        if not isinstance(seq, Sequence) or isinstance(seq, str):
            raise TypeError(f"{name} must be a list of ints, got {type(seq).__name__}")
    steps = len(cache_lengths)
    if not (steps == len(projected_without) == len(projected_with) >= 1):
        raise ValueError(
            "cache_lengths, projected_without and projected_with must have the same length, got "
            f"{steps}, {len(projected_without)}, {len(projected_with)}"
        )
    fig, (ax_cache, ax_cost) = plt.subplots(1, 2, figsize=(10, 3.9), layout="constrained")
    previous = 0
    for step, length in enumerate(cache_lengths, start=1):
        ax_cache.barh(step, previous, color="lightgray", edgecolor="gray", height=0.8)
        ax_cache.barh(
            step, length - previous, left=previous, color="tab:orange", edgecolor="gray", height=0.8
        )
        previous = length
    ax_cache.invert_yaxis()
    step_label = figure_text("generation step", "生成步")
    ax_cache.set_xlabel(
        figure_text("cached token position (keys and values)", "缓存的词元位置（键和值）")
    )
    ax_cache.set_ylabel(step_label)
    ax_cache.set_title(
        figure_text(
            "KV cache: reused (grey) + added (orange)", "KV 缓存：复用（灰色）+ 新增（橙色）"
        )
    )
    positions = torch.arange(1, steps + 1).numpy()
    without = figure_text("without cache", "不用缓存")
    with_cache = figure_text("with cache", "使用缓存")
    ax_cost.bar(positions - 0.2, list(projected_without), width=0.4, label=without)
    ax_cost.bar(positions + 0.2, list(projected_with), width=0.4, label=with_cache)
    ax_cost.set_xlabel(step_label)
    ax_cost.set_ylabel(
        figure_text("tokens through the Q/K/V projection", "经过 Q/K/V 投影的词元数")
    )
    ax_cost.set_title(figure_text("Work per step", "每步的计算量"))
    ax_cost.legend()
    return fig


@legible
@with_cjk_font
def plot_gqa_sharing(kv_head_of: torch.Tensor) -> Figure:
    """Query heads (top row) joined to the key/value head each one reads (bottom row).

    ``kv_head_of`` is (num_heads,) integers: ``kv_head_of[i]`` is the K/V head of query head i
    (``torch.arange(g).repeat_interleave(num_heads // g)`` in ``GroupedQueryAttention``).
    One K/V head per query head is plain MHA; a single K/V head is MQA.
    """
    mapping = float_tensor("kv_head_of", kv_head_of, 1).long()
    if int(mapping.min()) < 0:
        raise ValueError(f"kv_head_of must hold K/V head indices >= 0, got {mapping.tolist()}")
    num_heads = mapping.numel()
    num_kv = int(mapping.max()) + 1
    fig, ax = plt.subplots(figsize=(max(5.0, 0.6 * num_heads + 1.5), 3.2), layout="constrained")
    cmap = plt.get_cmap("tab10")

    def x_of(i: int, n: int) -> float:
        return (i + 0.5) / n * num_heads

    for q in range(num_heads):
        kv = int(mapping[q])
        ax.plot([x_of(q, num_heads), x_of(kv, num_kv)], [1, 0], color=cmap(kv % 10), lw=2)
        ax.add_patch(
            Rectangle((x_of(q, num_heads) - 0.3, 0.9), 0.6, 0.2, color=cmap(kv % 10), alpha=0.35)
        )
        ax.text(x_of(q, num_heads), 1.0, f"Q{q}", ha="center", va="center", fontsize=8)
    for kv in range(num_kv):
        width = min(0.9 * num_heads / num_kv, 1.6)
        ax.add_patch(
            Rectangle((x_of(kv, num_kv) - width / 2, -0.12), width, 0.24, color=cmap(kv % 10))
        )
        ax.text(x_of(kv, num_kv), 0.0, f"K/V {kv}", ha="center", va="center", fontsize=8)
    if num_kv == num_heads:
        kind = figure_text("MHA", "多头注意力（MHA）")
    elif num_kv == 1:
        kind = figure_text("MQA", "多查询注意力（MQA）")
    else:
        kind = figure_text("GQA", "分组查询注意力（GQA）")
    ax.set_xlim(-0.2, num_heads + 0.2)
    ax.set_ylim(-0.3, 1.3)
    ax.set_yticks(
        [0, 1], [figure_text("K/V heads", "K/V 头"), figure_text("query heads", "查询头")]
    )
    ax.set_xticks([])
    each = num_heads // num_kv
    ax.set_xlabel(
        figure_text(
            f"{num_heads} query heads share {num_kv} K/V heads ({each} each)",
            f"{num_heads} 个查询头共享 {num_kv} 个 K/V 头（每个 K/V 头对应 {each} 个）",
        )
    )
    ax.set_title(
        figure_text(
            f"{kind}: num_heads={num_heads}, num_kv_groups={num_kv}",
            f"{kind}：查询头数 num_heads={num_heads}，K/V 组数 num_kv_groups={num_kv}",
        )
    )
    return fig


@legible
@with_cjk_font
def plot_learned_alignment(
    before: torch.Tensor, after: torch.Tensor, expected: Sequence[int] | torch.Tensor
) -> Figure:
    """A cross-attention head before and after training: its mean weights, the expected cells boxed.

    Args:
        before, after: (n_q, n_kv) mean attention weights (queries = target positions, keys =
            source positions), before and after training, e.g. averaged over held-out inputs.
        expected: for each target position, the source position it should attend to.

    Each panel's title gives the share of weight on the expected positions and the chance
    level 1 / n_kv, the share a uniform head would put there.
    """
    maps = [float_tensor("before", before, 2), float_tensor("after", after, 2)]
    if maps[0].shape != maps[1].shape:
        raise ValueError(
            f"before and after must have one shape, got {tuple(maps[0].shape)} and "
            f"{tuple(maps[1].shape)}"
        )
    if isinstance(expected, torch.Tensor):
        expected = [int(j) for j in expected.flatten().tolist()]
    if isinstance(expected, str) or not isinstance(expected, Sequence):
        raise TypeError(
            f"expected must be a list of source positions, got {type(expected).__name__}"
        )
    n_q, n_kv = maps[0].shape
    if len(expected) != n_q or not all(isinstance(j, int) and 0 <= j < n_kv for j in expected):
        raise ValueError(
            f"expected must hold {n_q} source positions in 0..{n_kv - 1}, got {list(expected)}"
        )
    for name, w in zip(("before", "after"), maps):
        if float(w.min()) < 0 or float(w.max()) > 1:
            raise ValueError(f"{name} must hold attention weights in [0, 1]")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
    rows = torch.arange(n_q)
    cols = torch.tensor(expected)
    titles = (figure_text("before training", "训练前"), figure_text("after training", "训练后"))
    images = []
    for ax, w, title in zip(axes, maps, titles):
        image = ax.imshow(w.numpy(), cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
        images.append(image)
        for i, j in enumerate(expected):
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, lw=2.5, ec="tab:red"))
        _index_ticks(ax, n_kv, n_q)
        share = float(w[rows, cols].mean())
        ax.set_title(
            figure_text(
                f"{title}\n{share:.1%} of the weight in the boxed cells (chance {1 / n_kv:.1%})",
                f"{title}\n方框内的权重占 {share:.1%}（随机水平 {1 / n_kv:.1%}）",
            )
        )
        ax.set_xlabel(figure_text("source position (keys, values)", "源序列位置（键、值）"))
        ax.set_ylabel(figure_text("target position (queries)", "目标序列位置（查询）"))
    fig.colorbar(
        images[-1], ax=list(axes), shrink=0.85, label=figure_text("mean weight", "平均权重")
    )
    return fig
