"""A tiny attention-only language model and two toy tasks to train it on (lesson 08).

* ``TinyAttentionLM`` -- token embedding + position embedding, one causal ``MultiHeadAttention``
  block, and a linear LM head: ids (b, T) -> logits (b, T, vocab_size). No feed-forward block, no
  residual connection, no layer norm: every prediction has to flow through the attention heads,
  so the demo checks that gradients reach every part of the block.
* ``train_repeat_task`` -- the source lesson card's demo: each row repeats one random id over the
  whole context and the target is the next token, i.e. "the next token equals the previous one".
  The loss falls from about log(vocab_size) = log(64) = 4.16 to well below 1.0 in 3 epochs.
* ``train_shift_task`` -- copy the token ``k`` positions back: ``target[t] = ids[t - k]``. The only
  way to solve it is to look exactly k positions back, so a head specialises (专门化) on that
  offset, which ``offset_attention`` measures.

Both trainers are seeded and run with one CPU thread inside, so a given seed gives the same losses
to the last digit on every machine (printed numbers in the notebooks are rounded anyway).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace

import torch
from torch import nn
from torch.nn import functional as F

from .multihead import MultiHeadAttention
from .validation import check_dropout, check_positive_int

__all__ = [
    "IGNORE_INDEX",
    "TinyAttentionLM",
    "TrainingResult",
    "make_repeat_batch",
    "make_shift_batch",
    "offset_attention",
    "train_repeat_task",
    "train_shift_task",
]

IGNORE_INDEX = -100  # cross_entropy's default ignore_index: positions without a target


class TinyAttentionLM(nn.Module):
    """ids (b, T) -> logits (b, T, vocab_size) through one causal multi-head attention block.

    Layers, created in this order (so a seed gives the same model every time):
    ``tok_emb`` (vocab_size, d_model), ``pos_emb`` (context_length, d_model),
    ``attn`` = ``MultiHeadAttention(d_model, d_model, context_length, dropout, num_heads)``,
    ``lm_head`` = ``Linear(d_model, vocab_size)``.
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        context_length: int,
        num_heads: int,
        dropout: float = 0.0,
    ):
        super().__init__()
        self.vocab_size = check_positive_int("vocab_size", vocab_size)
        self.d_model = check_positive_int("d_model", d_model)
        self.context_length = check_positive_int("context_length", context_length)
        self.num_heads = check_positive_int("num_heads", num_heads)
        check_dropout(dropout)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        # MultiHeadAttention checks d_model % num_heads == 0 and says so clearly.
        self.attn = MultiHeadAttention(d_model, d_model, context_length, dropout, num_heads)
        self.lm_head = nn.Linear(d_model, vocab_size)

    @property
    def head_dim(self) -> int:
        return self.attn.head_dim

    def check_ids(self, ids: object) -> torch.Tensor:
        """Raise ``TypeError``/``ValueError`` for anything that is not a valid (b, T) id tensor."""
        if not isinstance(ids, torch.Tensor):
            raise TypeError(f"ids must be a torch.Tensor of token ids, got {type(ids).__name__}")
        if ids.dtype == torch.bool or ids.is_floating_point() or ids.is_complex():
            raise TypeError(
                f"ids must have an integer dtype (e.g. torch.long), got ids.dtype={ids.dtype}; "
                "pass token ids, not embeddings"
            )
        if ids.dim() != 2:
            raise ValueError(
                f"ids must have shape (batch, num_tokens), got ids.shape={tuple(ids.shape)}"
            )
        num_tokens = ids.shape[1]
        if num_tokens < 1:
            raise ValueError(f"ids must hold at least one token, got ids.shape={tuple(ids.shape)}")
        if num_tokens > self.context_length:
            raise ValueError(
                f"ids has {num_tokens} tokens, more than context_length={self.context_length} "
                f"(ids.shape={tuple(ids.shape)})"
            )
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.vocab_size):
            raise ValueError(
                f"token ids must be in [0, {self.vocab_size}), got values from "
                f"{int(ids.min())} to {int(ids.max())}"
            )
        return ids

    def forward(
        self, ids: torch.Tensor, return_weights: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Return logits (b, T, vocab_size), or ``(logits, weights)`` with weights (b, h, T, T)."""
        self.check_ids(ids)
        positions = torch.arange(ids.shape[1], device=ids.device)  # (T,)
        x = self.tok_emb(ids) + self.pos_emb(positions)  # (b, T, d_model)
        out, weights = self.attn(x, return_weights=True)  # (b, T, d_model), (b, h, T, T)
        logits = self.lm_head(out)  # (b, T, vocab_size)
        return (logits, weights) if return_weights else logits

    def extra_repr(self) -> str:
        return (
            f"vocab_size={self.vocab_size}, d_model={self.d_model}, "
            f"context_length={self.context_length}, num_heads={self.num_heads}, "
            f"head_dim={self.head_dim}"
        )


@dataclass
class TrainingResult:
    """What a training run returns.

    Attributes:
        model: the trained ``TinyAttentionLM`` (in eval mode).
        losses: cross-entropy of every optimisation step, in order (``losses[0]`` is the loss of
            the untrained model on the first batch: about log(vocab_size)).
        epoch_losses: mean of ``losses`` over each epoch.
        task: "repeat" or "shift".
        config: the arguments of the run (seed, sizes, steps, learning rate, ...).
    """

    model: TinyAttentionLM
    losses: list[float]
    epoch_losses: list[float]
    task: str
    config: dict = field(default_factory=dict)

    @property
    def first_loss(self) -> float:
        return self.losses[0]

    @property
    def final_loss(self) -> float:
        """Mean loss of the last epoch."""
        return self.epoch_losses[-1]

    def __repr__(self) -> str:
        return (
            f"TrainingResult(task={self.task!r}, steps={len(self.losses)}, "
            f"first_loss={self.first_loss:.2f}, epoch_losses="
            f"[{', '.join(f'{x:.2f}' for x in self.epoch_losses)}])"
        )


@contextmanager
def _one_thread() -> Iterator[None]:
    """Run with one torch CPU thread (bitwise reproducible, and fastest for tiny matmuls)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def make_repeat_batch(
    batch_size: int, context_length: int, vocab_size: int, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows that repeat one random id: ids (b, T) and next-token targets (b, T), all equal."""
    first = torch.randint(0, vocab_size, (batch_size, 1), generator=generator)  # (b, 1)
    seq = first.expand(batch_size, context_length + 1)  # (b, T + 1)
    return seq[:, :-1].clone(), seq[:, 1:].clone()  # (b, T), (b, T)


def make_shift_batch(
    batch_size: int,
    context_length: int,
    vocab_size: int,
    k: int,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random ids (b, T) and targets (b, T) with ``target[t] = ids[t - k]`` (ignored for t < k)."""
    ids = torch.randint(0, vocab_size, (batch_size, context_length), generator=generator)
    targets = torch.full_like(ids, IGNORE_INDEX)  # (b, T)
    targets[:, k:] = ids[:, :-k]
    return ids, targets


def _progress(iterable, total: int, desc: str, enabled: bool):
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, leave=False)


# The settings every run records in ``TrainingResult.config``, in this order; a task's own
# arguments (the shift task's ``k``) follow them and are passed on to its batch function.
_SETTINGS = (
    "num_heads",
    "d_model",
    "context_length",
    "vocab_size",
    "epochs",
    "steps_per_epoch",
    "batch_size",
    "lr",
    "seed",
)


def _train(
    task: str, make_batch: Callable[..., tuple[torch.Tensor, torch.Tensor]], arguments: dict
) -> TrainingResult:
    """Train a fresh ``TinyAttentionLM`` on batches from ``make_batch``.

    ``arguments`` are the calling trainer's arguments (its ``locals()``): the ``_SETTINGS``,
    ``progress``, and the task's own ones, which go to
    ``make_batch(batch_size, context_length, vocab_size, **task_arguments, generator=...)``.
    """
    task_arguments = {
        name: value
        for name, value in arguments.items()
        if name not in _SETTINGS and name != "progress"
    }
    config = {**{name: arguments[name] for name in _SETTINGS}, **task_arguments}
    run = SimpleNamespace(**config)
    check_positive_int("epochs", run.epochs)
    check_positive_int("steps_per_epoch", run.steps_per_epoch)
    check_positive_int("batch_size", run.batch_size)
    if isinstance(run.seed, bool) or not isinstance(run.seed, int):
        raise TypeError(f"seed must be an int, got {run.seed!r} ({type(run.seed).__name__})")
    if not (isinstance(run.lr, (int, float)) and math.isfinite(run.lr) and run.lr > 0):
        raise ValueError(f"lr must be a positive number, got lr={run.lr!r}")
    with _one_thread():
        torch.manual_seed(run.seed)  # the model's initial weights
        model = TinyAttentionLM(run.vocab_size, run.d_model, run.context_length, run.num_heads)
        data = torch.Generator().manual_seed(run.seed)  # the batches, independent of global RNG
        optimizer = torch.optim.Adam(model.parameters(), lr=run.lr)
        model.train()
        losses: list[float] = []
        epoch_losses: list[float] = []
        steps = range(run.epochs * run.steps_per_epoch)
        desc = f"{task} task, {run.num_heads} heads"
        for step in _progress(steps, len(steps), desc, arguments["progress"]):
            ids, targets = make_batch(  # (b, T), (b, T)
                run.batch_size, run.context_length, run.vocab_size, **task_arguments, generator=data
            )
            logits = model(ids)  # (b, T, vocab)
            loss = F.cross_entropy(
                logits.reshape(-1, run.vocab_size), targets.reshape(-1), ignore_index=IGNORE_INDEX
            )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if (step + 1) % run.steps_per_epoch == 0:
                epoch_losses.append(sum(losses[-run.steps_per_epoch :]) / run.steps_per_epoch)
        model.eval()
    return TrainingResult(model, losses, epoch_losses, task, config)


def train_repeat_task(
    num_heads: int = 4,
    d_model: int = 32,
    context_length: int = 12,
    vocab_size: int = 64,
    epochs: int = 3,
    seed: int = 0,
    progress: bool = True,
    *,
    steps_per_epoch: int = 40,
    batch_size: int = 32,
    lr: float = 3e-3,
) -> TrainingResult:
    """Train a ``TinyAttentionLM`` to continue a row that repeats one token.

    Each row is one random id repeated ``context_length + 1`` times; inputs are the first
    ``context_length`` tokens, targets the last ``context_length`` (shifted left by one). Adam,
    cross-entropy, fresh random batches from a generator seeded with ``seed``. With the defaults
    (4 heads, d_model 32, T 12, vocab 64) the first loss is about log(64) = 4.16 and the last
    epoch's mean loss is well below 1.0 for any seed, in about a second on one CPU thread.
    """
    return _train("repeat", make_repeat_batch, locals())


def train_shift_task(
    k: int = 2,
    num_heads: int = 4,
    d_model: int = 32,
    context_length: int = 12,
    vocab_size: int = 64,
    epochs: int = 3,
    seed: int = 0,
    progress: bool = True,
    *,
    steps_per_epoch: int = 50,
    batch_size: int = 32,
    lr: float = 1e-2,
) -> TrainingResult:
    """Train a ``TinyAttentionLM`` to output the token ``k`` positions back.

    Inputs are random ids; ``target[t] = ids[t - k]`` for ``t >= k`` (earlier positions have no
    target and are ignored by the loss). To solve it, some head must put its weight on position
    ``t - k``; ``offset_attention(result.model, k)`` measures how much each head does.
    """
    check_positive_int("k", k)
    if k >= context_length:
        raise ValueError(f"k must be smaller than context_length={context_length}, got k={k}")
    return _train("shift", make_shift_batch, locals())


def offset_attention(
    weights_or_model: torch.Tensor | TinyAttentionLM,
    k: int,
    ids: torch.Tensor | None = None,
) -> torch.Tensor:
    """Mean weight each head puts on the token ``k`` positions back: tensor (num_heads,).

    Args:
        weights_or_model: attention weights (h, T, T) or (b, h, T, T), or a ``TinyAttentionLM``
            (then its weights on ``ids`` are used).
        k: the offset, 0 <= k < T (0 is the token itself, 1 the previous token, ...).
        ids: (b, T) token ids for a model; default: 256 random sequences of full length drawn
            from a generator seeded with 0 (the same every call).

    Returns the mean of ``weights[..., t, t - k]`` over the batch and over queries ``t >= k``.
    """
    if isinstance(weights_or_model, TinyAttentionLM):
        model = weights_or_model
        if ids is None:
            generator = torch.Generator().manual_seed(0)
            ids = torch.randint(
                0, model.vocab_size, (256, model.context_length), generator=generator
            )
        was_training = model.training
        model.eval()
        with torch.no_grad():
            _, weights = model(ids, return_weights=True)  # (b, h, T, T)
        model.train(was_training)
    elif isinstance(weights_or_model, torch.Tensor):
        if ids is not None:
            raise ValueError("ids is only used with a model; got weights and ids")
        weights = weights_or_model
    else:
        raise TypeError(
            "offset_attention expects attention weights (a torch.Tensor) or a TinyAttentionLM, "
            f"got {type(weights_or_model).__name__}"
        )
    if not weights.is_floating_point():
        raise TypeError(f"weights must be floating point, got weights.dtype={weights.dtype}")
    if weights.dim() == 3:
        weights = weights.unsqueeze(0)  # (1, h, T, T)
    if weights.dim() != 4 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(
            "weights must have shape (num_heads, T, T) or (batch, num_heads, T, T), "
            f"got weights.shape={tuple(weights.shape)}"
        )
    num_tokens = weights.shape[-1]
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"k must be an int, got {k!r} ({type(k).__name__})")
    if not 0 <= k < num_tokens:
        raise ValueError(f"k must be in [0, {num_tokens}) for T={num_tokens}, got k={k}")
    diagonal = torch.diagonal(weights.detach(), offset=-k, dim1=-2, dim2=-1)  # (b, h, T - k)
    return diagonal.mean(dim=(0, 2))  # (h,)
