"""Train the course's demo character model on the Tang 300 and write data/char_lm.pt.

    python tools/train_char_lm.py            # = make train-demo (3-5 minutes on one core)
    python tools/train_char_lm.py --steps 50 --output /tmp/try.pt   # a quick try

Seeded and run on one CPU thread, so the same machine writes the same checkpoint every time; the
checkpoint records every step's loss, and tests/test_char_lm.py re-runs the first steps and
compares. Lesson 12 loads the checkpoint with ``mhsa_helpers.lm.load_checkpoint()``.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from mhsa_helpers.lm import CharLMConfig, generate, save_checkpoint, train_char_lm

DEMO_CONFIG = CharLMConfig(
    d_model=128,
    num_heads=4,
    num_layers=3,
    context_length=128,
    dropout=0.2,
    batch_size=16,
    steps=400,
    lr=2e-3,
    min_lr=2e-4,
    warmup_steps=40,
    weight_decay=0.1,
    eval_every=50,
    seed=0,
)
OUTPUT = Path(__file__).resolve().parent.parent / "data" / "char_lm.pt"
MAX_BYTES = 5 * 1024 * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=DEMO_CONFIG.steps)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    config = dataclasses.replace(
        DEMO_CONFIG, steps=args.steps, warmup_steps=min(DEMO_CONFIG.warmup_steps, args.steps - 1)
    )
    run = train_char_lm(config, progress=True)
    path = save_checkpoint(run, args.output)
    size = path.stat().st_size
    print(run)
    print(f"validation losses: {[(s, round(v, 3)) for s, v in run.val_losses]}")
    print(f"trained in {run.seconds:.0f} s; wrote {path} ({size / 1024 / 1024:.2f} MiB)")
    if size > MAX_BYTES:
        raise SystemExit(f"checkpoint is {size} bytes, over the 5 MiB the course allows")
    sample = generate(run.model, run.tokenizer.encode("\n"), 100, temperature=0.8, seed=0)
    print(run.tokenizer.decode(sample))


if __name__ == "__main__":
    main()
