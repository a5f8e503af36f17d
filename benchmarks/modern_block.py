"""Lesson 13's parts, timed: RoPE's cost per attention call, and the modern block's training step.

    python benchmarks/modern_block.py            # d 512, T 256 (about a minute on 1 CPU thread)
    python benchmarks/modern_block.py --quick    # smoke run, small sizes (a few seconds)

Two measurements, both reported as ratios in the same run (CPU, or CUDA with ``--device cuda``):

1. **RoPE per attention call.** ``mh.ModernAttention`` (GQA + RoPE, forward in eval mode under
   ``torch.no_grad()``) three ways: with its cos/sin tables computed once and sliced (the package's
   ``RotaryEmbedding``), with the tables recomputed on every call (``mh.rope_cos_sin``: what a
   model without the cache pays), and without RoPE at all (cos = 1, sin = 0 tables: the rotation's
   arithmetic stays, the trigonometry goes; the difference to the cached run is then the table
   slicing). Ratios to the cached run.
2. **Training step, modern block vs GPT-2 block of the same parameter count.** One AdamW step
   (forward, ``loss = out.pow(2).mean()``, backward, step) of ``mh.ModernDecoderLayer`` (as many
   K/V heads as query heads, SwiGLU at the 2/3 * 4 width) and of ``lm.model.TransformerBlock``
   (GPT-2's: LayerNorm, MultiHeadAttention with biases, GELU feed-forward 4 d). Both hold about
   12 d^2 parameters (printed). GPT-2's learned positions live outside its block (in the
   embedding), RoPE inside the modern one: each block is timed as a model would run it.

Runs are interleaved (each round times every variant once, the order rotated) after one warm-up
round; the table shows the median per variant and the ratio. Prints only; asserts nothing.
"""

from __future__ import annotations

import os

# Timings measure MKL's fastest kernels: mhsa_helpers asks for its reproducible mode
# (MKL_CBWR=COMPATIBLE, for the lessons' bit-for-bit claims) only when nothing is set.
os.environ.setdefault("MKL_CBWR", "AUTO")

import argparse
import platform
import statistics
import time
from collections.abc import Callable

import torch
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers.lm.model import TransformerBlock


class FreshTables(nn.Module):
    """``RotaryEmbedding``'s interface, with cos/sin recomputed on every call (no cache)."""

    def __init__(self, head_dim: int, base: float):
        super().__init__()
        self.head_dim, self.base = head_dim, base

    def forward(self, x, offset=0, position_ids=None):
        positions = torch.arange(offset, offset + x.shape[-2], device=x.device)
        cos, sin = mh.rope_cos_sin(positions, self.head_dim, self.base)
        return cos.to(x.dtype), sin.to(x.dtype)


class NoRotation(nn.Module):
    """cos = 1, sin = 0: the rotation's arithmetic without any angle (made once)."""

    def __init__(self, head_dim: int, length: int):
        super().__init__()
        self.register_buffer("ones", torch.ones(length, head_dim))
        self.register_buffer("zeros", torch.zeros(length, head_dim))

    def forward(self, x, offset=0, position_ids=None):
        n = x.shape[-2]
        return self.ones[offset : offset + n].to(x.dtype), self.zeros[offset : offset + n].to(
            x.dtype
        )


def interleaved(variants: dict[str, Callable[[], None]], rounds: int) -> dict[str, float]:
    """Median seconds per variant; each round runs every variant once, in a rotated order."""
    names = list(variants)
    for name in names:  # warm-up
        variants[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            start = time.perf_counter()
            variants[name]()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def rope_cost(args, device: torch.device) -> dict[str, float]:
    torch.manual_seed(0)
    d, h, g, T, b = args.d_model, args.heads, args.kv_heads, args.tokens, args.batch
    attn = mh.ModernAttention(d, T, h, g).to(device).eval()
    attn.check_finite = False  # the host-side NaN check is not what is measured
    x = torch.randn(b, T, d, device=device)
    cached = attn.rotary_emb
    modules = {
        "tables cached": cached,
        "tables recomputed": FreshTables(attn.head_dim, attn.rope_base),
        "no rotation angles": NoRotation(attn.head_dim, T).to(device),
    }

    def run(module: nn.Module) -> Callable[[], None]:
        def call() -> None:
            attn.rotary_emb = module
            with torch.no_grad():
                for _ in range(args.calls):
                    attn(x)
            sync(device)

        return call

    result = interleaved({name: run(m) for name, m in modules.items()}, args.repeats)
    attn.rotary_emb = cached
    return {name: seconds / args.calls for name, seconds in result.items()}


def training_steps(args, device: torch.device) -> tuple[dict[str, float], dict[str, int]]:
    torch.manual_seed(0)
    d, h, T, b = args.d_model, args.heads, args.tokens, args.batch
    blocks = {
        "GPT-2 block": TransformerBlock(d, T, h),
        "modern block": mh.ModernDecoderLayer(d, T, h, h),
    }
    counts = {name: sum(p.numel() for p in m.parameters()) for name, m in blocks.items()}
    x = torch.randn(b, T, d, device=device)

    def step(block: nn.Module) -> Callable[[], None]:
        block.to(device).train()
        for module in block.modules():
            if hasattr(module, "check_finite"):
                module.check_finite = False
        optimizer = torch.optim.AdamW(block.parameters(), lr=1e-4)

        def call() -> None:
            for _ in range(args.steps):
                optimizer.zero_grad(set_to_none=True)
                block(x).pow(2).mean().backward()
                optimizer.step()
            sync(device)

        return call

    result = interleaved({name: step(m) for name, m in blocks.items()}, args.repeats)
    return {name: seconds / args.steps for name, seconds in result.items()}, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 rounds")
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--kv-heads", type=int, default=2, help="K/V heads of the RoPE run")
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--calls", type=int, default=10, help="attention calls per timing")
    parser.add_argument("--steps", type=int, default=3, help="training steps per timing")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    if args.quick:
        args.d_model, args.heads, args.kv_heads, args.tokens, args.batch = 128, 4, 2, 64, 2
        args.calls, args.steps, args.repeats = 5, 2, 3
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    print(
        f"torch {torch.__version__}, {platform.processor() or platform.machine()}, {device}, "
        f"{torch.get_num_threads()} thread(s); d={args.d_model}, heads={args.heads}, "
        f"T={args.tokens}, b={args.batch}, median of {args.repeats} interleaved rounds"
    )
    rope = rope_cost(args, device)
    base = rope["tables cached"]
    print(f"\n1. ModernAttention forward, {args.kv_heads} K/V heads (ms per call, ratio to cached)")
    for name, seconds in rope.items():
        print(f"   {name:<20} {1e3 * seconds:8.3f} ms   {seconds / base:5.2f}x")
    steps, counts = training_steps(args, device)
    gpt2 = steps["GPT-2 block"]
    print("\n2. One AdamW training step (ms per step, ratio to GPT-2's block)")
    for name, seconds in steps.items():
        print(
            f"   {name:<20} {1e3 * seconds:8.3f} ms   {seconds / gpt2:5.2f}x   "
            f"{counts[name]:,} parameters"
        )


if __name__ == "__main__":
    main()
