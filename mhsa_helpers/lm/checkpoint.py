"""Saving and loading a trained character model: ``save_checkpoint`` / ``load_checkpoint``.

A checkpoint is one ``torch.save`` file holding only plain data (so ``torch.load(...,
weights_only=True)`` reads it without running any pickled code): the model's ``state_dict``, the
run's ``CharLMConfig`` as a dict, the tokenizer's characters, the training loss of every step, the
validation losses, the training time and the torch version that wrote it. The course ships one,
``data/char_lm.pt``, written by ``tools/train_char_lm.py`` (``make train-demo``).
"""

from __future__ import annotations

import os
import pickle
from dataclasses import asdict, dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path

import torch

from ..data import data_file
from .model import CharTransformer
from .tokenizer import CharTokenizer
from .training import CharLMConfig, CharLMRun

__all__ = ["DEMO_CHECKPOINT", "CharLMCheckpoint", "load_checkpoint", "save_checkpoint"]

DEMO_CHECKPOINT = "char_lm.pt"
FORMAT = 1


@dataclass
class CharLMCheckpoint:
    """A loaded checkpoint: the model (eval mode), its tokenizer, config and training record."""

    model: CharTransformer
    tokenizer: CharTokenizer
    config: CharLMConfig
    losses: list[float] = field(default_factory=list)
    val_losses: list[tuple[int, float]] = field(default_factory=list)
    seconds: float = 0.0
    torch_version: str = ""

    def __repr__(self) -> str:
        return (
            f"CharLMCheckpoint({self.model.num_parameters():,} parameters, "
            f"vocab_size={self.tokenizer.vocab_size}, {len(self.losses)} steps, "
            f"last val loss {self.val_losses[-1][1]:.3f})"
        )


def save_checkpoint(run: CharLMRun, path: str | os.PathLike) -> Path:
    """Write ``run`` (from ``train_char_lm``) to ``path``; return the path."""
    if not isinstance(run, CharLMRun):
        raise TypeError(f"run must be a CharLMRun (from train_char_lm), got {type(run).__name__}")
    path = Path(path)
    state = {k: v for k, v in run.model.state_dict().items() if k != "lm_head.weight"}  # tied
    torch.save(
        {
            "format": FORMAT,
            "config": asdict(run.config),
            "chars": list(run.tokenizer.chars),
            "state_dict": state,
            "losses": list(run.losses),
            "val_losses": [list(pair) for pair in run.val_losses],
            "seconds": float(run.seconds),
            "torch_version": str(torch.__version__),
        },
        path,
    )
    return path


def load_checkpoint(path: str | os.PathLike | Traversable | None = None) -> CharLMCheckpoint:
    """Load a checkpoint (default: the course's ``data/char_lm.pt``); the model is in eval mode."""
    source = data_file(DEMO_CHECKPOINT) if path is None else path
    if not isinstance(source, (str, os.PathLike, Traversable)):
        raise TypeError(f"path must be a file path or None, got {type(path).__name__}")
    if isinstance(source, (str, os.PathLike)):
        source = Path(source)
    if not source.is_file():
        raise FileNotFoundError(
            f"no checkpoint at {source}; the course's demo model is written by "
            "`make train-demo` (tools/train_char_lm.py)"
        )
    try:
        with source.open("rb") as handle:
            raw = torch.load(handle, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError) as err:
        raise ValueError(
            f"path={str(source)!r} is not a checkpoint torch.load can read ({type(err).__name__})"
        ) from err
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise ValueError(f"{source} is not a character-model checkpoint of format {FORMAT}")
    config = CharLMConfig.from_dict(raw["config"])
    tokenizer = CharTokenizer.from_chars(raw["chars"])
    model = config.build_model(tokenizer.vocab_size)
    state = dict(raw["state_dict"])
    state["lm_head.weight"] = state["tok_emb.weight"]  # tied
    model.load_state_dict(state)
    model.eval()
    return CharLMCheckpoint(
        model,
        tokenizer,
        config,
        list(raw["losses"]),
        [(int(step), float(loss)) for step, loss in raw["val_losses"]],
        float(raw["seconds"]),
        str(raw["torch_version"]),
    )
