"""The suite's own rules: no test id carries a source line number.

An id like ``test_hint[lesson06.py:248]`` changes whenever a line above it moves, so a test's
history and a ``-k`` selection break for no reason; a test that loops over call sites names them
``file::function`` in its failure message instead.
"""

from __future__ import annotations

import re

import pytest

LINE_NUMBER = re.compile(r"\.pyi?:\d+")


def test_the_pattern_finds_a_line_number_and_nothing_else():
    assert LINE_NUMBER.search("tests/test_x.py::test_hint[exercises/lesson06.py:248]")
    assert not LINE_NUMBER.search("tests/test_x.py::test_hint[lesson06.py::check_head_dim]")
    assert not LINE_NUMBER.search("tests/test_x.py::test_padding[b2-T7]")


def test_no_collected_test_id_carries_a_source_line_number(request: pytest.FixtureRequest):
    ids = [item.nodeid for item in request.session.items]
    assert request.node.nodeid in ids  # the collected items of this run, this test among them
    assert [nodeid for nodeid in ids if LINE_NUMBER.search(nodeid)] == []
