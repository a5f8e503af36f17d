"""Attention weights as seaborn heatmaps labelled with the tokens.

* ``plot_attention(weights, tokens)`` -- one (T_q, T_k) matrix on one axis.
* ``plot_attention_heads(weights, tokens)`` -- one heatmap per head, shared colour scale,
  titles "Head 1", "Head 2", ...; accepts (h, T, T) or (b, h, T, T) with ``batch_index``.

Both return the matplotlib ``Figure`` and leave showing it to the caller (``plt.show()`` in a
notebook), so tests can inspect the figure and nothing leaks into a notebook's text output.
Labels are plain ASCII on purpose: the default matplotlib font has no CJK glyphs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib.pyplot as plt
import seaborn as sns
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["plot_attention", "plot_attention_heads"]


def _as_matrix_stack(weights: object, batch_index: int) -> torch.Tensor:
    if not isinstance(weights, torch.Tensor):
        raise TypeError(f"weights must be a torch.Tensor, got {type(weights).__name__}")
    if weights.dim() == 4:
        if not 0 <= batch_index < weights.shape[0]:
            raise ValueError(
                f"batch_index must be in [0, {weights.shape[0]}), got batch_index={batch_index}"
            )
        weights = weights[batch_index]
    elif weights.dim() != 3:
        raise ValueError(
            "weights must have shape (num_heads, T_q, T_k) or (batch, num_heads, T_q, T_k), "
            f"got weights.shape={tuple(weights.shape)}"
        )
    return weights.detach().float().cpu()


def _check_tokens(tokens: Sequence[str] | None, t_q: int, t_k: int) -> tuple[list, list]:
    if tokens is None:
        return list(range(1, t_q + 1)), list(range(1, t_k + 1))
    tokens = list(tokens)
    if len(tokens) != t_k or t_q > t_k:
        raise ValueError(
            f"tokens must have one label per key position ({t_k}), got {len(tokens)} tokens"
        )
    return tokens[-t_q:] if t_q < t_k else tokens, tokens


def plot_attention(
    weights: torch.Tensor,
    tokens: Sequence[str] | None = None,
    *,
    query_tokens: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    annot: bool | None = None,
    vmin: float | None = 0.0,
    vmax: float | None = None,
    cmap: str = "Blues",
    cbar: bool = True,
) -> Figure:
    """Heatmap of one attention matrix: rows are queries (who looks), columns keys (looked at).

    Args:
        weights: (T_q, T_k).
        tokens: key labels (and query labels when ``query_tokens`` is None and T_q == T_k).
        query_tokens: row labels, for cross-attention where queries and keys differ.
        annot: write the numbers in the cells (default: only when T <= 8).
    """
    if not isinstance(weights, torch.Tensor):
        raise TypeError(f"weights must be a torch.Tensor, got {type(weights).__name__}")
    if weights.dim() != 2:
        raise ValueError(
            f"weights must have shape (T_q, T_k), got weights.shape={tuple(weights.shape)}"
        )
    t_q, t_k = weights.shape
    if query_tokens is not None:
        if len(query_tokens) != t_q:
            raise ValueError(
                f"query_tokens must have {t_q} labels, got {len(query_tokens)} query_tokens"
            )
        rows, cols = list(query_tokens), list(tokens) if tokens is not None else list(range(t_k))
    else:
        rows, cols = _check_tokens(tokens, t_q, t_k)
    if ax is None:
        fig, ax = plt.subplots(figsize=(0.55 * t_k + 2.4, 0.5 * t_q + 1.6), layout="constrained")
    else:
        fig = ax.figure
    annot = max(t_q, t_k) <= 8 if annot is None else annot
    sns.heatmap(
        weights.detach().float().cpu().numpy(),
        ax=ax,
        annot=annot,
        fmt=".2f",
        cmap=cmap,
        vmin=vmin,
        vmax=vmax,
        cbar=cbar,
        square=True,
        xticklabels=cols,
        yticklabels=rows,
        annot_kws={"fontsize": 8},
    )
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query (attending)")
    ax.tick_params(axis="x", labelrotation=45)
    ax.tick_params(axis="y", labelrotation=0)
    if title:
        ax.set_title(title)
    return fig


def plot_attention_heads(
    weights: torch.Tensor,
    tokens: Sequence[str] | None = None,
    *,
    batch_index: int = 0,
    max_cols: int = 4,
    annot: bool | None = None,
    suptitle: str | None = None,
    cmap: str = "Blues",
) -> Figure:
    """One heatmap per head on a shared colour scale (0 to the largest weight of any head).

    Args:
        weights: (num_heads, T, T) or (batch, num_heads, T, T); ``batch_index`` picks the sequence.
        tokens: labels for the T positions (default 1..T).
        max_cols: heads per row of the grid.
    """
    stack = _as_matrix_stack(weights, batch_index)  # (h, T_q, T_k)
    num_heads, t_q, t_k = stack.shape
    if not isinstance(max_cols, int) or max_cols < 1:
        raise ValueError(f"max_cols must be an int >= 1, got max_cols={max_cols!r}")
    _check_tokens(tokens, t_q, t_k)
    cols = min(num_heads, max_cols)
    rows = math.ceil(num_heads / cols)
    cell = 0.42 * t_k + 1.0
    fig, axes = plt.subplots(
        rows, cols, figsize=(cell * cols + 1.6, cell * rows + 0.6), squeeze=False, layout="none"
    )
    # seaborn draws the whole figure once per heatmap (to decide whether tick labels overlap).
    # Keeping every other axis hidden meanwhile, and laying out only at the end, keeps that
    # linear in the number of heads instead of quadratic (8 heads: ~0.5 s instead of ~7 s).
    for ax in axes.flat:
        ax.set_visible(False)
    vmax = float(stack.max())
    for head, ax in enumerate(axes.flat[:num_heads]):
        ax.set_visible(True)
        plot_attention(
            stack[head],
            tokens,
            ax=ax,
            title=f"Head {head + 1}",
            annot=annot,
            vmin=0.0,
            vmax=vmax,
            cmap=cmap,
            cbar=False,
        )
        ax.set_visible(False)
        if head % cols:  # rows share the query labels of the first column
            ax.set_ylabel("")
            ax.set_yticklabels([])
        if head < num_heads - cols:  # columns share the key labels of the last row
            ax.set_xlabel("")
    for ax in axes.flat[:num_heads]:
        ax.set_visible(True)
    fig.set_layout_engine("constrained")
    fig.colorbar(axes.flat[0].collections[0], ax=axes.ravel().tolist(), shrink=0.8)
    if suptitle:
        fig.suptitle(suptitle)
    return fig
