"""What the figure and plotting tests share: each test closes its figures; text on an axes; how
wide a figure is shown and how large its text is (at the figure's dpi, ``setup_lesson``'s 80
unless the figure names its own, as the inline backend saves it), after JupyterLab shrinks a
PNG wider than its output column."""

from __future__ import annotations

import io
import re
import struct

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every figure a test drew, so figures never pile up across tests."""
    yield
    plt.close("all")


def texts(ax) -> list[str]:
    """The strings drawn on ``ax`` with ``ax.text`` (annotations of a heatmap, bar labels)."""
    return [t.get_text() for t in ax.texts]


DPI = 80  # what setup_lesson sets (the inline backend saves a figure at its own dpi)


def png_width(png: bytes) -> int:
    """The width in pixels of a PNG image (from its header)."""
    return struct.unpack(">I", png[16:20])[0]


def shown_png(fig: plt.Figure) -> bytes:
    """The PNG a notebook would show for ``fig``: at its dpi, cropped to what is drawn."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=fig.dpi, bbox_inches="tight")
    return buffer.getvalue()


def shown_width(fig: plt.Figure) -> int:
    """The width in pixels of the PNG a notebook would show for ``fig``."""
    return png_width(shown_png(fig))


def lay_out_shown(fig: plt.Figure) -> float:
    """Lay ``fig`` out as the inline backend's draw does (at the figure's dpi: 80 in a lesson),
    without rasterising it, and return the width in pixels of the PNG it would save: the
    figure's tight box plus savefig's padding, which is what ``bbox_inches="tight"`` crops to
    (``test_figure_legibility`` checks it against ``shown_width`` to the pixel). A missing glyph
    warns here: text is measured when it is laid out."""
    fig.draw_without_rendering()
    return fig.get_tightbbox().padded(plt.rcParams["savefig.pad_inches"]).width * fig.dpi


def tick_sizes(fig: plt.Figure, *, drawn: bool = False) -> list[tuple[str, float]]:
    """(label, size in points) of every visible, non-empty tick label of the figure.

    ``drawn``: the figure was just drawn (saved), so its tick labels are laid out already.
    """
    if not drawn:
        fig.draw_without_rendering()
    found = []
    for ax in fig.axes:
        for label in [*ax.get_xticklabels(), *ax.get_yticklabels()]:
            if label.get_visible() and label.get_text().strip():
                found.append((label.get_text(), float(label.get_fontsize())))
    return found


#: JupyterLab's output column at a 1280-px window: a wider PNG is shrunk to it.
COLUMN_PX = 850
#: The widest figure a lesson may save (a few pixels of slack over the column).
MAX_WIDTH_PX = 860
#: The smallest text, in pixels as shown (after any shrinking to the column).
MIN_SHOWN_PX = 9


def shown_scale(width: float) -> float:
    """How much JupyterLab shrinks a PNG ``width`` pixels wide to fit its output column."""
    return min(1.0, COLUMN_PX / width)


def text_sizes(fig: plt.Figure) -> list[tuple[str, float]]:
    """(text, size in points) of every visible, non-empty text of a figure just drawn: tick
    labels (those in view), titles, suptitles, axis labels, legends, annotations, bar labels and
    figure texts."""
    found = list(tick_sizes(fig, drawn=True))
    figures = [fig, *fig.subfigs]
    for ax in fig.axes:
        parts = [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        parts += list(ax.texts)
        legend = ax.get_legend()
        if legend is not None:
            parts += [*legend.get_texts(), legend.get_title()]
        found += [(t.get_text(), float(t.get_fontsize())) for t in parts if _shows(t)]
    for figure in figures:
        parts = list(figure.texts)
        if figure._suptitle is not None:
            parts.append(figure._suptitle)
        legends = [legend for legend in figure.legends]
        parts += [t for legend in legends for t in legend.get_texts()]
        found += [(t.get_text(), float(t.get_fontsize())) for t in parts if _shows(t)]
    return found


def _shows(text) -> bool:
    return bool(text.get_visible() and text.get_text().strip())


def assert_legible(name: str, fig: plt.Figure, width: float) -> None:
    """Legible as a lesson shows it (``width``: what ``lay_out_shown`` returned for the figure,
    just laid out): tick labels of at least 9 pt, a shown width of at least 600 px and at most
    ``MAX_WIDTH_PX`` (JupyterLab shrinks a wider PNG to its column, and the text with it), and
    every text at least ``MIN_SHOWN_PX`` pixels high as shown (80 dpi, after that shrinking)."""
    small = [(text, size) for text, size in tick_sizes(fig, drawn=True) if size < 9]
    assert not small, f"{name}: tick labels under 9 pt: {small[:5]}"
    assert width >= 600, f"{name}: {width:.0f} px wide"
    assert width <= MAX_WIDTH_PX, f"{name}: {width:.0f} px wide (at most {MAX_WIDTH_PX})"
    scale = fig.dpi / 72 * shown_scale(width)
    tiny = [(text[:20], round(size * scale, 1)) for text, size in text_sizes(fig)]
    tiny = [(text, px) for text, px in tiny if px < MIN_SHOWN_PX]
    assert not tiny, f"{name}: text under {MIN_SHOWN_PX} px as shown: {tiny[:5]}"


_ALT_CJK = re.compile(r"[\u3400-\u9fff]")
_FILE_NAME = re.compile(r"\.(png|jpe?g|svg)\b|^[\w./-]+$")


def alt_text_problem(alt: object, chinese: bool) -> str | None:
    """What is wrong with a figure's alt text (``alt_text.describe``), or None: it says what the
    figure shows, is no file name, and is in the lesson language (``chinese``)."""
    if not isinstance(alt, str) or len(alt.strip()) < 25:
        return f"no descriptive alt text ({alt!r})"
    if _FILE_NAME.search(alt.strip()):
        return f"alt text is a file name ({alt!r})"
    if chinese and not _ALT_CJK.search(alt):
        return f"alt text is not in Chinese ({alt[:60]!r})"
    if not chinese and _ALT_CJK.search(alt.split("“")[0]):
        return f"alt text is not in English ({alt[:60]!r})"
    return None
