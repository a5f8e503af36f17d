"""explorer_frames: lesson 07's explorer drawn for a grid of slider values, for the course
website's static explorer (tools/build_site.py)."""

from __future__ import annotations

import pytest

from mhsa_helpers.i18n import using_language
from mhsa_helpers.ui.explorers.attention import explore_attention, explorer_frames


def test_each_grid_point_is_the_explorers_own_view_drawn_once():
    frames = explorer_frames([1, 2], [0.0, 0.5])
    assert [(f.heads, f.dropout) for f in frames] == [(1, 0.0), (1, 0.5), (2, 0.0), (2, 0.5)]
    assert all(f.png.startswith(b"\x89PNG") for f in frames)
    assert len({f.png for f in frames}) == 4, "every slider value has its own picture"
    assert len({f.alt for f in frames}) == 4 and all(len(f.alt) > 25 for f in frames)
    view = explore_attention(2, 0.5, 3.0, 123, "book", "train")
    assert frames[3].message.startswith(view.message)
    entropies = ", ".join(f"{e:.2f}" for e in view.entropy.tolist())
    assert frames[3].message.endswith(entropies)


def test_the_chinese_edition_gets_chinese_text_and_a_head_count_that_does_not_divide_is_refused():
    with using_language("zh"):
        (frame,) = explorer_frames([4], [0.1])
    assert "头" in frame.alt and "每个头的熵" in frame.message
    with pytest.raises(ValueError, match="5 does not divide d_out=24"):
        explorer_frames([5], [0.0])
