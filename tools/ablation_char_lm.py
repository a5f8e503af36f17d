"""Lesson 12's ablation: what each part and each lever buys, in loss, whole poems and rhyme.

    python tools/ablation_char_lm.py                 # every row (about 2 hours on one core)
    python tools/ablation_char_lm.py --row "+ feed-forward"   # re-run one row, print it
    python tools/ablation_char_lm.py --row "+ poem windows" --checkpoint run.pt   # measure a
                                                     # saved run of that row's config instead

Rows, each trained from the same seed, measured on the same validation poems and with the same
60 poems written from the same first characters (``lm.write_poems``, temperature 0.8, top-k 20):

1. the bigram count table (``CountTable(order=2)``; fitted, not trained; loss only);
2. one attention head (one block: attention only, no feed-forward, residual or layer norm), at a
   short budget (``ABLATION_BUDGET``: 400 steps of 16 windows);
3. several heads (4 heads of the same total width); 4. + feed-forward; 5. + residual
   connections; 6. + layer norm -- all at that budget;
7. several blocks: 4 blocks, ``d_model`` 192, 1,500 steps of 32 windows that start anywhere;
8. + poem windows: the same, every training window starting at a poem's start;
9. + rotary positions: the same, with RoPE (lesson 13) in each block's attention instead of the
   learned position embedding;
10. the shipped model (data/char_lm.pt: the same sizes and windows, 4,500 steps; its own record).

Writes data/char_lm_ablation.json (through a temporary file; never half-written): one record per
row with its name, config, number of parameters, validation loss, the share of complete poems,
of rhyming line ends and of copied lines, and the training time.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from mhsa_helpers.lm import (
    CharLMConfig,
    CharTokenizer,
    CharTransformer,
    CountTable,
    load_checkpoint,
    load_verse,
    poem_text,
    score_poems,
    train_char_lm,
    verse_data,
    write_poems,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toolkit import ToolError, run, write_text  # tools/_toolkit.py, beside this

OUTPUT = Path(__file__).resolve().parent.parent / "data" / "char_lm_ablation.json"
ABLATION_BUDGET = CharLMConfig(
    d_model=128,
    num_heads=1,
    num_layers=1,
    context_length=80,
    dropout=0.0,
    batch_size=16,
    steps=400,
    lr=2e-3,
    min_lr=2e-4,
    warmup_steps=20,
    weight_decay=0.1,
    eval_every=400,
    seed=0,
    feed_forward=False,
    residual=False,
    layer_norm=False,
    poem_windows=False,
)
ALL_PARTS = {"num_heads": 4, "feed_forward": True, "residual": True, "layer_norm": True}
SEVERAL_BLOCKS = {
    **ALL_PARTS,
    "d_model": 192,
    "num_layers": 4,
    "dropout": 0.1,
    "batch_size": 32,
    "steps": 1500,
    "warmup_steps": 60,
    "eval_every": 500,
}
ROWS = {
    "one head": {},
    "several heads": {"num_heads": 4},
    "+ feed-forward": {"num_heads": 4, "feed_forward": True},
    "+ residual": {"num_heads": 4, "feed_forward": True, "residual": True},
    "+ layer norm": ALL_PARTS,
    "several blocks": SEVERAL_BLOCKS,
    "+ poem windows": {**SEVERAL_BLOCKS, "poem_windows": True},
    "+ rotary positions": {**SEVERAL_BLOCKS, "poem_windows": True, "rope": True},
}
NUM_POEMS = 60


def row_config(name: str) -> CharLMConfig:
    """The config of one trained row of the ablation."""
    return dataclasses.replace(ABLATION_BUDGET, **ROWS[name])


def poem_columns(model: CharTransformer, tokenizer: CharTokenizer) -> dict:
    """Complete poems, rhyming line ends and copied lines of 60 poems written by ``model``."""
    verse = load_verse()
    firsts = "".join(p.lines[0][0] for p in verse.validation if p.lines[0][0] in tokenizer.chars)
    poems = write_poems(model, tokenizer, firsts[:NUM_POEMS], seed=0)
    score = score_poems("", poems, poem_text(verse.train))
    return {
        "complete": round(score.complete, 4),
        "rhyme": round(score.rhyme, 4),
        "copied": round(score.copied, 4),
    }


def record(name: str, run) -> dict:  # run: CharLMRun or CharLMCheckpoint
    return {
        "name": name,
        "config": dataclasses.asdict(run.config),
        "parameters": run.model.num_parameters(),
        "val_loss": round(run.val_losses[-1][1], 4),
        **poem_columns(run.model, run.tokenizer),
        "seconds": round(run.seconds, 1),
    }


def run_row(name: str, checkpoint: Path | None = None) -> dict:
    config = row_config(name)
    if checkpoint is None:
        return record(name, train_char_lm(config, progress=False, backend="sdpa"))
    saved = load_checkpoint(checkpoint)
    if saved.config != config:
        raise ToolError(f"{checkpoint} was not trained with the config of the row {name!r}")
    return record(name, saved)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--row", choices=list(ROWS), help="re-run this row only and print it")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument(
        "--checkpoint", type=Path, default=None, help="with --row: a saved run; else the shipped"
    )
    parser.add_argument(
        "--rows-from", type=Path, default=None, help="take the trained rows from these JSON lines"
    )
    args = parser.parse_args()
    # Every path before any training (a bad one would otherwise fail an hour later).
    if args.checkpoint is not None and not args.checkpoint.is_file():
        raise ToolError(f"--checkpoint {args.checkpoint}: no such file")
    if args.row:
        print(json.dumps(run_row(args.row, args.checkpoint), ensure_ascii=False), flush=True)
        return 0
    if args.output.is_dir() or not args.output.parent.is_dir():
        raise ToolError(f"--output {args.output} must be a file path in an existing folder")
    saved_rows = None
    if args.rows_from is not None:  # read and checked before any work
        try:
            saved = [json.loads(line) for line in args.rows_from.read_text("utf-8").splitlines()]
            by_name = {row["name"]: row for row in saved}
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ToolError(f"cannot read the rows of {args.rows_from} ({err!r})") from None
        missing = [name for name in ROWS if name not in by_name]
        if missing:
            raise ToolError(f"{args.rows_from} lacks the rows {missing}")
        saved_rows = [by_name[name] for name in ROWS]
    data = verse_data()
    bigram = CountTable(data.train_ids, 2, data.tokenizer.vocab_size)
    rows = [{"name": "bigram table", "val_loss": round(bigram.loss(data.val_ids), 4)}]
    if saved_rows is not None:
        rows += saved_rows
    else:
        for name in ROWS:
            rows.append(run_row(name))
            print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    try:
        shipped = load_checkpoint(args.checkpoint)
    except (FileNotFoundError, ValueError) as err:
        raise ToolError(f"cannot read the shipped model ({err})") from None
    rows.append(record("shipped model", shipped))
    text = json.dumps({"rows": rows}, ensure_ascii=False, indent=1) + "\n"
    write_text(args.output, text)  # a temporary file beside it, renamed: never half-written
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    run(main, "ablation_char_lm")
