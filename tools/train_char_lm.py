"""Train lesson 12's character model on Tang verse and write a checkpoint.

    python tools/train_char_lm.py --full     # = make train-full: the shipped data/char_lm.pt
    python tools/train_char_lm.py            # = make train-demo: the shorter recipe, to build/
    python tools/train_char_lm.py --steps 50 --output /tmp/try.pt   # a quick try
    python tools/train_char_lm.py --estimate        # only time a few steps and print the estimate

Two recipes (both: every training window starts at a poem's start, context 80):

* ``FULL_CONFIG`` -- the shipped model (``--full``, ``make train-full``): the same sizes trained
  for 4,500 steps on two threads (README, "Retrain the character model", gives its time and
  numbers);
* ``DEMO_CONFIG`` -- the "+ poem windows" row of lesson 12's table (``make train-demo``): the same
  sizes trained for 1,500 steps, about 20 minutes; it writes whole poems but rhymes near chance
  (README, "Retrain the character model", gives its numbers). It writes ``build/char_lm_demo.pt``
  unless ``--output`` says otherwise, so it never replaces the shipped model by accident.

Seeded, on one CPU thread (the shipped recipe: two, ``FULL_THREADS``). It trains with the
fastest path that computes the same model: the course's ``MultiHeadAttention`` with the
``"sdpa"`` backend of ``attention/functional.py`` (``F.scaled_dot_product_attention``, the three
projections in one matmul: same parameters, same formula, and on the CPU the same dropout masks,
so the same losses to float32 rounding), and MKL's fastest kernels (``MKL_CBWR=AUTO``), which
round the last bits of a product in another order than the reproducible mode the lessons use. So
a new run follows the shipped record closely but not to the last digit, and over thousands of
steps those last bits grow: its final numbers are close to, not equal to, the shipped
``data/char_lm.pt`` (tests/test_char_lm_shipped.py re-runs its first steps). The lessons' saved
outputs come from the shipped checkpoint: a new one changes lesson 12's numbers.

Before training it times a few steps of this config on this machine and prints the estimate
("about N minutes"); then a tqdm bar shows the progress. The weights are stored in float16 (the
checkpoint stays under 5 MiB); every validation also rewrites the checkpoint, so an interrupted
run leaves its last state. Lesson 12 loads it with ``mhsa_helpers.lm.load_checkpoint()``.

The output path is checked before anything is timed or trained: a folder, a missing folder, or an
existing file that is not a checkpoint (without ``--force``) is one line on stderr and exit 2.
"""

from __future__ import annotations

import os

# Speed over bit-for-bit agreement across processors: mhsa_helpers asks for MKL's reproducible
# mode (MKL_CBWR=COMPATIBLE) only when nothing is set. Must come before torch is imported.
os.environ.setdefault("MKL_CBWR", "AUTO")

import argparse
import dataclasses
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import torch
from torch.nn import functional as F

from mhsa_helpers.lesson import one_thread
from mhsa_helpers.lm import (
    CharLMConfig,
    CharLMRun,
    load_checkpoint,
    load_verse,
    poem_text,
    save_checkpoint,
    score_poems,
    score_table,
    train_char_lm,
    training_attention,
    validation_loss,
    verse_data,
    write_poems,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _toolkit  # tools/_toolkit.py, beside this: one line and exit 2 on failure
from _toolkit import ToolError

DEMO_CONFIG = CharLMConfig(
    d_model=192,
    num_heads=4,
    num_layers=4,
    context_length=80,
    dropout=0.1,
    batch_size=32,
    steps=1500,
    lr=2e-3,
    min_lr=2e-4,
    warmup_steps=60,
    weight_decay=0.1,
    eval_every=500,
    seed=0,
    poem_windows=True,
)
FULL_CONFIG = CharLMConfig(
    d_model=192,
    num_heads=4,
    num_layers=4,
    context_length=80,
    dropout=0.1,
    batch_size=32,
    steps=4500,
    lr=2e-3,
    min_lr=2e-4,
    warmup_steps=100,
    weight_decay=0.1,
    eval_every=500,
    seed=0,
    poem_windows=True,
)
# The shipped recipe runs on two CPU threads (a 2-core laptop's): 1.6x faster than one, and
# reproducible for that thread count; the demo keeps the lessons' one thread.
FULL_THREADS, DEMO_THREADS = 2, 1
ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "data" / "char_lm.pt"
DEMO_OUTPUT = ROOT / "build" / "char_lm_demo.pt"
MAX_BYTES = 10 * 1024 * 1024


def write(run: CharLMRun, output: Path) -> int:
    """Save ``run`` to ``output`` (``save_checkpoint`` writes beside it and renames: never a
    half-written file); return its size in bytes."""
    save_checkpoint(run, output, dtype=torch.float16)
    return output.stat().st_size


def check_output(output: Path, force: bool) -> None:
    """Before any training: ``output`` must be a file path in an existing folder, and a file
    already there must be a checkpoint (the one being retrained) unless ``force``."""
    if output.is_dir():
        raise ToolError(f"--output {output} is a folder; give a file name, e.g. {output / 'x.pt'}")
    if not output.parent.is_dir():
        raise ToolError(f"no folder {output.parent} for --output {output}")
    if output.exists() and not force:
        try:
            load_checkpoint(output)
        except (OSError, ValueError) as err:
            raise ToolError(
                f"--output {output} exists and is not a character-model checkpoint ({err}); "
                "pass --force to overwrite it"
            ) from None


def estimate_seconds(
    config: CharLMConfig, backend: str, steps: int = 6, threads: int = 1
) -> tuple[float, float]:
    """(seconds per training step, seconds per validation) of ``config`` on this machine now.

    Times ``steps`` training steps (after one warm-up) of a throw-away model of the config's
    sizes on random windows, one thread, and one validation pass over a tenth of the held-out
    text (times ten). The caller's random state is left alone.
    """
    data = verse_data()
    vocab = data.tokenizer.vocab_size
    with one_thread(threads), torch.random.fork_rng(devices=[]), ExitStack() as stack:
        torch.manual_seed(config.seed)
        model = config.build_model(vocab)
        stack.enter_context(training_attention(model, backend))  # train_char_lm's path
        optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
        times = []
        for _ in range(steps + 1):
            ids = torch.randint(0, vocab, (config.batch_size, config.context_length + 1))
            start = time.perf_counter()
            logits = model(ids[:, :-1])  # (b, T, vocab)
            loss = F.cross_entropy(logits.reshape(-1, vocab), ids[:, 1:].reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            times.append(time.perf_counter() - start)
        start = time.perf_counter()
        validation_loss(model, data.val_ids[: data.val_ids.numel() // 10])
        per_eval = 10 * (time.perf_counter() - start)
    return sorted(times[1:])[len(times[1:]) // 2], per_eval  # median step, after the warm-up


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--full", action="store_true", help="the shipped recipe (default: the shorter demo)"
    )
    parser.add_argument("--steps", type=int, default=None, help="default: the recipe's")
    parser.add_argument("--threads", type=int, default=None, help="default: the recipe's")
    parser.add_argument(
        "--output", type=Path, default=None, help=f"default: {OUTPUT} (--full), else {DEMO_OUTPUT}"
    )
    parser.add_argument(
        "--backend",
        choices=("sdpa", "eager"),
        default="sdpa",
        help="attention backend while training (sdpa: faster; eager: the shipped checkpoint's)",
    )
    parser.add_argument(
        "--estimate", action="store_true", help="only time a few steps and print the estimate"
    )
    parser.add_argument(
        "--force", action="store_true", help="overwrite --output even if it is no checkpoint"
    )
    args = parser.parse_args()
    recipe = FULL_CONFIG if args.full else DEMO_CONFIG
    args.steps = recipe.steps if args.steps is None else args.steps
    if args.threads is None:
        args.threads = FULL_THREADS if args.full else DEMO_THREADS
    if args.threads < 1:
        raise ToolError(f"--threads must be >= 1, got {args.threads}")
    if args.output is None:
        args.output = OUTPUT if args.full else DEMO_OUTPUT
        args.output.parent.mkdir(exist_ok=True)
    if args.steps < 2:
        raise ToolError(f"--steps must be >= 2, got {args.steps}")
    check_output(args.output, args.force)
    config = dataclasses.replace(
        recipe,
        steps=args.steps,
        warmup_steps=min(recipe.warmup_steps, args.steps - 1),
        eval_every=min(recipe.eval_every, args.steps),
    )
    per_step, per_eval = estimate_seconds(config, args.backend, threads=args.threads)
    evals = -(-config.steps // config.eval_every)
    total = config.steps * per_step + evals * per_eval
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"{config.steps} steps of batch {config.batch_size} x {config.context_length}, "
        f"{args.backend} attention, MKL_CBWR={os.environ.get('MKL_CBWR')}: "
        f"{1 / per_step:.2f} steps/s and {per_eval:.0f} s per validation measured now "
        f"(load average {load:.1f}): about {total / 60:.0f} minutes on this machine",
        flush=True,
    )
    if args.estimate:
        return 0

    def save_on_the_way(run: CharLMRun) -> None:
        write(run, args.output)
        print(f"step {len(run.losses)}: val loss {run.val_losses[-1][1]:.4f}", flush=True)

    run = train_char_lm(
        config, progress=True, backend=args.backend, on_eval=save_on_the_way, threads=args.threads
    )
    size = write(run, args.output)
    print(run)
    print(f"validation losses: {[(s, round(v, 3)) for s, v in run.val_losses]}")
    speed = len(run.losses) / run.seconds
    print(f"trained in {run.seconds:.0f} s ({speed:.2f} steps/s)", end="; ")
    print(f"wrote {args.output} ({size / 1024 / 1024:.2f} MiB)")
    if size > MAX_BYTES:
        raise ToolError(f"checkpoint is {size} bytes, over the 10 MiB the course allows")
    verse = load_verse()
    tokenizer = run.tokenizer
    firsts = "".join(p.lines[0][0] for p in verse.validation if p.lines[0][0] in tokenizer.chars)
    poems = write_poems(run.model, tokenizer, firsts[:60], seed=0)  # as lesson 12 writes them
    print(score_table([score_poems("60 poems written", poems, poem_text(verse.train))]))
    print(poems[0].text)
    return 0


if __name__ == "__main__":
    _toolkit.run(main, "train_char_lm")
