"""Interactive explorers for the lessons: slide a value, watch the attention heatmap change.

* ``dropout_explorer()`` -- a "dropout" slider (0.0 to 0.9) and a "seed" slider over the book's
  seed-789 causal attention weights: ``nn.Dropout(p)`` in training mode zeroes entries and scales
  the survivors by 1 / (1 - p) (lesson 04).
* ``heads_explorer()`` -- a "heads" slider (1 to 8) that builds a seeded
  ``MultiHeadAttentionWrapper`` on the book's batch and draws one heatmap per head (lesson 05).

Both draw with ``plot_attention_grid`` instead of ``plot_attention_heads``, whose seaborn
heatmaps are too slow to re-draw on every slider move.

Both return an ``ipywidgets.interactive`` with the picture in an ``Image`` widget under the
controls (``w.image``), like ``mh.attention_explorer``: a re-draw replaces the picture in place and
the callback prints and displays nothing. The callback returns the plotted tensor, so
``w.kwargs_widgets[i].value = ...`` followed by ``w.result`` is testable without a browser. The
callbacks seed a private copy of the RNG state (``torch.random.fork_rng``), so moving a slider
never changes the random numbers the rest of a lesson draws.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from ipywidgets import FloatSlider, Image, IntSlider, Layout, Widget, interactive
from matplotlib.figure import Figure
from torch import nn

from .data import load_journey, reference
from .multihead import MultiHeadAttentionWrapper
from .plotting import figure_png, plot_attention_grid
from .validation import check_dropout, check_positive_int

__all__ = [
    "dropout_explorer",
    "dropout_weights",
    "heads_explorer",
    "interactive_with",
    "picture",
    "show_figure",
    "wrapper_head_weights",
]


def picture() -> Image:
    """An empty PNG ``Image`` widget for a widget callback's figure (see ``show_figure``)."""
    return Image(format="png", layout=Layout(width="auto", align_self="flex-start"))


def show_figure(image: Image, fig: Figure) -> None:
    """Render ``fig`` into ``image`` (replacing its picture in place), close it, show ``image``."""
    image.value = figure_png(fig)
    image.layout.display = None


def interactive_with(
    callback: Callable,
    controls: dict[str, Widget],
    *below: Widget,
    options: dict | None = None,
) -> interactive:
    """``interactive(callback, **controls)`` with the widgets ``below`` shown under the controls.

    The callback is expected to update ``below`` (an ``Image``, an ``HTML`` message) instead of
    printing or plotting, so nothing is captured as output (in JupyterLab or under nbval) and
    there is nothing to clear. ``options`` are interactive's (e.g. ``{"manual": True}``); the
    controls are also reachable by name as ``w.controls["name"]``.
    """
    w = interactive(callback, options or {}, clear_output=False, **controls)
    w.children = (*w.children, *below)
    w.controls = controls
    return w


def dropout_weights(weights: torch.Tensor, p: float, seed: int = 123) -> torch.Tensor:
    """``nn.Dropout(p)`` in training mode applied to ``weights`` after ``torch.manual_seed(seed)``.

    Surviving entries are multiplied by 1 / (1 - p). The global RNG state is restored afterwards.
    With the book's seed 123 and p = 0.5, a 6x6 matrix loses exactly the positions the book's
    ``dropout(torch.ones(6, 6))`` example loses.
    """
    if not isinstance(weights, torch.Tensor):
        raise TypeError(f"weights must be a torch.Tensor, got {type(weights).__name__}")
    p = check_dropout(p, name="p")
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
        seed: the slider's starting seed.

    Returns:
        ``ipywidgets.interactive``; ``.result`` is the dropped (T, T) matrix last drawn.
    """
    if weights is None:
        weights = reference("seed789_masked_renormalized")  # (6, 6)
        if tokens is None:
            tokens = load_journey().words
    if not isinstance(weights, torch.Tensor) or weights.dim() != 2:
        shape = tuple(weights.shape) if isinstance(weights, torch.Tensor) else type(weights)
        raise ValueError(f"weights must be a (T_q, T_k) torch.Tensor, got {shape}")
    weights = weights.detach().float().cpu()
    if tokens is not None and len(tokens) != weights.shape[1]:
        raise ValueError(
            f"tokens must have one label per key position ({weights.shape[1]}), got {len(tokens)}"
        )
    nonzero = int((weights != 0).sum())
    image = picture()

    def show_dropout(dropout: float = 0.5, seed: int = seed) -> torch.Tensor:
        dropped = dropout_weights(weights, dropout, seed)  # (T, T)
        kept = int((dropped != 0).sum())
        title = (
            f"dropout p={dropout:.1f}: {kept} of {nonzero} weights kept, "
            f"scaled x{1 / (1 - dropout):.2f}"
        )
        show_figure(image, plot_attention_grid(dropped, tokens, title=title, annot=True))
        return dropped

    controls = {
        "dropout": FloatSlider(
            value=0.5, min=0.0, max=0.9, step=0.1, description="dropout", readout_format=".1f"
        ),
        "seed": IntSlider(value=seed, min=0, max=999, step=1, description="seed"),
    }
    w = interactive_with(show_dropout, controls, image)
    w.image = image
    return w


def wrapper_head_weights(
    x: torch.Tensor, num_heads: int, *, d_out: int = 2, seed: int = 123, batch_index: int = 0
) -> torch.Tensor:
    """Attention weights (num_heads, T, T) of a seeded ``MultiHeadAttentionWrapper`` on ``x``.

    ``torch.manual_seed(seed)`` then ``MultiHeadAttentionWrapper(d_in, d_out, T, 0.0, num_heads)``,
    as in the book; the weights of sequence ``batch_index`` of ``x`` (b, T, d_in), per head.
    Heads are created one after another from the same seed, so head 1 is the same for any
    ``num_heads``. The global RNG state is restored afterwards.
    """
    check_positive_int("num_heads", num_heads)
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"x must be a (b, T, d_in) torch.Tensor, got {shape}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        wrapper = MultiHeadAttentionWrapper(x.shape[-1], d_out, x.shape[1], 0.0, num_heads)
    wrapper.eval()
    with torch.no_grad():
        per_head = [head(x, return_weights=True)[1][batch_index] for head in wrapper.heads]
    return torch.stack(per_head)  # (h, T, T)


def heads_explorer(
    tokens: Sequence[str] | None = None,
    inputs: torch.Tensor | None = None,
    *,
    d_out: int = 2,
    seed: int = 123,
    max_heads: int = 8,
) -> interactive:
    """A "heads" slider (1 to ``max_heads``): one causal attention heatmap per head.

    Args:
        tokens: T labels (default: the book's words when ``inputs`` is None, else 1..T).
        inputs: (T, d_in) or (b, T, d_in); default the book's batch (2, 6, 3). Sequence 0 is drawn.
        d_out: width of each head, as in ``MultiHeadAttentionWrapper`` (the book uses 2).
        seed: ``torch.manual_seed`` before the wrapper is built (the book uses 123).

    Returns:
        ``ipywidgets.interactive``; ``.result`` is the (heads, T, T) weights last drawn.
    """
    check_positive_int("max_heads", max_heads)
    if inputs is None:
        journey = load_journey()
        inputs = journey.batch  # (2, 6, 3)
        if tokens is None:
            tokens = journey.words
    if not isinstance(inputs, torch.Tensor):
        raise TypeError(f"inputs must be a torch.Tensor, got {type(inputs).__name__}")
    if inputs.dim() == 2:
        inputs = inputs.unsqueeze(0)  # (1, T, d_in)
    x = inputs.detach().float()
    image = picture()

    def show_heads(heads: int = 2) -> torch.Tensor:
        weights = wrapper_head_weights(x, heads, d_out=d_out, seed=seed)  # (h, T, T)
        title = f"{heads} head(s), d_out={d_out} each, seed {seed}"
        show_figure(image, plot_attention_grid(weights, tokens, title=title, annot=heads <= 2))
        return weights

    # Check everything now: ipywidgets would swallow an error raised inside the callback.
    wrapper_head_weights(x, 1, d_out=d_out, seed=seed)
    if tokens is not None and len(tokens) != x.shape[1]:
        raise ValueError(
            f"tokens must have one label per position ({x.shape[1]}), got {len(tokens)}"
        )
    controls = {
        "heads": IntSlider(
            value=min(2, max_heads), min=1, max=max_heads, step=1, description="heads"
        )
    }
    w = interactive_with(show_heads, controls, image)
    w.image = image
    return w
