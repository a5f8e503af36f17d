"""Every figure of both editions has alt text that says what it shows, in the lesson's language.

The alt text is made where the figure is made (``mhsa_helpers.ui.alt_text``): ``setup_lesson``
saves it as each figure's output metadata, ``show_figure`` as a widget picture's ``alt``; the
website puts it on the ``<img>``. Here: the saved notebooks carry it for every figure, and
``describe`` says what a figure shows (its kind, title, axes, tokens) in the lesson language.
Every figure function's alt text, in both languages, is checked by
``test_i18n_figures.test_every_figure_in_both_languages`` on the figures it draws anyway.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import matplotlib
import pytest
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from figure_checks import alt_text_problem

import mhsa_helpers as mh
from mhsa_helpers.i18n import using_language
from mhsa_helpers.ui.alt_text import describe, set_alt_text

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
CJK = re.compile(r"[\u3400-\u9fff]")


def _notebooks() -> list[Path]:
    found = []
    for edition in (NOTEBOOKS, NOTEBOOKS / "zh"):
        found += sorted(edition.glob("[0-9][0-9]_*.ipynb"))
        found += sorted((edition / "solutions").glob("[0-9][0-9]_*.ipynb"))
    return found


def test_every_saved_figure_and_widget_picture_has_alt_text_in_the_lesson_language():
    problems, figures = [], 0
    for path in _notebooks():
        chinese = "zh" in path.relative_to(NOTEBOOKS).parts
        name = path.relative_to(NOTEBOOKS)
        nb = json.loads(path.read_text(encoding="utf-8"))
        for index, cell in enumerate(nb["cells"]):
            for output in cell.get("outputs", []):
                if "image/png" not in output.get("data", {}):
                    continue
                figures += 1
                alt = output.get("metadata", {}).get("image/png", {}).get("alt")
                if problem := alt_text_problem(alt, chinese):
                    problems.append(f"{name} cell {index}: {problem}")
        widgets = nb["metadata"].get("widgets", {})
        state = widgets.get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
        for model_id, model in state.items():
            if model.get("model_name") != "ImageModel":
                continue
            drawn = model.get("state", {}).get("value") or any(
                buffer.get("path") == ["value"] for buffer in model.get("buffers", [])
            )
            if not drawn:
                continue  # a picture not drawn yet shows nothing
            figures += 1
            if problem := alt_text_problem(model["state"].get("alt"), chinese):
                problems.append(f"{name} widget picture {model_id[:8]}: {problem}")
    assert figures > 50, f"only {figures} figures found in the saved notebooks"
    assert problems == [], "figures without alt text (rebuild these notebooks):\n" + "\n".join(
        problems
    )


@pytest.fixture
def weights(journey) -> torch.Tensor:
    return torch.softmax(journey.inputs @ journey.inputs.T, dim=-1)  # (T, T)


def test_describe_names_kind_title_axes_and_tokens_in_each_language(journey, weights):
    for lang, kind, key in [("en", "heatmap", "key"), ("zh", "热力图", "键")]:
        with using_language(lang):
            fig = mh.plot_attention(weights, journey.words, title="Weights")
            text = describe(fig)
            plt.close(fig)
        assert kind in text and "Weights" in text and key in text, text
        assert all(word in text for word in journey.words), text
        assert bool(CJK.search(text)) == (lang == "zh"), text


def test_describe_counts_the_panels_of_a_figure_with_several(journey, weights):
    with using_language("en"):
        fig = mh.plot_attention_heads(torch.stack([weights, weights.T]), journey.words)
        text = describe(fig)
        plt.close(fig)
    assert "2 panels" in text and "Head 1" in text and "Head 2" in text, text


def test_a_figure_helper_text_wins_and_bad_input_is_named():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    assert "line chart" in describe(fig)
    set_alt_text(fig, "Loss falls from 1 to 0 in one step.")
    assert describe(fig) == "Loss falls from 1 to 0 in one step."
    with pytest.raises(ValueError, match="text"):
        set_alt_text(fig, "  ")
    plt.close(fig)
    with pytest.raises(TypeError, match="fig"):
        describe("figure.png")  # type: ignore[arg-type]


def test_a_widget_picture_keeps_the_figure_alt_text(journey, weights):
    from mhsa_helpers.ui.widgets import picture, show_figure

    image = picture()
    with using_language("zh"):
        show_figure(image, mh.plot_attention_grid(weights, journey.words, title="权重"))
    assert "权重" in image.alt and CJK.search(image.alt)
    assert image.tooltip is None  # ipywidgets 8 cannot draw an Image with a tooltip
    assert base64.b64encode(image.value)[:8]  # the picture itself was drawn too


def test_the_transformer_block_alt_text_gives_the_model_s_sizes():
    torch.manual_seed(0)
    model = mh.lm.CharTransformer(50, 24, 16, 3, 2)  # vocab 50, d_model 24, context 16
    for lang, words in (("en", "3 heads of head_dim 8"), ("zh", "3 个头（head_dim 8）")):
        with using_language(lang):
            fig = mh.figures.plot_transformer_block(model)
            text = describe(fig)
            plt.close(fig)
        assert words in text and "50 × 24" in text and "16 × 24" in text and "96" in text, text
