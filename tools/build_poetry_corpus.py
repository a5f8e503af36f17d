"""Build lesson 12's corpus, data/tang_verse.txt.xz, from the npm package ``chinese-poetry``.

    npm pack chinese-poetry@2.0.1                       # chinese-poetry-2.0.1.tgz (85 MB)
    pip install opencc                                  # a tool dependency only
    python tools/build_poetry_corpus.py chinese-poetry-2.0.1.tgz

The package ships the Complete Tang Poems (全唐诗, ``dist/quantangshi/poet.tang.*.json``) in
traditional characters. This tool keeps the regular verse (近体诗): five- and seven-character
quatrains (绝句, 4 lines) and regulated verse (律诗, 8 lines), where every couplet is two equal
halves of 5 or 7 characters, ``XXXXX，XXXXX。``. It converts them to simplified characters with
OpenCC (``t2s``), drops poems with a missing-character mark or anything but Chinese characters,
drops exact duplicates, puts every 20th poem (by a hash of its text, so the split does not depend on
the file order) into the validation part, and drops any training poem that shares a couplet with a
validation poem. It writes one xz file with two sections::

    # train
    <poem>                  one couplet a line, an empty line after each poem
    # validation
    <poem>

``--ci OUT`` also writes the Song ci (宋词, ``dist/songci/ci.song.*.json``, already simplified) as
an xz text (the first ``--ci-chars`` characters, whole ci only) for lesson 12's "your own
text" exercise.

Errors (a missing file, a package without the poems, opencc not installed, an output path that is
a folder) print one line and exit with status 2; the output is written to a temporary file first
and renamed, so an interrupted run never leaves a half-written corpus.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import os
import re
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "data" / "tang_verse.txt.xz"
CJK = r"[\u4e00-\u9fff]"
COUPLET = {n: re.compile(rf"({CJK}{{{n}}})，({CJK}{{{n}}})[。？！]") for n in (5, 7)}
VALIDATION_EVERY = 20


def fail(message: str) -> None:
    print(f"build_poetry_corpus: {message}", file=sys.stderr)
    raise SystemExit(2)  # an expected failure: one message, exit 2, as every tool in tools/


def read_json_members(source: Path, pattern: str) -> Iterator[list]:
    """The JSON lists of every file under ``dist/`` matching ``pattern`` (a .tgz or a folder)."""
    regex = re.compile(pattern)
    if source.is_dir():
        files = sorted(p for p in source.rglob("*.json") if regex.search(p.as_posix()))
        for path in files:
            yield json.loads(path.read_text(encoding="utf-8"))
        return
    with tarfile.open(source, "r:gz") as archive:
        members = sorted(
            (m for m in archive.getmembers() if m.isfile() and regex.search(m.name)),
            key=lambda m: m.name,
        )
        for member in members:
            handle = archive.extractfile(member)
            if handle is not None:
                yield json.loads(handle.read().decode("utf-8"))


def couplets(text: str) -> list[str] | None:
    """The couplets ``XXXXX，XXXXX。`` of a regular-verse poem, or None if it is not one."""
    for _n, pattern in COUPLET.items():
        found = [m.group(0) for m in pattern.finditer(text)]
        if len(found) in (2, 4) and "".join(found) == text:
            return [c[:-1] + "。" for c in found]  # every couplet ends with 。
    return None


def regular_verse(source: Path) -> list[tuple[str, ...]]:
    """The regular-verse poems of the Complete Tang Poems, in traditional characters."""
    poems = []
    for chunk in read_json_members(source, r"dist/quantangshi/poet\.tang\.\d+\.json$"):
        for entry in chunk:
            text = "".join(entry.get("paragraphs", [])).replace(" ", "")
            found = couplets(text)
            if found is not None:
                poems.append(tuple(found))
    return poems


def to_simplified(poems: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    try:
        import opencc
    except ImportError:
        fail("this tool needs OpenCC: pip install opencc (a tool dependency, not the course's)")
    converter = opencc.OpenCC("t2s")
    out = []
    for poem in poems:
        converted = tuple(converter.convert(line) for line in poem)
        if couplets("".join(converted)) is not None:  # still regular verse after conversion
            out.append(converted)
    return out


def split(poems: list[tuple[str, ...]]) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    seen: set[tuple[str, ...]] = set()
    unique = []
    for poem in poems:
        if poem not in seen:
            seen.add(poem)
            unique.append(poem)
    validation, train = [], []
    for poem in unique:
        digest = hashlib.sha256("\n".join(poem).encode("utf-8")).digest()
        (validation if int.from_bytes(digest[:8], "big") % VALIDATION_EVERY == 0 else train).append(
            poem
        )
    held_out = {line for poem in validation for line in poem}
    train = [poem for poem in train if not held_out.intersection(poem)]
    return train, validation


def write_xz(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(lzma.compress(text.encode("utf-8"), preset=9 | lzma.PRESET_EXTREME))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def poems_text(poems: list[tuple[str, ...]]) -> str:
    return "".join("".join(line + "\n" for line in poem) + "\n" for poem in poems)


def song_ci(source: Path, limit: int) -> str:
    """The first ci of the package, whole, up to ``limit`` characters in all."""
    blocks: list[str] = []
    total = 0
    for chunk in read_json_members(source, r"dist/songci/ci\.song\.\d+\.json$"):
        for entry in chunk:
            lines = [p.strip() for p in entry.get("paragraphs", []) if p.strip()]
            if lines and not any("□" in line for line in lines):
                block = "".join(line + "\n" for line in lines) + "\n"
                if total + len(block) > limit:
                    return "".join(blocks)
                blocks.append(block)
                total += len(block)
    return "".join(blocks)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "package", type=Path, help="chinese-poetry-2.0.1.tgz or its unpacked folder"
    )
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--ci", type=Path, default=None, help="also write the Song ci here (xz)")
    parser.add_argument("--ci-chars", type=int, default=500_000, help="characters of ci kept")
    args = parser.parse_args(argv)
    for output in (args.output, args.ci):
        if output is not None and output.is_dir():
            fail(f"{output} is a folder; give a file name for the xz text")
    if not args.package.exists():
        fail(f"no such file or folder: {args.package} (run `npm pack chinese-poetry@2.0.1`)")
    try:
        poems = regular_verse(args.package)
    except (OSError, tarfile.TarError, ValueError, EOFError, lzma.LZMAError) as err:
        fail(f"cannot read {args.package}: {err}")
    if not poems:
        fail(f"{args.package} holds no dist/quantangshi/poet.tang.*.json poems")
    train, validation = split(to_simplified(poems))
    text = "# train\n" + poems_text(train) + "# validation\n" + poems_text(validation)
    write_xz(args.output, text)
    chars = sum(len(line) + 1 for poem in train + validation for line in poem)
    print(
        f"{len(poems)} regular-verse poems found; kept {len(train)} training and "
        f"{len(validation)} validation poems ({chars:,} characters); wrote {args.output} "
        f"({args.output.stat().st_size:,} bytes)"
    )
    if args.ci is not None:
        write_xz(args.ci, song_ci(args.package, args.ci_chars))
        print(f"wrote {args.ci} ({args.ci.stat().st_size:,} bytes)")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _toolkit  # tools/_toolkit.py: any other expected failure is one line and exit 2

    _toolkit.run(main, "build_poetry_corpus")
