"""Assertions shared by the exercise-checker tests (tests/test_exercises_*.py)."""

from __future__ import annotations

from mhsa_helpers import exercises as ex


def assert_pass(result: ex.CheckResult) -> None:
    assert result, repr(result)
    assert result.passed is True
    assert repr(result).startswith("[PASS] ")


def assert_not_yet(result: ex.CheckResult, *fragments: str) -> None:
    assert not result, repr(result)
    text = repr(result)
    assert text.startswith(("[NOT YET] ", "[TO DO] ")), text  # TO DO: no answer given yet
    assert str(result) == text
    for fragment in fragments:
        assert fragment in text, text
