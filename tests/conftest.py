"""Shared fixtures: the book's example and deterministic torch settings for every test."""

from __future__ import annotations

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import pytest
import torch

import mhsa_helpers as mh


@pytest.fixture(autouse=True)
def _deterministic_torch():
    torch.set_printoptions(precision=4, sci_mode=False)
    torch.manual_seed(0)
    yield


@pytest.fixture
def journey() -> mh.Journey:
    return mh.load_journey()


@pytest.fixture
def batch(journey) -> torch.Tensor:
    return journey.batch  # (2, 6, 3)
