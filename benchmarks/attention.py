"""Time every attention implementation of the course at GPT-2-small width.

    python benchmarks/attention.py            # full run (a few minutes on 2 CPU cores)
    python benchmarks/attention.py --quick    # smoke run, small sizes (~20 s)
    make bench                                # the same as the full run

What it measures, on the current device (CUDA if available, else CPU; ``--device`` to choose):

1. **Speed** at (b=2, T=512, d=768, h=12): forward (eval mode, no autograd) and forward+backward
   (train mode, dropout 0, loss = out.sum()), for the teaching ``MultiHeadAttention``, the
   ``MultiHeadAttentionWrapper`` (12 heads of width 64), ``FusedQKVMultiHeadAttention``,
   ``SDPAMultiHeadAttention`` and ``torch.nn.MultiheadAttention``. Runs are interleaved: each round
   times every implementation once, in an order rotated from round to round, so that a slow
   moment of the machine hits all of them alike; the table shows the median per implementation
   and its ratio to ``torch.nn.MultiheadAttention``.
2. **FLOP rate** of the SDPA variant's forward against a plain matmul with the same FLOP count.
   FLOPs are counted as 2 per multiply-add: projections 2*b*T*d*3d + 2*b*T*d*d, attention
   (Q K^T and weights @ V) 4*b*T^2*d if dense. The causal kernel skips about half of the attention
   work, so the "useful" count halves the attention term; the target is judged on that one.
   The reference matmul is (b*T, d) @ (d, 4d + 2T), whose 2*b*T*d*(4d + 2T) FLOPs equal the
   dense count exactly.
3. **Wrapper vs split** (``--part wrapper-vs-split``): the wrapper of lessons 05 against the
   split-matrix ``MultiHeadAttention`` of lesson 06 at several sizes, forward and forward+backward,
   interleaved, median, ratio wrapper / split. The split module is measured twice: as the course
   defines it (with ``out_proj``) and with ``out_proj`` replaced by ``nn.Identity`` (exactly the
   wrapper's function, one (b*T, d) @ (d, d) product less), which is the fair peer.
4. **Peak memory** at long context (T=4096, b=1) of the teaching class vs SDPA. On CPU each
   measurement runs in a fresh subprocess and reports the growth of the peak resident set size
   over the resident set size just before the call, once the model and input exist and one small
   warm-up call has run (Linux: the peak is reset through ``/proc/self/clear_refs`` and read as
   ``VmHWM``; elsewhere ``ru_maxrss``, a lower bound); on CUDA it reports
   ``torch.cuda.max_memory_allocated`` growth.

Results are printed, saved as JSON and as a plot in ``benchmarks/results/`` (gitignored).
"""

from __future__ import annotations

import os

# Timings measure MKL's fastest kernels: mhsa_helpers asks for its reproducible mode
# (MKL_CBWR=COMPATIBLE, for the lessons' bit-for-bit claims) only when nothing is set.
os.environ.setdefault("MKL_CBWR", "AUTO")

import argparse
import json
import math
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn
from tqdm import tqdm

import mhsa_helpers as mh

RESULTS = Path(__file__).resolve().parent / "results"
REFERENCE = "torch.nn.MultiheadAttention"


# -- implementations ----------------------------------------------------------------------------


class TorchMHA(nn.Module):
    """``nn.MultiheadAttention`` called the fast way: causal, no weights returned."""

    def __init__(self, d: int, heads: int, context_length: int):
        super().__init__()
        self.inner = nn.MultiheadAttention(d, heads, dropout=0.0, bias=True, batch_first=True)
        mask = torch.ones(context_length, context_length, dtype=torch.bool).triu(1)
        self.register_buffer("mask", mask)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x.shape[1]
        out, _ = self.inner(
            x, x, x, attn_mask=self.mask[:t, :t], is_causal=True, need_weights=False
        )
        return out


def build(name: str, d: int, heads: int, context_length: int) -> nn.Module:
    if name == "MultiHeadAttention":
        return mh.MultiHeadAttention(d, d, context_length, 0.0, heads)
    if name == "MultiHeadAttentionWrapper":
        return mh.MultiHeadAttentionWrapper(d, d // heads, context_length, 0.0, heads)
    if name == "FusedQKVMultiHeadAttention":
        return mh.FusedQKVMultiHeadAttention(d, d, context_length, 0.0, heads)
    if name == "SDPAMultiHeadAttention":
        return mh.SDPAMultiHeadAttention(d, d, context_length, 0.0, heads)
    if name == REFERENCE:
        return TorchMHA(d, heads, context_length)
    raise ValueError(f"unknown implementation {name!r}")


NAMES = [
    "MultiHeadAttention",
    "MultiHeadAttentionWrapper",
    "FusedQKVMultiHeadAttention",
    "SDPAMultiHeadAttention",
    REFERENCE,
]


# -- timing -------------------------------------------------------------------------------------


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def forward_step(module: nn.Module, x: torch.Tensor) -> Callable[[], None]:
    def step() -> None:
        with torch.no_grad():
            module(x)

    return step


def train_step(module: nn.Module, x: torch.Tensor) -> Callable[[], None]:
    def step() -> None:
        module.zero_grad(set_to_none=True)
        module(x).sum().backward()

    return step


def time_interleaved(
    steps: dict[str, Callable[[], None]], repeats: int, warmup: int, device: str, desc: str
) -> dict[str, list[float]]:
    """Median-ready lists of seconds per call, rounds of one call per implementation."""
    names = list(steps)
    for _ in range(warmup):
        for name in names:
            steps[name]()
    sync(device)
    times: dict[str, list[float]] = {name: [] for name in names}
    with tqdm(total=repeats * len(names), desc=desc, unit="call", leave=False) as bar:
        for round_ in range(repeats):
            order = names[round_ % len(names) :] + names[: round_ % len(names)]
            for name in order:
                sync(device)
                start = time.perf_counter()
                steps[name]()
                sync(device)
                times[name].append(time.perf_counter() - start)
                bar.update()
    return times


def speed(args, device: str) -> dict[str, dict[str, float]]:
    b, t, d, h = args.batch, args.tokens, args.d_model, args.heads
    torch.manual_seed(0)
    modules = {name: build(name, d, h, t).to(device) for name in NAMES}
    x = torch.randn(b, t, d, device=device)
    fwd = {name: forward_step(m.eval(), x) for name, m in modules.items()}
    fwd_times = time_interleaved(fwd, args.repeats, args.warmup, device, "forward")
    bwd = {name: train_step(m.train(), x) for name, m in modules.items()}
    bwd_times = time_interleaved(bwd, args.repeats, args.warmup, device, "forward+backward")
    return {
        name: {
            "forward_ms": 1e3 * statistics.median(fwd_times[name]),
            "train_ms": 1e3 * statistics.median(bwd_times[name]),
        }
        for name in NAMES
    }


def flop_rate(args, device: str) -> dict[str, float]:
    b, t, d, h = args.batch, args.tokens, args.d_model, args.heads
    torch.manual_seed(0)
    module = build("SDPAMultiHeadAttention", d, h, t).to(device).eval()
    x = torch.randn(b, t, d, device=device)
    left = torch.randn(b * t, d, device=device)
    right = torch.randn(d, 4 * d + 2 * t, device=device)

    def matmul() -> None:
        left @ right

    times = time_interleaved(
        {"sdpa": forward_step(module, x), "matmul": matmul},
        args.repeats,
        args.warmup,
        device,
        "FLOP rate",
    )
    projections = 2 * b * t * d * 3 * d + 2 * b * t * d * d
    attention_dense = 4 * b * t * t * d
    dense = projections + attention_dense
    useful = projections + attention_dense // 2
    assert 2 * b * t * d * (4 * d + 2 * t) == dense
    sdpa_s, matmul_s = statistics.median(times["sdpa"]), statistics.median(times["matmul"])
    return {
        "flops_dense": dense,
        "flops_causal": useful,
        "sdpa_gflops_dense": dense / sdpa_s / 1e9,
        "sdpa_gflops_causal": useful / sdpa_s / 1e9,
        "matmul_gflops": dense / matmul_s / 1e9,
        "ratio_dense": matmul_s / sdpa_s,
        "ratio_causal": (useful / sdpa_s) / (dense / matmul_s),
    }


# -- wrapper vs split ----------------------------------------------------------------------------

# (b, T, d_model, heads): lesson 08's size, then GPT-2-small width at a short, a medium and the
# speed table's sequence length.
SPLIT_SIZES = [(8, 16, 32, 4), (2, 8, 768, 12), (2, 64, 768, 12), (2, 512, 768, 12)]
SPLIT_NAMES = ["wrapper", "split", "split, no out_proj"]


def build_split_peers(b: int, t: int, d: int, h: int) -> dict[str, nn.Module]:
    """The wrapper, the split module that computes the same function, and that module with
    its (identity) ``out_proj`` removed. All three hold the same numbers."""
    torch.manual_seed(0)
    wrapper = mh.MultiHeadAttentionWrapper(d, d // h, t, 0.0, h)
    split = mh.multihead_from_wrapper(wrapper)
    no_proj = mh.multihead_from_wrapper(wrapper)
    no_proj.out_proj = nn.Identity()  # type: ignore[assignment]
    return dict(zip(SPLIT_NAMES, (wrapper, split, no_proj)))


def wrapper_vs_split(args, device: str) -> list[dict[str, float | int]]:
    rows: list[dict[str, float | int]] = []
    sizes = SPLIT_SIZES[:2] if args.quick else SPLIT_SIZES
    for b, t, d, h in sizes:
        modules = {name: m.to(device) for name, m in build_split_peers(b, t, d, h).items()}
        x = torch.randn(b, t, d, device=device)
        with torch.no_grad():
            outs = [m.eval()(x) for m in modules.values()]
        torch.testing.assert_close(outs[0], outs[1])  # the same function
        torch.testing.assert_close(outs[0], outs[2])
        row: dict[str, float | int] = {"b": b, "T": t, "d": d, "heads": h}
        for mode, make in (("forward", forward_step), ("train", train_step)):
            steps = {
                name: make(m.eval() if mode == "forward" else m.train(), x)
                for name, m in modules.items()
            }
            start = time.perf_counter()  # size the repeats: about 2 s per implementation
            for step in steps.values():
                step()
            one = (time.perf_counter() - start) / len(steps)
            repeats = 5 if args.quick else max(7, min(200, int(2.0 / max(one, 1e-6))))
            times = time_interleaved(steps, repeats, args.warmup, device, f"{mode} T={t} d={d}")
            for name in SPLIT_NAMES:
                row[f"{mode}_ms {name}"] = 1e3 * statistics.median(times[name])
            row[f"{mode}_repeats"] = repeats
        rows.append(row)
    return rows


def softmax_chain(args, device: str) -> dict[str, float]:
    """Mask, scale and softmax of the (b, h, T, T) scores at once vs one head at a time.

    The same arithmetic; what differs is the size of the tensor each step walks through: the
    split class's (b, h, T, T) scores or the wrapper's (b, T, T) per head.
    """
    b, t, h = 2, 512, 12
    torch.manual_seed(0)
    scores = torch.randn(b, h, t, t, device=device)
    mask = torch.ones(t, t, dtype=torch.bool, device=device).triu(1)

    def all_heads() -> None:
        torch.softmax(scores.masked_fill(mask, -torch.inf) / 8.0, dim=-1)

    def per_head() -> None:
        for i in range(h):
            torch.softmax(scores[:, i].masked_fill(mask, -torch.inf) / 8.0, dim=-1)

    repeats = 5 if args.quick else 15
    times = time_interleaved(
        {"all heads": all_heads, "per head": per_head}, repeats, args.warmup, device, "softmax"
    )
    return {name: 1e3 * statistics.median(values) for name, values in times.items()}


def split_table(rows: list[dict[str, float | int]]) -> str:
    lines = [
        "| b, T, d, heads | forward: wrapper / split / split w/o out_proj (ms) | wrapper ÷ "
        "split w/o out_proj | forward+backward (ms) | wrapper ÷ split w/o out_proj |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        cells = [f"{r['b']}, {r['T']}, {r['d']}, {r['heads']}"]
        for mode in ("forward", "train"):
            w, s, n = (float(r[f"{mode}_ms {name}"]) for name in SPLIT_NAMES)
            cells += [f"{w:.3g} / {s:.3g} / {n:.3g}", f"{w / n:.2f}x"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# -- peak memory --------------------------------------------------------------------------------


def _proc_status_bytes(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024  # reported in kB
    raise KeyError(field)


def _reset_peak_rss() -> int | None:
    """Linux: reset the peak RSS (VmHWM) to the current RSS and return it; None elsewhere."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return _proc_status_bytes("VmRSS")
    except OSError:
        return None


def _peak_rss_bytes() -> int:
    if os.path.exists("/proc/self/status"):
        return _proc_status_bytes("VmHWM")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # Linux reports KiB


def memory_child(name: str, tokens: int, d: int, heads: int, mode: str, device: str) -> int:
    """Run in a fresh process: extra peak bytes of one forward (or forward+backward) call."""
    torch.manual_seed(0)
    module = build(name, d, heads, tokens).to(device)
    x = torch.randn(1, tokens, d, device=device)
    step = forward_step(module.eval(), x) if mode == "forward" else train_step(module.train(), x)
    small = torch.randn(1, 8, d, device=device)  # load kernels, allocator pools
    (forward_step if mode == "forward" else train_step)(module, small)()
    module.zero_grad(set_to_none=True)
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        step()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - base
    # Baseline = RSS now, with the peak reset to it (Linux); elsewhere the earlier peak, which
    # only makes the reported growth smaller (a lower bound).
    base = _reset_peak_rss()
    if base is None:
        base = _peak_rss_bytes()
    step()
    return _peak_rss_bytes() - base


def memory(args, device: str) -> dict[str, dict[str, int]]:
    results: dict[str, dict[str, int]] = {}
    jobs = [
        (name, mode)
        for name in ("MultiHeadAttention", "SDPAMultiHeadAttention")
        for mode in ("forward", "train")
    ]
    for name, mode in tqdm(jobs, desc=f"peak memory T={args.long_tokens}", leave=False):
        cmd = [
            sys.executable,
            __file__,
            "--memory-child",
            name,
            mode,
            str(args.long_tokens),
            "--device",
            device,
            "--d-model",
            str(args.d_model),
            "--heads",
            str(args.heads),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        results.setdefault(name, {})[mode] = int(done.stdout.strip().splitlines()[-1])
    return results


# -- report -------------------------------------------------------------------------------------


def table(speeds: dict[str, dict[str, float]]) -> str:
    ref = speeds[REFERENCE]
    lines = [
        "| implementation | forward (ms) | vs torch | forward+backward (ms) | vs torch |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, s in speeds.items():
        lines.append(
            f"| {name} | {s['forward_ms']:.1f} | {s['forward_ms'] / ref['forward_ms']:.2f}x "
            f"| {s['train_ms']:.1f} | {s['train_ms'] / ref['train_ms']:.2f}x |"
        )
    return "\n".join(lines)


def plot(speeds, mem, args, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(12, 4.2), layout="constrained")
    names = list(speeds)
    short = [n.replace("MultiHeadAttention", "MHA").replace("torch.nn.", "torch ") for n in names]
    pos = range(len(names))
    ax_t.barh([p + 0.2 for p in pos], [speeds[n]["forward_ms"] for n in names], 0.4, label="fwd")
    ax_t.barh([p - 0.2 for p in pos], [speeds[n]["train_ms"] for n in names], 0.4, label="fwd+bwd")
    ax_t.set_yticks(list(pos), short)
    ax_t.invert_yaxis()
    ax_t.set_xlabel("median time (ms)")
    ax_t.set_title(f"b={args.batch}, T={args.tokens}, d={args.d_model}, h={args.heads}")
    ax_t.legend()
    mem_names = list(mem)
    for i, mode in enumerate(("forward", "train")):
        ax_m.bar(
            [j + 0.4 * i for j in range(len(mem_names))],
            [mem[n][mode] / 2**20 for n in mem_names],
            0.4,
            label="forward" if mode == "forward" else "forward+backward",
        )
    ax_m.set_xticks([j + 0.2 for j in range(len(mem_names))], mem_names)
    ax_m.set_ylabel("extra peak memory (MiB)")
    ax_m.set_title(f"b=1, T={args.long_tokens}")
    ax_m.legend()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def report_wrapper_vs_split(args, started: float) -> int:
    rows = wrapper_vs_split(args, args.device)
    chain = softmax_chain(args, args.device)
    elapsed = time.perf_counter() - started
    print("\nWrapper (lesson 05) vs split (lesson 06), medians of interleaved runs:")
    print(split_table(rows))
    print(
        f"\nMask + scale + softmax of (2, 12, 512, 512) scores: all heads at once "
        f"{chain['all heads']:.1f} ms, one (2, 512, 512) head at a time {chain['per head']:.1f} "
        f"ms -> ratio all / per head {chain['all heads'] / chain['per head']:.2f}"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "wrapper_vs_split_quick" if args.quick else "wrapper_vs_split"
    record = {
        "config": {k: str(v) for k, v in vars(args).items()},
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "mkl_cbwr": os.environ.get("MKL_CBWR"),
        "rows_ms": rows,
        "softmax_chain_ms": chain,
        "elapsed_s": elapsed,
    }
    (args.out / f"{stem}.json").write_text(json.dumps(record, indent=2))
    print(f"\nSaved {args.out / (stem + '.json')} ({elapsed:.0f} s)")
    assert all(v > 0 for r in rows for k, v in r.items() if k.endswith("ms") or "_ms " in k)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats (smoke run)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--d-model", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--long-tokens", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--part",
        choices=("all", "wrapper-vs-split"),
        default="all",
        help="wrapper-vs-split: only the wrapper (lesson 05) vs split (lesson 06) sweep",
    )
    parser.add_argument("--memory-child", nargs=3, metavar=("NAME", "MODE", "T"), default=None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.memory_child:
        name, mode, tokens = args.memory_child
        print(memory_child(name, int(tokens), args.d_model, args.heads, mode, args.device))
        return 0
    if args.quick:
        args.tokens, args.long_tokens, args.repeats, args.warmup = 128, 1024, 5, 1

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"device={args.device} torch={torch.__version__} threads={torch.get_num_threads()} "
        f"cpu={platform.processor() or platform.machine()} cores={os.cpu_count()} "
        f"load(1 min)={load:.2f}"
    )
    print(f"MKL_CBWR={os.environ.get('MKL_CBWR')}")
    started = time.perf_counter()
    if args.part == "wrapper-vs-split":
        return report_wrapper_vs_split(args, started)
    speeds = speed(args, args.device)
    rate = flop_rate(args, args.device)
    mem = memory(args, args.device)
    split_rows = wrapper_vs_split(args, args.device)
    elapsed = time.perf_counter() - started

    print(f"\nSpeed, median of {args.repeats} interleaved runs:")
    print(table(speeds))
    sdpa, ref = speeds["SDPAMultiHeadAttention"], speeds[REFERENCE]
    print(
        f"\nFLOP rate (forward): SDPA {rate['sdpa_gflops_causal']:.1f} GFLOP/s useful "
        f"({rate['sdpa_gflops_dense']:.1f} dense count), same-FLOP matmul "
        f"{rate['matmul_gflops']:.1f} GFLOP/s -> ratio {rate['ratio_causal']:.2f} "
        f"({rate['ratio_dense']:.2f} dense)"
    )
    how = "CUDA max_memory_allocated" if args.device == "cuda" else "peak RSS growth, subprocess"
    print(f"\nExtra peak memory at b=1, T={args.long_tokens} ({how}):")
    for name, modes in mem.items():
        print(
            f"  {name:<24} forward {modes['forward'] / 2**20:8.0f} MiB   "
            f"forward+backward {modes['train'] / 2**20:8.0f} MiB"
        )
    mem_ratio = {
        mode: mem["SDPAMultiHeadAttention"][mode] / max(mem["MultiHeadAttention"][mode], 1)
        for mode in ("forward", "train")
    }
    targets = {
        "SDPA fwd+bwd <= 1.0x torch.nn.MultiheadAttention": sdpa["train_ms"] / ref["train_ms"],
        "SDPA FLOP rate >= 0.6 of same-FLOP matmul": rate["ratio_causal"],
        "SDPA extra peak memory <= 0.25 of teaching (fwd+bwd)": mem_ratio["train"],
    }
    limits = [("<=", 1.0), (">=", 0.6), ("<=", 0.25)]
    print("\nTargets:")
    for (label, value), (op, limit) in zip(targets.items(), limits):
        met = value <= limit if op == "<=" else value >= limit
        print(f"  {label}: {value:.2f} -> {'met' if met else 'NOT met'}")
    print(f"  (SDPA forward-only memory ratio: {mem_ratio['forward']:.3f})")
    print("\nWrapper (lesson 05) vs split (lesson 06), medians of interleaved runs:")
    print(split_table(split_rows))

    args.out.mkdir(parents=True, exist_ok=True)
    stem = "attention_quick" if args.quick else "attention"
    record = {
        "config": {k: str(v) for k, v in vars(args).items()},
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "load_1min": load,
        "speed_ms": speeds,
        "flop_rate": rate,
        "peak_memory_bytes": mem,
        "targets": targets,
        "wrapper_vs_split_ms": split_rows,
        "elapsed_s": elapsed,
    }
    (args.out / f"{stem}.json").write_text(json.dumps(record, indent=2))
    plot(speeds, mem, args, args.out / f"{stem}.png")
    print(f"\nSaved {args.out / (stem + '.json')} and {stem}.png ({elapsed:.0f} s)")
    assert all(math.isfinite(v) and v > 0 for s in speeds.values() for v in s.values())
    return 0


if __name__ == "__main__":
    sys.exit(main())
