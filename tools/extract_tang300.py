"""Write data/tang300.txt from the ``tang300`` file of Debian's ``fortunes-zh`` package.

The poems of the Tang 300 (唐诗三百首) are public domain; the Debian file stores them as fortune
cookies: each poem is a green title line, a yellow author line and the poem's lines, with "%"
between poems. This script removes the terminal colour codes and writes one poem per block,
blocks separated by an empty line. It needs nothing but the package file (obtainable offline from
Debian's archive, see data/SOURCES.md):

    apt-get download fortunes-zh
    dpkg-deb -x fortunes-zh_*_all.deb fortunes-zh
    python tools/extract_tang300.py fortunes-zh/usr/share/games/fortunes/tang300
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

COLOUR_CODE = re.compile(r"\x1b\[[0-9;]*m")
OUTPUT = Path(__file__).resolve().parent.parent / "data" / "tang300.txt"


def convert(source: str) -> str:
    """The fortune file's text -> blocks of title, author and lines, separated by empty lines."""
    blocks = []
    for cookie in COLOUR_CODE.sub("", source).split("\n%\n"):
        lines = [line.strip() for line in cookie.strip().splitlines() if line.strip()]
        if lines:
            blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="path of fortunes-zh's tang300 file")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    text = convert(args.source.read_text(encoding="utf-8"))
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {text.count(chr(10) * 2) + 1} poems, {len(text)} characters to {args.output}")


if __name__ == "__main__":
    main()
