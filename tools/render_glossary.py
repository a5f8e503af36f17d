"""Rewrite the glossary table in README.md from data/glossary.json (the single source of terms).

python tools/render_glossary.py          # rewrite
python tools/render_glossary.py --check  # exit 1 if README is out of date

A glossary that cannot be read (half-written JSON, a term without its ``en``, ``zh`` or ``note``)
or a README without its start and end markers is one line on stderr and exit status 2; a ``|`` in
a term is escaped (``\\|``) so it never splits the table's row.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toolkit import ToolError, run, write_text  # tools/_toolkit.py, beside this

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "data" / "glossary.json"
README = ROOT / "README.md"
START, END = "<!-- glossary:start -->", "<!-- glossary:end -->"
FIELDS = ("en", "zh", "note")


def cell(text: str) -> str:
    """A table cell: ``|`` escaped, newlines as spaces (a row is one line)."""
    return " ".join(text.replace("|", "\\|").split())


def table() -> str:
    try:
        terms = json.loads(GLOSSARY.read_text(encoding="utf-8"))["terms"]
    except json.JSONDecodeError as err:
        raise ToolError(f"{GLOSSARY} is not valid JSON ({err})") from None
    except (KeyError, TypeError):
        raise ToolError(f'{GLOSSARY} must hold {{"terms": [...]}}') from None
    if not isinstance(terms, list):
        raise ToolError(f'{GLOSSARY}: "terms" must be a list')
    rows = ["| English | 中文 | what it means |", "|---|---|---|"]
    for number, term in enumerate(terms, start=1):
        if not isinstance(term, dict) or not all(isinstance(term.get(f), str) for f in FIELDS):
            shown = term.get("en", term) if isinstance(term, dict) else term
            raise ToolError(
                f"{GLOSSARY}: term {number} ({shown!r}) needs the text fields {', '.join(FIELDS)}"
            )
        rows.append("| " + " | ".join(cell(term[f]) for f in FIELDS) + " |")
    return "\n".join(rows)


def render(readme: str) -> str:
    once = readme.count(START) == 1 and readme.count(END) == 1
    if not once or readme.index(START) > readme.index(END):
        raise ToolError(f"{README} must hold {START} then {END} once each, around the table")
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{table()}\n{END}{tail}"


def main() -> int:
    current = README.read_text(encoding="utf-8")
    updated = render(current)
    if "--check" in sys.argv[1:]:
        if updated != current:
            print("README.md glossary is out of date: run python tools/render_glossary.py")
            return 1
        return 0
    write_text(README, updated)
    return 0


if __name__ == "__main__":
    run(main, "render_glossary")
