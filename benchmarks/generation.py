"""Generation throughput of ``mhsa_helpers.lm.CharTransformer`` with and without the KV cache.

    python benchmarks/generation.py            # d_model 512, 4 blocks (a few minutes on CPU)
    python benchmarks/generation.py --quick    # smoke run, small sizes (under a minute)

An untrained ``CharTransformer`` (the speed does not depend on the weights) generates
``--new-tokens`` tokens after a ``--prompt``-token prompt with ``lm.generate(..., use_cache=True)``
(one ``KVCache`` per block: each step feeds only the newest token) and ``use_cache=False`` (each
step runs the whole sequence again). Runs are interleaved (each round times both, in alternating
order) after one warm-up round; the table reports the median tokens per second over the rounds and
the ratio cached / uncached. Both runs use the same seed and must produce the same tokens: the
script checks it.

Default size: d_model 512, 8 heads, 4 blocks, vocabulary 2,500 (the Tang 300's), batch 1, prompt
16, 256 new tokens, 1 thread (a few minutes; the lesson's model is d_model 128, 3 blocks).
Without the cache, step t pushes t token rows through every block and the LM head, so the total
work grows with the square of the length; with it, each step is one row.
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

import torch
from tqdm import tqdm

from mhsa_helpers import lm


def time_generation(model, prompt, new_tokens: int, use_cache: bool) -> tuple[float, torch.Tensor]:
    start = time.perf_counter()
    out = lm.generate(model, prompt, new_tokens, seed=0, use_cache=use_cache)
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 2 rounds")
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=2500)
    parser.add_argument("--prompt", type=int, default=16)
    parser.add_argument("--new-tokens", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    args = parser.parse_args()
    if args.quick:
        args.d_model, args.heads, args.layers = 256, 4, 4
        args.new_tokens, args.repeats = 128, 2
    torch.set_num_threads(args.threads)
    context = args.prompt + args.new_tokens
    torch.manual_seed(0)
    model = lm.CharTransformer(args.vocab, args.d_model, context, args.heads, args.layers).eval()
    prompt = torch.randint(0, args.vocab, (1, args.prompt))  # (b, T_prompt)
    print(
        f"CharTransformer d_model={args.d_model}, {args.heads} heads, {args.layers} blocks, "
        f"vocab {args.vocab}, {model.num_parameters():,} parameters; prompt {args.prompt}, "
        f"{args.new_tokens} new tokens, batch 1"
    )
    print(
        f"torch {torch.__version__}, {args.threads} thread(s), {platform.machine()}, "
        f"{args.repeats} interleaved rounds after 1 warm-up"
    )
    seconds: dict[bool, list[float]] = {True: [], False: []}
    outputs = {}
    rounds = args.repeats + 1
    with tqdm(total=2 * rounds, desc="generating", leave=False) as bar:
        for round_index in range(rounds):
            order = (True, False) if round_index % 2 == 0 else (False, True)
            for use_cache in order:
                elapsed, outputs[use_cache] = time_generation(
                    model, prompt, args.new_tokens, use_cache
                )
                if round_index > 0:  # the first round warms up
                    seconds[use_cache].append(elapsed)
                bar.update(1)
    if not torch.equal(outputs[True], outputs[False]):
        raise SystemExit("cached and uncached generation produced different tokens")
    speed = {k: args.new_tokens / statistics.median(v) for k, v in seconds.items()}
    print(f"{'':<14} {'median s':>9} {'tokens/s':>9}  all rounds (s)")
    for use_cache, name in ((False, "without cache"), (True, "with cache")):
        runs = ", ".join(f"{s:.2f}" for s in seconds[use_cache])
        median = statistics.median(seconds[use_cache])
        print(f"{name:<14} {median:>9.3f} {speed[use_cache]:>9.1f}  {runs}")
    print(f"ratio with / without cache: {speed[True] / speed[False]:.2f}x (same tokens)")


if __name__ == "__main__":
    main()
