"""``attention_explorer(sentences=...)`` checks every sentence before it builds a widget.

Inside a slider's callback ipywidgets swallows an error and leaves a dead widget, so an entry the
explorer's float32 layers cannot take must fail at once, naming ``sentences[name]`` and what is
wrong with it (not ``x``, the layer's argument the learner never wrote).
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import mhsa_helpers as mh
from mhsa_helpers.ui.explorers.attention import explore_attention

WORDS = ["the", "cat", "sat"]
GOOD = torch.rand(3, 4)

BAD = {
    "float64": (WORDS, GOOD.double(), TypeError, r"sentences\['s'\].*float32.*float64"),
    "float16": (WORDS, GOOD.half(), TypeError, r"sentences\['s'\].*float32.*float16"),
    "int64": (WORDS, torch.ones(3, 4, dtype=torch.long), TypeError, r"sentences\['s'\].*float32"),
    "nan": (
        WORDS,
        GOOD.index_fill(0, torch.tensor([1]), float("nan")),
        ValueError,
        r"sentences\['s'\].*word 1 \('cat'\).*NaN",
    ),
    "inf": (
        WORDS,
        GOOD.index_fill(0, torch.tensor([2]), float("inf")),
        ValueError,
        r"sentences\['s'\].*word 2 \('sat'\)",
    ),
    "overflowing": (WORDS, torch.full((3, 4), 1e30), ValueError, r"sentences\['s'\].*too large"),
    "rows-differ": (WORDS, torch.rand(2, 4), ValueError, r"sentences\['s'\].*3 words"),
    "one-dimensional": (WORDS, torch.rand(3), ValueError, r"sentences\['s'\]"),
    "no-columns": (WORDS, torch.rand(3, 0), ValueError, r"sentences\['s'\].*d_in = 0"),
    "meta": (WORDS, torch.empty(3, 4, device="meta"), ValueError, r"sentences\['s'\].*CPU"),
    "words-a-string": ("the cat sat", GOOD, TypeError, r"sentences\['s'\].*split"),
    "words-not-strings": ([1, 2, 3], GOOD, TypeError, r"sentences\['s'\].*strings"),
    "no-words": ([], torch.rand(0, 4), ValueError, r"sentences\['s'\]"),
    "embeddings-a-list": (WORDS, GOOD.tolist(), TypeError, r"sentences\['s'\].*torch.Tensor"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_sentence_is_named_before_any_widget_exists(case):
    words, embeddings, error, pattern = BAD[case]
    sentences = {"s": (words, embeddings)}
    with pytest.raises(error, match=pattern):
        mh.attention_explorer(sentence="s", sentences=sentences, draw=False)
    with pytest.raises(error, match=pattern):
        explore_attention(sentence="s", sentences=sentences)


@pytest.mark.parametrize(
    "sentences",
    [
        {1: (WORDS, GOOD)},
        {"": (WORDS, GOOD)},
        {"s": (WORDS,)},
        {"s": GOOD},
        {"s": [WORDS, GOOD, 0]},
    ],
    ids=["name-not-a-string", "empty-name", "one-item", "a-tensor", "three-items"],
)
def test_a_malformed_entry_is_named(sentences):
    with pytest.raises((TypeError, ValueError), match="sentences"):
        mh.attention_explorer(sentences=sentences, draw=False)


def test_a_bad_sentence_among_good_ones_is_caught_even_if_not_selected():
    sentences = {"good": (WORDS, GOOD), "bad": (WORDS, GOOD.double())}
    with pytest.raises(TypeError, match=r"sentences\['bad'\]"):
        mh.attention_explorer(sentence="good", sentences=sentences, draw=False)


@settings(max_examples=25, deadline=None)
@given(
    rows=st.lists(
        st.lists(st.floats(-1e3, 1e3, width=32), min_size=2, max_size=2), min_size=1, max_size=6
    ),
    heads=st.sampled_from([1, 2, 3, 4]),
)
def test_every_accepted_sentence_gives_a_live_widget(rows, heads):
    words = [f"w{i}" for i in range(len(rows))]
    sentences = {"mine": (words, torch.tensor(rows, dtype=torch.float32))}
    explorer = mh.attention_explorer(heads=heads, sentence="mine", sentences=sentences, draw=False)
    for scale in (0.5, 8.0):  # the slider's ends
        explorer.controls["scale"].value = scale
        view = explorer.result
        assert view is not None and view.ok and view.sentence == "mine"
        assert torch.isfinite(view.weights).all() and torch.isfinite(view.entropy).all()
        assert "<b style" not in explorer.message.value
