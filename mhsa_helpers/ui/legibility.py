"""Figures a learner can read at 100 % zoom, at the size JupyterLab shows them.

Why: the lessons draw at 80 dpi (``setup_lesson``), and JupyterLab shows a figure's PNG at its
pixel size after cropping it to what is drawn -- but only up to its output column, about 850 px
at a 1280-px window: a wider PNG is shrunk to the column, and its text with it. A 5-inch heatmap
with 7-point labels comes out 400 px wide with labels about 7 px high; a 13-inch row of panels
is shrunk by a third. ``@legible`` on a figure function (after it has drawn):

* raises every tick label to ``TICK_PT`` points and every other text (annotations, legends,
  titles) to ``TEXT_PT``, 9.4 px at 80 dpi;
* when the drawn part of the figure is narrower than ``MIN_WIDTH_IN`` inches (600 px), scales
  the whole figure up (text keeps its size); when it is wider than ``MAX_WIDTH_PX`` pixels at
  the figure's dpi, narrows the figure (text keeps its size, the axes give up the room). A figure
  with panels side by side should rather put them in rows: narrowing is the safety net.

A function that draws into an ``ax`` its caller passed leaves the caller's figure alone.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from functools import wraps
from typing import ParamSpec

from matplotlib.figure import Figure, SubFigure
from matplotlib.text import Text

__all__ = ["MAX_WIDTH_PX", "MIN_WIDTH_IN", "TEXT_PT", "TICK_PT", "legible", "make_legible"]

#: The lessons' figures draw at 80 dpi: 600 px is 7.5 inches.
MIN_WIDTH_IN = 600 / 80
#: The smallest tick label, in points.
TICK_PT = 9
#: The smallest other text, in points: 9.4 px at 80 dpi, above the 9 px a learner can read.
TEXT_PT = 8.5
#: The widest figure as saved, in pixels: JupyterLab's output column is about 850 px wide.
MAX_WIDTH_PX = 850
#: Drawn width to aim for above MIN_WIDTH_IN (rounding of the crop, a label that moves).
_SLACK_IN = 0.15

_P = ParamSpec("_P")


def make_legible(fig: Figure) -> Figure:
    """Tick labels of every axes at least ``TICK_PT``, other text at least ``TEXT_PT``; the
    drawn figure at least 600 px and at most ``MAX_WIDTH_PX`` wide."""
    for ax in fig.axes:
        if any(float(label.get_fontsize()) < TICK_PT for label in ax.get_xticklabels()):
            ax.tick_params(axis="x", which="both", labelsize=TICK_PT)
        if any(float(label.get_fontsize()) < TICK_PT for label in ax.get_yticklabels()):
            ax.tick_params(axis="y", which="both", labelsize=TICK_PT)
    for text in _texts(fig):
        if float(text.get_fontsize()) < TEXT_PT:
            text.set_fontsize(TEXT_PT)
    for _ in range(3):  # text keeps its size, so the drawn part grows a little less than scaled
        _lay_out(fig)
        drawn = fig.get_tightbbox().width  # inches
        if drawn >= MIN_WIDTH_IN + _SLACK_IN / 2:
            break
        width, height = fig.get_size_inches()
        scale = (MIN_WIDTH_IN + _SLACK_IN) / drawn
        fig.set_size_inches(width * scale, height * scale)
    widest = MAX_WIDTH_PX / fig.dpi - _SLACK_IN  # inches
    before: tuple[float, float] | None = None
    last = float("inf")
    for _ in range(4):  # text keeps its size: the drawn part narrows less than the figure
        _lay_out(fig)
        drawn = fig.get_tightbbox().width  # inches
        if drawn <= widest + _SLACK_IN / 2:
            break
        if drawn > last - 0.05:  # a line of text sets the width: narrowing only crushes the axes
            fig.set_size_inches(*before)  # type: ignore[misc]
            _lay_out(fig)
            break
        width, height = fig.get_size_inches()
        before, last = (width, height), drawn
        fig.set_size_inches(max(width - (drawn - widest) * 1.1, 1.0), height)
    return fig


def _texts(fig: Figure) -> list[Text]:
    """Every text of ``fig`` but the tick labels: titles, axis labels, annotations, legends,
    figure texts and suptitles (of the figure and its subfigures)."""
    found: list[Text] = []
    for ax in fig.axes:
        titles = [getattr(ax, name) for name in ("title", "_left_title", "_right_title")]
        found += [*titles, ax.xaxis.label, ax.yaxis.label]
        found += list(ax.texts)
        legend = ax.get_legend()
        if legend is not None:
            found += [*legend.get_texts(), legend.get_title()]
    figures: list[Figure | SubFigure] = [fig, *fig.subfigs]
    for figure in figures:
        found += list(figure.texts)
        suptitle = getattr(figure, "_suptitle", None)
        if suptitle is not None:
            found.append(suptitle)
        found += [text for legend in figure.legends for text in legend.get_texts()]
    return [text for text in found if text.get_text().strip()]


def _lay_out(fig: Figure) -> None:
    """Place the axes as a draw would, so that ``get_tightbbox`` measures the drawn extent.

    Of a draw, only the layout engine's pass (constrained layout) moves what the tight box
    measures: ``get_tightbbox`` itself updates the ticks, titles, axis labels and aspect, as
    ``Figure.draw`` does before drawing. Drawing every artist besides (``draw_without_rendering``)
    cost a third more and gave the same sizes, tick labels and alt text for every figure of the
    package in both languages (tests/test_i18n_figures.py's figures, compared float for float).
    """
    engine = fig.get_layout_engine()
    if fig.axes and engine is not None:
        with suppress(ValueError):  # as Figure.draw does: a layout that cannot be made is skipped
            engine.execute(fig)


def legible(draw: Callable[_P, Figure]) -> Callable[_P, Figure]:
    """Decorate a figure function: ``make_legible`` on the figure it returns (see the module)."""

    @wraps(draw)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> Figure:
        fig = draw(*args, **kwargs)
        if kwargs.get("ax") is None:  # its own figure, not one the caller passed an axes of
            make_legible(fig)
        return fig

    return wrapper
