"""The figure of lesson 12: one Transformer block of a character model, with its real sizes.

* ``plot_transformer_block(model)`` -- from the ids to the logits: the two embeddings, one
  pre-norm block (layer norm -> ``MultiHeadAttention`` -> residual, layer norm -> feed-forward
  -> residual) with the number of blocks beside it, the final layer norm and the tied LM head.
  Every size in it (``d_model``, heads and ``head_dim``, the feed-forward width, the number of
  blocks, ``context_length``, the vocabulary) is read from the model it is given, so the picture
  is the shipped model's (``lm.load_checkpoint().model``), not a generic one.

Texts follow the lesson language (``fonts.figure_text``); the alt text lists the sizes.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Rectangle

from ...i18n import say
from ...lm.model import CharTransformer, TransformerBlock
from ..alt_text import set_alt_text
from ..fonts import figure_text, with_cjk_font
from ..legibility import legible
from ._common import float_tensor

__all__ = ["plot_rhyme_attention", "plot_transformer_block"]

_COLOURS = {
    "embed": "#fde9c9",
    "norm": "#e2e2e2",
    "attn": "#cfe2f3",
    "ff": "#d9ead3",
    "head": "#f4cccc",
}
_CENTRE, _WIDTH = 4.0, 5.6  # x of the main path, width of a box
_FONT = 10


def _box(ax: Axes, y: float, text: str, colour: str, height: float = 0.8) -> None:
    ax.add_patch(
        FancyBboxPatch(
            (_CENTRE - _WIDTH / 2, y - height / 2),
            _WIDTH,
            height,
            boxstyle="round,pad=0.02,rounding_size=0.15",
            facecolor=_COLOURS[colour],
            edgecolor="#444444",
        )
    )
    ax.text(_CENTRE, y, text, ha="center", va="center", fontsize=_FONT)


def _arrow(ax: Axes, y_from: float, y_to: float, x: float = _CENTRE) -> None:
    ax.annotate(
        "",
        xy=(x, y_to),
        xytext=(x, y_from),
        arrowprops={"arrowstyle": "->", "linewidth": 1.3, "color": "#333333"},
    )


def _plus(ax: Axes, y: float) -> None:
    ax.text(
        _CENTRE,
        y,
        "+",
        ha="center",
        va="center",
        fontsize=12,
        weight="bold",
        bbox={"boxstyle": "circle,pad=0.15", "facecolor": "white", "edgecolor": "#333333"},
    )


def _residual(ax: Axes, y_from: float, y_plus: float) -> None:
    """The skip path: from the main path at ``y_from`` round the right side into the ⊕."""
    side = _CENTRE + _WIDTH / 2 + 0.45
    ax.plot([_CENTRE, side, side], [y_from, y_from, y_plus], color="#b45f06", linewidth=1.6)
    ax.annotate(
        "",
        xy=(_CENTRE + 0.27, y_plus),
        xytext=(side, y_plus),
        arrowprops={"arrowstyle": "->", "linewidth": 1.6, "color": "#b45f06"},
    )
    ax.text(
        side + 0.12,
        (y_from + y_plus) / 2,
        figure_text("residual", "残差连接"),
        ha="left",
        va="center",
        fontsize=_FONT - 1,
        color="#b45f06",
        rotation=90,
    )


@legible
@with_cjk_font
def plot_transformer_block(model: CharTransformer) -> Figure:
    """Draw ``model``'s path from ids to logits, one block in full, with the model's own sizes.

    Args:
        model: a ``mhsa_helpers.lm.CharTransformer`` (lesson 12: ``lm.load_checkpoint().model``).

    Returns the figure: one axes without ticks, a box per layer (embeddings, layer norms,
    attention, feed-forward, LM head), the residual paths, and the shape ``(b, T, d_model)``
    between the parts.
    """
    if not isinstance(model, CharTransformer):
        raise TypeError(
            f"model must be a mhsa_helpers.lm.CharTransformer, got {type(model).__name__}"
        )
    d, heads, head_dim = model.d_model, model.num_heads, model.head_dim
    layers, context, vocab = model.num_layers, model.context_length, model.vocab_size
    block = model.blocks[0]
    assert isinstance(block, TransformerBlock)
    hidden = block.ff.fc_in.out_features if block.ff is not None else None
    parts = model.parts

    fig, ax = plt.subplots(figsize=(8.0, 7.2))
    ax.set_xlim(0.5, 9.4)
    ax.set_ylim(-0.2, 15.2)
    ax.set_axis_off()
    shape = f"(b, T, {d})"

    ax.text(
        _CENTRE,
        0.2,
        figure_text(f"character ids (b, T), T ≤ {context}", f"字符编号 (b, T)，T ≤ {context}"),
        ha="center",
        va="center",
        fontsize=_FONT,
    )
    _arrow(ax, 0.45, 1.05)
    _box(
        ax,
        1.6,
        figure_text(
            f"token embedding {vocab:,} × {d}\n+ position embedding {context} × {d}",
            f"词元嵌入 {vocab:,} × {d}\n+ 位置嵌入 {context} × {d}",
        ),
        "embed",
        height=1.0,
    )
    _arrow(ax, 2.1, 2.95)
    ax.text(_CENTRE - 0.15, 2.55, shape, ha="right", va="center", fontsize=_FONT - 1)

    # The block: a dashed frame round its layers, the number of blocks at its side.
    ax.add_patch(
        Rectangle(
            (0.7, 2.95),
            7.3,
            8.05,
            fill=False,
            linestyle="--",
            edgecolor="#666666",
            linewidth=1.2,
        )
    )
    ax.text(
        8.15,
        10.75,
        figure_text(f"× {layers} blocks", f"× {layers} 个块"),
        ha="left",
        va="top",
        fontsize=_FONT + 1,
        weight="bold",
    )
    norm = figure_text(f"layer norm ({d})", f"层归一化（{d}）")
    _arrow(ax, 2.95, 3.5)
    _box(
        ax,
        3.9,
        norm if parts.layer_norm else figure_text("(no layer norm)", "（无层归一化）"),
        "norm",
    )
    _arrow(ax, 4.3, 4.85)
    _box(
        ax,
        5.45,
        figure_text(
            f"MultiHeadAttention, causal\n{heads} heads × head_dim {head_dim} = {d}",
            f"多头注意力 MultiHeadAttention（因果）\n{heads} 个头 × head_dim {head_dim} = {d}",
        ),
        "attn",
        height=1.1,
    )
    _arrow(ax, 6.0, 6.5)
    _plus(ax, 6.76)
    if parts.residual:
        _residual(ax, 3.25, 6.76)
    _arrow(ax, 7.02, 7.5)
    ax.text(_CENTRE - 0.15, 7.25, shape, ha="right", va="center", fontsize=_FONT - 1)
    _box(
        ax,
        7.9,
        norm if parts.layer_norm else figure_text("(no layer norm)", "（无层归一化）"),
        "norm",
    )
    _arrow(ax, 8.3, 8.85)
    if hidden is None:
        ff = figure_text("(no feed-forward)", "（无前馈网络）")
    else:
        ff = figure_text(
            f"feed-forward, each position alone\n{d} → {hidden} → GELU → {d}",
            f"前馈网络（每个位置单独计算）\n{d} → {hidden} → GELU → {d}",
        )
    _box(ax, 9.45, ff, "ff", height=1.1)
    _arrow(ax, 10.0, 10.34)
    _plus(ax, 10.6)
    if parts.residual:
        _residual(ax, 7.26, 10.6)
    _arrow(ax, 10.86, 11.6)
    ax.text(_CENTRE - 0.15, 11.2, shape, ha="right", va="center", fontsize=_FONT - 1)

    _box(ax, 12.0, figure_text(f"final layer norm ({d})", f"最后的层归一化（{d}）"), "norm")
    _arrow(ax, 12.4, 12.95)
    _box(
        ax,
        13.45,
        figure_text(
            f"LM head {d} → {vocab:,}\n(tied to the token embedding)",
            f"语言模型头 {d} → {vocab:,}\n（与词元嵌入共享权重）",
        ),
        "head",
        height=1.0,
    )
    _arrow(ax, 13.95, 14.5)
    ax.text(
        _CENTRE,
        14.8,
        figure_text(
            f"logits (b, T, {vocab:,}): a score per next character",
            f"logits (b, T, {vocab:,})：下一个字的每个候选一个分数",
        ),
        ha="center",
        va="center",
        fontsize=_FONT,
    )
    ax.set_title(
        figure_text(
            f"The model's Transformer block, real sizes ({model.num_parameters():,} parameters)",
            f"模型的 Transformer 块及其实际维度（{model.num_parameters():,} 个参数）",
        ),
        fontsize=_FONT + 1,
    )
    feed = (
        say(f"a feed-forward network {d} to {hidden} to {d}", f"前馈网络 {d} → {hidden} → {d}")
        if hidden is not None
        else say("no feed-forward network", "没有前馈网络")
    )
    set_alt_text(
        fig,
        say(
            f"A diagram of the character model from ids to logits: token embedding "
            f"{vocab:,} × {d} plus position embedding {context} × {d}; then {layers} identical "
            f"blocks, each a layer norm, causal multi-head attention with {heads} heads of "
            f"head_dim {head_dim}, a residual addition, a layer norm, {feed} and a second "
            f"residual addition, every step of shape (b, T, {d}); then a final layer norm and the "
            f"LM head {d} to {vocab:,}, tied to the token embedding.",
            f"字符模型从字符编号到 logits 的示意图：词元嵌入 {vocab:,} × {d} "
            f"加位置嵌入 {context} × {d}。"
            f"然后是 {layers} 个相同的块，每块依次是层归一化、"
            f"{heads} 个头（head_dim {head_dim}）"
            f"的因果多头注意力、残差相加、层归一化、{feed}、"
            f"再一次残差相加，每一步的形状都是 (b, T, {d})。"
            f"最后是层归一化和语言模型头 {d} → {vocab:,}，"
            "它与词元嵌入共享权重。",
        ),
    )
    return fig


@legible
@with_cjk_font
def plot_rhyme_attention(weights: torch.Tensor, text: str, *, title: str | None = None) -> Figure:
    """One head's weights on one poem, with the rhyme positions marked.

    Args:
        weights: (T, T) attention weights of one head on ``text`` (queries are rows).
        text: the T characters, a poem read from its start (``"\\n" + poem.text``).
        title: the figure title (default: a title in the lesson language).

    The axes show the characters (positions when no Chinese font is found); each couplet-line's
    last character is labelled with its pinyin, coloured by its rhyme group (the rhyming ends share
    one colour, an end that rhymes with neither neighbour is grey); a box marks, in each row that
    predicts a rhyme, the key of the rhyme one line above.
    """
    from pypinyin import lazy_pinyin

    from ...lm.analysis import _line_above_queries
    from ...lm.rhyme import line_end, rhyme_class
    from ..fonts import char_axis

    weights = float_tensor("weights", weights, 2)
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if weights.shape[0] != weights.shape[1] or weights.shape[0] != len(text):
        raise ValueError(
            f"weights must be (T, T) with T = len(text) = {len(text)}, "
            f"got weights.shape={tuple(weights.shape)}"
        )
    axis = char_axis(text)
    ends, position = {}, 0
    for line in text.split("\n"):
        end = line_end(line)
        if end is not None:
            ends[position + len(line.rstrip("。？！，；：、")) - 1] = end
        position += len(line) + 1
    classes = [rhyme_class(ch) for ch in ends.values()]
    shared = {c for c in classes if c is not None and classes.count(c) > 1}
    colour = {
        pos: ("tab:red" if rhyme_class(ch) in shared else "dimgray") for pos, ch in ends.items()
    }
    size = len(text)
    fig, ax = plt.subplots(figsize=(10.0, 9.6))
    with plt.rc_context(axis.rc):
        ax.imshow(weights.numpy(), cmap="Blues", vmin=0.0, vmax=1.0)
        ax.set_xticks(range(size))
        ax.set_yticks(range(size))
        ax.set_xticklabels(axis.labels, fontsize=9)
        rows = [
            f"{label} {lazy_pinyin(text[i])[0]}" if i in ends else label
            for i, label in enumerate(axis.labels)
        ]
        ax.set_yticklabels(rows, fontsize=9)
        for ticks in (ax.get_xticklabels(), ax.get_yticklabels()):
            for i, tick in enumerate(ticks):
                if i in colour:
                    tick.set_color(colour[i])
                    tick.set_fontweight("bold")
    rhyme, _ = _line_above_queries(text)
    for query, key in rhyme:
        ax.add_patch(
            Rectangle((key - 0.5, query - 0.5), 1, 1, fill=False, edgecolor="tab:red", lw=2)
        )
    ax.set_xlabel(figure_text("key (attended to)", "键（被关注方）"), fontsize=10)
    ax.set_ylabel(
        figure_text("query (predicts the next character)", "查询（预测下一个字）"), fontsize=10
    )
    ax.set_title(
        title
        or figure_text(
            "The rhyme head: red boxes mark the rhyme one line above",
            "押韵的头：红框是上一句的韵脚",
        ),
        fontsize=11,
    )
    fig.tight_layout()
    readings = [lazy_pinyin(ch)[0] for ch in ends.values()]
    share = float(sum(weights[q, k] for q, k in rhyme) / max(1, len(rhyme)))
    set_alt_text(
        fig,
        say(
            f"A heatmap of one head's attention weights on a poem of {size} characters, queries "
            f"as rows and keys as columns. The couplet ends read {', '.join(readings)} in "
            f"pinyin; the rhyming ones are red. In the rows that predict a rhyme, the boxed key is "
            f"the rhyme of the line above; it gets {share:.2f} of the weight on average.",
            f"一个头在一首 {size} 个字符的诗上的注意力热力图，行是查询，列是键。"
            f"各联韵脚的拼音依次是 {', '.join(readings)}，押韵的用红色。"
            f"在预测韵脚的那几行里，方框标出上一联的韵脚，"
            f"它平均得到 {share:.2f} 的权重。",
        ),
    )
    return fig
