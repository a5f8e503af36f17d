"""Attention weights as heatmaps labelled with the tokens.

* ``plot_attention(weights, tokens)`` -- one (T_q, T_k) matrix on one axis (a seaborn heatmap).
* ``plot_attention_heads(weights, tokens)`` -- one seaborn heatmap per head, shared colour scale,
  titles "Head 1", "Head 2", ...; accepts (h, T, T) or (b, h, T, T) with ``batch_index``.
* ``plot_attention_grid(weights, tokens)`` -- the same grid of heads (or one matrix), drawn fast
  enough to re-draw on every slider move: the widgets' and big grids' heatmap.
* ``figure_png(fig)`` -- render a figure to PNG bytes and close it (for ``ipywidgets.Image``).

All return the matplotlib ``Figure`` and leave showing it to the caller (``plt.show()`` in a
notebook), so tests can inspect the figure and nothing leaks into a notebook's text output.
Axis labels and head titles follow the lesson language (``fonts.figure_text``); a ``title`` may be
a ``str`` or an ``i18n.Text``. Chinese text is drawn with the course's CJK font (``fonts``); on a
machine without it the figure stays English and Chinese tokens become their positions 1..T, with
no "Glyph missing" warning.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import cast

import matplotlib
import matplotlib.pyplot as plt
import seaborn as sns
import torch
from matplotlib.axes import Axes
from matplotlib.colors import Colormap
from matplotlib.figure import Figure

from ..i18n import Text
from ..validation import as_float, as_int, check_flag, check_positive_int
from .fonts import figure_label, figure_text, token_labels, with_cjk_font
from .legibility import MAX_WIDTH_PX, MIN_WIDTH_IN, TICK_PT, legible

__all__ = ["figure_png", "plot_attention", "plot_attention_grid", "plot_attention_heads"]


# Above this many tokens a heatmap stops growing with T (lesson 12's poems have ~50): at the
# lessons' 80 dpi it stays about 1,000 px wide, so a learner sees it whole and can read its labels.
_LONG = 24


def _as_matrix_stack(
    weights: object, batch_index: int, *, allow_matrix: bool = False
) -> torch.Tensor:
    """(h, T_q, T_k) from (h, T_q, T_k), (b, h, T_q, T_k) and, if ``allow_matrix``, (T_q, T_k)."""
    if not isinstance(weights, torch.Tensor):
        raise TypeError(f"weights must be a torch.Tensor, got {type(weights).__name__}")
    if allow_matrix and weights.dim() == 2:
        weights = weights.unsqueeze(0)
    elif weights.dim() == 4:
        batch_index = as_int("batch_index", batch_index)
        if not 0 <= batch_index < weights.shape[0]:
            raise ValueError(
                f"batch_index must be in [0, {weights.shape[0]}), got batch_index={batch_index}"
            )
        weights = weights[batch_index]
    elif weights.dim() != 3:
        shapes = "(T_q, T_k), (num_heads, T_q, T_k)" if allow_matrix else "(num_heads, T_q, T_k)"
        raise ValueError(
            f"weights must have shape {shapes} or (batch, num_heads, T_q, T_k), "
            f"got weights.shape={tuple(weights.shape)}"
        )
    stack = _host_copy(weights)  # (h, T_q, T_k)
    _check_values(stack)
    return stack


def _host_copy(weights: torch.Tensor) -> torch.Tensor:
    """``weights`` as float32 on the CPU, for drawing; a meta tensor (no values) raises."""
    if weights.is_meta:
        raise ValueError(
            f"weights is a meta tensor (a shape without values, weights.shape="
            f"{tuple(weights.shape)}); only tensors with values can be drawn"
        )
    return weights.detach().float().cpu()


def _check_style(cmap: object, annot: object, *, allow_auto: bool = False) -> None:
    """Raise naming ``cmap`` or ``annot`` before matplotlib sees them."""
    if not (allow_auto and annot is None):
        check_flag("annot", annot)
    if isinstance(cmap, str):
        if cmap not in matplotlib.colormaps:
            raise ValueError(
                f"cmap must be a matplotlib colormap name (e.g. 'Blues'), got cmap={cmap!r}"
            )
    elif not isinstance(cmap, Colormap):
        raise TypeError(
            f"cmap must be a colormap name or a matplotlib Colormap, got {type(cmap).__name__}"
        )


def _check_values(weights: torch.Tensor, *, nonnegative: bool = True) -> None:
    """Raise ``ValueError`` before matplotlib sees an empty, non-finite or negative matrix."""
    if weights.numel() == 0:
        raise ValueError(
            "weights must hold at least one head and one query and key, "
            f"got weights.shape={tuple(weights.shape)}"
        )
    if not torch.isfinite(weights).all():
        raise ValueError("weights contain NaN or inf; only finite weights can be drawn")
    if nonnegative and float(weights.min()) < 0:
        raise ValueError(
            "weights must be non-negative (attention weights are probabilities), got a minimum "
            f"of {float(weights.min()):.4g}; draw scores with plot_attention(..., vmin=None)"
        )


def _grid_shape(num_panels: int, max_cols: object) -> tuple[int, int]:
    """(rows, cols) of a grid of ``num_panels`` with at most ``max_cols`` per row."""
    max_cols = check_positive_int("max_cols", max_cols)
    cols = min(num_panels, max_cols)
    return math.ceil(num_panels / cols), cols


def _check_tokens(tokens: Sequence[str] | None, t_q: int, t_k: int) -> tuple[list, list]:
    if tokens is None:
        return list(range(1, t_q + 1)), list(range(1, t_k + 1))
    tokens = _labels("tokens", tokens)
    if len(tokens) != t_k or t_q > t_k:
        raise ValueError(
            f"tokens must have one label per key position ({t_k}), got {len(tokens)} tokens"
        )
    tokens = token_labels(tokens)  # positions where a token cannot be drawn (no CJK font)
    return tokens[-t_q:] if t_q < t_k else tokens, tokens


def check_labels(name: str, labels: object) -> None:
    """Raise ``TypeError`` unless ``labels`` is None or a sequence of labels (not a string)."""
    if labels is not None:
        _labels(name, labels)


def _labels(name: str, labels: object) -> list:
    """``labels`` as a list; a single string (``"Your journey"``) is a mistake, not 12 labels."""
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence):
        raise TypeError(
            f"{name} must be a sequence of labels (e.g. a list of words), got "
            f"{type(labels).__name__}; split a sentence with .split()"
        )
    return list(labels)


@legible
@with_cjk_font
def plot_attention(
    weights: torch.Tensor,
    tokens: Sequence[str] | None = None,
    *,
    query_tokens: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | Text | None = None,
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
    values = _host_copy(weights)  # (T_q, T_k)
    _check_values(values, nonnegative=False)
    _check_style(cmap, annot, allow_auto=True)
    check_flag("cbar", cbar)
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    vmin = None if vmin is None else as_float("vmin", vmin)
    vmax = None if vmax is None else as_float("vmax", vmax)
    for name, bound in (("vmin", vmin), ("vmax", vmax)):
        if bound is not None and not math.isfinite(bound):
            raise ValueError(f"{name} must be a finite number or None, got {name}={bound}")
    low = float(values.min()) if vmin is None else vmin
    high = float(values.max()) if vmax is None else vmax
    if high < low:
        raise ValueError(
            f"nothing to colour between vmin={vmin} and vmax={vmax}: the weights lie in "
            f"[{float(values.min()):.4g}, {float(values.max()):.4g}]; attention weights are "
            "non-negative (to draw scores, pass vmin=None)"
        )
    if query_tokens is not None:
        rows = _labels("query_tokens", query_tokens)
        if len(rows) != t_q:
            raise ValueError(f"query_tokens must have {t_q} labels, got {len(rows)} query_tokens")
        cols = list(range(1, t_k + 1)) if tokens is None else _labels("tokens", tokens)
        if len(cols) != t_k:
            raise ValueError(
                f"tokens must have one label per key position ({t_k}), got {len(cols)} tokens"
            )
        rows = token_labels(rows)
        cols = cols if tokens is None else token_labels(cols)
    else:
        rows, cols = _check_tokens(tokens, t_q, t_k)
    if ax is None:
        width, height = 0.55 * t_k + 2.4, 0.5 * t_q + 1.6  # inches: a cell per token pair
        if max(t_q, t_k) > _LONG:  # a long text: a column-sized figure, not one 2,500 px wide
            side = MAX_WIDTH_PX / plt.rcParams["figure.dpi"] - 0.3  # JupyterLab's column
            width, height = min(width, side), min(height, side - 0.6)
        fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    else:
        fig = cast(Figure, ax.figure)  # a SubFigure draws the same way
    annot = max(t_q, t_k) <= 8 if annot is None else annot
    sns.heatmap(
        values.numpy(),
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
    ax.set_xlabel(figure_text("key (attended to)", "键（被关注方）"))
    ax.set_ylabel(figure_text("query (attending)", "查询（关注方）"))
    short = all(len(str(label)) <= 2 for label in cols)  # characters, "\\n": upright
    ax.tick_params(axis="x", labelrotation=0 if short else 45)
    ax.tick_params(axis="y", labelrotation=0)
    if title:
        ax.set_title(figure_label(title))
    return fig


@legible
@with_cjk_font
def plot_attention_heads(
    weights: torch.Tensor,
    tokens: Sequence[str] | None = None,
    *,
    batch_index: int = 0,
    max_cols: int = 4,
    annot: bool | None = None,
    suptitle: str | Text | None = None,
    cmap: str = "Blues",
) -> Figure:
    """One heatmap per head on a shared colour scale (0 to the largest weight of any head).

    Real seaborn heatmaps (tick labels, numbers in the cells up to T = 8): use it for figures that
    are drawn once. It takes about half a second for 8 heads; a widget that re-draws on every
    slider move wants ``plot_attention_grid``.

    Args:
        weights: (num_heads, T, T) or (batch, num_heads, T, T); ``batch_index`` picks the sequence.
        tokens: labels for the T positions (default 1..T).
        max_cols: heads per row of the grid.
    """
    stack = _as_matrix_stack(weights, batch_index)  # (h, T_q, T_k)
    _check_style(cmap, annot, allow_auto=True)
    num_heads, t_q, t_k = stack.shape
    rows, cols = _grid_shape(num_heads, max_cols)
    _check_tokens(tokens, t_q, t_k)
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
            title=figure_text(f"Head {head + 1}", f"头 {head + 1}"),
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
        fig.suptitle(figure_label(suptitle))
    return fig


@with_cjk_font
def plot_attention_grid(
    weights: torch.Tensor,
    tokens: Sequence[str] | None = None,
    *,
    batch_index: int = 0,
    title: str | Text | None = None,
    max_cols: int = 4,
    annot: bool = False,
    cmap: str = "Blues",
) -> Figure:
    """A fast heatmap grid: one panel per head, or one matrix, in a single axes.

    What ``plot_attention_heads`` shows (one "Head i" panel per head, one colour scale from 0 to
    the largest weight, keys on x, queries on y), drawn several times faster: every panel is an
    ``imshow`` into one axes with plain text labels and a fixed layout, where seaborn draws the
    whole figure once per heatmap and every tick label is a costly object. Use it where a figure is
    re-drawn on every slider move (the lessons' widgets) or for big grids; use
    ``plot_attention_heads`` / ``plot_attention`` for static figures (real seaborn heatmaps).

    Args:
        weights: (T_q, T_k) -- one panel without a "Head" title --, (num_heads, T_q, T_k), or
            (batch, num_heads, T_q, T_k) with ``batch_index`` picking the sequence.
        tokens: key labels (default 1..T_k); queries get the last T_q of them.
        title: the figure's title.
        max_cols: panels per row of the grid.
        annot: write the non-zero weights in their cells (".2f"; cells are drawn larger).

    Returns the figure: the grid's axes, then the colour bar's.
    """
    single = isinstance(weights, torch.Tensor) and weights.dim() == 2
    stack = _as_matrix_stack(weights, batch_index, allow_matrix=True)  # (h, T_q, T_k)
    _check_style(cmap, annot)
    num_heads, t_q, t_k = stack.shape
    query_labels, key_labels = _check_tokens(tokens, t_q, t_k)
    query_labels, key_labels = [str(t) for t in query_labels], [str(t) for t in key_labels]
    rows, cols = _grid_shape(num_heads, max_cols)

    # Sizes in inches; the axes spans the grid exactly, so one data unit is one cell. Token
    # labels are TICK_PT points; a grid too small for MIN_WIDTH_IN gets larger cells.
    label = TICK_PT / 72 * 0.6 * max(len(t) for t in key_labels + query_labels)  # longest label
    head_title = 0.0 if single else 0.32
    left, right = 0.5 + label, 1.0
    bottom, top = 0.5 + label, head_title + (0.45 if title else 0.1)
    cell = max(0.36 if annot else 0.24, TICK_PT / 72 * 1.3)  # room for a label per row
    # At most MAX_WIDTH_PX wide as saved (JupyterLab's column): cells down to 5/6 of their size,
    # then fewer panels per row; one per row, cells down to one token label per row.
    widest = MAX_WIDTH_PX / plt.rcParams["figure.dpi"] - left - right  # inches for the panels
    balanced = {math.ceil(num_heads / r) for r in range(1, num_heads + 1)}  # no ragged last row
    for fewer in sorted({cols} | balanced, reverse=True):
        fits = (widest - 0.2 * (fewer - 1)) / (fewer * t_k)  # the largest cell that fits
        if fewer <= cols and fits >= cell * 5 / 6:
            rows, cols, cell = math.ceil(num_heads / fewer), fewer, min(cell, fits)
            break
    else:
        rows, cols = num_heads, 1
        cell = max(min(cell, widest / t_k), TICK_PT / 72 * 1.3)
    # (0.4 in more: the margins a tight crop, as in a notebook, takes off)
    cell = max(cell, (MIN_WIDTH_IN + 0.4 - left - right - 0.2 * (cols - 1)) / (cols * t_k))
    col_gap = 0.2 / cell
    grid_w = cols * t_k + (cols - 1) * col_gap
    # Key labels go under the bottom panel of each column: inside the grid if the last row is short.
    row_gap = (head_title + 0.1 + (label + 0.15 if num_heads % cols else 0.0)) / cell
    grid_h = rows * t_q + (rows - 1) * row_gap
    fig_w, fig_h = left + grid_w * cell + right, bottom + grid_h * cell + top
    fig = plt.figure(figsize=(fig_w, fig_h))
    ax = fig.add_axes((left / fig_w, bottom / fig_h, grid_w * cell / fig_w, grid_h * cell / fig_h))
    ax.set_axis_off()
    values = stack.numpy()
    vmax = float(values.max()) or 1.0  # shared colour scale (all zeros: 0..1)
    pad = 0.1 / cell
    image = None
    for head in range(num_heads):
        row, col = divmod(head, cols)
        x0, y0 = col * (t_k + col_gap), row * (t_q + row_gap)
        extent = (x0 - 0.5, x0 + t_k - 0.5, y0 + t_q - 0.5, y0 - 0.5)
        image = ax.imshow(
            values[head],
            cmap=cmap,
            vmin=0.0,
            vmax=vmax,
            interpolation="nearest",
            extent=extent,
            aspect="auto",
        )
        if not single:
            ax.text(
                x0 + (t_k - 1) / 2,
                y0 - 0.5 - pad,
                figure_text(f"Head {head + 1}", f"头 {head + 1}"),
                ha="center",
                va="bottom",
                fontsize=TICK_PT + 1,
            )
        if col == 0:  # query labels left of the first column
            for i, token in enumerate(query_labels):
                ax.text(x0 - 0.5 - pad, y0 + i, token, ha="right", va="center", fontsize=TICK_PT)
        if head + cols >= num_heads:  # key labels under the bottom panel of each column
            for j, token in enumerate(key_labels):
                ax.text(
                    x0 + j,
                    y0 + t_q - 0.5 + pad,
                    token,
                    ha="center",
                    va="top",
                    rotation=90,
                    fontsize=TICK_PT,
                )
        if annot:
            for i, j in torch.nonzero(stack[head]).tolist():
                value = float(values[head, i, j])
                ax.text(
                    x0 + j,
                    y0 + i,
                    f"{value:.2f}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if value > 0.6 * vmax else "black",
                )
    ax.set_xlim(-0.5, grid_w - 0.5)
    ax.set_ylim(grid_h - 0.5, -0.5)
    middle_x, middle_y = (left + grid_w * cell / 2) / fig_w, (bottom + grid_h * cell / 2) / fig_h
    key_label = figure_text("key (attended to)", "键（被关注方）")
    query_label = figure_text("query (attending)", "查询（关注方）")
    fig.text(middle_x, 0.08 / fig_h, key_label, ha="center", va="bottom", fontsize=TICK_PT + 1)
    fig.text(
        0.08 / fig_w,
        middle_y,
        query_label,
        ha="left",
        va="center",
        rotation=90,
        fontsize=TICK_PT + 1,
    )
    bar = fig.add_axes(
        ((fig_w - right + 0.2) / fig_w, bottom / fig_h, 0.12 / fig_w, grid_h * cell / fig_h)
    )
    assert image is not None  # num_heads >= 1 was checked
    fig.colorbar(image, cax=bar)
    bar.tick_params(labelsize=TICK_PT)
    if title:
        fig.suptitle(figure_label(title), y=1 - 0.1 / fig_h, va="top", fontsize=TICK_PT + 2)
    return fig


def figure_png(fig: Figure) -> bytes:
    """Render ``fig`` to PNG bytes (100 dpi) and close it, so nothing stays open in pyplot.

    For widgets that show their picture in an ``ipywidgets.Image``: replacing its ``value``
    swaps the picture in place, and nothing is printed or captured as cell output.
    """
    try:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=100)
        return buffer.getvalue()
    finally:
        plt.close(fig)
