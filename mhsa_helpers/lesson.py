"""Deterministic settings: ``setup_lesson()`` at the top of every lesson, ``one_thread()`` and
``progress_bar()`` for the trainers.

Why: a lesson must print the same digits on a learner's laptop, in CI and in the saved notebook.
That needs a fixed seed, torch's 4-decimal printing without scientific notation, and a fixed
number of CPU threads (a matmul can round its last bit differently with 1 or 8 threads).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from .attention.validation import check_positive_int, check_seed
from .i18n import set_language

__all__ = ["one_thread", "progress_bar", "setup_lesson"]


def setup_lesson(seed: int = 123, threads: int = 1, lang: str | None = None) -> None:
    """Seed Python and torch, fix torch's print format and thread count, set plot defaults.

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


@contextmanager
def one_thread() -> Iterator[None]:
    """Run the block with one torch CPU thread, then restore the caller's thread count.

    The trainers use it: one thread makes a run bitwise reproducible on a machine, and it is the
    fastest setting for the course's tiny matmuls.
    """
    before = torch.get_num_threads()
    torch.set_num_threads(1)
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
