"""Alt text for every figure a lesson shows, in the lesson language, set where the figure is made.

A figure's alt text says what it shows: the kind of plot, its title, its axes and their labels
(the tokens of a heatmap, the legend of a curve). ``describe(fig)`` writes it from the figure's
own artists, so every figure gets one without a per-lesson edit; a figure helper that knows more
calls ``set_alt_text(fig, text)`` and that text wins.

``install()`` (called by ``setup_lesson``) makes the notebook save it: inside IPython, the PNG of
every displayed matplotlib figure carries ``{"alt": describe(fig)}`` as its output metadata, which
the course website (myst-nb) turns into the ``alt`` attribute of the ``<img>``. ``show_figure``
gives a widget's picture (``widgets.Picture``) the same text as its ``alt`` attribute.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from matplotlib.axes import Axes
from matplotlib.collections import PathCollection, QuadMesh
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..i18n import language, say

__all__ = ["describe", "install", "set_alt_text"]

_ATTRIBUTE = "_mhsa_alt_text"
_MAX_TICKS = 12


def set_alt_text(fig: Figure, text: str) -> Figure:
    """Give ``fig`` the alt text ``text``: what it shows, in the lesson language."""
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"text must be a non-empty string, got {text!r}")
    setattr(fig, _ATTRIBUTE, text.strip())
    return fig


def _punctuation(en: str, zh: str) -> str:
    """Punctuation in the lesson language (no words, so not a message of ``say``)."""
    return zh if language() == "zh" else en


def _join(items: Iterable[str]) -> str:
    return _punctuation(", ", "、").join(items)


def _quoted(text: str) -> str:
    return _punctuation(f"“{text}”", f"「{text}」")


def _number(label: str) -> float | None:
    try:
        return float(label.replace("\u2212", "-"))
    except ValueError:
        return None


def _ticks(labels: list[str]) -> str:
    labels = [label for label in labels if label]
    if len(labels) > _MAX_TICKS:
        labels = [*labels[: _MAX_TICKS - 1], "…", labels[-1]]
    return _join(labels)


def _kind(ax: Axes) -> str:
    if ax.images or any(isinstance(c, QuadMesh) for c in ax.collections):
        return say("a heatmap", "热力图")
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    if len(bars) >= 2:
        return say("a bar chart", "柱状图")
    if any(isinstance(c, PathCollection) for c in ax.collections):
        return say("a scatter plot", "散点图")
    if ax.lines:
        return say("a line chart", "折线图")
    return say("a diagram", "示意图")


def _axis(name: str, label: str, ticks: list[str]) -> str:
    ticks = [tick for tick in ticks if tick]
    if not label and not ticks:
        return ""
    text = name
    if label:
        text += say(f" {_quoted(label)}", f"为{_quoted(label)}")
    if len(ticks) >= 2 and all(_number(tick) is not None for tick in ticks):
        low, high = ticks[0], ticks[-1]
        text += say(f" from {low} to {high}", f"，范围 {low} 到 {high}")
    elif ticks:
        text += say(f" labelled {_ticks(ticks)}", f"，刻度为 {_ticks(ticks)}")
    return text


def _describe_axes(ax: Axes) -> str:
    parts = [_kind(ax)]
    title = ax.get_title() or ax.get_title("left") or ax.get_title("right")
    if title:
        parts[0] = say(f"{parts[0]} titled {_quoted(title)}", f"{parts[0]}，标题为{_quoted(title)}")
    x_ticks = [t.get_text() for t in ax.get_xticklabels()]
    y_ticks = [t.get_text() for t in ax.get_yticklabels()]
    for axis in (
        _axis(say("x axis", "横轴"), ax.get_xlabel(), x_ticks),
        _axis(say("y axis", "纵轴"), ax.get_ylabel(), y_ticks),
    ):
        if axis:
            parts.append(axis)
    legend = ax.get_legend()
    if legend is not None:
        names = [t.get_text() for t in legend.get_texts() if t.get_text()]
        if names:
            parts.append(say(f"legend {_join(names)}", f"图例为 {_join(names)}"))
    texts = [t.get_text().strip() for t in ax.texts if t.get_text().strip()]
    if texts and not (ax.images or ax.collections):
        parts.append(say(f"boxes reading {_ticks(texts)}", f"框内文字为 {_ticks(texts)}"))
    return _punctuation("; ", "；").join(parts)


def describe(fig: Figure) -> str:
    """What ``fig`` shows, in the lesson language: its ``set_alt_text`` text, else its artists'."""
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    explicit = getattr(fig, _ATTRIBUTE, None)
    if explicit:
        return str(explicit)
    # Colour bars are axes too; they belong to the heatmap they explain.
    panels = [ax for ax in fig.axes if ax.get_visible() and not hasattr(ax, "_colorbar")]
    suptitle = fig.get_suptitle()
    head = say("A figure", "一幅图")
    if suptitle:
        head = say(f"A figure titled {_quoted(suptitle)}", f"一幅题为{_quoted(suptitle)}的图")
    if len(panels) == 1:
        only = _describe_axes(panels[0])
        return say(f"{head}: {only}.", f"{head}：{only}。")
    described = [
        say(f"Panel {i}: {_describe_axes(ax)}", f"子图 {i}：{_describe_axes(ax)}")
        for i, ax in enumerate(panels, start=1)
    ]
    count = len(panels)
    body = _punctuation(". ", "。").join(described)
    return say(f"{head} with {count} panels. {body}.", f"{head}，共 {count} 个子图。{body}。")


def _with_alt(print_png: Callable[[Figure], Any]) -> Callable[[Figure], Any]:
    def png_with_alt(fig: Figure) -> Any:
        data = print_png(fig)
        if data is None:
            return None
        return data, {"alt": describe(fig)}

    png_with_alt.__wrapped__ = print_png  # type: ignore[attr-defined]
    return png_with_alt


def install() -> bool:
    """Inside IPython, save ``describe(fig)`` as the alt text of each figure's PNG; else no-op.

    Returns whether it is installed. The inline backend is configured first (it registers its own
    PNG printer when it loads), so ours wraps that printer instead of being replaced by it.
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the lab extra
        return False
    shell = get_ipython()
    if shell is None or not hasattr(shell, "display_formatter"):
        return False
    import matplotlib

    if "inline" in matplotlib.get_backend():
        import matplotlib_inline.backend_inline  # noqa: F401  (registers the inline printers)
    formatter = shell.display_formatter.formatters["image/png"]
    try:
        printer = formatter.lookup_by_type(Figure)
    except KeyError:
        return False
    printer = getattr(printer, "__wrapped__", printer)
    formatter.for_type(Figure, _with_alt(printer))
    return True
