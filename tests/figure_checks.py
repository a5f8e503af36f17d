"""What the figure and plotting tests share: each test closes its figures; text on an axes; how
wide a figure is shown and how large its tick labels are (``setup_lesson``'s 80 dpi)."""

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


DPI = 80  # what setup_lesson sets


def png_width(png: bytes) -> int:
    """The width in pixels of a PNG image (from its header)."""
    return struct.unpack(">I", png[16:20])[0]


def shown_png(fig: plt.Figure) -> bytes:
    """The PNG a notebook would show for ``fig``: 80 dpi, cropped to what is drawn."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    return buffer.getvalue()


def shown_width(fig: plt.Figure) -> int:
    """The width in pixels of the PNG a notebook would show for ``fig``."""
    return png_width(shown_png(fig))


def lay_out_shown(fig: plt.Figure) -> float:
    """Lay ``fig`` out as the inline backend's draw does at 80 dpi, without rasterising it, and
    return the width in pixels of the PNG it would show: the figure's tight box plus savefig's
    padding, which is what ``bbox_inches="tight"`` crops to (``test_figure_legibility`` checks
    it against ``shown_width`` to the pixel). A missing glyph warns here: text is measured when
    it is laid out."""
    fig.set_dpi(DPI)
    fig.draw_without_rendering()
    return fig.get_tightbbox().padded(plt.rcParams["savefig.pad_inches"]).width * DPI


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


def assert_legible(name: str, fig: plt.Figure, width: float) -> None:
    """Tick labels of at least 9 pt and a shown width of at least 600 px (``width``: what
    ``lay_out_shown`` returned for the figure, just laid out)."""
    small = [(text, size) for text, size in tick_sizes(fig, drawn=True) if size < 9]
    assert not small, f"{name}: tick labels under 9 pt: {small[:5]}"
    assert width >= 600, f"{name}: {width:.0f} px wide"


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
