"""Saving and loading a trained character model: ``save_checkpoint`` / ``load_checkpoint``.

A checkpoint is one ``torch.save`` file holding only plain data (so ``torch.load(...,
weights_only=True)`` reads it without running any pickled code): the model's ``state_dict``, the
run's ``CharLMConfig`` as a dict, the tokenizer's characters, the training loss of every step, the
validation losses, the training time, the torch version that wrote it, and a SHA-256 checksum of
the tensors (their names, dtypes, shapes and bytes), checked when loading: a file changed inside
is refused instead of loading changed weights. ``save_checkpoint(run, path, dtype=torch.float16)``
stores the weights in half precision (half the size; loaded back as float32). The course ships
one, ``data/char_lm.pt``, written by ``tools/train_char_lm.py`` (``make train-demo``).
"""

from __future__ import annotations

import hashlib
import os
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
FORMAT = 2
KEYS = ("format", "config", "chars", "unknown", "state_dict", "checksum", "losses", "val_losses")


def tensor_checksum(state: dict[str, torch.Tensor]) -> str:
    """SHA-256 over every tensor's name, dtype, shape and bytes, in name order."""
    digest = hashlib.sha256()
    for name in sorted(state):
        tensor = state[name].detach().cpu().contiguous()
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


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
        last = f", last val loss {self.val_losses[-1][1]:.3f}" if self.val_losses else ""
        return (
            f"CharLMCheckpoint({self.model.num_parameters():,} parameters, "
            f"vocab_size={self.tokenizer.vocab_size}, {len(self.losses)} steps{last})"
        )


def save_checkpoint(
    run: CharLMRun, path: str | os.PathLike, *, dtype: torch.dtype = torch.float32
) -> Path:
    """Write ``run`` (from ``train_char_lm``) to ``path``; return the path.

    ``dtype``: ``torch.float32`` (exact) or ``torch.float16`` / ``torch.bfloat16`` (half the size;
    the weights are rounded, and come back as float32 when loaded).
    """
    if not isinstance(run, CharLMRun):
        raise TypeError(f"run must be a CharLMRun (from train_char_lm), got {type(run).__name__}")
    if dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise TypeError(f"dtype must be torch.float32, float16 or bfloat16, got dtype={dtype!r}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path, got {type(path).__name__}")
    path = Path(path)
    state = {
        k: v.detach().cpu().to(dtype).clone()
        for k, v in run.model.state_dict().items()
        if k != "lm_head.weight"  # tied to tok_emb.weight
    }
    torch.save(
        {
            "format": FORMAT,
            "config": asdict(run.config),
            "chars": list(run.tokenizer.chars),
            "unknown": run.tokenizer.unknown,
            "state_dict": state,
            "checksum": tensor_checksum(state),
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
    except Exception as err:
        raise ValueError(
            f"path={str(source)!r} is not a checkpoint torch.load can read ({type(err).__name__})"
        ) from err
    if not isinstance(raw, dict):
        raise ValueError(f"{source} holds a {type(raw).__name__}, not a character-model checkpoint")
    if raw.get("format") != FORMAT:
        raise ValueError(
            f"{source} is not a character-model checkpoint of format {FORMAT} "
            f"(format={raw.get('format')!r}); write it again with save_checkpoint"
        )
    missing = [key for key in KEYS if key not in raw]
    if missing:
        raise ValueError(f"{source} is a checkpoint without {missing}; write it again")
    state = raw["state_dict"]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"{source}: state_dict must be a dict of tensors")
    if tensor_checksum(state) != raw["checksum"]:
        raise ValueError(
            f"{source}: the weights do not match the checkpoint's checksum (the file was "
            "changed or corrupted after it was written); retrain it with `make train-demo`"
        )
    try:
        config = CharLMConfig.from_dict(raw["config"])
        tokenizer = CharTokenizer.from_chars(raw["chars"], raw["unknown"])
        model = config.build_model(tokenizer.vocab_size)
        full = {k: v.float() for k, v in state.items()}
        full["lm_head.weight"] = full["tok_emb.weight"]  # tied
        model.load_state_dict(full)
        losses = [float(v) for v in raw["losses"]]
        val_losses = [(int(step), float(loss)) for step, loss in raw["val_losses"]]
    except (TypeError, ValueError, RuntimeError, KeyError) as err:
        raise ValueError(f"{source} is not a valid checkpoint: {err}") from err
    model.eval()
    return CharLMCheckpoint(
        model,
        tokenizer,
        config,
        losses,
        val_losses,
        float(raw.get("seconds", 0.0)),
        str(raw.get("torch_version", "")),
    )
