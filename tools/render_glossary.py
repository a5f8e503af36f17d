"""Rewrite the glossary table in README.md from data/glossary.json (the single source of terms).

python tools/render_glossary.py          # rewrite
python tools/render_glossary.py --check  # exit 1 if README is out of date
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START, END = "<!-- glossary:start -->", "<!-- glossary:end -->"


def table() -> str:
    terms = json.loads((ROOT / "data" / "glossary.json").read_text(encoding="utf-8"))["terms"]
    rows = ["| English | 中文 | what it means |", "|---|---|---|"]
    rows += [f"| {t['en']} | {t['zh']} | {t['note']} |" for t in terms]
    return "\n".join(rows)


def render(readme: str) -> str:
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{table()}\n{END}{tail}"


def main() -> int:
    path = ROOT / "README.md"
    current = path.read_text(encoding="utf-8")
    updated = render(current)
    if "--check" in sys.argv[1:]:
        if updated != current:
            print("README.md glossary is out of date: run python tools/render_glossary.py")
            return 1
        return 0
    path.write_text(updated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
