"""Training a ``CharTransformer`` on Tang verse: ``train_char_lm(CharLMConfig(...))``.

Each step draws ``batch_size`` random windows of ``context_length + 1`` characters from the
training poems; the model reads the first ``context_length`` and must predict each next one
(cross-entropy). AdamW, with the learning rate warmed up linearly, then decayed along a cosine
(nanoGPT's schedule). Every ``eval_every`` steps, and after the last, the loss on the held-out
poems is measured.

Runs are reproducible to the last digit on one machine: the initial weights come from
``torch.manual_seed(seed)`` inside a private copy of the global RNG state, the windows and the
dropout masks from that seeded state too, and the loop runs on one CPU thread.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from itertools import pairwise

import torch
from torch.nn import functional as F

from ..attention.base import CausalSelfAttentionBase
from ..attention.functional import BACKENDS
from ..i18n import say
from ..lesson import one_thread, progress_bar
from ..validation import (
    as_float,
    as_int,
    check_dropout,
    check_flag,
    check_positive_int,
    check_seed,
)
from .device import check_device
from .model import BlockParts, CharTransformer
from .text import load_verse, poem_text
from .tokenizer import CharTokenizer, check_text

__all__ = [
    "CharLMConfig",
    "CharLMRun",
    "TextData",
    "learning_rate",
    "poem_starts",
    "text_data",
    "train_char_lm",
    "training_attention",
    "validation_loss",
    "verse_data",
]

MAX_CHARS = 3000  # the vocabulary of the verse: 3,000 characters cover 98.9 % of its text
MIN_TEXT = 1000  # text_data refuses a shorter text


@dataclass(frozen=True)
class CharLMConfig:
    """Model sizes and training settings of one run; checked when created.

    The defaults are the shipped demo model's (tools/train_char_lm.py, ``make train-demo``).
    ``warmup_steps`` left out is a tenth of ``steps`` (stored as that number).
    """

    d_model: int = 128
    num_heads: int = 4
    num_layers: int = 3
    context_length: int = 128
    dropout: float = 0.2
    batch_size: int = 16
    steps: int = 400
    lr: float = 2e-3
    min_lr: float = 2e-4
    warmup_steps: int | None = None  # None: steps // 10 (40 for the 400 default steps)
    weight_decay: float = 0.1
    eval_every: int = 50
    seed: int = 0
    feed_forward: bool = True
    residual: bool = True
    layer_norm: bool = True
    poem_windows: bool = True  # windows start at a poem when the data has poem starts (verse_data)
    rope: bool = False  # rotary positions in attention instead of learned ones (BlockParts.rope)

    def __post_init__(self) -> None:
        # Numbers may be numpy scalars (as torch.nn.Linear allows); they are stored as Python
        # ints and floats, so that the config saves into a checkpoint and prints plainly.
        for name in (
            "d_model",
            "num_heads",
            "num_layers",
            "context_length",
            "batch_size",
            "steps",
            "eval_every",
        ):
            object.__setattr__(self, name, check_positive_int(name, getattr(self, name)))
        if self.d_model % self.num_heads:
            raise ValueError(
                f"d_model must be divisible by num_heads, got d_model={self.d_model}, "
                f"num_heads={self.num_heads}"
            )
        object.__setattr__(self, "dropout", check_dropout(self.dropout))
        for name in ("lr", "min_lr", "weight_decay"):
            value = as_float(name, getattr(self, name))
            if not math.isfinite(value) or value < 0 or (name == "lr" and value == 0):
                raise ValueError(f"{name} must be a finite number >= 0 (lr > 0), got {value!r}")
            object.__setattr__(self, name, value)
        if self.min_lr > self.lr:
            raise ValueError(f"min_lr must be <= lr, got min_lr={self.min_lr}, lr={self.lr}")
        # Derived from the steps unless given, so that CharLMConfig(steps=10) works as it is.
        warmup = self.steps // 10 if self.warmup_steps is None else self.warmup_steps
        warmup = as_int("warmup_steps", warmup)
        if not 0 <= warmup < self.steps:
            raise ValueError(f"warmup_steps must be in [0, steps={self.steps}), got {warmup}")
        object.__setattr__(self, "warmup_steps", warmup)
        object.__setattr__(self, "seed", check_seed("seed", self.seed))
        for name in ("feed_forward", "residual", "layer_norm", "poem_windows", "rope"):
            check_flag(name, getattr(self, name))

    @classmethod
    def from_dict(cls, values: dict) -> CharLMConfig:
        """A config from ``asdict(config)`` (as stored in a checkpoint); unknown keys raise."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown CharLMConfig fields: {unknown}")
        return cls(**values)

    def build_model(self, vocab_size: int) -> CharTransformer:
        """A fresh (untrained) ``CharTransformer`` of this config's sizes."""
        return CharTransformer(
            vocab_size,
            self.d_model,
            self.context_length,
            self.num_heads,
            self.num_layers,
            self.dropout,
            parts=BlockParts(self.feed_forward, self.residual, self.layer_norm, self.rope),
        )


def last_val_loss(val_losses: list[tuple[int, float]]) -> str:
    """The end of a run's one-line summary: its last validation loss in the lesson language, or
    nothing when it measured none (``CharLMRun`` and ``CharLMCheckpoint`` both print it)."""
    if not val_losses:
        return ""
    loss = val_losses[-1][1]
    return say(f", last val loss {loss:.3f}", f"，最后的验证损失 {loss:.3f}")


@dataclass
class CharLMRun:
    """What ``train_char_lm`` returns.

    Attributes:
        model: the trained ``CharTransformer``, in eval mode.
        tokenizer: the ``CharTokenizer`` of the whole Tang 300.
        config: the run's ``CharLMConfig``.
        losses: training loss of every step, in order (``losses[0]``: the untrained model, about
            log(vocab_size)).
        val_losses: ``(step, loss)`` on the held-out poems, every ``eval_every`` steps and after
            the last step.
        seconds: wall-clock time of the loop.
    """

    model: CharTransformer
    tokenizer: CharTokenizer
    config: CharLMConfig
    losses: list[float] = field(default_factory=list)
    val_losses: list[tuple[int, float]] = field(default_factory=list)
    seconds: float = 0.0

    def __repr__(self) -> str:
        steps, first, final = len(self.losses), self.losses[0], self.losses[-1]
        last = last_val_loss(self.val_losses)
        return say(
            f"CharLMRun(steps={steps}, first loss {first:.3f}, last loss {final:.3f}{last})",
            f"CharLMRun(steps={steps}，首个损失 {first:.3f}，最后的损失 {final:.3f}{last})",
        )


@dataclass(frozen=True)
class TextData:
    """The tokenizer, the encoded training and validation text, and where its poems start.

    ``train_starts`` / ``val_starts`` (int64 (n,), or None for a text without empty lines): the
    index of the newline just before each poem's first character (the empty line after the poem
    before it, or the newline the text starts with). A window that starts there reads a poem from
    its beginning: position 0 is that newline, position 1 the poem's first character.
    """

    tokenizer: CharTokenizer
    train_ids: torch.Tensor  # (N_train,)
    val_ids: torch.Tensor  # (N_val,)
    train_starts: torch.Tensor | None = None  # (n_train_poems,)
    val_starts: torch.Tensor | None = None  # (n_val_poems,)


def poem_starts(ids: torch.Tensor, newline_id: int) -> torch.Tensor | None:
    """Indices of the newlines that begin a poem: the text's first newline if it comes first,
    and every newline that follows another one (an empty line) and is followed by a character.
    None when ``ids`` has none (a text without empty lines)."""
    newline = ids == newline_id  # (N,)
    before = torch.cat([torch.tensor([True]), newline[:-1]])  # the text start counts as a newline
    after = torch.cat([~newline[1:], torch.tensor([False])])  # a character follows
    starts = torch.nonzero(newline & before & after).flatten()  # (n,)
    return starts if starts.numel() else None


@lru_cache(maxsize=1)
def verse_data() -> TextData:
    """The course corpus: a tokenizer of the training poems' 3,000 most frequent characters
    (and ``UNKNOWN``), the ids of the training poems and of the validation poems."""
    verse = load_verse()
    # A newline first: then every poem, the first one too, follows a newline a window starts at.
    train, validation = "\n" + poem_text(verse.train), "\n" + poem_text(verse.validation)
    tokenizer = CharTokenizer(train, max_chars=MAX_CHARS)
    return _with_starts(tokenizer, tokenizer.encode(train), tokenizer.encode(validation))


def _with_starts(
    tokenizer: CharTokenizer, train_ids: torch.Tensor, val_ids: torch.Tensor
) -> TextData:
    if "\n" not in tokenizer.chars:
        return TextData(tokenizer, train_ids, val_ids)
    newline = tokenizer.chars.index("\n")
    return TextData(
        tokenizer,
        train_ids,
        val_ids,
        poem_starts(train_ids, newline),
        poem_starts(val_ids, newline),
    )


def text_data(
    text: str, *, validation_share: float = 0.1, max_chars: int | None = MAX_CHARS
) -> TextData:
    """Tokenizer and train / validation ids from any text (e.g. the Song ci, or your own).

    The last ``validation_share`` of the text (cut at an empty line, or a newline, when there is
    one near the cut) is held out for validation; the tokenizer is built from the training part
    only, capped at the ``max_chars`` most frequent characters (None: all of them) with
    ``UNKNOWN`` for every other one, so a character seen only in the held-out part is unknown.
    A text under 1,000 characters is refused: there is not enough to learn from or to measure.
    """
    check_text(text)  # a str without lone surrogates, or a message naming the position
    if len(text) < MIN_TEXT:
        raise ValueError(
            f"text must have at least {MIN_TEXT} characters to train on and hold out a "
            f"validation part, got len(text)={len(text)}"
        )
    share = as_float("validation_share", validation_share)
    if not 0.01 <= share <= 0.5:
        raise ValueError(
            f"validation_share must be in [0.01, 0.5], got validation_share={validation_share!r}"
        )
    cut = int(len(text) * (1 - share))
    for mark in ("\n\n", "\n"):
        found = text.rfind(mark, int(cut * 0.9), cut)
        if found > 0:
            cut = found + len(mark)
            break
    train, validation = text[:cut], text[cut:]
    tokenizer = CharTokenizer(
        train, max_chars=max_chars if max_chars is None else as_int("max_chars", max_chars)
    )
    if tokenizer.unknown is None:  # no cap: characters only in the validation part
        tokenizer = CharTokenizer(train, max_chars=len(set(train)))
    # No poem starts: a text of your own may have paragraphs longer than the context, and its
    # windows start anywhere (``poem_windows`` then changes nothing).
    return TextData(tokenizer, tokenizer.encode(train), tokenizer.encode(validation))


def learning_rate(step: int, config: CharLMConfig) -> float:
    """Linear warm-up for ``warmup_steps``, then a cosine from ``lr`` down to ``min_lr``.

    ``step`` counts from 0; from the last step (``config.steps - 1``) on the rate holds
    ``min_lr`` (the cosine would rise again). A negative step raises ``ValueError``.
    """
    if not isinstance(config, CharLMConfig):
        raise TypeError(f"config must be a CharLMConfig, got {type(config).__name__}")
    step = as_int("step", step)
    if step < 0:
        raise ValueError(f"step must be >= 0 (steps count from 0), got step={step}")
    warmup = int(config.warmup_steps or 0)  # an int once the config exists (__post_init__)
    if step < warmup:
        return config.lr * (step + 1) / warmup
    span = max(1, config.steps - 1 - warmup)
    progress = min(1.0, (step - warmup) / span)  # past the schedule: min_lr
    return config.min_lr + 0.5 * (config.lr - config.min_lr) * (1 + math.cos(math.pi * progress))


def _random_windows(
    ids: torch.Tensor, batch_size: int, length: int, starts: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch_size`` random windows: inputs (b, length) and next-character targets (b, length).

    With ``starts`` (poem starts, see ``TextData``), each window begins at one of them, drawn
    uniformly; without, anywhere in the text.
    """
    if starts is None:
        starts = torch.randint(0, ids.numel() - length, (batch_size,)).to(ids.device)  # (b,)
    else:
        starts = starts[torch.randint(0, starts.numel(), (batch_size,))].to(ids.device)  # (b,)
    offsets = torch.arange(length + 1, device=ids.device)  # (length + 1,)
    windows = ids[starts[:, None] + offsets]  # (b, length + 1)
    return windows[:, :-1], windows[:, 1:]


def _segments(ids: torch.Tensor, length: int, starts: torch.Tensor | None) -> list[tuple[int, int]]:
    """(start, size) pieces that predict every id after the first once, each ``size <= length``.

    Without ``starts``: consecutive windows of ``length``. With them: each poem from the newline
    before it up to the next poem's (a poem longer than ``length`` in consecutive pieces).
    """
    end = ids.numel() - 1  # the last input position
    bounds = [0, end] if starts is None else sorted({0, *starts.tolist(), end})
    pieces = []
    for first, last in pairwise(bounds):
        pieces += [(s, min(length, last - s)) for s in range(first, last, length)]
    return pieces


@torch.no_grad()
def validation_loss(
    model: CharTransformer,
    ids: torch.Tensor,
    *,
    batch_size: int = 64,
    starts: torch.Tensor | None = None,
) -> float:
    """Mean next-character loss (nats) over ``ids``, every character after the first once.

    Without ``starts``: consecutive, non-overlapping windows of ``context_length``. With
    ``starts`` (``TextData.val_starts``): each poem is read from its own start, as the model
    writes one, so a character's context is the poem up to it (a count table's is the one or two
    characters before it).
    """
    if not isinstance(model, CharTransformer):
        raise TypeError(f"model must be a CharTransformer, got {type(model).__name__}")
    if not isinstance(ids, torch.Tensor) or ids.dim() != 1 or ids.is_floating_point():
        raise TypeError(
            "ids must be a 1-D tensor of token ids, e.g. TextData.val_ids, got "
            + (f"shape {tuple(ids.shape)}" if isinstance(ids, torch.Tensor) else type(ids).__name__)
        )
    batch_size = check_positive_int("batch_size", batch_size)
    length = model.context_length
    if ids.numel() < 2 or (starts is None and ids.numel() <= length):
        raise ValueError(f"need more than context_length={length} ids, got {ids.numel()}")
    pieces = sorted(_segments(ids, length, starts), key=lambda piece: piece[1])
    ids = ids.to(model.tok_emb.weight.device)
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    try:
        for first in range(0, len(pieces), batch_size):
            batch = pieces[first : first + batch_size]
            width = batch[-1][1]  # the longest piece of the batch (sorted by size)
            inputs = torch.zeros(len(batch), width, dtype=torch.long, device=ids.device)  # (n, W)
            targets = torch.full_like(inputs, -100)  # (n, W): -100 is ignored by the loss
            for row, (s, size) in enumerate(batch):
                inputs[row, :size] = ids[s : s + size]
                targets[row, :size] = ids[s + 1 : s + size + 1]
            logits = model(inputs)  # (n, W, vocab)
            total += F.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="sum"
            ).item()
            count += int((targets != -100).sum())
    finally:
        model.train(was_training)
    return total / count


@contextmanager
def training_attention(model: CharTransformer, backend: str = "eager") -> Iterator[None]:
    """Inside: every block's attention runs training's path. After: the plain one again.

    * ``backend``, a key of ``BACKENDS``: ``"sdpa"`` sets ``use_sdpa`` on each block's
      ``MultiHeadAttention`` -- Q, K and V in one matmul (nanoGPT's ``c_attn``) and
      ``F.scaled_dot_product_attention(..., is_causal=True)``, no (T, T) matrix; ``"eager"``
      keeps the explicit weights (lesson 06's lines).
    * The NaN/inf input check is off (``check_finite = False``, as in ``TinyAttentionLM``): it
      reads every block's input each step (about 1 % of a step at the shipped sizes).
      ``train_char_lm`` checks each step's loss instead, which is NaN as soon as any block's
      input holds a NaN or an inf.

    The same parameters and the same function: outputs and gradients agree with the plain model
    to float32 rounding (tests/test_training_fast_path.py). Both settings are instance attributes,
    removed on the way out, so the model comes back with its class's defaults (eager attention,
    checked input), the one lesson 12 inspects.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {sorted(BACKENDS)}, got backend={backend!r}")
    attentions: list[CausalSelfAttentionBase] = []
    for block in model.blocks:
        attention = getattr(block, "attn", None)
        if isinstance(attention, CausalSelfAttentionBase):
            attentions.append(attention)
    for attention in attentions:
        attention.use_sdpa = backend == "sdpa"
        attention.check_finite = False
    try:
        yield
    finally:
        for attention in attentions:
            for name in ("use_sdpa", "check_finite"):
                vars(attention).pop(name, None)  # back to the class's value


def train_char_lm(
    config: CharLMConfig | None = None,
    *,
    stop_after: int | None = None,
    progress: bool = True,
    data: TextData | None = None,
    device: str | torch.device = "cpu",
    backend: str = "eager",
    on_eval: Callable[[CharLMRun], object] | None = None,
    threads: int = 1,
) -> CharLMRun:
    """Train a fresh ``CharTransformer`` on the Tang 300 with ``config`` (default: the demo's).

    Args:
        config: sizes and settings; ``CharLMConfig()`` when None.
        stop_after: stop after this many steps of the configured schedule (the learning rate
            still follows ``config.steps``), e.g. to re-run a checkpoint's first steps.
        progress: show a ``tqdm`` progress bar (``tqdm.auto``: a widget in a notebook).
        data: the tokenizer and ids (default ``verse_data()``; ``text_data(text)`` for another).
        device: where to train (``"cuda"`` or ``"mps"`` when present). The default, the CPU, is
            what the course's saved outputs were made on; another device gives other digits.
        backend: how the blocks' ``MultiHeadAttention`` computes attention while training, a key
            of ``attention.functional.BACKENDS``: ``"eager"`` (the explicit (T, T) weights) or
            ``"sdpa"`` (``F.scaled_dot_product_attention``, faster; ``make train-demo`` uses
            it). The same parameters and the same formula: on the CPU, SDPA's kernel also draws
            its attention-dropout mask from the global generator in the same order, so the two
            give the same losses to float32 rounding, dropout included (tests/test_char_lm.py).
            (A GPU's fused kernels draw their masks their own way.) The returned model is the
            plain one (eager attention, as lesson 12 inspects it) whatever the backend.
        on_eval: called with the run so far (model in train mode) after each validation, e.g.
            to save a checkpoint on the way (tools/train_char_lm.py does).
        threads: CPU threads for the loop: 1 (default) makes a run bitwise reproducible on one
            machine; ``make train-full`` uses 2 (reproducible for that count).

    The caller's global RNG state and thread count are restored afterwards. The model comes
    back on ``device``.
    """
    config = CharLMConfig() if config is None else config
    if not isinstance(config, CharLMConfig):
        raise TypeError(f"config must be a CharLMConfig, got {type(config).__name__}")
    steps = config.steps if stop_after is None else check_positive_int("stop_after", stop_after)
    if steps > config.steps:
        raise ValueError(f"stop_after must be <= config.steps={config.steps}, got {stop_after}")
    check_flag("progress", progress)
    if on_eval is not None and not callable(on_eval):
        raise TypeError(f"on_eval must be callable or None, got {type(on_eval).__name__}")
    data = verse_data() if data is None else data
    if not isinstance(data, TextData):
        raise TypeError(f"data must be a TextData or None, got {type(data).__name__}")
    _check_ids_in_vocabulary(data)  # before the first step, not as a wrong model afterwards
    for name, ids in (("training", data.train_ids), ("validation", data.val_ids)):
        if ids.numel() < config.context_length + 1:
            raise ValueError(
                f"the {name} text has {ids.numel()} characters, too few for windows of "
                f"context_length + 1 = {config.context_length + 1}: use a longer text or a "
                "smaller context_length"
            )
    device = check_device(device)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {sorted(BACKENDS)}, got backend={backend!r}")
    vocab_size = data.tokenizer.vocab_size
    length = config.context_length
    losses: list[float] = []
    val_losses: list[tuple[int, float]] = []
    num_layers, num_heads = config.num_layers, config.num_heads
    desc = say(
        f"training {num_layers} blocks x {num_heads} heads",
        f"训练 {num_layers} 个块 × {num_heads} 个头",
    )
    bar = progress_bar(steps, desc, progress)
    start = time.perf_counter()
    threads = check_positive_int("threads", threads)
    with one_thread(threads), torch.random.fork_rng(devices=[]), ExitStack() as fast_path:
        torch.manual_seed(config.seed)
        model = config.build_model(vocab_size).to(device)
        fast_path.enter_context(training_attention(model, backend))  # undone when the loop ends
        train_ids, val_ids = data.train_ids.to(device), data.val_ids.to(device)
        train_starts = None
        if config.poem_windows and data.train_starts is not None:  # windows start at a poem
            train_starts = data.train_starts[data.train_starts < train_ids.numel() - length]
        matrices = [p for p in model.parameters() if p.dim() >= 2]  # decayed
        others = [p for p in model.parameters() if p.dim() < 2]  # biases, layer-norm scales
        optimizer = torch.optim.AdamW(
            [
                {"params": matrices, "weight_decay": config.weight_decay},
                {"params": others, "weight_decay": 0.0},
            ],
            lr=config.lr,
            betas=(0.9, 0.99),
        )
        model.train()
        for step in range(steps):
            for group in optimizer.param_groups:
                group["lr"] = learning_rate(step, config)
            inputs, targets = _random_windows(
                train_ids, config.batch_size, length, train_starts
            )  # (b, T), (b, T)
            logits = model(inputs)  # (b, T, vocab)
            loss = F.cross_entropy(logits.reshape(-1, vocab_size), targets.reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            losses.append(loss.item())  # a float: a kept tensor would keep its buffer alive
            if not math.isfinite(losses[-1]):  # the blocks do not check their input here
                raise ValueError(
                    f"training diverged: the loss of step {step + 1} is {losses[-1]} (a NaN or "
                    "an inf inside the model); try a smaller lr or a longer warm-up"
                )
            evaluate = (step + 1) % config.eval_every == 0 or step + 1 == steps
            if evaluate:
                val_losses.append(
                    (step + 1, validation_loss(model, val_ids, starts=data.val_starts))
                )
                if on_eval is not None:
                    seconds = time.perf_counter() - start
                    on_eval(CharLMRun(model, data.tokenizer, config, losses, val_losses, seconds))
            if bar is not None:
                bar.update(1)
                if step % 10 == 0 or evaluate:
                    shown = {"loss": f"{losses[-1]:.3f}"}
                    if val_losses:
                        shown["val_loss"] = f"{val_losses[-1][1]:.3f}"
                    bar.set_postfix(shown)
        model.eval()
    if bar is not None:
        bar.close()
    return CharLMRun(
        model,
        data.tokenizer,
        config,
        losses,
        val_losses,
        time.perf_counter() - start,
    )


def _check_ids_in_vocabulary(data: TextData) -> None:
    """Raise unless ``data``'s ids are 1-D integer tensors within its tokenizer's vocabulary.

    An embedding reads an id past its table as an error only on some devices; on others it
    trains silently on garbage, so the ids are checked before the first step.
    """
    vocab_size = data.tokenizer.vocab_size
    for name in ("train_ids", "val_ids"):
        ids = getattr(data, name)
        if not isinstance(ids, torch.Tensor) or ids.dtype not in (torch.long, torch.int32):
            what = ids.dtype if isinstance(ids, torch.Tensor) else type(ids).__name__
            raise TypeError(f"data.{name} must be an int64 or int32 tensor of ids, got {what}")
        if ids.dim() != 1:
            raise ValueError(
                f"data.{name} must be 1-D (one long text), got data.{name}.shape={tuple(ids.shape)}"
            )
        if ids.numel() == 0:
            continue  # too short: the length check names it
        low, high = int(ids.min()), int(ids.max())
        if low < 0 or high >= vocab_size:
            raise ValueError(
                f"data.{name} holds ids from {low} to {high}, outside the tokenizer's "
                f"vocabulary [0, {vocab_size}): build the ids with data.tokenizer.encode"
            )


def config_dict(config: CharLMConfig) -> dict:
    """``asdict(config)``: plain numbers, safe to store in a checkpoint."""
    return asdict(config)
