"""An interactive explorer of per-head attention weights (lesson 07).

``attention_explorer()`` returns an ``ipywidgets.interactive`` with these controls:

* ``heads`` (IntSlider 1..8) -- ``num_heads`` of a ``MultiHeadAttention(d_in, d_out=24, ...)``. A
  value that does not divide ``d_out`` (5 or 7) shows a message instead of a plot: that is the
  block's one hard constraint, ``d_out % num_heads == 0``.
* ``dropout`` (FloatSlider 0..0.9) -- the dropout rate on the attention weights. In ``train`` mode
  the plot shows the weights *after* dropout (zeros, survivors scaled by 1/(1-p)), which is what
  the values are multiplied by; in ``eval`` mode dropout is off and the slider has no effect.
* ``scale`` -- multiplies the input embeddings. The book's embeddings are small (entries below
  1), so a fresh layer's scores are close to 0 and every head attends almost uniformly; larger
  inputs give larger scores and sharper (lower-entropy) heads.
* ``seed`` -- ``torch.manual_seed`` before the layers are created (and before dropout is drawn).
* ``sentence`` -- the book's "Your journey starts with one step" or a longer sentence (in the
  Chinese lesson language also the two Chinese sentences of ``mh.ui.sentences``).
* ``mode`` -- ``eval`` or ``train``.

Labels, messages and titles follow the lesson language (``mh.setup_lesson(lang="zh")``), read
when the explorer is built (labels) or a view is computed (messages, titles).

Every change re-draws the per-head heatmaps (``plot_attention_grid``: the panels of
``plot_attention_heads``, drawn fast enough for a slider). The last view is in
``explorer.result`` (an ``ExplorerView``), which is what tests and notebooks assert on: ipywidgets
catches exceptions inside the callback, so a broken callback shows up as a stale ``result``.

The same seed gives the same W_query/W_key/W_value for any number of heads: changing ``heads`` only
changes how the d_out = 24 columns are split (head_dim = 24 // heads).
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import torch

from ...attention.multihead import MultiHeadAttention
from ...i18n import say
from ...inspection import head_entropy
from ...validation import (
    as_float,
    check_dropout,
    check_flag,
    check_int_in_range,
    check_positive_int,
    check_real_in_range,
    check_seed,
)
from ..alt_text import describe
from ..fonts import figure_text
from ..plotting import figure_png, plot_attention_grid
from ..sentences import example_sentences, sentence_caption
from ..widgets import drawable_labels, interactive_with, picture, show_figure

__all__ = ["ExplorerView", "attention_explorer", "explore_attention", "explorer_frames"]


@dataclass
class ExplorerView:
    """One state of the explorer.

    ``weights`` (h, T, T) are the softmax weights (before dropout, as ``return_weights=True`` gives
    them); ``shown`` is what the heatmaps show (after dropout in train mode); ``entropy`` (h,) is
    ``head_entropy(weights)``. For an invalid head count, ``weights``/``shown``/``entropy`` are None
    and ``message`` says why. ``seconds`` is the time the view took (compute and draw).
    """

    num_heads: int
    dropout: float
    scale: float
    seed: int
    sentence: str
    mode: str
    words: list[str]
    d_out: int
    weights: torch.Tensor | None
    shown: torch.Tensor | None
    entropy: torch.Tensor | None
    message: str
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.weights is not None

    @property
    def head_dim(self) -> int | None:
        return self.d_out // self.num_heads if self.ok else None


def explore_attention(
    heads: int = 2,
    dropout: float = 0.0,
    scale: float = 1.0,
    seed: int = 123,
    sentence: str = "book",
    mode: str = "eval",
    *,
    d_out: int = 24,
    sentences: dict[str, tuple[list[str], torch.Tensor]] | None = None,
) -> ExplorerView:
    """Compute one explorer view (no drawing): the weights a fresh ``MultiHeadAttention`` gives.

    ``torch.manual_seed(seed)`` is called before the layers are built and again before dropout is
    applied, so a view is reproducible. The global random state is restored afterwards.

    A ``heads`` value >= 1 that does not divide ``d_out`` gives a view with a message (what the
    slider shows); every other bad argument raises ``TypeError``/``ValueError`` naming it.
    """
    sentences = _check_sentences(sentences)
    heads = check_positive_int("heads", heads)
    d_out = check_positive_int("d_out", d_out)
    dropout = check_dropout(dropout)
    scale = as_float("scale", scale)
    if not math.isfinite(scale):
        raise ValueError(f"scale must be a finite number, got scale={scale}")
    seed = check_seed("seed", seed)
    _check_choice("sentence", sentence, list(sentences))
    _check_choice("mode", mode, ["eval", "train"])
    words, inputs = sentences[sentence]
    start = time.perf_counter()
    common: dict[str, Any] = dict(
        num_heads=heads,
        dropout=dropout,
        scale=scale,
        seed=seed,
        sentence=sentence,
        mode=mode,
        words=list(words),
        d_out=d_out,
    )
    if d_out % heads:
        valid = [h for h in range(1, d_out + 1) if d_out % h == 0]
        rest = d_out % heads
        message = say(
            f"{heads} heads do not divide d_out = {d_out} (d_out % num_heads = {rest}); "
            f"MultiHeadAttention would raise. Try one of {valid}.",
            f"头数 {heads} 不能整除 d_out = {d_out}（d_out % num_heads = {rest}）"
            "，MultiHeadAttention 会报错。"
            f"试试 {valid} 中的一个。",
        )
        return ExplorerView(**common, weights=None, shown=None, entropy=None, message=message)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        mha = MultiHeadAttention(inputs.shape[-1], d_out, len(words), dropout, heads)
        mha.train(mode == "train")
        with torch.no_grad():
            x = scale * inputs.unsqueeze(0)  # (1, T, d_in)
            _, weights = mha(x, return_weights=True)  # (1, h, T, T)
            weights = weights[0]  # (h, T, T)
            torch.manual_seed(seed)
            shown = mha.dropout(weights)  # (h, T, T); identity in eval mode
    if not bool(torch.isfinite(weights).all()):
        raise ValueError(
            f"sentences[{sentence!r}]: its embeddings are too large: at scale={scale} the "
            "attention scores overflow float32 and the weights are NaN; use embeddings of "
            "moderate size (the book's entries are below 1) or a smaller scale"
        )
    if mode == "train" and dropout > 0:
        survivors = 1 / (1 - dropout)
        note = say(
            f"train mode: weights after dropout p={dropout:.1f}, survivors x{survivors:.2f}",
            f"训练模式：dropout p={dropout:.1f} 之后的权重，保留下来的乘以 {survivors:.2f}",
        )
    elif mode == "train":
        note = say(
            "train mode, dropout 0: nothing is dropped", "训练模式，dropout 为 0，什么也不丢弃"
        )
    else:
        note = say("eval mode: dropout is off", "评估模式，dropout 关闭")
    head_dim = d_out // heads
    message = say(
        f"{heads} heads x head_dim {head_dim} = d_out {d_out}; {note}",
        f"{heads} 个头 × head_dim {head_dim} = d_out {d_out}。{note}",
    )
    return ExplorerView(
        **common,
        weights=weights,
        shown=shown,
        entropy=head_entropy(weights),
        message=message,
        seconds=time.perf_counter() - start,
    )


def _check_sentences(sentences: object) -> dict[str, tuple[list[str], torch.Tensor]]:
    """``sentences`` (None: the course's two) after checking it maps names to (words, (T, d_in)).

    Every entry is checked here, before a widget exists: inside a slider's callback ipywidgets
    would swallow the error and leave a dead widget. The embeddings must be what the explorer's
    float32 layers can take: a float32 CPU tensor, one finite row per word.
    """
    if sentences is None:
        return example_sentences()
    if not isinstance(sentences, Mapping) or not sentences:
        raise TypeError(
            "sentences must be a non-empty dict name -> (words, embeddings (T, d_in)), got "
            f"{type(sentences).__name__} {sentences!r:.60}"
        )
    checked = {}
    for name, entry in sentences.items():
        if not isinstance(name, str) or not name:
            raise TypeError(
                "sentences must map names (non-empty strings, shown in the dropdown) to "
                f"(words, embeddings), got the name {name!r} ({type(name).__name__})"
            )
        where = f"sentences[{name!r}]"
        if not isinstance(entry, (tuple, list)) or len(entry) != 2:
            raise ValueError(
                f"{where} must be a pair (words, embeddings) with one float (d_in,) embedding "
                f"row per word, got {type(entry).__name__} {entry!r:.80}"
            )
        words, embeddings = entry
        if (
            isinstance(words, (str, bytes))
            or not isinstance(words, Sequence)
            or not all(isinstance(word, str) for word in words)
        ):
            raise TypeError(
                f"{where}: the words must be a list of strings (e.g. sentence.split()), got "
                f"{type(words).__name__} {words!r:.60}"
            )
        if not isinstance(embeddings, torch.Tensor):
            raise TypeError(
                f"{where}: the embeddings must be a torch.Tensor (T, d_in), got "
                f"{type(embeddings).__name__}"
            )
        if embeddings.dim() != 2 or embeddings.shape[0] != len(words) or len(words) < 1:
            raise ValueError(
                f"{where} must be (words, embeddings) with one float (d_in,) embedding row per "
                f"word: {len(words)} words, embeddings.shape={tuple(embeddings.shape)}"
            )
        if embeddings.shape[1] < 1:
            raise ValueError(f"{where}: the embeddings have no columns (d_in = 0)")
        if embeddings.dtype != torch.float32:
            raise TypeError(
                f"{where}: the embeddings must be float32, the dtype of the explorer's layers, "
                f"got embeddings.dtype={embeddings.dtype}; convert them with .float()"
            )
        if embeddings.device.type != "cpu":
            raise ValueError(
                f"{where}: the embeddings must be on the CPU (the explorer's layers are), got "
                f"device={embeddings.device}; move them with .cpu()"
            )
        finite = torch.isfinite(embeddings).all(dim=1)
        if not bool(finite.all()):
            row = int((~finite).nonzero()[0])
            raise ValueError(
                f"{where}: the embedding of word {row} ({words[row]!r}) holds NaN or inf "
                f"({embeddings[row].tolist()}); every embedding must be finite"
            )
        checked[name] = (list(words), embeddings.detach())
    return checked


def _check_choice(name: str, value: object, choices: list) -> None:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {name}={value!r}")


def _title(heads: int, head_dim: int | None, mode: str, dropout: float) -> str:
    """The heatmaps' title, e.g. "2 heads (head_dim 12), eval mode, dropout 0.0"."""
    if mode == "eval":
        name = figure_text("eval mode", "评估模式")
    else:
        name = figure_text("train mode", "训练模式")
    p = f"{dropout:.1f}"
    if heads > 1:
        title = figure_text(
            f"{heads} heads (head_dim {head_dim}), {name}, dropout {p}",
            f"{heads} 个头（head_dim {head_dim}），{name}，dropout {p}",
        )
    else:
        title = figure_text(
            f"{heads} head (head_dim {head_dim}), {name}, dropout {p}",
            f"{heads} 个头（head_dim {head_dim}），{name}，dropout {p}",
        )
    if mode == "eval" and dropout > 0:
        title += figure_text(" (off in eval mode)", "（评估模式下关闭）")
    return title


def attention_explorer(
    *,
    heads: int = 2,
    dropout: float = 0.0,
    scale: float = 1.0,
    seed: int = 123,
    sentence: str = "book",
    mode: str = "eval",
    d_out: int = 24,
    max_heads: int = 8,
    sentences: dict[str, tuple[list[str], torch.Tensor]] | None = None,
    draw: bool = True,
):
    """Interactive per-head heatmaps: an ``ipywidgets.interactive`` whose ``.result`` is the view.

    Controls, in ``kwargs_widgets`` order: ``heads`` (IntSlider 1..max_heads), ``dropout``
    (FloatSlider 0..0.9), ``scale`` (FloatSlider 0.5..8), ``seed`` (IntSlider 0..999),
    ``sentence`` (Dropdown), ``mode`` (ToggleButtons eval/train); ``explorer.controls["heads"]``
    etc. name them. Heads that do not divide ``d_out`` show a message instead of a plot (nothing
    raises). ``draw=False`` skips the figure (for tests that only need the numbers).

    Starting values outside a control's range raise ``ValueError`` naming the argument and the
    range (a slider would silently clamp them).
    """
    sentences = _check_sentences(sentences)
    max_heads = check_positive_int("max_heads", max_heads)
    heads = check_int_in_range("heads", heads, 1, max_heads)
    dropout = check_real_in_range("dropout", dropout, 0.0, 0.9)
    scale = check_real_in_range("scale", scale, 0.5, 8.0)
    seed = check_int_in_range("seed", seed, 0, 999)
    _check_choice("sentence", sentence, list(sentences))
    _check_choice("mode", mode, ["eval", "train"])
    d_out = check_positive_int("d_out", d_out)
    draw = check_flag("draw", draw)
    # Every sentence at the sliders' extreme (one head: the widest scores; the largest scale),
    # now: inside the callback ipywidgets would swallow the error and leave a dead widget.
    for name in sentences:
        explore_attention(1, 0.0, 8.0, seed, name, "eval", d_out=d_out, sentences=sentences)
    style = {"description_width": "70px"}
    controls = {
        "heads": widgets.IntSlider(
            value=heads, min=1, max=max_heads, step=1, description=say("heads", "头数"), style=style
        ),
        "dropout": widgets.FloatSlider(
            value=dropout,
            min=0.0,
            max=0.9,
            step=0.1,
            readout_format=".1f",
            description=say("dropout", "丢弃率"),
            style=style,
        ),
        "scale": widgets.FloatSlider(
            value=scale,
            min=0.5,
            max=8.0,
            step=0.5,
            readout_format=".1f",
            description=say("scale", "缩放"),
            style=style,
        ),
        "seed": widgets.IntSlider(
            value=seed, min=0, max=999, description=say("seed", "随机种子"), style=style
        ),
        "sentence": widgets.Dropdown(
            options=[
                (sentence_caption(name, words), name) for name, (words, _) in sentences.items()
            ],
            value=sentence,
            description=say("sentence", "句子"),
            style=style,
            layout=widgets.Layout(width="520px"),
        ),
        "mode": widgets.ToggleButtons(
            options=[(say("eval", "评估"), "eval"), (say("train", "训练"), "train")],
            value=mode,
            description=say("mode", "模式"),
            style=style,
        ),
    }

    message = widgets.HTML(layout=widgets.Layout(min_height="44px"))
    image = picture()

    def view(heads, dropout, scale, seed, sentence, mode):
        try:
            result = explore_attention(
                heads, dropout, scale, seed, sentence, mode, d_out=d_out, sentences=sentences
            )
        except (TypeError, ValueError) as error:  # shown, not swallowed by ipywidgets
            image.layout.display = "none"
            message.value = f"<b style='color:#b00'>{html.escape(str(error))}</b>"
            return None
        lines = [html.escape(result.message)]
        if result.ok:
            entropies = ", ".join(f"{e:.2f}" for e in result.entropy.tolist())
            lines.append(
                say(
                    f"entropy per head (nats): {entropies}",
                    f"每个头的熵（奈特）：{entropies}",
                )
            )
            if draw:
                start = time.perf_counter()
                words = drawable_labels(result.words)  # first: it readies the CJK font
                title = _title(heads, result.head_dim, mode, dropout)
                show_figure(image, plot_attention_grid(result.shown, words, title=title))
                result.seconds += time.perf_counter() - start
        else:
            image.layout.display = "none"
            lines[0] = f"<b style='color:#b00'>{lines[0]}</b>"
        message.value = "<br>".join(lines)
        return result

    # The callback prints nothing and displays nothing: it updates the HTML and Image widgets
    # below the controls. So no output is captured anywhere (JupyterLab, nbval) and moving a
    # slider replaces the picture in place.
    explorer = interactive_with(view, controls, message, image)
    explorer.message = message
    explorer.image = image
    return explorer


@dataclass
class ExplorerFrame:
    """One picture of the explorer for the course website's static explorer (no kernel)."""

    heads: int
    dropout: float
    png: bytes
    alt: str
    message: str


def explorer_frames(
    heads_values: Sequence[int],
    dropout_values: Sequence[float],
    *,
    scale: float = 3.0,
    seed: int = 123,
    sentence: str = "book",
    mode: str = "train",
    d_out: int = 24,
) -> list[ExplorerFrame]:
    """The explorer's picture, alt text and message for every (heads, dropout) of a small grid,
    drawn exactly as the widget draws them (``tools/build_site.py`` puts them on lesson 07's
    page, where two sliders swap them). Every head count must divide ``d_out``.
    """
    frames = []
    for heads in heads_values:
        if d_out % heads:
            raise ValueError(f"heads_values: {heads} does not divide d_out={d_out}")
        for dropout in dropout_values:
            result = explore_attention(heads, dropout, scale, seed, sentence, mode, d_out=d_out)
            assert result.ok and result.shown is not None and result.entropy is not None
            words = drawable_labels(result.words)
            title = _title(heads, result.head_dim, mode, dropout)
            fig = plot_attention_grid(result.shown, words, title=title)
            alt = describe(fig)
            entropies = ", ".join(f"{e:.2f}" for e in result.entropy.tolist())
            message = (
                result.message
                + "\n"
                + say(f"entropy per head (nats): {entropies}", f"每个头的熵（奈特）：{entropies}")
            )
            frames.append(ExplorerFrame(heads, float(dropout), figure_png(fig), alt, message))
    return frames
