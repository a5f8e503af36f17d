"""Lesson 12's ablation: the validation loss after adding one part at a time.

    python tools/ablation_char_lm.py                 # every row (about 15 minutes on one core)
    python tools/ablation_char_lm.py --row "+ feed-forward"   # re-run one row, print it

Rows, each trained from the same seed with the same step budget (``ABLATION_BUDGET``) on the
course corpus, measured on the same validation poems:

1. the bigram count table (``CountTable(order=2)``; fitted, not trained);
2. one attention head (one block: attention only, no feed-forward, residual or layer norm);
3. several heads (4 heads of the same total width);
4. + feed-forward; 5. + residual connections; 6. + layer norm;
7. several blocks: the shipped model (data/char_lm.pt, its own longer budget; its record).

Writes data/char_lm_ablation.json (through a temporary file; never half-written): one record per
row with its name, config, number of parameters, validation loss and training time.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from mhsa_helpers.lm import CharLMConfig, CountTable, load_checkpoint, train_char_lm, verse_data

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toolkit import ToolError, run, write_text  # tools/_toolkit.py, beside this

OUTPUT = Path(__file__).resolve().parent.parent / "data" / "char_lm_ablation.json"
ABLATION_BUDGET = CharLMConfig(
    d_model=128,
    num_heads=1,
    num_layers=1,
    context_length=64,
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
)
ROWS = {
    "one head": {},
    "several heads": {"num_heads": 4},
    "+ feed-forward": {"num_heads": 4, "feed_forward": True},
    "+ residual": {"num_heads": 4, "feed_forward": True, "residual": True},
    "+ layer norm": {"num_heads": 4, "feed_forward": True, "residual": True, "layer_norm": True},
}


def row_config(name: str) -> CharLMConfig:
    """The config of one trained row of the ablation."""
    return dataclasses.replace(ABLATION_BUDGET, **ROWS[name])


def run_row(name: str) -> dict:
    config = row_config(name)
    run = train_char_lm(config, progress=False)
    return {
        "name": name,
        "config": dataclasses.asdict(config),
        "parameters": run.model.num_parameters(),
        "val_loss": round(run.val_losses[-1][1], 4),
        "seconds": round(run.seconds, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--row", choices=list(ROWS), help="re-run this row only and print it")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--checkpoint", type=Path, default=None, help="the shipped model")
    parser.add_argument(
        "--shipped-only", action="store_true", help="keep the trained rows, update the last one"
    )
    args = parser.parse_args()
    if args.row:
        print(json.dumps(run_row(args.row), ensure_ascii=False, indent=1))
        return 0
    # Every path before any training (a bad one would otherwise fail 15 minutes later).
    if args.output.is_dir() or not args.output.parent.is_dir():
        raise ToolError(f"--output {args.output} must be a file path in an existing folder")
    if args.checkpoint is not None and not args.checkpoint.is_file():
        raise ToolError(f"--checkpoint {args.checkpoint}: no such file")
    if args.shipped_only:
        try:
            rows = json.loads(args.output.read_text(encoding="utf-8"))["rows"][:-1]
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ToolError(f"cannot read the rows of {args.output} ({err!r})") from None
    else:
        data = verse_data()
        bigram = CountTable(data.train_ids, 2, data.tokenizer.vocab_size)
        rows = [{"name": "bigram table", "val_loss": round(bigram.loss(data.val_ids), 4)}]
        for name in ROWS:
            rows.append(run_row(name))
            print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    try:
        shipped = load_checkpoint(args.checkpoint)
    except (FileNotFoundError, ValueError) as err:
        raise ToolError(f"cannot read the shipped model ({err})") from None
    rows.append(
        {
            "name": "several blocks",
            "config": dataclasses.asdict(shipped.config),
            "parameters": shipped.model.num_parameters(),
            "val_loss": round(shipped.val_losses[-1][1], 4),
            "seconds": round(shipped.seconds, 1),
        }
    )
    text = json.dumps({"rows": rows}, ensure_ascii=False, indent=1) + "\n"
    write_text(args.output, text)  # a temporary file beside it, renamed: never half-written
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    run(main, "ablation_char_lm")
