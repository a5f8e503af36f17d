"""The test set-up itself: the CI hypothesis profile is reproducible, and tests leave no files."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st


def _draws(profile: str) -> list[int]:
    seen: list[int] = []

    @settings(settings.get_profile(profile), max_examples=20)
    @given(st.integers(0, 10**9))
    def record(value: int) -> None:
        seen.append(value)

    record()
    return seen


def test_ci_profile_draws_the_same_examples_every_run():
    first, second = _draws("ci"), _draws("ci")
    assert first == second and len(set(first)) > 5
    assert settings.get_profile("ci").database is None


def test_dev_profile_draws_fresh_examples():
    assert _draws("dev") != _draws("dev")


def test_the_profile_follows_the_ci_variable():
    expected = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
    assert settings.default.derandomize == (expected == "ci")
