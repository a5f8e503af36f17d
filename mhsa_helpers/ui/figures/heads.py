"""Figures of lessons 04-06, drawn from the tensors the lesson computed.

* ``plot_dropout_mask(weights, keep, p)`` -- weights, the keep mask, and the result
  weights * mask / (1 - p), side by side (lesson 04);
* ``plot_dropout_scaling(samples)`` -- for several rates p, the measured fraction kept, the value
  of a survivor and the mean entry: (1 - p) * 1 / (1 - p) = 1 (lesson 04);
* ``plot_heads_concat(head_outputs)`` -- each head's (T, d_out) output and their concatenation,
  coloured by head (lesson 05);
* ``plot_matmul_counts(counts)`` -- measured ``nn.Linear`` and ``@`` calls per forward pass against
  the number of heads, one bar group per implementation (lessons 05, 06);
* ``plot_head_split(projection, heads, merged)`` -- one (T, d_out) projection cut into heads by
  ``view`` + ``transpose`` and merged back (lesson 06);
* ``plot_wrapper_vs_split(head_weights, big_weight)`` -- the wrapper's separate per-head matrices
  and the split version's one big matrix holding them stacked (lesson 06);
* ``plot_head_entropy(entropy, maximum)`` -- each head's mean row entropy against the largest
  possible, and on a scale of its own how far below it each head is (lesson 07).

Each function returns a matplotlib ``Figure`` (show it with ``plt.show()``) and never calls
``plt.show()`` itself. Titles and labels follow the lesson language (``fonts.figure_text``:
English where no CJK font is installed); token labels no font can draw become positions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ...i18n import Text
from ...validation import as_float
from ..fonts import figure_label, figure_text, token_labels, with_cjk_font
from ..legibility import legible
from ._common import float_tensor

__all__ = [
    "plot_dropout_mask",
    "plot_dropout_scaling",
    "plot_head_entropy",
    "plot_head_split",
    "plot_heads_concat",
    "plot_matmul_counts",
    "plot_wrapper_vs_split",
]

# One colour map per head, so a head keeps its colour from picture to picture.
HEAD_CMAPS = ("Blues", "Oranges", "Greens", "Purples", "Reds", "Greys")
HEAD_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:red", "tab:gray")


def _draw(
    ax: Axes,
    m: torch.Tensor,
    *,
    cmap: str = "Blues",
    annotate: bool = True,
    fmt: str = "{:.2f}",
    vmin: float | None = None,
    vmax: float | None = None,
    extent: tuple[float, float, float, float] | None = None,
) -> None:
    """An annotated matrix (rows top to bottom) on ``ax``."""
    lo = float(m.min()) if vmin is None else vmin
    hi = float(m.max()) if vmax is None else vmax
    if hi <= lo:
        hi = lo + 1.0
    x0 = 0.0 if extent is None else extent[0]
    y0 = 0.0 if extent is None else min(extent[2], extent[3])
    ax.imshow(
        m.numpy(),
        cmap=cmap,
        vmin=lo,
        vmax=hi,
        aspect="auto",
        extent=extent,
        origin="upper",
    )
    if annotate:
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                value = float(m[i, j])
                dark = (value - lo) / (hi - lo) > 0.6
                x = j if extent is None else x0 + j + 0.5
                y = i if extent is None else y0 + i + 0.5
                ax.text(
                    x,
                    y,
                    fmt.format(value),
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if dark else "black",
                )


def _token_labels(tokens: Sequence[str] | None, n: int) -> list[str]:
    """The T row labels: ``tokens`` (positions if a font lacks a glyph), or 1..T."""
    if tokens is None:
        return [str(i + 1) for i in range(n)]
    return token_labels(tokens)


def _key_label() -> str:
    return figure_text("key (attended to)", "键（被关注方）")


def _token_ticks(ax: Axes, tokens: Sequence[str] | None, n: int, *, axis: str = "y") -> None:
    labels = _token_labels(tokens, n)
    if len(labels) != n:
        raise ValueError(f"tokens must have {n} labels, got {len(labels)}")
    if axis == "y":
        ax.set_yticks(range(n), labels)
    else:
        ax.set_xticks(range(n), labels, rotation=45, ha="right")


@legible
@with_cjk_font
def plot_dropout_mask(
    weights: torch.Tensor,
    keep: torch.Tensor,
    p: float,
    tokens: Sequence[str] | None = None,
) -> Figure:
    """Three panels: attention weights, the keep mask (1 = kept), and weights * mask / (1 - p).

    Args:
        weights: (T, T) attention weights, as in eval mode.
        keep: (T, T) bool or 0/1 mask of the entries dropout keeps.
        p: the dropout rate, 0 <= p < 1; survivors are multiplied by 1 / (1 - p).
        tokens: T labels for the rows and columns (default 1..T).
    """
    w = float_tensor("weights", weights)
    k = float_tensor("keep", keep)
    if w.shape != k.shape or w.shape[0] != w.shape[1]:
        raise ValueError(
            f"weights and keep must be the same (T, T) shape, got {tuple(w.shape)} and "
            f"{tuple(k.shape)}"
        )
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p < 1:
        raise ValueError(f"p must be a number in [0, 1), got p={p!r}")
    scale = 1 / (1 - p)
    dropped = w * (k != 0) * scale  # (T, T)
    n = w.shape[0]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.4), layout="constrained")
    top = float(max(w.max(), dropped.max()))
    panels = [
        (
            w,
            figure_text("Attention weights (eval)", "注意力权重（评估模式）"),
            "Blues",
            "{:.2f}",
            top,
        ),
        (
            k,
            figure_text(f"Keep mask, p = {p:g} (1 = kept)", f"保留掩码，p = {p:g}（1 = 保留）"),
            "Greys",
            "{:.0f}",
            1.0,
        ),
        (
            dropped,
            figure_text(
                f"weights x mask x 1/(1-p) = x{scale:.2f}", f"权重 × 掩码 × 1/(1-p) = ×{scale:.2f}"
            ),
            "Blues",
            "{:.2f}",
            top,
        ),
    ]
    for ax, (m, title, cmap, fmt, vmax) in zip(axes, panels, strict=True):
        _draw(ax, m, cmap=cmap, fmt=fmt, vmin=0.0, vmax=vmax)
        ax.set_title(title)
        ax.set_xlabel(_key_label())
        _token_ticks(ax, tokens, n, axis="x")
        _token_ticks(ax, tokens, n, axis="y")
    axes[0].set_ylabel(figure_text("query (attending)", "查询（关注方）"))
    sums = ", ".join(f"{s:.2f}" for s in dropped.sum(-1).tolist())
    fig.suptitle(
        figure_text(
            f"Dropout in training: zero the dropped entries, scale the survivors by 1/(1-p) = "
            f"{scale:.2f}.\nRow sums: {sums}",
            "训练时的 dropout 把被丢弃的元素置零，"
            f"把保留的元素乘以 1/(1-p) = {scale:.2f}。\n"
            f"各行之和：{sums}",
        )
    )
    return fig


@legible
@with_cjk_font
def plot_dropout_scaling(samples: Mapping[float, torch.Tensor]) -> Figure:
    """What dropout does on average, measured for several rates.

    Args:
        samples: maps a rate p to the output of ``nn.Dropout(p)`` on a tensor of ones (any shape,
            e.g. many draws stacked). From it the figure measures the fraction kept, the value
            of a survivor and the mean entry, and draws them next to 1 - p and 1 / (1 - p).
    """
    if not isinstance(samples, Mapping) or not samples:
        raise ValueError("samples must be a non-empty mapping {p: dropped tensor of ones}")
    ps, kept, survivor, mean = [], [], [], []
    for p, dropped in sorted(samples.items()):
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p < 1:
            raise ValueError(f"every key of samples (a rate p) must be in [0, 1), got p={p!r}")
        d = float_tensor(f"samples[{p}]", dropped, ndim=dropped.dim() if dropped.dim() else 1)
        survivors = d[d != 0]
        ps.append(float(p))
        kept.append(float((d != 0).float().mean()))
        survivor.append(float(survivors.mean()) if survivors.numel() else 0.0)
        mean.append(float(d.mean()))
    grid = torch.linspace(0, max(ps), 100)
    fig, (ax_kept, ax_value) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    ax_kept.plot(grid, 1 - grid, color="grey", label="1 - p")
    kept_label = figure_text("measured: fraction kept", "实测：保留的比例")
    mean_label = figure_text("measured: mean entry", "实测：元素的均值")
    rate = figure_text("dropout rate p", "丢弃率 p")
    ax_kept.plot(ps, kept, "o", color="tab:blue", label=kept_label)
    ax_kept.plot(ps, mean, "s", color="tab:green", label=mean_label)
    ax_kept.axhline(1.0, color="tab:green", lw=0.8, ls="--")
    ax_kept.set_title(
        figure_text("Fewer entries survive, the mean stays 1", "保留的元素变少，均值仍是 1")
    )
    ax_kept.set_xlabel(rate)
    ax_kept.set_ylabel(figure_text("fraction / mean", "比例 / 均值"))
    ax_kept.set_ylim(0, 1.3)
    ax_kept.legend(loc="lower left")
    ax_value.plot(grid, 1 / (1 - grid), color="grey", label="1 / (1 - p)")
    survivor_label = figure_text("measured: survivor value", "实测：保留元素的值")
    ax_value.plot(ps, survivor, "o", color="tab:orange", label=survivor_label)
    ax_value.set_title(
        figure_text("Each survivor is scaled by 1/(1-p)", "每个保留的元素都乘以 1/(1-p)")
    )
    ax_value.set_xlabel(rate)
    ax_value.set_ylabel(figure_text("value of a surviving 1", "保留下来的 1 的值"))
    ax_value.legend(loc="upper left")
    return fig


@legible
@with_cjk_font
def plot_heads_concat(
    head_outputs: Sequence[torch.Tensor], tokens: Sequence[str] | None = None
) -> Figure:
    """Each head's (T, d_out) context vectors, then their concatenation (T, num_heads * d_out).

    Args:
        head_outputs: one (T, d_out) tensor per head (one sequence of the batch).
        tokens: T row labels (default 1..T).
    """
    if isinstance(head_outputs, torch.Tensor) or not isinstance(head_outputs, Sequence):
        raise TypeError("head_outputs must be a list of (T, d_out) tensors, one per head")
    if not 1 <= len(head_outputs) <= len(HEAD_CMAPS):
        raise ValueError(
            f"head_outputs must hold 1 to {len(HEAD_CMAPS)} heads, got {len(head_outputs)}"
        )
    heads = [float_tensor(f"head_outputs[{i}]", h) for i, h in enumerate(head_outputs)]
    n, d = heads[0].shape
    if any(h.shape != (n, d) for h in heads):
        raise ValueError(
            "head_outputs must all have the same (T, d_out) shape, got "
            f"{[tuple(h.shape) for h in heads]}"
        )
    num_heads = len(heads)
    lo = min(float(h.min()) for h in heads)
    hi = max(float(h.max()) for h in heads)
    ratios = [d] * num_heads + [num_heads * d]
    fig, axes = plt.subplots(
        1,
        num_heads + 1,
        figsize=(2.0 + 1.1 * sum(ratios), 4.2),
        width_ratios=ratios,
        layout="constrained",
    )
    for i, (ax, h) in enumerate(zip(axes[:-1], heads, strict=True)):
        _draw(ax, h, cmap=HEAD_CMAPS[i], vmin=lo, vmax=hi)
        head = i + 1
        ax.set_title(
            figure_text(f"Head {head}: ({n}, {d})", f"头 {head}：({n}, {d})"), color=HEAD_COLORS[i]
        )
        ax.set_xlabel(figure_text("column", "列"))
        ax.set_xticks(range(d))
        _token_ticks(ax, tokens, n)
    axes[0].set_ylabel(figure_text("token", "词元"))
    cat = axes[-1]
    for i, h in enumerate(heads):
        _draw(cat, h, cmap=HEAD_CMAPS[i], vmin=lo, vmax=hi, extent=(i * d, (i + 1) * d, n, 0))
        cat.add_patch(
            Rectangle((i * d, 0), d, n, fill=False, edgecolor=HEAD_COLORS[i], linewidth=2.5)
        )
    cat.set_xlim(0, num_heads * d)
    cat.set_ylim(n, 0)
    cat.set_xticks([j + 0.5 for j in range(num_heads * d)], [str(j) for j in range(num_heads * d)])
    cat.set_yticks([i + 0.5 for i in range(n)], _token_labels(tokens or None, n))
    cat.set_title(f"torch.cat(dim=-1): ({n}, {num_heads} x {d} = {num_heads * d})")
    cat.set_xlabel(figure_text("column of the concatenated output", "拼接后输出的列"))
    fig.suptitle(
        figure_text(
            "Heads side by side: every head adds its own columns", "各头并排，每个头贡献自己的列"
        )
    )
    return fig


@legible
@with_cjk_font
def plot_matmul_counts(counts: Mapping[str, Mapping[int, Mapping[str, int]]]) -> Figure:
    """Measured matrix multiplications per forward pass against the number of heads.

    Args:
        counts: ``{implementation: {num_heads: {"linear": n, "matmul": m}}}``, e.g. the
            ``counts`` of ``mh.CountMatmuls`` for a wrapper and for ``MultiHeadAttention``.
            Each bar stacks the ``nn.Linear`` calls and the ``@`` calls.
    """
    if not isinstance(counts, Mapping) or not counts:
        raise ValueError("counts must be a non-empty mapping {name: {num_heads: counts}}")
    for impl, per_impl in counts.items():
        if not isinstance(per_impl, Mapping) or not all(
            isinstance(c, Mapping) for c in per_impl.values()
        ):
            raise TypeError(
                f"counts[{impl!r}] must map num_heads to {{'linear': n, 'matmul': m}}, "
                f"got {per_impl!r:.60}"
            )
    heads = sorted({h for per_impl in counts.values() for h in per_impl})
    width = 0.8 / len(counts)
    fig, ax = plt.subplots(figsize=(8, 4), layout="constrained")
    for k, (impl, per_heads) in enumerate(counts.items()):
        xs = [heads.index(h) + (k - (len(counts) - 1) / 2) * width for h in per_heads]
        linear = [int(c.get("linear", 0)) for c in per_heads.values()]
        matmul = [int(c.get("matmul", 0)) for c in per_heads.values()]
        color = HEAD_COLORS[k % len(HEAD_COLORS)]
        # the lessons' key "wrapper" is a word, not a class name: the Chinese figure says 包装器
        shown = figure_text("wrapper", "包装器") if impl == "wrapper" else impl
        linear_label = figure_text(f"{shown}: nn.Linear calls", f"{shown}：nn.Linear 调用")
        ax.bar(xs, linear, width, color=color, label=linear_label)
        ax.bar(
            xs,
            matmul,
            width,
            bottom=linear,
            color=color,
            alpha=0.45,
            hatch="//",
            label=figure_text(f"{shown}: @ calls", f"{shown}：@ 调用"),
        )
        for x, a, b in zip(xs, linear, matmul, strict=True):
            ax.text(x, a + b + 0.2, str(a + b), ha="center", va="bottom", fontsize=9)
    ax.set_xticks(range(len(heads)), [str(h) for h in heads])
    ax.set_xlabel(figure_text("num_heads (the number of heads)", "num_heads（头数）"))
    ax.set_ylabel(figure_text("calls per forward pass", "每次前向传播的调用次数"))
    ax.set_title(
        figure_text(
            "Matrix multiplications per forward pass (measured with mh.CountMatmuls)",
            "每次前向传播的矩阵乘法次数（用 mh.CountMatmuls 测得）",
        )
    )
    ax.legend(loc="upper left", fontsize=8)
    ax.margins(y=0.15)
    return fig


@legible
@with_cjk_font
def plot_head_split(
    projection: torch.Tensor,
    heads: torch.Tensor,
    merged: torch.Tensor,
    tokens: Sequence[str] | None = None,
) -> Figure:
    """One projection cut into heads and merged back, for one sequence.

    Args:
        projection: (T, d_out), e.g. ``W_query(x)[0]``; its columns are coloured by head.
        heads: (num_heads, T, head_dim), the same numbers after ``view`` + ``transpose``.
        merged: (T, d_out), after ``transpose`` + ``contiguous().view``: equal to ``projection``.
        tokens: T row labels (default 1..T).
    """
    proj = float_tensor("projection", projection)
    split = float_tensor("heads", heads, ndim=3)
    back = float_tensor("merged", merged)
    num_heads, n, head_dim = split.shape
    if proj.shape != (n, num_heads * head_dim) or back.shape != proj.shape:
        raise ValueError(
            f"projection and merged must be (T, num_heads * head_dim) = "
            f"{(n, num_heads * head_dim)}, got {tuple(proj.shape)} and {tuple(back.shape)}"
        )
    if num_heads > len(HEAD_CMAPS):
        raise ValueError(f"at most {len(HEAD_CMAPS)} heads can be drawn, got {num_heads}")
    lo, hi = float(proj.min()), float(proj.max())
    d_out = num_heads * head_dim
    ratios = [d_out] + [head_dim] * num_heads + [d_out]
    fig, axes = plt.subplots(
        1,
        num_heads + 2,
        figsize=(2.5 + 0.9 * sum(ratios), 4.2),
        width_ratios=ratios,
        layout="constrained",
    )

    def coloured(ax: Axes, m: torch.Tensor, title: str) -> None:
        for i in range(num_heads):
            cols = m[:, i * head_dim : (i + 1) * head_dim]
            extent = (i * head_dim, (i + 1) * head_dim, n, 0)
            _draw(ax, cols, cmap=HEAD_CMAPS[i], vmin=lo, vmax=hi, extent=extent)
            ax.add_patch(
                Rectangle((i * head_dim, 0), head_dim, n, fill=False, ec=HEAD_COLORS[i], lw=2.5)
            )
        ax.set_xlim(0, d_out)
        ax.set_ylim(n, 0)
        ax.set_xticks([j + 0.5 for j in range(d_out)], [str(j) for j in range(d_out)])
        ax.set_yticks([i + 0.5 for i in range(n)], _token_labels(tokens, n))
        ax.set_title(title)
        ax.set_xlabel(figure_text("column (d_out)", "列（d_out）"))

    coloured(axes[0], proj, figure_text(f"Projection ({n}, {d_out})", f"投影 ({n}, {d_out})"))
    axes[0].set_ylabel(figure_text("token", "词元"))
    for i in range(num_heads):
        ax = axes[1 + i]
        _draw(ax, split[i], cmap=HEAD_CMAPS[i], vmin=lo, vmax=hi)
        head = i + 1
        ax.set_title(
            figure_text(f"Head {head} ({n}, {head_dim})", f"头 {head} ({n}, {head_dim})"),
            color=HEAD_COLORS[i],
        )
        ax.set_xlabel("head_dim")
        ax.set_xticks(range(head_dim))
        _token_ticks(ax, tokens, n)
    coloured(axes[-1], back, figure_text(f"Merged back ({n}, {d_out})", f"合并回来 ({n}, {d_out})"))
    fig.suptitle(
        figure_text(
            f"view(T, {num_heads}, {head_dim}) + transpose -> {num_heads} heads of ({n}, "
            f"{head_dim}); transpose + contiguous().view -> the same columns again",
            f"view(T, {num_heads}, {head_dim}) + transpose → {num_heads} 个形状为 ({n}, "
            f"{head_dim}) 的头，transpose + contiguous().view → 又回到原来的列",
        )
    )
    return fig


@legible
@with_cjk_font
def plot_wrapper_vs_split(head_weights: Sequence[torch.Tensor], big_weight: torch.Tensor) -> Figure:
    """The wrapper's per-head matrices (top) and the split version's one matrix (bottom).

    Args:
        head_weights: one (head_dim, d_in) weight per head, e.g. ``head.W_query.weight`` of each
            head of a ``MultiHeadAttentionWrapper``.
        big_weight: (num_heads * head_dim, d_in), e.g. ``W_query.weight`` of the equivalent
            ``MultiHeadAttention``: the heads' rows stacked, head 1 on top.
    """
    if isinstance(head_weights, torch.Tensor) or not isinstance(head_weights, Sequence):
        raise TypeError("head_weights must be a list of (head_dim, d_in) tensors, one per head")
    if not 1 <= len(head_weights) <= len(HEAD_CMAPS):
        raise ValueError(f"head_weights must hold 1 to {len(HEAD_CMAPS)} heads")
    heads = [float_tensor(f"head_weights[{i}]", w) for i, w in enumerate(head_weights)]
    big = float_tensor("big_weight", big_weight)
    head_dim, d_in = heads[0].shape
    num_heads = len(heads)
    if any(w.shape != (head_dim, d_in) for w in heads) or big.shape != (
        num_heads * head_dim,
        d_in,
    ):
        raise ValueError(
            f"expected {num_heads} head weights of shape (head_dim, d_in) and big_weight of "
            f"shape (num_heads * head_dim, d_in) = {(num_heads * head_dim, d_in)}, got "
            f"{tuple(big.shape)}"
        )
    lo = min(float(big.min()), *(float(w.min()) for w in heads))
    hi = max(float(big.max()), *(float(w.max()) for w in heads))
    fig = plt.figure(figsize=(max(8.0, 3.2 * num_heads), 6.5), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=[1, 1.4])  # type: ignore[misc]
    axes_top = top.subplots(1, num_heads, squeeze=False)[0]
    for i, (ax, w) in enumerate(zip(axes_top, heads, strict=True)):
        _draw(ax, w, cmap=HEAD_CMAPS[i], vmin=lo, vmax=hi)
        head = i + 1
        ax.set_title(
            figure_text(
                f"Head {head}: W_query ({head_dim}, {d_in})",
                f"头 {head}：W_query ({head_dim}, {d_in})",
            ),
            color=HEAD_COLORS[i],
        )
        ax.set_xlabel(figure_text("input feature (d_in)", "输入特征（d_in）"))
        ax.set_xticks(range(d_in))
        ax.set_yticks(range(head_dim))
    axes_top[0].set_ylabel(figure_text("output row", "输出行"))
    top.suptitle(
        figure_text(
            f"Wrapper: {num_heads} separate matrices, {num_heads} small matmuls",
            f"包装器：{num_heads} 个独立的矩阵，{num_heads} 次小的矩阵乘法",
        )
    )
    ax_big = bottom.subplots(1, 1)
    for i in range(num_heads):
        rows = big[i * head_dim : (i + 1) * head_dim]
        extent = (0, d_in, (i + 1) * head_dim, i * head_dim)
        _draw(ax_big, rows, cmap=HEAD_CMAPS[i], vmin=lo, vmax=hi, extent=extent)
        ax_big.add_patch(
            Rectangle((0, i * head_dim), d_in, head_dim, fill=False, ec=HEAD_COLORS[i], lw=2.5)
        )
    ax_big.set_xlim(0, d_in)
    ax_big.set_ylim(num_heads * head_dim, 0)
    ax_big.set_xticks([j + 0.5 for j in range(d_in)], [str(j) for j in range(d_in)])
    ax_big.set_yticks(
        [r + 0.5 for r in range(num_heads * head_dim)],
        [str(r) for r in range(num_heads * head_dim)],
    )
    ax_big.set_xlabel(figure_text("input feature (d_in)", "输入特征（d_in）"))
    ax_big.set_ylabel(figure_text("output row (d_out)", "输出行（d_out）"))
    rows_total = num_heads * head_dim
    ax_big.set_title(
        figure_text(
            f"Split: one W_query ({rows_total}, {d_in}) = the heads' rows stacked, one matmul",
            f"拆分：一个 W_query ({rows_total}, {d_in}) = 各头的行堆叠在一起，一次矩阵乘法",
        )
    )
    return fig


@legible
@with_cjk_font
def plot_head_entropy(
    entropy: torch.Tensor, maximum: float, *, title: str | Text | None = None
) -> Figure:
    """Each head's mean row entropy next to the largest possible, and the gap on its own scale.

    Args:
        entropy: (num_heads,), e.g. ``mh.head_entropy(weights)``, in nats.
        maximum: the largest mean row entropy for these rows, e.g.
            ``uniform_causal_entropy(T)`` for causal heads (a uniform head reaches it).

    Left: the bars and the maximum, values written on the bars; heads near the maximum look
    alike there. Right: ``maximum - entropy``, how far each head is from attending uniformly,
    on a scale that shows differences of a thousandth of a nat.
    """
    h = float_tensor("entropy", entropy, 1)
    limit = as_float("maximum", maximum)
    if not limit > 0 or limit == float("inf"):
        raise ValueError(f"maximum must be a positive finite entropy (nats), got maximum={maximum}")
    if bool((h < -1e-6).any()) or bool((h > limit + 1e-4).any()):
        raise ValueError(f"entropy must lie in [0, maximum={limit:.4f}] (nats), got {h.tolist()}")
    names = [figure_text(f"Head {i + 1}", f"头 {i + 1}") for i in range(h.shape[0])]
    gap = (limit - h).clamp(min=0.0)
    fig, (ax_h, ax_gap) = plt.subplots(1, 2, figsize=(9.0, 3.6), layout="constrained")
    bars = ax_h.bar(names, h.tolist(), width=0.5, color="tab:blue")
    ax_h.bar_label(bars, [f"{v:.4f}" for v in h.tolist()], padding=2, fontsize=9)
    ax_h.axhline(
        limit,
        color="gray",
        linestyle="--",
        label=figure_text(f"maximum {limit:.4f}", f"最大值 {limit:.4f}"),
    )
    ax_h.set_ylim(0, limit * 1.35)
    ax_h.set_ylabel(figure_text("mean row entropy (nats)", "每行熵的平均值（奈特）"))
    ax_h.set_title(figure_label(title) or figure_text("Entropy per head", "每个头的熵"))
    ax_h.legend(loc="upper right", fontsize=9)
    gap_bars = ax_gap.bar(names, gap.tolist(), width=0.5, color="tab:orange")
    ax_gap.bar_label(gap_bars, [f"{v:.5f}" for v in gap.tolist()], padding=2, fontsize=9)
    ax_gap.set_ylim(0, max(float(gap.max()) * 1.3, 1e-3))
    ax_gap.set_ylabel(figure_text("maximum - entropy (nats)", "最大值 - 熵（奈特）"))
    ax_gap.set_title(
        figure_text("How far below the maximum (0 = uniform)", "离最大值还差多少（0 = 均匀）")
    )
    return fig
