"""Saving and loading a trained character model: ``save_checkpoint`` / ``load_checkpoint``.

A checkpoint is one ``torch.save`` file holding only plain data (so ``torch.load(...,
weights_only=True)`` reads it without running any pickled code): the model's ``state_dict``, the
run's ``CharLMConfig`` as a dict, the tokenizer's characters, the training loss of every step, the
validation losses, the training time, the torch version that wrote it, and a SHA-256 checksum of the
whole record (the tensors' names, dtypes, shapes and bytes, and every other entry), checked when
loading: a file changed inside -- a weight, a character, the config -- is refused instead of loading
a wrong model. (Format 2 checksummed the weights only; of those files only the course's shipped one,
known by its whole-record digest, still loads.) The file is written beside the target and renamed
into place, so a failed write never loses the previous checkpoint. ``save_checkpoint(run, path,
dtype=torch.float16)`` stores the weights in half precision (half the size; loaded back as float32).
The course ships one, ``data/char_lm.pt``, written by ``tools/train_char_lm.py``
(``make train-demo``).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path

import torch

from ..data import data_file
from ..i18n import say
from .model import CharTransformer
from .tokenizer import CharTokenizer
from .training import CharLMConfig, CharLMRun, last_val_loss

__all__ = ["DEMO_CHECKPOINT", "CharLMCheckpoint", "load_checkpoint", "save_checkpoint"]

DEMO_CHECKPOINT = "char_lm.pt"
FORMAT = 3  # 3: the checksum covers the whole record; 2: the weights only
KEYS = ("format", "config", "chars", "unknown", "state_dict", "checksum", "losses", "val_losses")
# Format-2 records (weights-only checksum) trusted by their whole-record digest. None since the
# shipped data/char_lm.pt was retrained and written in format 3: every format-2 file is refused.
LEGACY_RECORDS: frozenset[str] = frozenset()


def tensor_checksum(state: dict[str, torch.Tensor]) -> str:
    """SHA-256 over every tensor's name, dtype, shape and bytes, in name order."""
    digest = hashlib.sha256()
    _hash_tensors(digest, state)
    return digest.hexdigest()


def _hash_tensors(digest: hashlib._Hash, state: dict[str, torch.Tensor]) -> None:
    for name in sorted(state):
        tensor = state[name].detach().cpu().contiguous()
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.view(-1).view(torch.uint8).numpy().tobytes())


def record_checksum(raw: dict) -> str:
    """SHA-256 over the whole record but its ``checksum``: the tensors as ``tensor_checksum``
    hashes them, then every other entry (config, characters, unknown, losses, ...) as JSON.

    A checkpoint whose character list or config was edited (4 heads instead of 2: the same
    weight shapes, other logits) no longer matches, as a changed weight does not.
    """
    digest = hashlib.sha256()
    _hash_tensors(digest, raw["state_dict"])
    rest = {k: v for k, v in raw.items() if k not in ("state_dict", "checksum")}
    digest.update(json.dumps(rest, sort_keys=True, ensure_ascii=True).encode())
    return digest.hexdigest()


def check_output_path(path: Path, name: str = "path") -> None:
    """Raise unless ``path`` can be written as a file: its folder exists, it is no folder."""
    if path.is_dir():
        raise IsADirectoryError(f"{name}={str(path)!r} is a folder; give a file name in it")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{name}={str(path)!r}: no folder {str(path.parent)!r} to write in")


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
        """One line in the lesson language (English by default): the size, the vocabulary, the
        steps trained and the last validation loss."""
        params, vocab, steps = (
            self.model.num_parameters(),
            self.tokenizer.vocab_size,
            len(self.losses),
        )
        last = last_val_loss(self.val_losses)
        return say(
            f"CharLMCheckpoint({params:,} parameters, vocab_size={vocab}, {steps} steps{last})",
            f"CharLMCheckpoint({params:,} 个参数，vocab_size={vocab}，训练了 {steps} 步{last})",
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
    check_output_path(path)  # before any work: a missing folder or a folder as the target
    state = {
        k: v.detach().cpu().to(dtype).clone()
        for k, v in run.model.state_dict().items()
        if k != "lm_head.weight"  # tied to tok_emb.weight
    }
    record = {
        "format": FORMAT,
        "config": asdict(run.config),
        "chars": list(run.tokenizer.chars),
        "unknown": run.tokenizer.unknown,
        "state_dict": state,
        "losses": [float(v) for v in run.losses],
        "val_losses": [[int(step), float(loss)] for step, loss in run.val_losses],
        "seconds": float(run.seconds),
        "torch_version": str(torch.__version__),
    }
    record["checksum"] = record_checksum(record)
    # A temporary file beside the target, renamed into place: a failed write (a full disk, an
    # interrupt) leaves the old checkpoint whole instead of a truncated one.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save(record, handle)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
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
    if raw.get("format") not in (2, FORMAT):
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
    _check_record(raw, source)
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


def _check_record(raw: dict, source: object) -> None:
    """Raise ``ValueError`` unless ``raw``'s checksum matches the record it came with."""
    changed = (
        f"{source}: the record does not match the checkpoint's checksum (the file was changed "
        "or corrupted after it was written: its weights, characters, config or losses); "
        "retrain it with `make train-demo`"
    )
    try:
        whole = record_checksum(raw)
    except (TypeError, ValueError) as err:  # an entry JSON cannot hold: not what was saved
        raise ValueError(f"{changed} ({err})") from err
    if raw["format"] == FORMAT:
        if whole != raw["checksum"]:
            raise ValueError(changed)
        return
    # Format 2 hashed the weights only; its other entries are trusted for known records only.
    if tensor_checksum(raw["state_dict"]) != raw["checksum"]:
        raise ValueError(changed)
    if whole not in LEGACY_RECORDS:
        raise ValueError(
            f"{source} is a format-2 checkpoint (its checksum covers the weights only, not its "
            "characters or config) and not the course's shipped one: write it again with "
            "save_checkpoint (format 3), or retrain it with tools/train_char_lm.py"
        )
