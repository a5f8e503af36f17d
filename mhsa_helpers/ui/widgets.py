"""Widget plumbing shared by every explorer: a picture that re-draws in place.

A slider callback must not print or plot: JupyterLab and nbval capture output differently, and a
re-draw should replace the old picture instead of stacking a new one under it. So each explorer
draws its figure into an ``ipywidgets.Image`` (``picture`` + ``show_figure``) and builds its
controls with ``interactive_with``, which puts those widgets under the sliders.
"""

from __future__ import annotations

from collections.abc import Callable

from ipywidgets import Image, Layout, Widget, interactive
from matplotlib.figure import Figure

from .plotting import figure_png

__all__ = ["interactive_with", "picture", "show_figure"]


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
