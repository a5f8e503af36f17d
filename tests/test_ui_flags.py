"""Every flag of a public ui function is a real bool: a truthy string never means True.

``figures.padding_masks(causal="no")`` once drew a causal mask. The test finds every boolean
parameter of the public functions of ``mhsa_helpers.ui`` (its plots, figures, explorers and
widget helpers) by signature, so a new flag without a check fails here, and calls each with
values that are not bools.
"""

from __future__ import annotations

import importlib
import inspect
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import mhsa_helpers as mh

MODULES = [
    "mhsa_helpers.ui.plotting",
    "mhsa_helpers.ui.widgets",
    "mhsa_helpers.ui.sentences",
    "mhsa_helpers.ui.glossary",
    "mhsa_helpers.ui.fonts",
    "mhsa_helpers.ui.explorers.attention",
    "mhsa_helpers.ui.explorers.dropout",
    "mhsa_helpers.ui.explorers.heads",
    "mhsa_helpers.ui.explorers.training",
    "mhsa_helpers.ui.figures.basics",
    "mhsa_helpers.ui.figures.heads",
    "mhsa_helpers.ui.figures.padding",
    "mhsa_helpers.ui.figures.production",
]

W = torch.softmax(torch.arange(12.0).reshape(2, 2, 3)[:, :, :2] / 7, dim=-1)  # (2 heads, 2, 2)
PAD = torch.tensor([False, False, True])

#: One valid call per public function that has flags: the function, its other arguments.
CALLS = {
    "plot_attention": lambda **flags: mh.plot_attention(W[0], ["a", "b"], **flags),
    "plot_attention_heads": lambda **flags: mh.plot_attention_heads(W, ["a", "b"], **flags),
    "plot_attention_grid": lambda **flags: mh.plot_attention_grid(W, ["a", "b"], **flags),
    "padding_masks": lambda **flags: mh.figures.padding_masks(PAD, ["a", "b", "<pad>"], **flags),
    "attention_explorer": lambda **flags: mh.attention_explorer(**flags),
}
#: Flags whose documented default None means "decide for me".
MAY_BE_NONE = {("plot_attention", "annot"), ("plot_attention_heads", "annot")}


def _flags() -> set[tuple[str, str]]:
    found = set()
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if not inspect.isfunction(value):
                continue
            for parameter in inspect.signature(value).parameters.values():
                annotation = str(parameter.annotation)
                if isinstance(parameter.default, bool) or re.search(r"\bbool\b", annotation):
                    found.add((name, parameter.name))
    return found


#: Parameters that take a bool *or* something else: ``char_axis``'s ``font`` is True (search),
#: False or None (positions) or a font name; ``test_char_axis_font_is_a_bool_none_or_a_name``.
NOT_FLAGS = {("char_axis", "font")}
FLAGS = sorted(_flags() - NOT_FLAGS)


def test_every_flag_of_the_ui_is_tested_here():
    assert {name for name, _ in FLAGS} == set(CALLS), (
        "a public ui function has a flag this test does not call; add it to CALLS"
    )
    assert len(FLAGS) >= 6


NOT_BOOLS = ["no", "False", "", 1, 0, 1.0, torch.tensor(True), [True]]


@pytest.mark.parametrize(("function", "flag"), FLAGS, ids=[f"{f}-{p}" for f, p in FLAGS])
def test_a_flag_that_is_not_a_bool_is_named(function, flag):
    bad_values = [*NOT_BOOLS, *([] if (function, flag) in MAY_BE_NONE else [None])]
    for bad in bad_values:
        with pytest.raises(TypeError, match=rf"{flag} must be True or False.*{flag}="):
            CALLS[function](**{flag: bad})
    for good in (True, False):  # and the real bools work
        result = CALLS[function](**{flag: good})
        if isinstance(result, plt.Figure):
            plt.close(result)
    plt.close("all")


@pytest.mark.parametrize("causal", [True, False])
def test_padding_masks_draws_what_the_flag_says(causal):
    fig = mh.figures.padding_masks(PAD, ["a", "b", "<pad>"], causal=causal)
    first = np.asarray(fig.axes[0].images[0].get_array())
    expected = np.triu(np.ones((3, 3), dtype=bool), 1) if causal else np.zeros((3, 3), bool)
    assert (first.astype(bool) == expected).all()
    plt.close(fig)


def test_char_axis_font_is_a_bool_none_or_a_name():
    from mhsa_helpers.ui import fonts

    for bad in [1, 0, 1.0, np.bool_(True), torch.tensor(True), [True]]:
        with pytest.raises(TypeError, match="font must be True, False, None or a font name"):
            fonts.char_axis("月", font=bad)
    assert fonts.char_axis("月光", font=False).labels == ["0", "1"]
    assert fonts.char_axis("月光", font=None).font is None
    assert fonts.char_axis("月光", font="Some Font").rc["font.family"][0] == "Some Font"
