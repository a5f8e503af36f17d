"""Training throughput of lesson 12's model: the course's attention vs SDPA vs a nanoGPT block.

    python benchmarks/char_lm_training.py           # the shipped model's sizes (a few minutes)
    python benchmarks/char_lm_training.py --quick   # smoke run, small sizes (under a minute)

Three models of the same sizes (the shipped model's: d_model 192, 4 heads, 4 blocks, context 80,
batch 32, vocabulary 3,001) run the same training step (forward, cross-entropy, backward, AdamW)
on the same random batches, one CPU thread:

* ``course`` -- ``lm.CharTransformer`` with the course's ``MultiHeadAttention`` (the explicit
  (T, T) weight matrix: ``train_char_lm(backend="eager")``, how the shipped checkpoint was
  trained);
* ``course-sdpa`` -- the same model, the same parameters, its attention run by the ``"sdpa"``
  backend of the course's core (``train_char_lm(backend="sdpa")``, what `make train-demo` uses:
  on the CPU the same losses to float32 rounding, tests/test_char_lm.py);
* ``sdpa`` -- the same model with every block's attention replaced by the course's
  ``SDPAMultiHeadAttention`` (fused QKV, ``F.scaled_dot_product_attention``);
* ``nanogpt`` -- a nanoGPT-style model written here: one ``c_attn`` projection and
  ``F.scaled_dot_product_attention(..., is_causal=True)`` per block.

Rounds are interleaved (each round times every model once, in rotating order) after a warm-up;
the table reports the median tokens per second and the ratio to ``course``, all measured in this
one run, then the ratio course-sdpa / nanogpt paired by round (median, quartiles and range of
the per-round ratios, from wall time and from the timing thread's CPU time). The course's models
run as ``train_char_lm`` runs them (``lm.training_attention``: the backend, and no NaN check of
each block's input). All start from the same loss (about log(vocab_size)); the script checks
that each step's loss is finite.
"""

from __future__ import annotations

import os

# Timings measure MKL's fastest kernels: mhsa_helpers asks for its reproducible mode
# (MKL_CBWR=COMPATIBLE, for the lessons' bit-for-bit claims) only when nothing is set.
os.environ.setdefault("MKL_CBWR", "AUTO")

import argparse
import math
import platform
import statistics
import time
from contextlib import ExitStack

import torch
from torch import nn
from torch.nn import functional as F

import mhsa_helpers as mh
from mhsa_helpers import lm


class NanoBlock(nn.Module):
    """nanoGPT's Block: x + attn(ln_1(x)), x + mlp(ln_2(x)), attention in one SDPA call."""

    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.ln_1, self.ln_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)  # each (b, T, d)
        q, k, v = (
            z.view(b, t, self.num_heads, d // self.num_heads).transpose(1, 2) for z in (q, k, v)
        )
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (b, h, T, head_dim)
        x = x + self.c_proj(y.transpose(1, 2).reshape(b, t, d))  # (b, T, d)
        return x + self.mlp(self.ln_2(x))  # (b, T, d)


class NanoGPT(nn.Module):
    def __init__(self, vocab: int, d_model: int, context: int, num_heads: int, num_layers: int):
        super().__init__()
        self.tok_emb, self.pos_emb = nn.Embedding(vocab, d_model), nn.Embedding(context, d_model)
        self.blocks = nn.Sequential(*[NanoBlock(d_model, num_heads) for _ in range(num_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        self.apply(self._init_weights)  # nanoGPT's init: normal(0, 0.02), zero biases
        self.lm_head.weight = self.tok_emb.weight

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        # Without it (torch's default N(0, 1) embeddings, tied to the LM head) the logits are
        # huge and a CPU step is about 3x slower: the same sizes must start the same way.
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.tok_emb(ids) + self.pos_emb(torch.arange(ids.shape[1]))  # (b, T, d)
        return self.lm_head(self.ln_f(self.blocks(x)))  # (b, T, vocab)


def build(
    kind: str, vocab: int, d: int, context: int, heads: int, layers: int, stack: ExitStack
) -> nn.Module:
    """A fresh model of ``kind``; the course's models are set up as ``train_char_lm`` runs them
    (``lm.training_attention``, left on until ``stack`` closes)."""
    torch.manual_seed(0)
    if kind == "nanogpt":
        return NanoGPT(vocab, d, context, heads, layers)
    model = lm.CharTransformer(vocab, d, context, heads, layers)
    if kind == "sdpa":
        for block in model.blocks:
            block.attn = mh.SDPAMultiHeadAttention(d, d, context, 0.0, heads)
    backend = "eager" if kind == "course" else "sdpa"
    stack.enter_context(lm.training_attention(model, backend))
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few rounds")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    vocab, d, context, heads, layers, batch = 3001, 192, 80, 4, 4, 32
    if args.quick:
        vocab, d, layers, batch, args.rounds = 500, 64, 2, 8, 3
    if args.rounds < 1:
        raise SystemExit("char_lm_training: --rounds must be >= 1")
    torch.set_num_threads(1)
    kinds = ("course", "course-sdpa", "sdpa", "nanogpt")
    stack = ExitStack()  # the course's models keep training's attention settings to the end
    models = {k: build(k, vocab, d, context, heads, layers, stack) for k in kinds}
    optimizers = {k: torch.optim.AdamW(m.parameters(), lr=1e-3) for k, m in models.items()}
    generator = torch.Generator().manual_seed(0)

    def step(kind: str) -> tuple[float, float]:
        """(wall seconds, this thread's CPU seconds) of one training step of ``kind``."""
        ids = torch.randint(0, vocab, (batch, context + 1), generator=generator)
        start, cpu_start = time.perf_counter(), time.thread_time()
        logits = models[kind](ids[:, :-1])  # (b, T, vocab)
        loss = F.cross_entropy(logits.reshape(-1, vocab), ids[:, 1:].reshape(-1))
        optimizers[kind].zero_grad(set_to_none=True)
        loss.backward()
        optimizers[kind].step()
        if not math.isfinite(loss.item()):
            raise SystemExit(f"char_lm_training: {kind} gave a non-finite loss")
        return time.perf_counter() - start, time.thread_time() - cpu_start

    for kind in kinds:  # warm-up
        step(kind)
    times: dict[str, list[float]] = {k: [] for k in kinds}
    cpu_times: dict[str, list[float]] = {k: [] for k in kinds}
    for r in range(args.rounds):
        for kind in kinds[r % len(kinds) :] + kinds[: r % len(kinds)]:
            wall, cpu = step(kind)
            times[kind].append(wall)
            cpu_times[kind].append(cpu)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, 1 thread")
    print(f"MKL_CBWR={os.environ['MKL_CBWR']}, load average {load:.1f} after the rounds")
    print(f"d_model {d}, {heads} heads, {layers} blocks, context {context}, batch {batch}")
    base = batch * context / statistics.median(times["course"])
    for kind in kinds:
        speed = batch * context / statistics.median(times[kind])
        steps = 1 / statistics.median(times[kind])
        print(
            f"{kind:>11}: {speed:8.0f} tokens/s, {steps:.2f} steps/s  ({speed / base:.2f}x course)"
        )
    # The goal's ratio, paired by round (both steps measured a few seconds apart): > 1 means
    # the course's fast path is faster than nanoGPT's block. CPU time of the timing thread is
    # less disturbed than wall time when other jobs share the cores.
    for label, measured in (("wall", times), ("CPU", cpu_times)):
        ratios = sorted(n / c for n, c in zip(measured["nanogpt"], measured["course-sdpa"]))
        low, high = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
        print(
            f"course-sdpa speed / nanogpt speed, {label} time per round: median "
            f"{statistics.median(ratios):.3f}, quartiles {low:.3f}-{high:.3f}, "
            f"range {ratios[0]:.3f}-{ratios[-1]:.3f} ({len(ratios)} rounds)"
        )


if __name__ == "__main__":
    main()
