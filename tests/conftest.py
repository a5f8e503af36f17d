"""Shared fixtures: the book's example and deterministic torch settings for every test.

Hypothesis profiles: ``ci`` (loaded when the environment variable ``CI`` is set, as CI services
do) is derandomised -- the same examples on every run, so a red build is reproducible and never
flaky -- and keeps no example database. ``dev`` (the default) draws fresh examples each run and
keeps its database of failing examples (and its caches) in the temporary folder, not in the
repository.
``HYPOTHESIS_PROFILE=ci`` selects a profile by name.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
# One order of additions in MKL's matrix products on every processor, set before torch does its
# first one (mhsa_helpers.lesson.reproducible_math, which every lesson's setup_lesson calls):
# without it, on AVX-512 processors the wrapper and the split multi-head differ in the last bit.
os.environ.setdefault("MKL_CBWR", "COMPATIBLE")

import pytest
import torch
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir

import mhsa_helpers as mh

# Hypothesis keeps its example database and caches in the temporary folder, not in the checkout.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "mhsa-helpers-hypothesis")
settings.register_profile(
    "ci",
    settings.get_profile("default"),
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# Based on hypothesis's own default explicitly: under CI the current default is CI-flavoured.
settings.register_profile("dev", settings.get_profile("default"), deadline=None)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
settings.load_profile(PROFILE)

# One torch thread in each test process: `make unit` runs two workers on the two cores the course
# targets, and two threads each made four busy threads on two cores, whose waiting OpenMP threads
# spin (a third of the suite's CPU time went there). One thread is also what every lesson runs
# with (setup_lesson), so the digits the tests compare with were computed that way.
torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _deterministic_torch():
    torch.set_printoptions(precision=4, sci_mode=False)
    torch.manual_seed(0)
    yield


@pytest.fixture(autouse=True)
def _no_figure_left_open():
    """Each test starts with no open matplotlib figure, whatever the tests before it drew."""
    plt = sys.modules.get("matplotlib.pyplot")  # never imported here: tests of the bare install
    if plt is not None:
        plt.close("all")
    yield


@pytest.fixture(autouse=True)
def _english_by_default():
    """Every test starts in English: the lesson language is sticky (``setup_lesson`` keeps it)."""
    mh.i18n.set_language("en")
    yield
    mh.i18n.set_language("en")


@pytest.fixture
def two_threads() -> Iterator[int]:
    """Two torch threads for the test (the suite runs with one), so that a test of a function
    that runs with one thread and must restore the caller's count sees whether it did."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield 2
    torch.set_num_threads(before)


@pytest.fixture
def journey() -> mh.Journey:
    return mh.load_journey()


@pytest.fixture
def batch(journey) -> torch.Tensor:
    return journey.batch  # (2, 6, 3)
