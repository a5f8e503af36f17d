"""Widget plumbing shared by every explorer: a picture that re-draws in place.

A slider callback must not print or plot: JupyterLab and nbval capture output differently, and a
re-draw should replace the old picture instead of stacking a new one under it. So each explorer
draws its figure into an ``ipywidgets.Image`` (``picture`` + ``show_figure``) and builds its
controls with ``interactive_with``, which puts those widgets under the sliders.

``drawable_labels`` readies matplotlib for Chinese (the CJK font of ``mhsa_helpers.ui.fonts``)
before an explorer draws in the Chinese lesson language or draws Chinese tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ipywidgets import Image, Layout, Widget, interactive
from matplotlib.figure import Figure
from traitlets import Unicode

from ..i18n import language
from .alt_text import describe
from .fonts import use_cjk_font
from .plotting import figure_png

__all__ = ["Picture", "drawable_labels", "interactive_with", "picture", "show_figure"]


def drawable_labels(labels: Sequence[str] | None = None) -> Sequence[str] | None:
    """``labels`` as a heatmap can show them; call it before the figure is made.

    In the Chinese lesson language, or for labels with Chinese characters, the CJK font becomes
    matplotlib's fallback (``use_cjk_font``). Labels it cannot show (no CJK font installed)
    become their positions "1", "2", ...; in English, ASCII labels are returned as they are and
    nothing about matplotlib changes.
    """
    plain = labels is None or all(str(label).isascii() for label in labels)
    family = use_cjk_font() if language() == "zh" or not plain else None
    if plain or family is not None:
        return labels
    assert labels is not None
    return [str(i) for i in range(1, len(labels) + 1)]


class Picture(Image):
    """An ``Image`` that also keeps its figure's alt text (``alt``, saved with the widget state).

    JupyterLab ignores the extra attribute; the course website reads it from the saved state and
    puts it on the ``<img>``. (Not the ``tooltip``: ipywidgets 8's image view fails to render
    with one, since it has no description.)
    """

    alt = Unicode("", help="what the picture shows, in the lesson language").tag(sync=True)


def picture() -> Picture:
    """An empty PNG ``Picture`` widget for a widget callback's figure (see ``show_figure``)."""
    return Picture(format="png", layout=Layout(width="auto", align_self="flex-start"))


def show_figure(image: Image, fig: Figure) -> None:
    """Render ``fig`` into ``image`` (replacing its picture in place), close it, show ``image``.

    A ``Picture`` also gets the figure's alt text (``alt_text.describe``), which the course
    website puts on the ``<img>``.
    """
    if isinstance(image, Picture):
        image.alt = describe(fig)
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
