"""Every lesson's time, from one rule, written wherever the course states it.

    python tools/lesson_times.py            # print each lesson's counts and time
    python tools/lesson_times.py --write    # write the times into the lessons, lesson 00, README
    python tools/lesson_times.py --check    # exit 1 when a stated time differs from the rule

The rule (``RULE``, stated in lesson 00 and the README), from a lesson's English script:

    minutes = prose words / 120 + 1.5 per code cell + 3 per prediction + 8 per exercise
              + 20 per build-it exercise, rounded to the nearest 5 (at least 5)

* prose words: English words of the markdown cells, without code, math, link targets and the
  time statement itself (``zh_edition.prose_words``);
* a prediction: a code cell that calls a checker of ``mhsa_helpers.exercises`` without
  ``reveal=True`` and writes a guess (``prediction = None``, ``my_guess = None`` or
  ``# YOUR PREDICTION``);
* a build-it: a code cell that calls a checker made by the one build-it runner (it carries a
  ``build_spec``: the learner writes a class or a function);
* an exercise: any other code cell that calls a checker without ``reveal=True``.

Where it writes (``--write``; ``--check`` compares the same places):

* each lesson's ``**Time:**`` statement (English: from ``**Time:**`` to the end of its paragraph
  or the next bold label; Chinese twin: from ``**用时：**`` to the end of the line);
* the time column of the lesson maps in lesson 00 (both editions) and the README, and the
  courses's total in hours there.

A Chinese cell the tool edits is stamped (``en_hash``) only when it was up to date with its
English twin before the edit, so a translation that is behind stays reported by
``zh_edition.py check``. Writing twice changes nothing the second time; the tool never prints a
traceback, and a file it cannot read or a statement it cannot find is a message naming the file.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import zh_edition as zh  # the sibling tool: cells, hashes, atomic writes

ROOT = zh.ROOT
SCRIPTS = ROOT / "notebooks" / "scripts"
README = ROOT / "README.md"
START = SCRIPTS / "00_start_here.py"

WORDS_PER_MINUTE = 120
MINUTES = {"code cell": 1.5, "prediction": 3, "exercise": 8, "build-it": 20}
RULE = (
    "minutes = prose words / 120 + 1.5 per code cell + 3 per prediction + 8 per exercise "
    "+ 20 per build-it, rounded to the nearest 5"
)

EN_TIME = "**Time:**"
ZH_TIME = "**用时：**"
CHECKER_CALL = re.compile(r"exercises\.(check_\w+)\(")


def _is_build_it(name: str) -> bool:
    """Whether the checker ``name`` checks a build-it (made by ``_build.build_checker``)."""
    from mhsa_helpers import exercises  # imported on first use: torch takes a second

    return hasattr(getattr(exercises, name, None), "build_spec")


GUESS = re.compile(r"^\s*(prediction|my_guess)\s*=\s*None|YOUR PREDICTION", re.M)
MAP_ROW = re.compile(
    r"^(?P<head>(?:# )?\| (?P<num>\d\d) \|.*\| )(?P<min>\d+)(?P<unit> min| 分钟)( \|)$"
)
ZH_TOTAL = re.compile(r"合计约 (\d+) 小时")


def totals() -> list[tuple[Path, re.Pattern[str]]]:
    """(file, pattern whose group 1 is the course's total in hours); lesson 00's twin follows."""
    return [
        (README, re.compile(r"about \*\*(\d+) hours\*\*")),
        (README, re.compile(r"add up to about (\d+) hours")),
        (START, re.compile(r"In all about (\d+) hours")),
    ]


@dataclass
class Counts:
    words: int
    code_cells: int
    predictions: int
    exercises: int
    build_its: int

    @property
    def minutes(self) -> int:
        raw = (
            self.words / WORDS_PER_MINUTE
            + MINUTES["code cell"] * self.code_cells
            + MINUTES["prediction"] * self.predictions
            + MINUTES["exercise"] * self.exercises
            + MINUTES["build-it"] * self.build_its
        )
        return max(5, 5 * round(raw / 5))


def lessons() -> list[Path]:
    return sorted(SCRIPTS.glob("[0-9][0-9]_*.py"))


def time_cell(path: Path, cells: list[zh.Cell], marker: str) -> int:
    found = [
        i for i, c in enumerate(cells) if c.kind == "markdown" and marker in "\n".join(c.lines)
    ]
    if not found:
        raise zh.ToolError(
            f"{zh.display(path)}: no markdown cell states the time ({marker}); the lesson's "
            f"opening needs a line starting with `# {marker}`"
        )
    return found[0]


def en_region(path: Path, lines: list[str]) -> tuple[int, int]:
    """Lines [start, end) of the English time statement in a cell's script lines."""
    starts = [i for i, line in enumerate(lines) if line.startswith("# " + EN_TIME)]
    if not starts:
        raise zh.ToolError(
            f"{zh.display(path)}: the time statement must start its own line (`# {EN_TIME} "
            "about N minutes ...`); move it to the start of a line and rerun"
        )
    end = starts[0] + 1
    while (
        end < len(lines)
        and lines[end].strip() not in ("", "#")
        and not lines[end].startswith("# **")
    ):
        end += 1
    return starts[0], end


def count(path: Path) -> Counts:
    _, cells = zh.read_cells(path)
    words = 0
    for index, cell in enumerate(cells):
        if cell.kind != "markdown":
            continue
        lines = cell.lines
        if index == time_cell(path, cells, EN_TIME):
            start, end = en_region(path, lines)
            lines = lines[:start] + lines[end:]
        words += zh.prose_words(zh.Cell(cell.kind, cell.header, lines, cell.line_no).text)
    code = [c.text for c in cells if c.kind == "code"]
    predictions = exercises = build_its = 0
    for text in code:
        names = CHECKER_CALL.findall(text)
        if not names or "reveal=True" in text:
            continue
        if GUESS.search(text):
            predictions += 1
        elif any(_is_build_it(name) for name in names):
            build_its += 1
        else:
            exercises += 1
    return Counts(words, len(code), predictions, exercises, build_its)


def _n(value: int, one: str, many: str) -> str:
    return f"{value} {one if value == 1 else many}"


def en_statement(c: Counts, start: bool = False) -> str:
    parts = ["reading", "running " + _n(c.code_cells, "code cell", "code cells")]
    parts += [_n(c.predictions, "prediction", "predictions")] if c.predictions else []
    parts += [_n(c.exercises, "exercise", "exercises")] if c.exercises else []
    parts += [_n(c.build_its, "build-it", "build-its")] if c.build_its else []
    rule = "the rule follows" if start else "the rule is in lesson 00"
    return f"{EN_TIME} about {c.minutes} minutes ({', '.join(parts)}; {rule})."


def zh_statement(c: Counts, start: bool = False) -> str:
    parts = ["阅读", f"运行 {c.code_cells} 个代码单元格"]
    parts += [f"{c.predictions} 次预测"] if c.predictions else []
    parts += [f"{c.exercises} 道练习"] if c.exercises else []
    parts += [f"{c.build_its} 个动手实现"] if c.build_its else []
    rule = "估算规则见下文" if start else "估算规则见第 00 课"
    return f"{ZH_TIME} 约 {c.minutes} 分钟（{'、'.join(parts)}，{rule}）。"


class Files:
    """Scripts read once, edited in memory, written only where something changed."""

    def __init__(self) -> None:
        self.cells: dict[Path, tuple[list[str], list[zh.Cell]]] = {}
        self.texts: dict[Path, str] = {}
        self.changed: set[Path] = set()
        self.notes: list[str] = []

    def script(self, path: Path) -> list[zh.Cell]:
        if path not in self.cells:
            self.cells[path] = zh.read_cells(path)
        return self.cells[path][1]

    def text(self, path: Path) -> str:
        if path not in self.texts:
            self.texts[path] = zh.read_text(path)
        return self.texts[path]

    def set_lines(self, path: Path, index: int, lines: list[str], what: str) -> None:
        cell = self.script(path)[index]
        if cell.lines != lines:
            cell.lines = lines
            self.changed.add(path)
            self.notes.append(f"{zh.display(path)}: {what}")

    def set_text(self, path: Path, text: str, what: str) -> None:
        if self.text(path) != text:
            self.texts[path] = text
            self.changed.add(path)
            self.notes.append(f"{zh.display(path)}: {what}")

    def write(self) -> None:
        for path in sorted(self.changed):
            if path in self.cells:
                preamble, cells = self.cells[path]
                zh.write_cells(path, preamble, cells)
            else:
                zh.write_atomically(path, self.texts[path].encode("utf-8"))


def edit_pair(files: Files, english: Path, index: int, edit_en, edit_zh, what: str) -> None:
    """Edit English cell ``index`` and its Chinese twin; re-stamp the twin if it was current."""
    chinese = zh.twin(english)
    en_cells = files.script(english)
    zh_cells = files.script(chinese) if chinese.is_file() else None
    was_current = (
        zh_cells is not None
        and len(zh_cells) == len(en_cells)
        and zh_cells[index].recorded_hash == zh.en_hash(en_cells[index])
    )
    files.set_lines(english, index, edit_en(en_cells[index].lines), what)
    if zh_cells is None:
        return
    if len(zh_cells) != len(en_cells) or zh_cells[index].kind != "markdown":
        raise zh.ToolError(
            f"{zh.display(chinese)}: its cells do not line up with {zh.display(english)}; "
            "align them (tools/zh_edition.py check) and rerun"
        )
    files.set_lines(chinese, index, edit_zh(zh_cells[index].lines), what)
    if was_current:
        header = zh.with_hash(zh_cells[index].header, zh.en_hash(en_cells[index]))
        if header != zh_cells[index].header:
            zh_cells[index].header = header
            files.changed.add(chinese)


def replace_en(path: Path, statement: str):
    def edit(lines: list[str]) -> list[str]:
        start, end = en_region(path, lines)
        wrapped = ["# " + line for line in textwrap.wrap(statement, 97, break_on_hyphens=False)]
        return lines[:start] + wrapped + lines[end:]

    return edit


def replace_zh(path: Path, statement: str):
    def edit(lines: list[str]) -> list[str]:
        hits = [i for i, line in enumerate(lines) if ZH_TIME in line]
        if not hits:
            raise zh.ToolError(
                f"{zh.display(path)}: the Chinese time statement ({ZH_TIME}) is missing from the "
                "cell that states the English one; add it and rerun"
            )
        line = lines[hits[0]]
        return [*lines[: hits[0]], line[: line.index(ZH_TIME)] + statement, *lines[hits[0] + 1 :]]

    return edit


def replace_map(lines: list[str], times: dict[str, int]) -> list[str]:
    out = []
    for line in lines:
        row = MAP_ROW.match(line)
        if row and row.group("num") in times:
            line = MAP_ROW.sub(
                lambda m: f"{m.group('head')}{times[m.group('num')]}{m.group('unit')} |", line
            )
        out.append(line)
    return out


def plan(files: Files) -> dict[str, Counts]:
    """Every edit the rule asks for, made in ``files`` (in memory)."""
    counts = {path.name[:2]: count(path) for path in lessons()}
    times = {num: c.minutes for num, c in counts.items()}
    for path in lessons():
        c = counts[path.name[:2]]
        index = time_cell(path, files.script(path), EN_TIME)
        zh_path = zh.twin(path)
        edit_pair(
            files,
            path,
            index,
            replace_en(path, en_statement(c, path == START)),
            replace_zh(zh_path, zh_statement(c, path == START)),
            f"time {c.minutes} min",
        )
    for index, cell in enumerate(files.script(START)):
        if cell.kind == "markdown" and any(MAP_ROW.match(line) for line in cell.lines):
            edit_pair(
                files,
                START,
                index,
                lambda lines: replace_map(lines, times),
                lambda lines: replace_map(lines, times),
                "lesson map times",
            )
    readme = "\n".join(replace_map(files.text(README).split("\n"), times))
    files.set_text(README, readme, "lesson map times")
    hours = round(sum(times.values()) / 60)
    for path, pattern in totals():
        if path == README:
            text = files.text(README)
            new = pattern.sub(lambda m: m.group(0).replace(m.group(1), str(hours)), text)
            files.set_text(README, new, f"total {hours} hours")
            continue
        for index, cell in enumerate(files.script(path)):
            joined = "\n".join(cell.lines)
            if cell.kind == "markdown" and pattern.search(joined):
                new = pattern.sub(lambda m: m.group(0).replace(m.group(1), str(hours)), joined)
                edit_pair(  # the Chinese twin gets the same number
                    files,
                    path,
                    index,
                    lambda _lines, new=new: new.split("\n"),
                    lambda lines: [ZH_TOTAL.sub(f"合计约 {hours} 小时", x) for x in lines],
                    f"total {hours} hours",
                )
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write the times where they are stated")
    mode.add_argument("--check", action="store_true", help="exit 1 if a stated time is off")
    args = parser.parse_args(argv)
    try:
        files = Files()
        counts = plan(files)
    except zh.ToolError as error:
        print(f"lesson_times: {error}", file=sys.stderr)
        return 2
    if not args.write and not args.check:
        print(f"rule: {RULE}")
        print("lesson  words  code  predictions  exercises  build-its  minutes")
        for num, c in counts.items():
            print(
                f"{num:>6} {c.words:>6} {c.code_cells:>5} {c.predictions:>12} {c.exercises:>10} "
                f"{c.build_its:>10} {c.minutes:>8}"
            )
        print(f"total: {sum(c.minutes for c in counts.values())} minutes")
        return 0
    if args.check:
        if files.notes:
            print("stated times differ from the rule; run `python tools/lesson_times.py --write`:")
            for note in files.notes:
                print("  " + note)
            return 1
        print(f"every stated time follows the rule ({len(counts)} lessons)")
        return 0
    try:
        files.write()
    except zh.ToolError as error:
        print(f"lesson_times: {error}", file=sys.stderr)
        return 2
    for note in files.notes:
        print("wrote " + note)
    print(f"{len(files.changed)} file(s) changed" if files.changed else "nothing to change")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _toolkit  # tools/_toolkit.py: any other expected failure is one line and exit 2

    _toolkit.run(main, "lesson_times")
