"""Figures of lesson 11: a padded batch, and how the padding mask joins the causal mask.

* ``padded_batch(tokens, key_padding_mask)`` -- the batch as a grid: one row per sequence, one
  column per position, the words in the real cells and ``<pad>`` in the grey ones;
* ``padding_masks(key_padding_mask, tokens)`` -- for one sequence, three (T, T) panels: the causal
  mask, the key padding mask spread over every query row, and their union (what ``forward``
  hides); rows with no visible key at all are flagged.

Both take the lesson's own tensors, so the picture is the mask the code uses. Titles and labels
follow the lesson language (``fonts.figure_text``); tokens no font can draw become positions.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from ...i18n import Text
from ...validation import check_flag
from ..fonts import figure_label, figure_text, token_labels, with_cjk_font
from ..legibility import legible

__all__ = ["PAD", "padded_batch", "padding_masks"]

PAD = "<pad>"
_REAL, _HIDDEN = "#cfe2f3", "#9e9e9e"


def _check_mask(key_padding_mask: object, ndim: int) -> torch.Tensor:
    if not isinstance(key_padding_mask, torch.Tensor) or key_padding_mask.dtype != torch.bool:
        raise TypeError(
            "key_padding_mask must be a bool torch.Tensor (True at padding), got "
            f"{getattr(key_padding_mask, 'dtype', type(key_padding_mask).__name__)}"
        )
    if key_padding_mask.dim() != ndim or key_padding_mask.numel() == 0:
        shape = "(b, T)" if ndim == 2 else "(T,)"
        raise ValueError(
            f"key_padding_mask must have shape {shape}, got {tuple(key_padding_mask.shape)}"
        )
    return key_padding_mask.detach().cpu()


@legible
@with_cjk_font
def padded_batch(
    tokens: Sequence[Sequence[str]],
    key_padding_mask: torch.Tensor,
    title: str | Text | None = None,
) -> Figure:
    """Draw a padded batch: row i shows ``tokens[i]`` in its real cells and ``<pad>`` elsewhere.

    ``tokens[i]`` lists the real tokens of sequence i in order; ``key_padding_mask`` (b, T) is
    True at padding, so row i must have exactly ``len(tokens[i])`` False cells.
    """
    mask = _check_mask(key_padding_mask, 2)
    batch, num_tokens = mask.shape
    if len(tokens) != batch:
        raise ValueError(f"tokens has {len(tokens)} sequences but key_padding_mask has {batch}")
    fig, ax = plt.subplots(figsize=(1.1 * num_tokens + 1.5, 0.6 * batch + 1.2))
    ax.imshow(mask.numpy(), cmap=ListedColormap([_REAL, _HIDDEN]), vmin=0, vmax=1, aspect="auto")
    for row, words in enumerate(tokens):
        real = (~mask[row]).nonzero().flatten().tolist()
        if len(real) != len(words):
            raise ValueError(
                f"sequence {row} has {len(words)} tokens but {len(real)} real (False) positions "
                "in key_padding_mask"
            )
        labels = dict(zip(real, token_labels(words), strict=True))
        for col in range(num_tokens):
            text = labels.get(col, PAD)
            ax.text(col, row, text, ha="center", va="center", fontsize=9)
    ax.set_xticks(range(num_tokens))
    ax.set_yticks(range(batch))
    ax.set_xlabel(figure_text("position", "位置"))
    ax.set_ylabel(figure_text("sequence", "序列"))
    ax.set_xticks(np.arange(-0.5, num_tokens), minor=True)
    ax.set_yticks(np.arange(-0.5, batch), minor=True)
    ax.grid(which="minor", color="white", linewidth=2)
    ax.tick_params(which="minor", length=0)
    ax.set_title(
        figure_label(title)
        or figure_text(
            f"padded batch ({batch}, {num_tokens}): grey = padding",
            f"填充后的批次 ({batch}, {num_tokens})，灰色为填充",
        )
    )
    fig.tight_layout()
    return fig


@legible
@with_cjk_font
def padding_masks(
    key_padding_mask: torch.Tensor, tokens: Sequence[str] | None = None, causal: bool = True
) -> Figure:
    """Three (T, T) panels for one sequence: causal mask, padding mask, and what gets hidden.

    ``key_padding_mask`` (T,) is one row of the batch's mask; ``tokens`` (T labels, pads
    included) label the axes. Dark cells are hidden (True). A query row that hides every key is
    marked "no key" on the right of the last panel. ``causal=False`` leaves the first panel empty.
    """
    causal = check_flag("causal", causal)
    mask = _check_mask(key_padding_mask, 1)
    num_tokens = mask.shape[0]
    labels = token_labels(tokens) if tokens is not None else [str(i) for i in range(num_tokens)]
    if len(labels) != num_tokens:
        raise ValueError(f"tokens has {len(labels)} labels but key_padding_mask has {num_tokens}")
    future = torch.ones(num_tokens, num_tokens, dtype=torch.bool).triu(1)
    if not causal:
        future = torch.zeros_like(future)
    padding = mask[None, :].expand(num_tokens, -1)  # (T_q, T_k): the same columns on every row
    hidden = future | padding
    panels = [
        (
            figure_text("causal mask", "因果掩码")
            if causal
            else figure_text("no causal mask", "无因果掩码"),
            future,
        ),
        (figure_text("key padding mask", "键填充掩码"), padding),
        (figure_text("hidden = causal | padding", "遮住 = 因果 | 填充"), hidden),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(3.6 * 3 + 1, 3.8))
    cmap = ListedColormap([_REAL, "#37474f"])
    for ax, (name, matrix) in zip(axes, panels, strict=True):
        ax.imshow(matrix.numpy(), cmap=cmap, vmin=0, vmax=1)
        ax.set_xticks(range(num_tokens), labels, rotation=60, ha="right", fontsize=9)
        ax.set_yticks(range(num_tokens), labels, fontsize=9)
        ax.set_xlabel(figure_text("key", "键"))
        ax.set_ylabel(figure_text("query", "查询"))
        ax.set_title(name)
    no_key = figure_text("no key", "无可见的键")
    for row in hidden.all(dim=-1).nonzero().flatten().tolist():
        axes[2].text(num_tokens - 0.4, row, no_key, color="#c62828", va="center", fontsize=9)
    fig.suptitle(figure_text("dark = hidden (True)", "深色 = 遮住（True）"))
    fig.tight_layout()
    return fig
