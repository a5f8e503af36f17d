"""Lesson 05's heads explorer: a "heads" slider, one causal heatmap per wrapper head.

The wrapper is built after ``torch.manual_seed(seed)`` inside a private copy of the RNG state, so
head 1 is the same for any number of heads and the lesson's own random numbers are untouched.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from ipywidgets import IntSlider, interactive

from ...attention.multihead import MultiHeadAttentionWrapper
from ...data import load_journey
from ...i18n import say
from ...validation import as_int, check_finite, check_positive_int, check_seed
from ..fonts import figure_text
from ..plotting import check_labels, plot_attention_grid
from ..widgets import drawable_labels, interactive_with, picture, show_figure

__all__ = ["heads_explorer", "wrapper_head_weights"]


def wrapper_head_weights(
    x: torch.Tensor, num_heads: int, *, d_out: int = 2, seed: int = 123, batch_index: int = 0
) -> torch.Tensor:
    """Attention weights (num_heads, T, T) of a seeded ``MultiHeadAttentionWrapper`` on ``x``.

    ``torch.manual_seed(seed)`` then ``MultiHeadAttentionWrapper(d_in, d_out, T, 0.0, num_heads)``,
    as in the book; the weights of sequence ``batch_index`` of ``x`` (b, T, d_in), per head.
    Heads are created one after another from the same seed, so head 1 is the same for any
    ``num_heads``. The global RNG state is restored afterwards.
    """
    num_heads = check_positive_int("num_heads", num_heads)
    d_out = check_positive_int("d_out", d_out)
    seed = check_seed("seed", seed)
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a (b, T, d_in) torch.Tensor, got {type(x).__name__}")
    if x.dim() != 3:
        raise ValueError(f"x must be a (b, T, d_in) torch.Tensor, got x.shape={tuple(x.shape)}")
    batch_index = as_int("batch_index", batch_index)
    if not 0 <= batch_index < x.shape[0]:
        raise ValueError(
            f"batch_index must be in [0, {x.shape[0]}) for x.shape={tuple(x.shape)}, "
            f"got batch_index={batch_index}"
        )
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
    max_heads = check_positive_int("max_heads", max_heads)
    d_out = check_positive_int("d_out", d_out)
    seed = check_seed("seed", seed)
    if inputs is None:
        journey = load_journey()
        inputs = journey.batch  # (2, 6, 3)
        if tokens is None:
            tokens = journey.words
    if not isinstance(inputs, torch.Tensor):
        raise TypeError(f"inputs must be a torch.Tensor, got {type(inputs).__name__}")
    if inputs.dim() == 2:
        inputs = inputs.unsqueeze(0)  # (1, T, d_in)
    if not inputs.is_floating_point():
        raise TypeError(
            f"inputs must be floating-point embeddings (T, d_in) or (b, T, d_in), got "
            f"inputs.dtype={inputs.dtype}"
        )
    if inputs.dim() != 3:
        raise ValueError(
            "inputs must have shape (T, d_in) or (b, T, d_in), got "
            f"inputs.shape={tuple(inputs.shape)}"
        )
    if not inputs.is_meta:
        check_finite(inputs, name="inputs")
    x = inputs.detach().float()
    check_labels("tokens", tokens)
    image = picture()

    def show_heads(heads: int = 2) -> torch.Tensor:
        labels = drawable_labels(tokens)  # first: it readies the CJK font
        weights = wrapper_head_weights(x, heads, d_out=d_out, seed=seed)  # (h, T, T)
        title = figure_text(
            f"{heads} head(s), d_out={d_out} each, seed {seed}",
            f"{heads} 个头，每个 d_out={d_out}，随机种子 {seed}",
        )
        show_figure(image, plot_attention_grid(weights, labels, title=title, annot=heads <= 2))
        return weights

    # Check everything now: ipywidgets would swallow an error raised inside the callback.
    wrapper_head_weights(x, 1, d_out=d_out, seed=seed)
    if tokens is not None and len(tokens) != x.shape[1]:
        raise ValueError(
            f"tokens must have one label per position ({x.shape[1]}), got {len(tokens)}"
        )
    controls = {
        "heads": IntSlider(
            value=min(2, max_heads), min=1, max=max_heads, step=1, description=say("heads", "头数")
        )
    }
    w = interactive_with(show_heads, controls, image)
    w.image = image
    return w
