"""Deterministic settings: ``setup_lesson()`` at the top of every lesson, ``one_thread()`` and
``progress_bar()`` for the trainers.

Why: a lesson must print the same digits on a learner's laptop, in CI and in the saved notebook.
That needs a fixed seed, torch's 4-decimal printing without scientific notation, a fixed
number of CPU threads (a matmul can round its last bit differently with 1 or 8 threads), and one
order of additions inside matrix products whatever the processor: Intel MKL, torch's CPU BLAS,
picks its kernel by CPU (AVX2, AVX-512, ...) and by matrix shape, so on some processors the heads
computed one by one and the same heads in one batched product differ in the last bit (~1e-8).
``reproducible_math()`` switches MKL to its reproducible mode (``MKL_CBWR=COMPATIBLE``), in which
both are bit for bit equal on every processor; it must run before the first matrix product, which
is why ``import mhsa_helpers`` already does it (and ``setup_lesson()`` again, first). The
lessons' tensors are tiny, so it costs nothing noticeable; the benchmarks set ``MKL_CBWR=AUTO``.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from .i18n import set_language
from .validation import check_positive_int, check_seed

__all__ = ["one_thread", "progress_bar", "reproducible_math", "setup_lesson"]


def reproducible_math() -> None:
    """Ask MKL for one order of additions on every processor (``MKL_CBWR=COMPATIBLE``).

    MKL reads the variable when it does its first matrix product, so call this before any; a
    value the caller has already set (another ``MKL_CBWR`` mode) is kept. Without MKL (Apple
    silicon, for instance) the variable is simply unused.
    """
    os.environ.setdefault("MKL_CBWR", "COMPATIBLE")


def setup_lesson(seed: int = 123, threads: int = 1, lang: str | None = None) -> None:
    """Seed Python and torch, fix torch's print format, thread count and MKL's order of
    additions (``reproducible_math``), set plot defaults.

    Args:
        seed: passed to ``random.seed`` and ``torch.manual_seed`` (the book uses 123 and 789).
        threads: CPU threads for torch. 1 makes every printed digit reproducible across machines;
            the lessons' tensors are tiny, so it costs nothing noticeable.
        lang: the lesson language, "en" or "zh" (简体中文): checker hints, widget labels and
            figure titles follow it (see ``mhsa_helpers.i18n``). The Chinese edition's lessons
            differ from the English ones only in this argument. ``None`` (the default) keeps the
            current language (English until one is named), so a later
            ``setup_lesson(seed=789)`` in a Chinese lesson re-seeds without switching back to
            English.
    """
    reproducible_math()
    seed = check_seed("seed", seed)
    threads = check_positive_int("threads", threads)
    if lang is not None:
        set_language(lang)
    random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    torch.set_printoptions(precision=4, sci_mode=False)
    try:
        import matplotlib as mpl
    except ImportError:  # pragma: no cover - matplotlib is a dependency
        return
    mpl.rcParams.update({"figure.dpi": 80, "figure.max_open_warning": 0})
    from .ui.fonts import use_cjk_font

    use_cjk_font()
    # Every figure the lesson shows is saved with alt text in the lesson language (the website
    # puts it on the <img>); outside IPython this does nothing.
    from .ui.alt_text import install as save_alt_text

    save_alt_text()


@contextmanager
def one_thread(threads: int = 1) -> Iterator[None]:
    """Run the block with one torch CPU thread (or ``threads``), then restore the caller's count.

    The trainers use it: one thread makes a run bitwise reproducible on a machine, and it is the
    fastest setting for the course's tiny matmuls; a larger model trains faster on two (its
    digits then depend on the thread count, not on the machine's load).
    """
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def progress_bar(total: int, desc: str, enabled: bool = True) -> Any:
    """A tqdm progress bar of ``total`` steps (a widget in JupyterLab), or None if not ``enabled``.

    Imported here, not at the top of the module, so that ``import mhsa_helpers`` stays light.
    """
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False)
