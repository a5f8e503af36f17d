"""Keep the Chinese edition (notebooks/zh/) in step with the English one.

    python tools/zh_edition.py check                 # what `make test` runs (exit 1 on a problem)
    python tools/zh_edition.py new notebooks/scripts/03_causal_attention.py   # start a translation
    python tools/zh_edition.py stamp notebooks/zh/scripts/03_causal_attention.py --cells 7 12
    python tools/zh_edition.py stamp notebooks/zh/scripts/03_causal_attention.py --all
    python tools/zh_edition.py join                  # one line per Chinese paragraph

Each English percent script ``notebooks/[solutions/]scripts/NAME.py`` has a Chinese twin
``notebooks/zh/[solutions/]scripts/NAME.py`` (paired with its notebook like the English one).
The rules that ``check`` enforces:

* the same cells in the same order, of the same kinds, with the same tags and ``jupyter``
  metadata;
* code cells identical, except ``mh.setup_lesson(..., lang="zh")`` in the Chinese edition;
* every Chinese markdown cell records ``en_hash``, the hash of the English cell it translates.
  When the English text changes, the hash no longer matches and ``check`` names the cell: revisit
  the translation, then ``stamp`` that cell;
* a Chinese markdown cell whose English twin has prose is written in Chinese;
* a glossary term (``data/glossary.json``) used in a Chinese lesson keeps its English term in
  brackets at its first use, e.g. 因果掩码（causal mask） (or English first: dropout（随机失活））;
* a Chinese paragraph is not broken between two Chinese characters (a browser shows such a line
  break as a space; ``join`` fixes it);
* every relative link in either edition's markdown points to a file that exists.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
ZH = NOTEBOOKS / "zh"
GLOSSARY = ROOT / "data" / "glossary.json"

CELL_START = re.compile(r"^# %%(?P<rest>.*)$")
SETUP_ZH = re.compile(r'setup_lesson\((?P<args>[^()]*?)(?:,\s*)?lang="zh"\)')
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
HASH_KEY = "en_hash"
#: A Chinese cell needs at least this many Chinese characters per English prose word.
CJK_PER_WORD = 0.3
#: How far after the first use of a Chinese term its bracketed English term may start.
BRACKET_WINDOW = 40


@dataclass
class Cell:
    kind: str  # "code" or "markdown"
    header: str  # the text after "# %%" (kind marker and metadata)
    lines: list[str]  # the cell's lines, without the header
    line_no: int  # 1-based line of the header in its script

    @property
    def text(self) -> str:
        body = "\n".join(self.lines).strip("\n")
        if self.kind == "markdown":
            return "\n".join(
                line[2:] if line.startswith("# ") else line.lstrip("#")
                for line in body.splitlines()
            )
        return body

    @property
    def metadata(self) -> str:
        """The header without the kind marker and without ``en_hash``."""
        meta = self.header.replace("[markdown]", "")
        meta = re.sub(rf'\s*{HASH_KEY}="[0-9a-f]*"', "", meta)
        return meta.strip()

    @property
    def recorded_hash(self) -> str | None:
        found = re.search(rf'{HASH_KEY}="([0-9a-f]*)"', self.header)
        return found.group(1) if found else None


def read_cells(path: Path) -> tuple[list[str], list[Cell]]:
    """The script's preamble lines (the jupytext header) and its cells."""
    preamble: list[str] = []
    cells: list[Cell] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        start = CELL_START.match(line)
        if start:
            rest = start.group("rest")
            kind = "markdown" if "[markdown]" in rest else "code"
            cells.append(Cell(kind, rest, [], number))
        elif cells:
            cells[-1].lines.append(line)
        else:
            preamble.append(line)
    return preamble, cells


def write_cells(path: Path, preamble: list[str], cells: list[Cell]) -> None:
    out = list(preamble)
    for cell in cells:
        out.append("# %%" + cell.header)
        out.extend(cell.lines)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def en_hash(cell: Cell) -> str:
    return hashlib.sha256(cell.text.encode("utf-8")).hexdigest()[:12]


def with_hash(header: str, value: str) -> str:
    header = re.sub(rf'\s*{HASH_KEY}="[0-9a-f]*"', "", header)
    return f'{header} {HASH_KEY}="{value}"'


WIDE = re.compile(
    r"[\u2e80-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef\u2018-\u201d\u2026\u2014]"
)
#: Markdown lines that start a block of their own: never joined to the line before them.
BLOCK_START = re.compile(r"^\s*([-*+] |\d+[.)] |#|\||>|\$\$|```|<)")


def _md(line: str) -> str:
    return line[2:] if line.startswith("# ") else line.lstrip("#")


def _first(text: str) -> str:
    """The first character of ``text`` that is not blank or emphasis markup (``*``, ``_``)."""
    return text.strip().lstrip("*_")[:1]


def _last(text: str) -> str:
    return text.strip().rstrip("*_")[-1:]


def join_paragraph_lines(lines: list[str]) -> list[str]:
    """Join the soft line breaks of a markdown cell's comment lines that touch Chinese text.

    Two Chinese characters meet without a space; Chinese next to a Latin character gets one space
    (the course's style). Lines in code fences, Mermaid blocks, display math, tables, headings
    and list starts are left alone.
    """
    out: list[str] = []
    fenced = False
    for line in lines:
        text = _md(line)
        toggles = text.strip().startswith("```") or text.strip() == "$$"
        previous = _md(out[-1]) if out else ""
        joinable = (
            out
            and not fenced
            and not toggles
            and text.strip()
            and previous.strip()
            and not BLOCK_START.match(text)
            and not BLOCK_START.match(previous)
            and not previous.endswith("  ")
            and (WIDE.match(_first(text)) or WIDE.match(_last(previous)))
        )
        if toggles:
            fenced = not fenced
        if joinable:
            left, right = previous.rstrip(), text.lstrip()
            both_wide = WIDE.match(_last(left)) and WIDE.match(_first(right))
            out[-1] = "# " + left + ("" if both_wide else " ") + right
        else:
            out.append(line)
    return out


def wrap_problems(where: str, cell: Cell) -> list[str]:
    joined = join_paragraph_lines(cell.lines)
    if joined == cell.lines:
        return []
    return [
        f"{where}: a line break inside a Chinese paragraph shows as a space in the browser; "
        "join the lines (`python tools/zh_edition.py join`)"
    ]


def join(paths: list[Path]) -> int:
    """Rewrite the Chinese scripts with one line per paragraph; the number of files changed."""
    changed = 0
    for path in paths:
        preamble, cells = read_cells(path)
        before = [list(c.lines) for c in cells]
        for cell in cells:
            if cell.kind == "markdown":
                cell.lines = join_paragraph_lines(cell.lines)
        if [c.lines for c in cells] != before:
            write_cells(path, preamble, cells)
            changed += 1
    return changed


def pairs() -> list[tuple[Path, Path]]:
    """(English script, Chinese script) for every English lesson and solution."""
    found = []
    for sub in ("scripts", "solutions/scripts"):
        for english in sorted((NOTEBOOKS / sub).glob("*.py")):
            found.append((english, ZH / sub / english.name))
    return found


def twin(english: Path) -> Path:
    return ZH / english.relative_to(NOTEBOOKS)


def prose_words(markdown: str) -> int:
    """English words in ``markdown`` outside code, math, links' targets and HTML tags."""
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", text, flags=re.S)
    text = re.sub(r"\]\([^)]*\)|<[^>]+>|https?://\S+", " ", text)
    return len(re.findall(r"\b[A-Za-z]{2,}\b", text))


def glossary_terms() -> list[tuple[list[str], list[str]]]:
    """(English forms, Chinese forms) of every glossary term a bracket check applies to."""
    terms = json.loads(GLOSSARY.read_text(encoding="utf-8"))["terms"]
    out = []
    for term in terms:
        english = []
        for alt in term["en"].split(" / "):
            english.append(re.sub(r"\s*\(.*?\)", "", alt).strip())
            english.extend(inner.strip() for inner in re.findall(r"\((.*?)\)", alt))
        english = [e for e in english if e]
        chinese = []
        for alt in term["zh"].split(" / "):
            alt = alt.strip()
            if len(CJK.findall(alt)) < 2:
                continue
            if any(e.lower() in alt.lower() for e in english):
                continue  # the Chinese form already carries the English term
            chinese.append(alt)
        if chinese:
            out.append((english, chinese))
    return out


def _loose(term: str) -> str:
    """A regex for ``term`` that accepts a space or a hyphen between words, any case."""
    words = [re.escape(w) for w in re.split(r"[\s\-]+", term) if w]
    return r"[\s\-]?".join(words)


def bracket_problems(
    name: str, markdown: str, terms: list[tuple[list[str], list[str]]]
) -> list[str]:
    problems = []
    for english, chinese in terms:
        firsts = [(markdown.find(zh), zh) for zh in chinese if zh in markdown]
        if not firsts:
            continue
        start, zh = min(firsts)
        after = markdown[start : start + len(zh) + BRACKET_WINDOW]
        terms_re = "(?:" + "|".join(_loose(e) for e in english) + ")"
        bracketed_english = r"[（(][^（()）]*?" + terms_re + r"[^（()）]*?[）)]"
        # or the other order, English first: dropout（随机失活）
        before = markdown[max(0, start - BRACKET_WINDOW) : start + len(zh) + 1]
        english_first = terms_re + r"\W{0,3}[（(][^（()）]*?" + re.escape(zh)
        if not (
            re.search(bracketed_english, after, flags=re.I)
            or re.search(english_first, before, flags=re.I)
        ):
            problems.append(
                f"{name}: the first use of the glossary term {zh} has no English term in brackets "
                f"right after it, e.g. {zh}（{english[0]}）"
            )
    return problems


LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)\)|<img[^>]*src=\"(?P<src>[^\"]+)\"")


def link_problems(name: str, notebook_dir: Path, markdown: str) -> list[str]:
    problems = []
    for match in LINK.finditer(markdown):
        target = match.group("target") or match.group("src")
        if re.match(r"^[a-z]+:|^#", target):
            continue
        path = (notebook_dir / target.split("#")[0]).resolve()
        if not path.exists():
            problems.append(f"{name}: the link {target} points to a file that does not exist")
    return problems


def check_pair(english: Path, chinese: Path, terms: list[tuple[list[str], list[str]]]) -> list[str]:
    name = str(chinese.relative_to(ROOT))
    if not chinese.exists():
        return [
            f"{name}: missing (the Chinese twin of {english.relative_to(ROOT)}); start it with "
            f"`python tools/zh_edition.py new {english.relative_to(ROOT)}`"
        ]
    _, en_cells = read_cells(english)
    _, zh_cells = read_cells(chinese)
    problems = []
    if [c.kind for c in en_cells] != [c.kind for c in zh_cells]:
        return [
            f"{name}: its cells differ from the English ones "
            f"({len(zh_cells)} vs {len(en_cells)} cells, or their kinds differ); the two "
            "editions must have the same cells in the same order"
        ]
    called_zh = False
    for index, (en, zh) in enumerate(zip(en_cells, zh_cells, strict=True)):
        where = f"{name}:{zh.line_no} (cell {index})"
        if en.metadata != zh.metadata:
            problems.append(
                f"{where}: metadata {zh.metadata!r} but the English cell has {en.metadata!r}"
            )
        if en.kind == "code":
            if SETUP_ZH.search(zh.text):
                called_zh = True
            normalised = SETUP_ZH.sub(lambda m: f"setup_lesson({m.group('args')})", zh.text)
            if normalised != en.text:
                problems.append(
                    f"{where}: the code differs from the English cell "
                    f"({english.relative_to(ROOT)}:{en.line_no}); code cells must be identical"
                )
            continue
        recorded, current = zh.recorded_hash, en_hash(en)
        if recorded is None:
            problems.append(f"{where}: no {HASH_KEY} (which English text does it translate?)")
        elif recorded != current:
            first = en.text.strip().splitlines()[0][:70] if en.text.strip() else ""
            problems.append(
                f"{where}: the English text changed ({english.relative_to(ROOT)}:{en.line_no}: "
                f"{first!r}...); revisit the translation, then "
                f"`python tools/zh_edition.py stamp {name} --cells {index}`"
            )
        problems.extend(wrap_problems(where, zh))
        words = prose_words(en.text)
        if words >= 3 and len(CJK.findall(zh.text)) < CJK_PER_WORD * words:
            problems.append(
                f"{where}: not translated yet ({words} English words, "
                f"{len(CJK.findall(zh.text))} Chinese characters)"
            )
    if "setup_lesson(" in "\n".join(c.text for c in en_cells if c.kind == "code") and not called_zh:
        problems.append(f'{name}: the lesson must call mh.setup_lesson(..., lang="zh")')
    markdown = "\n".join(c.text for c in zh_cells if c.kind == "markdown")
    if "solutions" not in english.parts:
        problems.extend(bracket_problems(name, markdown, terms))
    return problems


def check() -> list[str]:
    terms = glossary_terms()
    problems: list[str] = []
    for english, chinese in pairs():
        problems.extend(check_pair(english, chinese, terms))
    english_names = {p.name for p, _ in pairs()}
    for extra in sorted(ZH.glob("**/scripts/*.py")):
        if extra.name not in english_names:
            problems.append(f"{extra.relative_to(ROOT)}: has no English twin")
    for script in sorted(NOTEBOOKS.glob("**/scripts/*.py")):
        notebook_dir = script.parent.parent
        _, cells = read_cells(script)
        markdown = "\n".join(c.text for c in cells if c.kind == "markdown")
        problems.extend(link_problems(str(script.relative_to(ROOT)), notebook_dir, markdown))
    return problems


def new(english: Path) -> Path:
    """Start the Chinese twin: the English cells, hashes recorded, ``lang="zh"`` in the setup."""
    chinese = twin(english)
    if chinese.exists():
        raise SystemExit(f"{chinese.relative_to(ROOT)} exists already")
    preamble, cells = read_cells(english)
    for cell in cells:
        if cell.kind == "markdown":
            cell.header = with_hash(cell.header, en_hash(cell))
        else:
            joined = "\n".join(cell.lines)
            joined = re.sub(
                r"setup_lesson\(([^()]*)\)",
                lambda m: f'setup_lesson({m.group(1) + ", " if m.group(1) else ""}lang="zh")',
                joined,
            )
            cell.lines = joined.split("\n")
    chinese.parent.mkdir(parents=True, exist_ok=True)
    write_cells(chinese, preamble, cells)
    return chinese


def stamp(chinese: Path, cells: list[int] | None) -> list[int]:
    """Record the current English hash in the given markdown cells (all of them if None)."""
    english = NOTEBOOKS / chinese.resolve().relative_to(ZH)
    preamble, zh_cells = read_cells(chinese)
    _, en_cells = read_cells(english)
    if [c.kind for c in en_cells] != [c.kind for c in zh_cells]:
        raise SystemExit(f"{chinese}: the cells differ from the English ones; align them first")
    done = []
    for index, (en, zh) in enumerate(zip(en_cells, zh_cells, strict=True)):
        if zh.kind == "markdown" and (cells is None or index in cells):
            zh.header = with_hash(zh.header, en_hash(en))
            done.append(index)
    write_cells(chinese, preamble, zh_cells)
    return done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="check both editions (exit 1 on a problem)")
    start = sub.add_parser("new", help="start the Chinese twin of English scripts")
    start.add_argument("scripts", nargs="+", type=Path)
    mark = sub.add_parser("stamp", help="record that cells of a Chinese script were revisited")
    mark.add_argument("script", type=Path)
    which = mark.add_mutually_exclusive_group(required=True)
    which.add_argument("--cells", nargs="+", type=int)
    which.add_argument("--all", action="store_true")
    joining = sub.add_parser("join", help="one line per Chinese paragraph (all Chinese scripts)")
    joining.add_argument("scripts", nargs="*", type=Path)
    args = parser.parse_args()
    if args.command == "check":
        problems = check()
        for problem in problems:
            print(problem)
        print(f"zh edition: {len(pairs())} pairs checked, {len(problems)} problem(s)")
        return 1 if problems else 0
    if args.command == "new":
        for script in args.scripts:
            print(f"wrote {new(script.resolve()).relative_to(ROOT)}")
        return 0
    if args.command == "join":
        paths = [p.resolve() for p in args.scripts] or sorted(ZH.glob("**/scripts/*.py"))
        print(f"joined the Chinese paragraphs of {join(paths)} script(s)")
        return 0
    done = stamp(args.script.resolve(), None if args.all else args.cells)
    print(f"stamped cells {done} of {args.script}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
