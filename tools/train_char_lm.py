"""Train the course's demo character model on Tang verse and write data/char_lm.pt.

    python tools/train_char_lm.py            # = make train-demo (about an hour on one core)
    python tools/train_char_lm.py --steps 50 --output /tmp/try.pt   # a quick try

Seeded and run on one CPU thread, so the same machine writes the same checkpoint every time; the
checkpoint records every step's loss, and tests/test_char_lm.py re-runs the first steps and
compares. The weights are stored in float16 (the checkpoint stays under 5 MiB); every validation
also rewrites the checkpoint, so an interrupted run leaves its last state. Lesson 12 loads it
with ``mhsa_helpers.lm.load_checkpoint()``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
from pathlib import Path

import torch

from mhsa_helpers.lm import CharLMConfig, CharLMRun, generate, save_checkpoint, train_char_lm

DEMO_CONFIG = CharLMConfig(
    d_model=192,
    num_heads=4,
    num_layers=4,
    context_length=64,
    dropout=0.1,
    batch_size=32,
    steps=1500,
    lr=2e-3,
    min_lr=2e-4,
    warmup_steps=60,
    weight_decay=0.1,
    eval_every=250,
    seed=0,
)
OUTPUT = Path(__file__).resolve().parent.parent / "data" / "char_lm.pt"
MAX_BYTES = 5 * 1024 * 1024


def write(run: CharLMRun, output: Path) -> int:
    """Save ``run`` next to ``output`` and rename it into place (never a half-written file)."""
    fd, tmp = tempfile.mkstemp(dir=output.parent, prefix=output.name, suffix=".tmp")
    os.close(fd)
    try:
        save_checkpoint(run, tmp, dtype=torch.float16)
        os.chmod(tmp, 0o644)
        os.replace(tmp, output)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return output.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=DEMO_CONFIG.steps)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    if args.steps < 2:
        sys.exit(f"train_char_lm: --steps must be >= 2, got {args.steps}")
    if not args.output.parent.is_dir():
        sys.exit(f"train_char_lm: no folder {args.output.parent} for --output")
    config = dataclasses.replace(
        DEMO_CONFIG,
        steps=args.steps,
        warmup_steps=min(DEMO_CONFIG.warmup_steps, args.steps - 1),
        eval_every=min(DEMO_CONFIG.eval_every, args.steps),
    )

    def save_on_the_way(run: CharLMRun) -> None:
        write(run, args.output)
        print(f"step {len(run.losses)}: val loss {run.val_losses[-1][1]:.4f}", flush=True)

    run = train_char_lm(config, progress=True, on_eval=save_on_the_way)
    size = write(run, args.output)
    print(run)
    print(f"validation losses: {[(s, round(v, 3)) for s, v in run.val_losses]}")
    print(f"trained in {run.seconds:.0f} s; wrote {args.output} ({size / 1024 / 1024:.2f} MiB)")
    if size > MAX_BYTES:
        sys.exit(f"train_char_lm: checkpoint is {size} bytes, over the 5 MiB the course allows")
    sample = generate(run.model, run.tokenizer.encode("床前明月光，"), 60, temperature=0.8, seed=0)
    print(run.tokenizer.decode(sample))


if __name__ == "__main__":
    main()
