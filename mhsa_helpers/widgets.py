"""Interactive explorers for the lessons: slide a value, watch the attention heatmap change.

* ``dropout_explorer()`` -- a "dropout" slider (0.0 to 0.9) and a "seed" slider over the book's
  seed-789 causal attention weights: ``nn.Dropout(p)`` in training mode zeroes entries and scales
  the survivors by 1 / (1 - p) (lesson 04).
* ``heads_explorer()`` -- a "heads" slider (1 to 8) that builds a seeded
  ``MultiHeadAttentionWrapper`` on the book's batch and draws one heatmap per head (lesson 05).

Both draw with ``heatmap_strip`` -- all heads in one image -- instead of ``plot_attention_heads``,
whose seaborn heatmaps take seconds to re-draw; a slider needs well under half a second.

Both return an ``ipywidgets.interactive``. Each re-draw shows its figure with ``plt.show()`` (in
JupyterLab it lands in the widget's output area as an image) and returns the plotted tensor, so
``w.kwargs_widgets[i].value = ...`` followed by ``w.result`` is testable without a browser. The
callbacks seed a private copy of the RNG state (``torch.random.fork_rng``), so moving a slider
never changes the random numbers the rest of a lesson draws.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from ipywidgets import FloatSlider, IntSlider, interactive
from matplotlib.figure import Figure
from torch import nn

from .data import load_journey, reference
from .multihead import MultiHeadAttentionWrapper
from .validation import check_dropout, check_positive_int

__all__ = [
    "dropout_explorer",
    "dropout_weights",
    "heads_explorer",
    "heatmap_strip",
    "wrapper_head_weights",
]


def _show(fig: Figure) -> None:
    """Show ``fig`` (inline backend: as an image in the current output) and release it.

    Under a non-interactive backend such as Agg (tests, scripts) ``plt.show()`` has nothing to do;
    its "non-interactive" warning is silenced so tests stay clean.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*non-interactive.*", category=UserWarning)
        plt.show()
    plt.close(fig)


def heatmap_strip(
    weights: torch.Tensor,
    tokens: Sequence[str] | None = None,
    *,
    titles: Sequence[str] | None = None,
    suptitle: str | None = None,
    annot: bool = True,
) -> Figure:
    """Fast heatmaps for widgets: (h, T_q, T_k) matrices side by side in *one* image.

    ``plot_attention_heads`` draws one seaborn heatmap per axis, and seaborn re-draws the whole
    figure for every heatmap, which is too slow for a slider (seconds for 8 heads). Here all
    matrices share one ``imshow`` (white gaps between heads), one colour scale from 0 to the
    largest weight, and one axis of tick labels, so a re-draw stays well under half a second.
    Non-zero entries are written in their cells when ``annot``.
    """
    stack = weights.detach().float().cpu()
    if stack.dim() == 2:
        stack = stack.unsqueeze(0)
    num_heads, t_q, t_k = stack.shape
    tokens = list(tokens) if tokens is not None else [str(i) for i in range(1, t_k + 1)]
    if len(tokens) != t_k or t_q > t_k:
        raise ValueError(f"tokens must have one label per key position ({t_k}), got {len(tokens)}")
    rows = tokens[-t_q:]
    gap = 1
    width = num_heads * (t_k + gap) - gap
    image = torch.full((t_q, width), float("nan"))
    for head in range(num_heads):
        image[:, head * (t_k + gap) : head * (t_k + gap) + t_k] = stack[head]
    vmax = max(float(stack.max()), 1e-12)
    fig, ax = plt.subplots(figsize=(0.42 * width + 2.2, 0.42 * t_q + 1.5))
    cmap = plt.get_cmap("Blues").with_extremes(bad="white")  # gaps between heads
    im = ax.imshow(image.numpy(), cmap=cmap, vmin=0.0, vmax=vmax)
    # Tick objects are costly: plain text labels under the blocks instead of num_heads * T ticks;
    # beyond 4 heads only under the first block (every head has the same key order).
    ax.set_xticks([])
    ax.set_yticks(range(t_q), rows, fontsize=8)
    ax.tick_params(length=0)
    for head in range(num_heads if num_heads <= 4 else 1):
        for j, token in enumerate(tokens):
            ax.text(
                head * (t_k + gap) + j,
                t_q - 0.5 + 0.15,
                str(token),
                rotation=90,
                ha="center",
                va="top",
                fontsize=8,
            )
    ax.set_xlabel("key (attended to)", labelpad=5.0 * max(len(str(t)) for t in tokens) + 4)
    ax.set_ylabel("query (attending)")
    for spine in ax.spines.values():
        spine.set_visible(False)
    titles = list(titles) if titles is not None else [f"Head {h + 1}" for h in range(num_heads)]
    for head, title in enumerate(titles):
        ax.text(head * (t_k + gap) + (t_k - 1) / 2, -0.8, title, ha="center", va="bottom")
    if annot:
        for head, i, j in torch.nonzero(stack).tolist():
            value = float(stack[head, i, j])
            ax.text(
                head * (t_k + gap) + j,
                i,
                f"{value:.2f}",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if value > 0.6 * vmax else "black",
            )
    fig.colorbar(im, ax=ax, shrink=0.8, pad=0.02)
    if suptitle:
        ax.set_title(suptitle, pad=40 if any(titles) else 6)
    return fig


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

    def show_dropout(dropout: float = 0.5, seed: int = seed) -> torch.Tensor:
        dropped = dropout_weights(weights, dropout, seed)  # (T, T)
        kept = int((dropped != 0).sum())
        title = (
            f"dropout p={dropout:.1f}: {kept} of {nonzero} weights kept, "
            f"scaled x{1 / (1 - dropout):.2f}"
        )
        _show(heatmap_strip(dropped, tokens, titles=[""], suptitle=title))
        return dropped

    return interactive(
        show_dropout,
        dropout=FloatSlider(
            value=0.5, min=0.0, max=0.9, step=0.1, description="dropout", readout_format=".1f"
        ),
        seed=IntSlider(value=seed, min=0, max=999, step=1, description="seed"),
    )


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

    def show_heads(heads: int = 2) -> torch.Tensor:
        weights = wrapper_head_weights(x, heads, d_out=d_out, seed=seed)  # (h, T, T)
        title = f"{heads} head(s), d_out={d_out} each, seed {seed}"
        _show(heatmap_strip(weights, tokens, suptitle=title, annot=heads <= 2))
        return weights

    # Check everything now: ipywidgets would swallow an error raised inside the callback.
    wrapper_head_weights(x, 1, d_out=d_out, seed=seed)
    if tokens is not None and len(tokens) != x.shape[1]:
        raise ValueError(
            f"tokens must have one label per position ({x.shape[1]}), got {len(tokens)}"
        )
    return interactive(
        show_heads,
        heads=IntSlider(value=min(2, max_heads), min=1, max=max_heads, step=1, description="heads"),
    )
