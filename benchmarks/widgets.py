"""How long one slider move takes in the lessons' explorers, and what the fast grid saves.

    python benchmarks/widgets.py              # median of 7 runs per measurement (~30 s)
    python benchmarks/widgets.py --repeats 3

A slider re-runs its callback and re-draws a PNG; that should feel instant (well under a second
on a laptop). Measured, as CPU time (``time.process_time``, less sensitive than wall time to other
jobs on a shared machine) and median of ``--repeats`` runs:

* ``plot_attention_grid`` of 8 heads x 11 words, rendered to PNG (what a widget draws), against
  ``plot_attention_heads`` of the same weights (seaborn heatmaps): the ratio is the grid's reason
  to exist;
* one move of lesson 05's heads slider to 8 heads (compute + draw);
* building lesson 07's attention explorer with 8 heads on the longer sentence (compute + draw).

Prints a table and the ratio; asserts nothing (timings depend on the machine). The unit tests
check what these calls draw; this script checks how fast.
"""

from __future__ import annotations

import os

# Timings measure MKL's fastest kernels: mhsa_helpers asks for its reproducible mode
# (MKL_CBWR=COMPATIBLE, for the lessons' bit-for-bit claims) only when nothing is set.
os.environ.setdefault("MKL_CBWR", "AUTO")

import argparse
import statistics
import time
from collections.abc import Callable

os.environ.setdefault("MPLBACKEND", "Agg")

import torch

import mhsa_helpers as mh
from mhsa_helpers.ui.plotting import figure_png
from mhsa_helpers.ui.sentences import LONGER_SENTENCE


def cpu_seconds(action: Callable[[], object], repeats: int) -> float:
    """Median CPU time of ``action`` over ``repeats`` runs, after one warm-up run."""
    action()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        action()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    generator = torch.Generator().manual_seed(0)
    weights = torch.rand(8, 11, 11, generator=generator).tril()
    weights = weights / weights.sum(dim=-1, keepdim=True)  # (8, 11, 11), rows sum to 1
    words = LONGER_SENTENCE.split()

    heads = mh.heads_explorer()
    slider = heads.controls["heads"]

    def move_heads_slider() -> None:
        slider.value = 1
        slider.value = 8

    timings = {
        "plot_attention_grid, 8 heads x 11 words -> PNG": lambda: figure_png(
            mh.plot_attention_grid(weights, words)
        ),
        "plot_attention_heads, same weights -> PNG": lambda: figure_png(
            mh.plot_attention_heads(weights, words)
        ),
        "heads explorer: slider 1 -> 8 (two re-draws)": move_heads_slider,
        "attention explorer: build, 8 heads, longer sentence": lambda: mh.attention_explorer(
            heads=8, sentence="longer"
        ),
    }
    results = {name: cpu_seconds(action, args.repeats) for name, action in timings.items()}
    width = max(map(len, results))
    print(f"{'measurement':<{width}}  CPU seconds (median of {args.repeats})")
    for name, seconds in results.items():
        print(f"{name:<{width}}  {seconds:8.3f}")
    grid, seaborn = list(results.values())[:2]
    print(f"\nplot_attention_heads / plot_attention_grid: {seaborn / grid:.1f}x")


if __name__ == "__main__":
    main()
