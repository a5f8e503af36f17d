"""Lesson 04's dropout explorer: a "dropout" and a "seed" slider over one attention matrix.

``nn.Dropout(p)`` in training mode zeroes entries and scales the survivors by 1 / (1 - p). The
callback seeds a private copy of the RNG state (``torch.random.fork_rng``), so moving a slider
never changes the random numbers the rest of a lesson draws.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from ipywidgets import FloatSlider, IntSlider, interactive
from torch import nn

from ...data import load_journey, reference
from ...i18n import say
from ...validation import check_dropout, check_int_in_range, check_seed
from ..fonts import figure_text
from ..plotting import check_labels, plot_attention_grid
from ..widgets import drawable_labels, interactive_with, picture, show_figure

__all__ = ["dropout_explorer", "dropout_weights"]


def dropout_weights(weights: torch.Tensor, p: float, seed: int = 123) -> torch.Tensor:
    """``nn.Dropout(p)`` in training mode applied to ``weights`` after ``torch.manual_seed(seed)``.

    Surviving entries are multiplied by 1 / (1 - p). The global RNG state is restored afterwards.
    With the book's seed 123 and p = 0.5, a 6x6 matrix loses exactly the positions the book's
    ``dropout(torch.ones(6, 6))`` example loses.
    """
    if not isinstance(weights, torch.Tensor):
        raise TypeError(f"weights must be a torch.Tensor, got {type(weights).__name__}")
    p = check_dropout(p, name="p")
    seed = check_seed("seed", seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return nn.Dropout(p).train()(weights.detach())


def dropout_explorer(
    weights: torch.Tensor | None = None,
    tokens: Sequence[str] | None = None,
    seed: int = 123,
) -> interactive:
    """A "dropout" slider (p from 0.0 to 0.9) and a "seed" slider over one attention matrix.

    Args:
        weights: (T, T) attention weights; default: the book's seed-789 causal weights
            (``reference("seed789_masked_renormalized")``) labelled with the book's six words.
        tokens: T labels for the axes (default: the book's words for the default weights,
            else 1..T).
        seed: the slider's starting seed, in [0, 999] (the slider's range).

    Returns:
        ``ipywidgets.interactive``; ``.result`` is the dropped (T, T) matrix last drawn.
    """
    seed = check_int_in_range("seed", seed, 0, 999)
    if weights is None:
        weights = reference("seed789_masked_renormalized")  # (6, 6)
        if tokens is None:
            tokens = load_journey().words
    if not isinstance(weights, torch.Tensor) or weights.dim() != 2:
        shape = tuple(weights.shape) if isinstance(weights, torch.Tensor) else type(weights)
        raise ValueError(f"weights must be a (T_q, T_k) torch.Tensor, got {shape}")
    weights = weights.detach().float().cpu()
    if weights.numel() == 0 or not torch.isfinite(weights).all() or (weights < 0).any():
        raise ValueError(
            "weights must be a non-empty matrix of finite, non-negative attention weights, "
            f"got weights.shape={tuple(weights.shape)}"
        )
    check_labels("tokens", tokens)
    if tokens is not None and len(tokens) != weights.shape[1]:
        raise ValueError(
            f"tokens must have one label per key position ({weights.shape[1]}), got {len(tokens)}"
        )
    nonzero = int((weights != 0).sum())
    image = picture()

    def show_dropout(dropout: float = 0.5, seed: int = seed) -> torch.Tensor:
        labels = drawable_labels(tokens)  # first: it readies the CJK font
        dropped = dropout_weights(weights, dropout, seed)  # (T, T)
        kept = int((dropped != 0).sum())
        scaled = 1 / (1 - dropout)
        title = figure_text(
            f"dropout p={dropout:.1f}: {kept} of {nonzero} weights kept, scaled x{scaled:.2f}",
            f"dropout p={dropout:.1f}：{nonzero} 个权重保留了 {kept} 个，并乘以 {scaled:.2f}",
        )
        show_figure(image, plot_attention_grid(dropped, labels, title=title, annot=True))
        return dropped

    controls = {
        "dropout": FloatSlider(
            value=0.5,
            min=0.0,
            max=0.9,
            step=0.1,
            description=say("dropout", "丢弃率"),
            readout_format=".1f",
        ),
        "seed": IntSlider(value=seed, min=0, max=999, step=1, description=say("seed", "随机种子")),
    }
    w = interactive_with(show_dropout, controls, image)
    w.image = image
    return w
