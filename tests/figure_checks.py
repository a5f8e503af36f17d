"""What the figure and plotting tests share: each test closes its figures; text on an axes."""

from __future__ import annotations

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
