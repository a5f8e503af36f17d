"""Conceptual figures of lessons 01-03, drawn from the lesson's own tensors.

* ``plot_dot_products(query, keys, tokens)`` -- one query scored against every key: each score is
  a stack of the feature-by-feature products, so "multiply position by position and add up" is
  visible (lesson 01).
* ``plot_softmax_steps(scores, tokens)`` -- scores, then the weights that softmax turns them into
  (and plain sum-normalisation for comparison) (lesson 01).
* ``plot_weighted_sum(weights, vectors, tokens)`` -- a context vector built as the weighted sum of
  the vectors, one coloured slice per token (lessons 01, 02).
* ``plot_self_similarity(scores, tokens)`` -- for every token, its score with itself against its
  best score with any token: is a token most similar to itself? (lesson 01).
* ``plot_qkv_projections(inputs, W_query, W_key, W_value)`` -- ``inputs @ W = result`` for the
  query, key and value matrices, with every shape (lesson 02).
* ``plot_scaling_effect(scores, d_k)`` -- one row of scores through softmax with and without the
  division by sqrt(d_k) (lesson 02).
* ``plot_causal_scores(scores, tokens)`` -- a score matrix with the future greyed out (lesson 03).
* ``plot_mask_paths(scaled_scores, tokens)`` -- the three-step mask and the ``-inf`` mask side by
  side, ending in the same matrix (lesson 03).

Every function returns the matplotlib ``Figure`` (show it with ``plt.show()``) with titled,
labelled axes and uses plain matplotlib (fast: well under a second each). Titles, axis labels and
legends follow the lesson language (``fonts.figure_text``: English where no CJK font is
installed); token labels that no installed font can draw become positions (``fonts.token_labels``).
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ...i18n import Text
from ..fonts import figure_label, figure_text, token_labels, with_cjk_font
from ..legibility import legible

__all__ = [
    "plot_causal_scores",
    "plot_dot_products",
    "plot_mask_paths",
    "plot_qkv_projections",
    "plot_scaling_effect",
    "plot_self_similarity",
    "plot_softmax_steps",
    "plot_weighted_sum",
]

_FUTURE_GREY = "#d9d9d9"


def _tensor(name: str, value: object, ndim: int | tuple[int, ...]) -> np.ndarray:
    """``value`` as a float64 numpy array after checking it is a tensor with ``ndim`` dims."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    allowed = (ndim,) if isinstance(ndim, int) else ndim
    if value.dim() not in allowed:
        raise ValueError(
            f"{name} must have {' or '.join(str(n) for n in allowed)} dimensions, "
            f"got {name}.shape={tuple(value.shape)}"
        )
    if not (value.is_floating_point() or value.dtype == torch.bool):
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {value.dtype}")
    return value.detach().to(torch.float64).cpu().numpy()


def _labels(tokens: Sequence[str] | None, count: int, name: str = "tokens") -> list[str]:
    if tokens is None:
        return [str(i) for i in range(1, count + 1)]
    if isinstance(tokens, str) or len(tokens) != count:
        got = "a string" if isinstance(tokens, str) else f"{len(tokens)} labels"
        raise ValueError(f"{name} must have one label per position ({count}), got {got}")
    return token_labels(tokens)


def _index(name: str, value: object, size: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
        raise ValueError(f"{name} must be an int in [0, {size}), got {name}={value!r}")
    return value


def _key_query_labels(ax: Axes) -> None:
    ax.set_xlabel(figure_text("key (attended to)", "键（被关注方）"))
    ax.set_ylabel(figure_text("query (attending)", "查询（关注方）"))


def _colors(count: int) -> list:
    cmap = plt.get_cmap("tab10")
    return [cmap(i % 10) for i in range(count)]


def _draw_matrix(
    ax: Axes,
    values: np.ndarray,
    *,
    title: str,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    hidden: np.ndarray | None = None,
    hidden_text: str = "",
    cmap: str = "Blues",
    vmin: float | None = None,
    vmax: float | None = None,
    fontsize: int = 7,
) -> None:
    """An annotated matrix; ``hidden`` (bool, same shape) cells are grey with ``hidden_text``."""
    rows, cols = values.shape
    shown = np.ma.masked_array(values, mask=hidden if hidden is not None else False)
    finite = shown.compressed()
    finite = finite[np.isfinite(finite)]
    low = vmin if vmin is not None else (float(finite.min()) if finite.size else 0.0)
    high = vmax if vmax is not None else (float(finite.max()) if finite.size else 1.0)
    colormap = plt.get_cmap(cmap).with_extremes(bad=_FUTURE_GREY)
    ax.imshow(
        np.ma.masked_invalid(shown), cmap=colormap, vmin=low, vmax=high if high > low else low + 1
    )
    for i in range(rows):
        for j in range(cols):
            if hidden is not None and hidden[i, j]:
                text, color = hidden_text, "#555555"
            else:
                value = values[i, j]
                text = f"{value:.2f}" if np.isfinite(value) else ("-inf" if value < 0 else "inf")
                relative = (value - low) / (high - low) if high > low else 0.0
                color = "white" if np.isfinite(value) and relative > 0.6 else "black"
            ax.text(j, i, text, ha="center", va="center", fontsize=fontsize, color=color)
    ax.set_title(title, fontsize=9)
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    ax.set_xticklabels(col_labels if col_labels is not None else [], fontsize=9, rotation=45)
    ax.set_yticklabels(row_labels if row_labels is not None else [], fontsize=9)
    if col_labels is None:
        ax.tick_params(axis="x", length=0)
    if row_labels is None:
        ax.tick_params(axis="y", length=0)


# -- lesson 01 ------------------------------------------------------------------------------------


@legible
@with_cjk_font
def plot_dot_products(
    query: torch.Tensor,
    keys: torch.Tensor,
    tokens: Sequence[str] | None = None,
    *,
    query_index: int | None = None,
) -> Figure:
    """One query scored against every key, each score drawn as the sum of its feature products.

    Bar ``j`` stacks ``query[f] * keys[j, f]`` for every feature ``f``; its height is the score
    ``query . keys[j]`` (written on top). ``query_index`` outlines the query's own bar.

    Args:
        query: (d,).
        keys: (T, d).
        tokens: one label per key.

    Returns the figure with one axes: x "key token", y "score = query . key".
    """
    q = _tensor("query", query, 1)
    k = _tensor("keys", keys, 2)
    if k.shape[1] != q.shape[0]:
        raise ValueError(
            f"keys must have shape (T, {q.shape[0]}) to match query, got keys.shape={k.shape}"
        )
    labels = _labels(tokens, k.shape[0])
    if query_index is not None:
        _index("query_index", query_index, k.shape[0])
    products = k * q  # (T, d)
    scores = products.sum(axis=1)  # (T,)
    fig, ax = plt.subplots(figsize=(7.5, 3.8), layout="constrained")
    positions = np.arange(len(labels))
    bottom_pos, bottom_neg = np.zeros(len(labels)), np.zeros(len(labels))
    for f, color in zip(range(q.shape[0]), _colors(q.shape[0])):
        part = products[:, f]
        bottom = np.where(part >= 0, bottom_pos, bottom_neg)
        feature = figure_text(f"feature {f + 1}", f"特征 {f + 1}")
        ax.bar(positions, part, bottom=bottom, color=color, width=0.6, label=feature)
        bottom_pos += np.clip(part, 0, None)
        bottom_neg += np.clip(part, None, 0)
    for x, score in zip(positions, scores):
        ax.text(
            float(x),
            max(score, 0) + 0.02 * abs(scores).max(),
            f"{score:.4f}",
            ha="center",
            va="bottom",
            fontsize=8,
        )
    if query_index is not None:
        top = bottom_pos[query_index]
        ax.add_patch(
            Rectangle(
                (query_index - 0.36, bottom_neg[query_index]),
                0.72,
                top - bottom_neg[query_index],
                fill=False,
                edgecolor="black",
                linewidth=2,
                linestyle="--",
            )
        )
        token = labels[query_index]
        who = figure_text(f"Query '{token}'", f"查询“{token}”")
    else:
        who = figure_text("Query the query", "查询")
    ax.set_xticks(positions, labels)
    ax.set_xlabel(figure_text("key token", "键（词元）"))
    ax.set_ylabel(figure_text("score = query . key", "分数 = 查询 · 键"))
    ax.set_title(
        figure_text(
            f"{who} scored against every key (one stacked part per feature)",
            f"{who}与每个键的分数（每个特征一段）",
        )
    )
    ax.set_ylim(min(0.0, bottom_neg.min() * 1.15), bottom_pos.max() * 1.18 + 1e-9)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.legend(loc="upper right", fontsize=8, ncols=min(q.shape[0], 4))
    return fig


@legible
@with_cjk_font
def plot_softmax_steps(scores: torch.Tensor, tokens: Sequence[str] | None = None) -> Figure:
    """Scores (left) and the attention weights softmax makes of them (right).

    The right panel also marks plain sum-normalisation (``scores / scores.sum()``) with dots, so
    the stretching effect of the exponential is visible.

    Args:
        scores: (T,), one query's scores.

    Returns the figure with two axes: "Attention scores" and "Attention weights".
    """
    s = _tensor("scores", scores, 1)
    labels = _labels(tokens, s.shape[0])
    weights = np.exp(s - s.max())
    weights /= weights.sum()
    positions = np.arange(len(labels))
    fig, (ax_s, ax_w) = plt.subplots(1, 2, figsize=(9.5, 3.5), layout="constrained")
    ax_s.bar(positions, s, color="#4c72b0", width=0.6)
    ax_s.set_title(figure_text("Attention scores (any size)", "注意力分数（大小任意）"))
    ax_s.set_ylabel(figure_text("score", "分数"))
    softmax = figure_text("softmax", "softmax 权重")
    ax_w.bar(positions, weights, color="#dd8452", width=0.6, label=softmax)
    tops = weights.copy()
    if np.all(s >= 0) and s.sum() > 0:
        plain = s / s.sum()
        ax_w.plot(
            positions, plain, "ko", markersize=5, label=figure_text("scores / sum", "分数 / 总和")
        )
        tops = np.maximum(tops, plain)
    for x, w, top in zip(positions, weights, tops):
        ax_w.text(x, top + 0.01 * weights.max(), f"{w:.2f}", ha="center", va="bottom", fontsize=8)
    total = weights.sum()
    ax_w.set_title(
        figure_text(
            f"Attention weights: softmax, sum = {total:.2f}",
            f"注意力权重：softmax，总和 = {total:.2f}",
        )
    )
    ax_w.set_ylabel(figure_text("weight", "权重"))
    ax_w.set_ylim(0, weights.max() * 1.25)
    ax_w.legend(loc="lower right", fontsize=8)
    for ax in (ax_s, ax_w):
        ax.set_xticks(positions, labels, rotation=30)
        ax.set_xlabel(figure_text("key token", "键（词元）"))
        ax.axhline(0, color="black", linewidth=0.8)
    return fig


@legible
@with_cjk_font
def plot_weighted_sum(
    weights: torch.Tensor,
    vectors: torch.Tensor,
    tokens: Sequence[str] | None = None,
    *,
    title: str | Text | None = None,
) -> Figure:
    """A context vector as the weighted sum of the vectors, one coloured slice per token.

    Left: the weights. Right: for every feature, the stacked contributions
    ``weights[j] * vectors[j, f]``; a black bar marks their sum, the context vector's entry.

    Args:
        weights: (T,), one query's attention weights.
        vectors: (T, d), the vectors that are mixed (inputs in lesson 01, values in lesson 02).

    Returns the figure with two axes: "Attention weights" and the context vector's.
    """
    w = _tensor("weights", weights, 1)
    v = _tensor("vectors", vectors, 2)
    if v.shape[0] != w.shape[0]:
        raise ValueError(
            f"vectors must have one row per weight ({w.shape[0]}), got vectors.shape={v.shape}"
        )
    labels = _labels(tokens, w.shape[0])
    contributions = w[:, None] * v  # (T, d)
    context = contributions.sum(axis=0)  # (d,)
    colors = _colors(len(labels))
    fig, (ax_w, ax_c) = plt.subplots(
        1, 2, figsize=(9.5, 3.8), layout="constrained", width_ratios=(1, 1.3)
    )
    ax_w.bar(range(len(labels)), w, color=colors, width=0.6)
    ax_w.set_xticks(range(len(labels)), labels, rotation=30)
    ax_w.set_xlabel(figure_text("token", "词元"))
    ax_w.set_ylabel(figure_text("weight", "权重"))
    ax_w.set_title(
        figure_text("Attention weights (how much of each token)", "注意力权重（每个词元取多少）")
    )
    features = np.arange(v.shape[1])
    bottom_pos, bottom_neg = np.zeros(v.shape[1]), np.zeros(v.shape[1])
    for j, (label, color) in enumerate(zip(labels, colors)):
        part = contributions[j]
        bottom = np.where(part >= 0, bottom_pos, bottom_neg)
        ax_c.bar(features, part, bottom=bottom, color=color, width=0.5, label=label)
        bottom_pos += np.clip(part, 0, None)
        bottom_neg += np.clip(part, None, 0)
    ax_c.hlines(context, features - 0.32, features + 0.32, color="black", linewidth=2.5)
    for f, value in zip(features, context):
        ax_c.text(f + 0.34, value, f"{value:.4f}", va="center", fontsize=8)
    ax_c.set_xticks(features, [figure_text(f"feature {f + 1}", f"特征 {f + 1}") for f in features])
    ax_c.set_xlim(-0.6, v.shape[1] - 0.1)
    ax_c.set_xlabel(figure_text("feature of the context vector", "上下文向量的特征"))
    ax_c.set_ylabel(figure_text("sum of weight x vector", "权重 × 向量，逐个相加"))
    ax_c.axhline(0, color="black", linewidth=0.8)
    ax_c.set_title(
        figure_label(title)
        or figure_text(
            "Context vector = weighted sum (black bar = total)",
            "上下文向量 = 加权和（黑色横线 = 总和）",
        )
    )
    ax_c.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


@legible
@with_cjk_font
def plot_self_similarity(scores: torch.Tensor, tokens: Sequence[str] | None = None) -> Figure:
    """Is every token most similar to itself? Its own score next to its best score.

    For each query row ``i`` of ``scores`` (T, T): the score with itself ``scores[i, i]`` and the
    largest score of the row, labelled with the key that wins. The title counts the rows whose
    largest score is on the diagonal.

    Returns the figure with one axes: x "query token", y "score".
    """
    s = _tensor("scores", scores, 2)
    if s.shape[0] != s.shape[1]:
        raise ValueError(f"scores must be square (T, T), got scores.shape={s.shape}")
    labels = _labels(tokens, s.shape[0])
    own = np.diag(s)
    best = s.max(axis=1)
    winner = s.argmax(axis=1)
    hits = int((winner == np.arange(len(labels))).sum())
    positions = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(7.5, 3.8), layout="constrained")
    own_label = figure_text("score with itself", "与自身的分数")
    best_label = figure_text("largest score in the row", "该行的最大分数")
    ax.bar(positions - 0.19, own, width=0.36, color="#4c72b0", label=own_label)
    ax.bar(positions + 0.19, best, width=0.36, color="#dd8452", label=best_label)
    itself = figure_text("itself", "自身")
    for x, j, value in zip(positions, winner, best):
        mark = itself if j == x else labels[j]
        ax.text(x + 0.19, value, mark, ha="center", va="bottom", fontsize=8, rotation=30)
    ax.set_xticks(positions, labels)
    ax.set_xlabel(figure_text("query token", "查询词元"))
    ax.set_ylabel(figure_text("score", "分数"))
    ax.set_ylim(0 if s.min() >= 0 else s.min() * 1.2, best.max() * 1.3)
    count = len(labels)
    ax.set_title(
        figure_text(
            f"{hits} of {count} tokens score highest with themselves",
            f"{count} 个词元中有 {hits} 个与自身的分数最高",
        )
    )
    ax.legend(loc="upper right", fontsize=8)
    return fig


# -- lesson 02 ------------------------------------------------------------------------------------


@legible
@with_cjk_font
def plot_qkv_projections(
    inputs: torch.Tensor,
    W_query: torch.Tensor,
    W_key: torch.Tensor,
    W_value: torch.Tensor,
    tokens: Sequence[str] | None = None,
) -> Figure:
    """``inputs @ W = result`` for W_query, W_key and W_value, every matrix with its shape.

    Args:
        inputs: (T, d_in).
        W_query, W_key, W_value: (d_in, d_out) each (for an ``nn.Linear`` pass ``layer.weight.T``).

    Returns the figure: three rows (queries, keys, values) of three matrices each, titled
    "inputs (T, d_in)", "W_query (d_in, d_out)", "queries (T, d_out)" and so on.
    """
    x = _tensor("inputs", inputs, 2)
    matrices = {
        "W_query": _tensor("W_query", W_query, 2),
        "W_key": _tensor("W_key", W_key, 2),
        "W_value": _tensor("W_value", W_value, 2),
    }
    for name, w in matrices.items():
        if w.shape[0] != x.shape[1]:
            raise ValueError(
                f"{name} must have shape (d_in, d_out) with d_in={x.shape[1]}, got "
                f"{name}.shape={w.shape} (for an nn.Linear pass layer.weight.T)"
            )
    labels = _labels(tokens, x.shape[0])
    results = {
        "W_query": figure_text("queries", "查询"),
        "W_key": figure_text("keys", "键"),
        "W_value": figure_text("values", "值"),
    }
    inputs_name = figure_text("inputs", "输入")
    T, d_in = x.shape
    d_out = max(w.shape[1] for w in matrices.values())
    fig, axes = plt.subplots(
        3,
        3,
        # The book's sizes (d_in 3, d_out 2) need about 9 x 9 inches for 600 px of drawn width:
        # starting there, ``@legible`` lays the figure out once instead of three times.
        figsize=(3.0 + 0.68 * (d_in + 2 * d_out + 2), 9.0),
        layout="constrained",
        width_ratios=(d_in + 0.5, d_out + 0.5, d_out + 0.5),
    )
    for row, (name, w) in enumerate(matrices.items()):
        product = x @ w  # (T, d_out)
        ax_x, ax_w, ax_r = axes[row]
        _draw_matrix(ax_x, x, title=f"{inputs_name} ({T}, {d_in})", row_labels=labels, cmap="Greys")
        _draw_matrix(ax_w, w, title=f"{name} ({d_in}, {w.shape[1]})", cmap="Oranges")
        _draw_matrix(ax_r, product, title=f"{results[name]} ({T}, {w.shape[1]})", row_labels=labels)
        ax_x.set_ylabel(figure_text("token", "词元"))
        ax_x.set_xlabel("d_in")
        ax_w.set_xlabel("d_out")
        ax_w.set_ylabel("d_in")
        ax_r.set_xlabel("d_out")
    fig.suptitle(
        figure_text(
            "Three projections of the same inputs:  inputs @ W = result",
            "同一输入的三个投影：inputs @ W = 结果",
        ),
        fontsize=10,
    )
    return fig


@legible
@with_cjk_font
def plot_scaling_effect(
    scores: torch.Tensor, d_k: int, tokens: Sequence[str] | None = None
) -> Figure:
    """One row of scores through softmax, without and with the division by sqrt(d_k).

    Args:
        scores: (T,), unscaled dot products of one query with T keys.
        d_k: the size of the keys.

    Returns the figure with two axes: "softmax(scores)" and "softmax(scores / sqrt(d_k))", each
    titled with its largest weight.
    """
    s = _tensor("scores", scores, 1)
    if isinstance(d_k, bool) or not isinstance(d_k, int) or d_k < 1:
        raise ValueError(f"d_k must be an int >= 1, got d_k={d_k!r}")
    labels = _labels(tokens, s.shape[0])
    positions = np.arange(len(labels))
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.4), layout="constrained", sharey=True)
    for ax, divisor, name in (
        (axes[0], 1.0, "softmax(scores)"),
        (axes[1], d_k**0.5, f"softmax(scores / sqrt({d_k}))"),
    ):
        z = s / divisor
        w = np.exp(z - z.max())
        w /= w.sum()
        ax.bar(positions, w, color="#dd8452" if divisor == 1.0 else "#55a868", width=0.6)
        for x, value in zip(positions, w):
            ax.text(x, value, f"{value:.2f}", ha="center", va="bottom", fontsize=8)
        largest = w.max()
        ax.set_title(
            figure_text(f"{name}: largest weight {largest:.2f}", f"{name}：最大权重 {largest:.2f}"),
            fontsize=10,
        )
        ax.set_xticks(positions, labels, rotation=30)
        ax.set_xlabel(figure_text("key", "键"))
        ax.set_ylim(0, 1.12)
    axes[0].set_ylabel(figure_text("attention weight", "注意力权重"))
    return fig


# -- lesson 03 ------------------------------------------------------------------------------------


def _future(size: int) -> np.ndarray:
    return np.triu(np.ones((size, size), dtype=bool), k=1)


@legible
@with_cjk_font
def plot_causal_scores(
    scores: torch.Tensor, tokens: Sequence[str] | None = None, *, title: str | Text | None = None
) -> Figure:
    """A (T, T) score matrix with the future (above the diagonal) greyed out.

    Returns the figure with one axes: x "key (attended to)", y "query (attending)"; the grey cells
    are labelled "future".
    """
    s = _tensor("scores", scores, 2)
    if s.shape[0] != s.shape[1]:
        raise ValueError(f"scores must be square (T, T), got scores.shape={s.shape}")
    labels = _labels(tokens, s.shape[0])
    size = 0.62 * len(labels) + 2.0
    fig, ax = plt.subplots(figsize=(size + 0.6, size), layout="constrained")
    _draw_matrix(
        ax,
        s,
        title=figure_label(title)
        or figure_text(
            "Scores a token may use (grey: the future, hidden by the mask)",
            "词元可以使用的分数（灰色为未来，被掩码遮住）",
        ),
        row_labels=labels,
        col_labels=labels,
        hidden=_future(len(labels)),
        hidden_text=figure_text("future", "未来"),
    )
    _key_query_labels(ax)
    return fig


@legible
@with_cjk_font
def plot_mask_paths(scaled_scores: torch.Tensor, tokens: Sequence[str] | None = None) -> Figure:
    """The three-step mask (top row) and the one-step ``-inf`` mask (bottom row), side by side.

    Top: softmax of the full rows -> times the lower-triangular ones -> divided by the row sums.
    Bottom: future scores set to ``-inf`` -> softmax. Both rows end in the same matrix.

    Args:
        scaled_scores: (T, T), scores already divided by sqrt(d_k).

    Returns the figure: six axes in two rows of three (the bottom row's middle one is an arrow
    "same result"), titled with the step each shows.
    """
    s = _tensor("scaled_scores", scaled_scores, 2)
    if s.shape[0] != s.shape[1]:
        raise ValueError(f"scaled_scores must be square (T, T), got scaled_scores.shape={s.shape}")
    labels = _labels(tokens, s.shape[0])
    future = _future(len(labels))
    full = np.exp(s - s.max(axis=1, keepdims=True))
    full /= full.sum(axis=1, keepdims=True)
    kept = np.where(future, 0.0, full)
    three_step = kept / kept.sum(axis=1, keepdims=True)
    filled = np.where(future, -np.inf, s)
    one_step = np.exp(filled - filled.max(axis=1, keepdims=True))
    one_step /= one_step.sum(axis=1, keepdims=True)
    side = 0.36 * len(labels) + 0.8
    fig, axes = plt.subplots(2, 3, figsize=(3 * side + 1.2, 2 * side + 1.0), layout="constrained")
    steps = (
        (axes[0, 0], full, figure_text("1. softmax of full rows", "1. 对整行做 softmax"), None),
        (
            axes[0, 1],
            kept,
            figure_text("2. times tril(ones): future -> 0", "2. 乘以 tril(ones)，未来 → 0"),
            None,
        ),
        (axes[0, 2], three_step, figure_text("3. divide by row sums", "3. 除以各行之和"), None),
        (axes[1, 0], filled, "1. masked_fill(future, -inf)", future),
        (
            axes[1, 2],
            one_step,
            figure_text("2. softmax: the same matrix", "2. softmax，得到同一个矩阵"),
            None,
        ),
    )
    for ax, values, title, grey in steps:
        hidden = grey if grey is not None else None
        _draw_matrix(
            ax,
            values,
            title=title,
            row_labels=labels,
            col_labels=labels,
            hidden=hidden,
            hidden_text="-inf",
            vmin=0.0 if grey is None else None,
            vmax=1.0 if grey is None else None,
            fontsize=7,
        )
        ax.set_xlabel(figure_text("key", "键"))
        ax.set_ylabel(figure_text("query", "查询"))
    arrow = axes[1, 1]
    arrow.set_axis_off()
    arrow.annotate(
        "",
        xy=(0.95, 0.5),
        xytext=(0.05, 0.5),
        xycoords="axes fraction",
        arrowprops={"arrowstyle": "->", "linewidth": 2},
    )
    arrow.text(
        0.5, 0.6, "softmax: exp(-inf) = 0", ha="center", fontsize=9, transform=arrow.transAxes
    )
    arrow.set_title(
        figure_text("one step, no renormalising", "一步完成，无需重新归一化"), fontsize=9
    )
    for ax, method in (
        (axes[0, 0], figure_text("three-step method", "三步法")),
        (axes[1, 0], figure_text("one-step -inf method", "一步法（填入 -inf）")),
    ):
        ax.annotate(method, xy=(0, 1.25), xycoords="axes fraction", fontsize=10, weight="bold")
    fig.suptitle(
        figure_text(
            "Two paths to the same causal attention weights",
            "殊途同归：两种方法得到同样的因果注意力权重",
        ),
        fontsize=10,
    )
    return fig
