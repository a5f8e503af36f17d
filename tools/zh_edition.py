"""Keep the Chinese edition (notebooks/zh/) in step with the English one.

    python tools/zh_edition.py check                 # what `make test` runs (exit 1 on a problem)
    python tools/zh_edition.py new notebooks/scripts/03_causal_attention.py   # start a translation
    python tools/zh_edition.py stamp notebooks/zh/scripts/03_causal_attention.py --cells 7 12
    python tools/zh_edition.py stamp notebooks/zh/scripts/03_causal_attention.py --all
    python tools/zh_edition.py join                  # one line per Chinese paragraph
    python tools/zh_edition.py comments [SCRIPT...]  # the share of Chinese code comments

Each English percent script ``notebooks/[solutions/]scripts/NAME.py`` has a Chinese twin
``notebooks/zh/[solutions/]scripts/NAME.py`` (paired with its notebook like the English one).
The rules that ``check`` enforces:

* the same cells in the same order, of the same kinds, with the same tags and ``jupyter``
  metadata;
* code cells identical but for their comments, and ``mh.setup_lesson(..., lang="zh")`` in the
  Chinese edition: both are read with ``tokenize`` and compared with the comments set aside. Every
  English comment has a Chinese counterpart in the same place (after the same code on its line, or
  in the comment block before the same code); a comment with English words is translated (it holds
  Chinese characters); one without (a shape such as ``# (b, T, d_in)``, a quoted word) stays as it
  is unless it is translated; every directive (``# NBVAL_IGNORE_OUTPUT``, ``# noqa``, ``# type:``,
  ``# fmt:``) stays as it is;
* the code comments are Chinese: at least ``MIN_COMMENT_SHARE`` (80 %) of the prose comments of
  each Chinese lesson and of each solution notebook hold Chinese characters. Each ``#`` comment of
  a code cell (read with ``tokenize``; one line of a comment block is one comment) is one of
  (``comment_kind``): a directive; Chinese (it holds a Chinese character); code (commented-out
  code, a path); bare (no English word once shapes such as ``(b, T, d_out)``, quoted words,
  identifiers, numbers and code are set aside); or English (anything else, even one plain word).
  The share is Chinese / (Chinese + English): directives, code and bare comments are neither
  language, and a script without prose comments passes. ``comments`` prints the count per script
  and lists the English comments;
* no wording the glossary retired: an ``avoid`` variant written in Chinese (on a term of
  ``data/glossary.json``, or in its top-level ``avoid`` list, e.g. 信息泄漏 for 信息泄露) never
  appears in the markdown or the code comments of either edition's lessons and solutions;
* the lesson prose reads like Chinese, not like translated English: at most
  ``MAX_COLONS_PER_1000`` full-width colons and ``MAX_SEMICOLONS_PER_1000`` semicolons per 1,000
  Chinese characters of each lesson's prose (paragraphs and list items; headings, tables, code and
  math aside), and of all solution notebooks together;
* Chinese typography (``typography_problems``): no italics in Chinese prose (a Chinese textbook
  uses none, and a CJK font has no italic: the browser slants the glyphs), bold or nothing
  instead; a sentence that introduces a list or a table ends with ``：``, not ``。``. A colon
  that ends such a sentence is not counted by the colon rate below;
* every Chinese markdown cell records ``en_hash``, the hash of the English cell it translates.
  When the English text changes, the hash no longer matches and ``check`` names the cell: revisit
  the translation, then ``stamp`` that cell;
* a Chinese markdown cell whose English twin has prose is written in Chinese;
* a glossary term (``data/glossary.json``) used in a Chinese lesson keeps its English term in
  brackets at its first use, e.g. 因果掩码（causal mask） (or English first: dropout（随机失活））;
* a Chinese paragraph is not broken between two Chinese characters (a browser shows such a line
  break as a space; ``join`` fixes it);
* a lesson keeps its language: a Chinese lesson names ``lang="zh"`` in its first
  ``setup_lesson`` and never another language later (``setup_lesson(lang="en")``,
  ``set_language("en")``, ``using_language("en")``); an English lesson never switches to Chinese.
  ``setup_lesson()`` without ``lang`` keeps the current language;
* every relative link in either edition's markdown points to a file that exists.

Markdown is read with markdown-it-py (the CommonMark parser jupytext brings), so code blocks
(fenced with backticks or tildes, or indented), display math, HTML blocks and tables are never
joined or counted as prose. The tool never prints a traceback: a problem with a file (not UTF-8,
not where a lesson script belongs, a cell that does not exist) is a message naming the file and
what to do, and the exit status is non-zero. It writes a script atomically (a temporary file,
then a rename) and keeps its line endings (LF, CRLF or CR), its byte-order mark and its last line
break.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import hashlib
import io
import json
import os
import re
import sys
import tempfile
import tokenize
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

if TYPE_CHECKING:  # imported when first needed: a plain venv may lack them (see markdown_parser)
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

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
                line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.split("\n")
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


class ToolError(Exception):
    """A problem with the user's files or arguments: printed as a message, never a traceback."""


def display(path: Path) -> str:
    """``path`` relative to the repository when it is inside it, else as given."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


BOM = "\ufeff"
LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Layout:
    """How a script's text is laid out in its file: kept when the tool rewrites it."""

    newline: str = "\n"
    bom: bool = False
    final_newline: bool = True


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path`` (byte-order mark included), or a ``ToolError`` saying why not."""
    name = display(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ToolError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise ToolError(f"{name}: is a folder, not a script") from None
    except OSError as error:
        raise ToolError(f"{name}: cannot be read ({error.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            found = "it looks like UTF-16"
        else:
            found = f"byte 0x{data[error.start]:02x} at position {error.start} is not UTF-8"
        raise ToolError(
            f"{name}: not UTF-8 text ({found}); the course's scripts are UTF-8: save it again "
            "as UTF-8 (e.g. `iconv -f GB18030 -t UTF-8 FILE`) and rerun"
        ) from None


def layout_of(text: str) -> Layout:
    """The line break most lines of ``text`` end with, its byte-order mark and last line break."""
    breaks = LINE_BREAK.findall(text)
    newline = max(("\n", "\r\n", "\r"), key=breaks.count) if breaks else "\n"
    body = text.removeprefix(BOM)
    return Layout(newline, text.startswith(BOM), body == "" or body.endswith(("\n", "\r")))


def split_lines(text: str) -> list[str]:
    """The lines of ``text``, split at LF, CRLF and CR only (not at U+2028, form feeds, ...)."""
    text = text.removeprefix(BOM)
    lines = LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()  # the text ended with a line break
    return lines


def read_cells(path: Path) -> tuple[list[str], list[Cell]]:
    """The script's preamble lines (the jupytext header) and its cells."""
    preamble: list[str] = []
    cells: list[Cell] = []
    for number, line in enumerate(split_lines(read_text(path)), start=1):
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


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` in one rename: an interrupted write leaves the old file."""
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    name = display(path)
    try:
        handle, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
    except OSError as error:
        raise ToolError(f"{name}: cannot write next to it ({error.strerror})") from None
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise ToolError(f"{name}: cannot be written ({error.strerror}); it is unchanged") from None


def write_cells(
    path: Path, preamble: list[str], cells: list[Cell], layout: Layout | None = None
) -> None:
    """Write the script; ``layout`` defaults to the existing file's (LF for a new file)."""
    if layout is None:
        layout = layout_of(read_text(path)) if path.exists() else Layout()
    out = list(preamble)
    for cell in cells:
        out.append("# %%" + cell.header)
        out.extend(cell.lines)
    text = layout.newline.join(out) + (layout.newline if layout.final_newline else "")
    write_atomically(path, ((BOM if layout.bom else "") + text).encode("utf-8"))


def en_hash(cell: Cell) -> str:
    return hashlib.sha256(cell.text.encode("utf-8")).hexdigest()[:12]


def with_hash(header: str, value: str) -> str:
    header = re.sub(rf'\s*{HASH_KEY}="[0-9a-f]*"', "", header)
    return f'{header} {HASH_KEY}="{value}"'


WIDE = re.compile(
    r"[\u2e80-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef\u2018-\u201d\u2026\u2014]"
)
#: Tokens whose text is code, math or raw HTML: ``join`` never changes them.
VERBATIM = frozenset(
    {"fence", "code_block", "code_inline", "math_block", "math_inline", "html_block", "html_inline"}
)


@cache
def markdown_parser() -> MarkdownIt:
    """CommonMark with tables and dollar math: what JupyterLab renders in a markdown cell.

    markdown-it-py and mdit-py-plugins come with the dev extra (``pip install -e '.[dev]'``); a
    venv without them gets a ``ToolError`` saying so, not an ``ImportError`` traceback.
    """
    try:
        from markdown_it import MarkdownIt
        from mdit_py_plugins.dollarmath import dollarmath_plugin
    except ImportError as err:
        raise ToolError(
            f"reading the lessons' markdown needs markdown-it-py and mdit-py-plugins ({err}): "
            "pip install -e '.[dev]' (or pip install markdown-it-py mdit-py-plugins)"
        ) from None
    return MarkdownIt("commonmark").enable("table").use(dollarmath_plugin)


def parse_markdown(text: str) -> list[Token]:
    return markdown_parser().parse(text)


def _flat(tokens: list[Token]) -> list[Token]:
    out = []
    for token in tokens:
        out.append(token)
        out.extend(token.children or [])
    return out


def verbatim_parts(text: str) -> list[tuple[str, str]]:
    """(kind, content) of every code block, code span, math and raw HTML in markdown ``text``."""
    return [(t.type, t.content) for t in _flat(parse_markdown(text)) if t.type in VERBATIM]


def _md(line: str) -> str:
    return line[2:] if line.startswith("# ") else line.lstrip("#")


def _first(text: str) -> str:
    """The first character of ``text`` that is not blank or emphasis markup (``*``, ``_``)."""
    return text.strip().lstrip("*_")[:1]


def _last(text: str) -> str:
    return text.strip().rstrip("*_")[-1:]


def _soft_breaks(texts: list[str]) -> list[int]:
    """Lines ``i`` whose break from line ``i - 1`` is a soft break inside one paragraph.

    Only paragraphs outside block quotes (a quote's next line starts with ``>``): never a line of
    a code block, display math, an HTML block, a table, a heading or a list item's first line.
    """
    breaks = []
    quoted = 0
    for token in parse_markdown("\n".join(texts)):
        if token.type == "blockquote_open":
            quoted += 1
        elif token.type == "blockquote_close":
            quoted -= 1
        elif token.type == "paragraph_open" and not quoted and token.map:
            start, end = token.map
            breaks.extend(range(start + 1, end))
    return breaks


def join_paragraph_lines(lines: list[str]) -> list[str]:
    """Join the soft line breaks of a markdown cell's comment lines that touch Chinese text.

    Two Chinese characters meet without a space; Chinese next to a Latin character gets one space
    (the course's style). Only the lines of one paragraph are joined (markdown-it-py decides what
    a paragraph is), never after a hard break (two spaces or a backslash at the end of a line),
    and never where it would change code, math or HTML (a code span broken across two lines).
    """
    texts = [_md(line) for line in lines]
    original = verbatim_parts("\n".join(texts))
    joins: set[int] = set()
    for index in _soft_breaks(texts):
        candidate = joins | {index}
        joined = _join_at(lines, candidate)
        if joined == _join_at(lines, joins):
            continue  # nothing to join here (no Chinese at the break)
        if verbatim_parts("\n".join(_md(line) for line in joined)) == original:
            joins = candidate
    return _join_at(lines, joins)


def _join_at(lines: list[str], joins: set[int]) -> list[str]:
    """``lines`` with line ``i`` joined to the one before it, for each ``i`` in ``joins`` that is
    a break next to Chinese text."""
    out: list[str] = []
    for index, line in enumerate(lines):
        text = _md(line)
        previous = _md(out[-1]) if out else ""
        if (
            index in joins
            and text.strip()
            and previous.strip()
            and not previous.endswith(("  ", "\\"))
            and (WIDE.match(_first(text)) or WIDE.match(_last(previous)))
        ):
            left, right = previous.rstrip(), text.lstrip()
            both_wide = WIDE.match(_last(left)) and WIDE.match(_first(right))
            out[-1] = "# " + left + ("" if both_wide else " ") + right
        else:
            out.append(line)
    return out


_LIST_OPEN = ("bullet_list_open", "ordered_list_open", "table_open")


def _list_intros(tokens: list[Token]) -> list[Token]:
    """The inline token of every paragraph that a list or a table follows directly (the
    sentence that introduces it), at any depth."""
    return [
        tokens[i - 2]
        for i in range(2, len(tokens))
        if tokens[i].type in _LIST_OPEN
        and tokens[i - 1].type == "paragraph_close"
        and tokens[i - 2].type == "inline"
    ]


def _italic_chinese(inline: Token) -> list[str]:
    """The Chinese text set in italics (``*所有*``, ``_之后_``) in one inline token."""
    found, depth, current = [], 0, ""
    for child in inline.children or []:
        if child.type == "em_open":
            depth += 1
        elif child.type == "em_close":
            depth -= 1
            if not depth:
                if CJK.search(current):
                    found.append(current)
                current = ""
        elif depth:
            current += child.content
    return found


def typography_problems(where: str, cell: Cell) -> list[str]:
    """A Chinese markdown cell's italics in Chinese prose, and lists introduced with 。."""
    if cell.kind != "markdown":
        return []
    tokens = parse_markdown(cell.text)
    problems = [
        f"{where}: italic Chinese *{text}*: Chinese takes no italics (a CJK font has none, the "
        "browser slants the glyphs); use **bold** or nothing"
        for token in tokens
        if token.type == "inline"
        for text in _italic_chinese(token)
    ]
    problems += [
        f"{where}: {_last_words(token.content)!r} introduces a list or a table: "
        "end it with ：, not 。"
        for token in _list_intros(tokens)
        if token.content.rstrip().endswith("。")
    ]
    return problems


def _last_words(text: str) -> str:
    return "…" + text.rstrip()[-24:] if len(text.rstrip()) > 24 else text.rstrip()


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
    """English words in ``markdown``'s prose: not in code, math, HTML, link targets or URLs."""
    text = " ".join(
        t.content for t in _flat(parse_markdown(markdown)) if t.type in ("text", "image")
    )
    text = re.sub(r"https?://\S+", " ", text)
    return len(re.findall(r"\b[A-Za-z]{2,}\b", text))


def read_glossary() -> dict:
    """``data/glossary.json`` as read, or a ``ToolError`` saying what is wrong with it."""
    try:
        glossary = json.loads(read_text(GLOSSARY))
    except json.JSONDecodeError as error:
        raise ToolError(
            f"{display(GLOSSARY)}: not valid JSON (line {error.lineno}, column {error.colno}: "
            f"{error.msg}); fix it and rerun"
        ) from None
    if not isinstance(glossary, dict):
        raise _glossary_shape_error()
    return glossary


def _glossary_shape_error() -> ToolError:
    return ToolError(
        f'{display(GLOSSARY)}: expected {{"terms": [{{"en": ..., "zh": ..., "avoid": [...]}}, '
        '...], "avoid": [{"use": ..., "avoid": [...]}, ...]}; fix it and rerun'
    )


def glossary_terms() -> list[tuple[list[str], list[str]]]:
    """(English forms, Chinese forms) of every glossary term a bracket check applies to."""
    try:
        pairs_ = [(term["en"], term["zh"]) for term in read_glossary()["terms"]]
    except (KeyError, TypeError):
        raise _glossary_shape_error() from None
    out = []
    for term_en, term_zh in pairs_:
        english = []
        for alt in term_en.split(" / "):
            english.append(re.sub(r"\s*\(.*?\)", "", alt).strip())
            english.extend(inner.strip() for inner in re.findall(r"\((.*?)\)", alt))
        english = [e for e in english if e]
        chinese = []
        for alt in term_zh.split(" / "):
            alt = alt.strip()
            if len(CJK.findall(alt)) < 2:
                continue
            if any(e.lower() in alt.lower() for e in english):
                continue  # the Chinese form already carries the English term
            chinese.append(alt)
        if chinese:
            out.append((english, chinese))
    return out


def retired_terms() -> list[tuple[str, str]]:
    """(retired wording, the glossary's wording) for every ``avoid`` variant written in Chinese.

    The glossary decides once: a term's ``avoid`` list, and the top-level ``avoid`` list of
    ``{"use": ..., "avoid": [...]}`` entries (``tests/test_zh_strings.py`` reads the same lists for
    the package's strings). A variant without a Chinese character (``one-hot``) is left out here:
    the lessons write the English term beside the Chinese one, e.g. 独热向量（one-hot vector）.
    """
    glossary = read_glossary()
    try:
        found = [(bad, term["zh"]) for term in glossary["terms"] for bad in term.get("avoid", [])]
        found += [
            (bad, entry["use"]) for entry in glossary.get("avoid", []) for bad in entry["avoid"]
        ]
    except (KeyError, TypeError, AttributeError):
        raise _glossary_shape_error() from None
    if not all(isinstance(bad, str) and isinstance(use, str) for bad, use in found):
        raise _glossary_shape_error()
    return [(bad, use) for bad, use in found if CJK.search(bad)]


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


HTML_SRC = re.compile(r"<img[^>]*\ssrc=[\"'](?P<src>[^\"']+)[\"']", flags=re.I)


def link_targets(markdown: str) -> list[str]:
    """The targets of the links and images in ``markdown`` (also ``<img src>`` in raw HTML)."""
    targets = []
    for token in _flat(parse_markdown(markdown)):
        if token.type == "link_open":
            targets.append(str(token.attrs.get("href", "")))
        elif token.type == "image":
            targets.append(str(token.attrs.get("src", "")))
        elif token.type in ("html_block", "html_inline"):
            targets.extend(m.group("src") for m in HTML_SRC.finditer(token.content))
    return targets


def link_problems(name: str, notebook_dir: Path, markdown: str) -> list[str]:
    problems = []
    for target in link_targets(markdown):
        if not target or re.match(r"^[a-z][a-z0-9+.-]*:|^#", target, flags=re.I):
            continue
        path = (notebook_dir / unquote(target.split("#")[0])).resolve()
        if not path.exists():
            problems.append(f"{name}: the link {target} points to a file that does not exist")
    return problems


#: The calls that set the lesson language, and the position of their language argument.
LANGUAGE_CALLS = {"setup_lesson": 2, "set_language": 0, "using_language": 0}
LANGUAGE_CALL = re.compile(
    r"\b(?P<name>setup_lesson|set_language|using_language)\s*\((?P<args>[^()]*)"
)


@dataclass(frozen=True)
class LanguageCall:
    """A call that may set the lesson language: ``lang`` is the literal language it names, None
    when it names none (``setup_lesson(seed=789)`` keeps the language) or ``"?"`` when the
    argument is not a literal string."""

    name: str
    lang: str | None
    source: str


def language_calls(code: str) -> list[LanguageCall]:
    """The language-setting calls of a code cell, in order (IPython magics are skipped)."""
    plain = "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in code.split("\n")
    )
    try:
        tree = ast.parse(plain)
    except SyntaxError:
        return [_call_from_text(m) for m in LANGUAGE_CALL.finditer(plain)]
    names = {name: name for name in LANGUAGE_CALLS}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in LANGUAGE_CALLS and alias.asname:
                    names[alias.asname] = alias.name
    calls: list[tuple[tuple[int, int], LanguageCall]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called not in names:
            continue
        name = names[called]
        argument: ast.expr | None = None
        for keyword in node.keywords:
            if keyword.arg == "lang" or keyword.arg is None:  # lang=... or **options
                argument = keyword.value
        position = LANGUAGE_CALLS[name]
        if argument is None and len(node.args) > position:
            argument = node.args[position]
        if argument is None and any(isinstance(a, ast.Starred) for a in node.args):
            argument = node.args[-1]  # setup_lesson(*args): the language cannot be read
        if argument is None:
            lang = None
        elif isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            lang = argument.value
        else:
            lang = "?"
        source = ast.get_source_segment(plain, node) or name
        calls.append(((node.lineno, node.col_offset), LanguageCall(name, lang, source)))
    return [call for _, call in sorted(calls, key=lambda found: found[0])]


def _call_from_text(match: re.Match) -> LanguageCall:
    args = match.group("args")
    named = re.search(r"lang\s*=\s*(?P<q>[\"'])(?P<lang>[^\"']*)(?P=q)", args)
    if named:
        lang: str | None = named.group("lang")
    elif "lang" in args or (match.group("name") != "setup_lesson" and args.strip()):
        literal = re.fullmatch(r"\s*([\"'])([^\"']*)\1\s*", args)
        lang = literal.group(2) if literal else "?"
    else:
        lang = None
    return LanguageCall(match.group("name"), lang, match.group(0) + ")")


def language_problems(name: str, cells: list[tuple[str, Cell]], lang: str) -> list[str]:
    """A lesson in ``lang`` never names another language; a Chinese one starts in Chinese."""
    problems = []
    first_setup = True
    edition = {"zh": "Chinese", "en": "English"}[lang]
    for where, cell in cells:
        for call in language_calls(cell.text):
            if call.name == "setup_lesson" and first_setup:
                first_setup = False
                if lang == "zh" and call.lang != "zh":
                    problems.append(
                        f'{where}: the first {call.source} must name lang="zh" (the Chinese '
                        "lesson starts in Chinese; later calls keep the language)"
                    )
                    continue
            if call.lang is not None and call.lang != lang:
                shown = (
                    "a language that is not a literal string"
                    if call.lang == "?"
                    else repr(call.lang)
                )
                problems.append(
                    f"{where}: {call.source} switches the {edition} lesson to {shown} from this "
                    f"cell on; a lesson keeps one language (setup_lesson() without lang keeps "
                    f"it): remove the language argument or the call, in both editions"
                )
    return problems


#: Comments that tools read: never translated, never moved.
DIRECTIVE = re.compile(r"^#\s*(?:NBVAL_\w+|noqa\b|type:|fmt:|pragma\b|%%)")
#: The exercise markers a learner looks for, and the Chinese edition's wording of each (the
#: Chinese checker messages name the Chinese marker).
MARKERS = {"# YOUR CODE HERE": "# 在这里写代码", "# YOUR PREDICTION": "# 你的预测"}
#: A shape such as ``(b, T, d_out)`` or ``(2, vocab)`` (one name or number per item), or a quote.
SHAPE_OR_QUOTE = re.compile(
    r"\(\s*(?:[\w.]+(?:\s*[*+\-/]\s*[\w.]+)*\s*(?:,\s*|(?=\))))*\)|\"[^\"]*\"|'[^']*'"
)
#: An English word in a comment: three or more letters, not part of an identifier or a number.
COMMENT_WORD = re.compile(r"(?<![\w.`])[A-Za-z]{3,}(?![\w`(])")


@dataclass(frozen=True)
class CodeShape:
    """A code cell read by ``tokenize``: its code tokens, and its comments by where they sit.

    A comment's place is ``("after", n)`` when code precedes it on its line (``n`` code tokens
    so far) and ``("before", n)`` when it has a line to itself (it precedes code token ``n``), so
    a translated comment block may have more or fewer lines than the English one.
    """

    tokens: tuple[tuple[int, str], ...]
    comments: dict[tuple[str, int], list[tuple[int, str]]]  # place -> [(row in cell, text)]


def code_shape(code: str) -> CodeShape | None:
    """``code`` read as Python tokens; None when it does not tokenize (then text is compared)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    kept: list[tuple[int, str]] = []
    comments: dict[tuple[str, int], list[tuple[int, str]]] = {}
    last_code_row = 0
    for token in tokens:
        if token.type == tokenize.COMMENT:
            side = "after" if token.start[0] == last_code_row else "before"
            comments.setdefault((side, len(kept)), []).append((token.start[0], token.string))
        elif token.type not in (tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER):
            kept.append((token.type, token.string))
            if token.type not in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                last_code_row = token.end[0]
    return CodeShape(tuple(kept), comments)


def _comment_words(comments: list[tuple[int, str]]) -> list[str]:
    """English words of ``comments``, leaving out directives, shapes (``(2, vocab)``), quotes."""
    return [
        word
        for _, comment in comments
        if not DIRECTIVE.match(comment)
        for word in COMMENT_WORD.findall(SHAPE_OR_QUOTE.sub(" ", comment))
    ]


def code_problems(where: str, english: str, chinese: str, first_row: int) -> list[str]:
    """Why the Chinese code cell is not the English one with its comments translated."""
    chinese = SETUP_ZH.sub(lambda m: f"setup_lesson({m.group('args')})", chinese)
    en, zh = code_shape(english), code_shape(chinese)
    if en is None or zh is None:
        if english == chinese:
            return []
        return [f"{where}: the code differs from the English cell; code cells must be identical"]
    if en.tokens != zh.tokens:
        return [
            f"{where}: the code differs from the English cell (only comments may differ: "
            "code, strings and printed text must be identical)"
        ]
    problems = []
    for place in sorted(set(en.comments) | set(zh.comments), key=lambda p: (p[1], p[0])):
        en_block, zh_block = en.comments.get(place, []), zh.comments.get(place, [])
        row = (en_block or zh_block)[0][0] + first_row
        english_text = " ".join(c for _, c in en_block)
        if not en_block:
            problems.append(
                f"{where}, line {row}: a comment the English cell does not have there "
                f"({zh_block[0][1][:50]!r}); put each comment where its English twin is"
            )
        elif not zh_block:
            problems.append(
                f"{where}, line {row}: the English comment {english_text[:60]!r} has no Chinese "
                "counterpart in the same place"
            )
        elif [c for _, c in en_block if DIRECTIVE.match(c)] != [
            c for _, c in zh_block if DIRECTIVE.match(c)
        ]:
            problems.append(
                f"{where}, line {row}: the directive comments must stay as in English "
                f"({english_text[:60]!r})"
            )
        elif wrong_marker := next(
            (
                (en_m, zh_m)
                for en_m, zh_m in MARKERS.items()
                if english_text.startswith(en_m) and not zh_block[0][1].startswith(zh_m)
            ),
            None,
        ):
            problems.append(
                f"{where}, line {row}: the marker {wrong_marker[0]!r} is written "
                f"{wrong_marker[1]!r} in the Chinese edition"
            )
        elif _comment_words(en_block):
            if not any(CJK.search(c) for _, c in zh_block if not DIRECTIVE.match(c)):
                problems.append(
                    f"{where}, line {row}: the comment {english_text[:60]!r} is not translated "
                    "(write it in Chinese, same place)"
                )
        elif [c for _, c in en_block] != [c for _, c in zh_block] and not any(
            CJK.search(c) for _, c in zh_block
        ):
            problems.append(
                f"{where}, line {row}: the comment {english_text[:60]!r} has no words to "
                "translate; keep it as it is"
            )
    return problems


#: The least share of Chinese among the prose comments of each Chinese lesson and of each
#: solution notebook (issue 33; d2l-zh translates its code comments).
MIN_COMMENT_SHARE = 0.8
#: Code inside a comment: a span in backticks, a dotted name, a call, a CamelCase name.
CODE_IN_COMMENT = re.compile(
    r"`[^`]*`|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z_]\w*\(|\b[A-Z][a-z]+[A-Z]\w*"
)
#: Words that join formulas into a sentence: ``# Q @ K^T and weights @ V`` parses, but is prose.
PROSE_JOIN = re.compile(r"\b(?:and|or|not|is|in)\b")
#: A character that only code has in a comment (prose has words and spaces).
CODE_CHARACTER = re.compile(r"[=()\[\]{}.@+*/<>%-]")


def _parses(text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. a SyntaxWarning for `x is 1`
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            return False
    return True


def comment_kind(comment: str) -> str:
    """What one ``#`` comment of a code cell is, for the comment share.

    In this order:

    * ``"directive"``: a comment tools read (``# NBVAL_IGNORE_OUTPUT``, ``# noqa: B023``, ...);
    * ``"zh"``: it holds a Chinese character;
    * ``"code"``: commented-out code or a path: once shapes are set aside it parses as Python,
      has a character only code has and no ``and``, ``or``, ``not``, ``is`` or ``in`` that would
      join formulas into a sentence (``# x = x.sum(-1)``, ``# torch.ones(3)``, ``# w >= T``,
      ``# data/char_lm.pt``);
    * ``"bare"``: no English word once shapes and quotes (``SHAPE_OR_QUOTE``) and code (a span
      in backticks, a dotted name, a call, a CamelCase name: ``CODE_IN_COMMENT``) are set aside;
      an English word is three or more letters that are not part of an identifier or a number
      (``COMMENT_WORD``), so ``# (b, T, d_out)``, ``# float32``, ``# head_dim = 32 // 4 = 8``,
      ``# "journey"`` and ``# 2, 6`` are bare;
    * ``"en"``: anything else: English prose, even a single plain word (``# causal``).

    Only ``"zh"`` and ``"en"`` are prose; the others stay as they are in both editions and count
    for neither language.
    """
    if DIRECTIVE.match(comment):
        return "directive"
    if CJK.search(comment):
        return "zh"
    body = SHAPE_OR_QUOTE.sub(" ", comment.lstrip("#")).strip()
    if CODE_CHARACTER.search(body) and not PROSE_JOIN.search(body) and _parses(body):
        return "code"
    if not COMMENT_WORD.search(CODE_IN_COMMENT.sub(" ", body)):
        return "bare"
    return "en"


def cell_comments(cell: Cell) -> list[tuple[int, str]]:
    """(line in the script, text) of every comment of a code cell, read with ``tokenize``.

    A cell that does not tokenize (an IPython magic the tokenizer refuses) gives the lines that
    start with ``#``.
    """
    first = cell.line_no + 1 + next((i for i, line in enumerate(cell.lines) if line != ""), 0)
    shape = code_shape(cell.text)
    if shape is None:
        return [
            (cell.line_no + 1 + i, line.strip())
            for i, line in enumerate(cell.lines)
            if line.lstrip().startswith("#")
        ]
    found = [(first + row - 1, text) for block in shape.comments.values() for row, text in block]
    return sorted(found)


@dataclass(frozen=True)
class CommentCount:
    """The comments of one Chinese script's code cells, by ``comment_kind``."""

    chinese: int
    english: int
    other: int  # directives, code, bare shapes and numbers: neither language
    english_comments: tuple[tuple[int, str], ...] = ()  # (line, text) of each English one

    @property
    def share(self) -> float | None:
        """Chinese comments / prose comments; None when the script has no prose comment."""
        prose = self.chinese + self.english
        return self.chinese / prose if prose else None


def comment_count(cells: list[Cell]) -> CommentCount:
    chinese = other = 0
    english: list[tuple[int, str]] = []
    for cell in cells:
        if cell.kind != "code":
            continue
        for line, text in cell_comments(cell):
            kind = comment_kind(text)
            if kind == "zh":
                chinese += 1
            elif kind == "en":
                english.append((line, text))
            else:
                other += 1
    return CommentCount(chinese, len(english), other, tuple(english))


def comment_share_problems(name: str, count: CommentCount) -> list[str]:
    share = count.share
    if share is None or share >= MIN_COMMENT_SHARE:
        return []
    shown = "; ".join(f"line {line}: {text[:50]!r}" for line, text in count.english_comments[:3])
    more = len(count.english_comments) - 3
    return [
        f"{name}: {share:.0%} of its prose comments are Chinese ({count.chinese} of "
        f"{count.chinese + count.english}; at least {MIN_COMMENT_SHARE:.0%}): translate the "
        f"English ones, e.g. {shown}{f' (and {more} more)' if more > 0 else ''}; "
        f"`python tools/zh_edition.py comments {name}` lists them"
    ]


def retired_term_problems(
    name: str, cells: list[Cell], retired: list[tuple[str, str]]
) -> list[str]:
    """Every use of a wording the glossary retired, in markdown or in a code comment."""
    if not retired:
        return []
    texts: list[tuple[int, str]] = []
    for cell in cells:
        if cell.kind == "markdown":
            texts.extend((cell.line_no + 1 + i, line) for i, line in enumerate(cell.lines))
        else:
            texts.extend(cell_comments(cell))
    return [
        f"{name}:{line}: {bad} is retired by the glossary ({display(GLOSSARY)}); write {use}"
        for line, text in texts
        for bad, use in retired
        if bad in text
    ]


#: The most full-width colons and semicolons per 1,000 Chinese characters of lesson prose
#: (issue 21: a Chinese textbook's rhythm; d2l-zh's attention chapter has 3.3 and 0.5).
MAX_COLONS_PER_1000 = 6.0
MAX_SEMICOLONS_PER_1000 = 1.5


@dataclass(frozen=True)
class ProseCount:
    chinese: int  # Chinese characters
    colons: int  # full-width colons, and ASCII colons right after a Chinese character
    semicolons: int

    def __add__(self, other: ProseCount) -> ProseCount:
        return ProseCount(
            self.chinese + other.chinese,
            self.colons + other.colons,
            self.semicolons + other.semicolons,
        )

    def per_1000(self) -> tuple[float, float]:
        n = max(self.chinese, 1)
        return 1000 * self.colons / n, 1000 * self.semicolons / n


def prose_text(markdown: str) -> str:
    """The prose of ``markdown``: paragraphs and list items, without headings, tables, code,
    math, HTML or link targets."""
    out, skip = [], 0
    for token in parse_markdown(markdown):
        if token.type in ("heading_open", "table_open"):
            skip += 1
        elif token.type in ("heading_close", "table_close"):
            skip -= 1
        elif token.type == "inline" and not skip:
            out.append("".join(c.content for c in token.children or [] if c.type == "text"))
    return "\n".join(out)


def prose_count(markdown: str) -> ProseCount:
    """Chinese characters, colons and semicolons of the prose; a colon that ends the sentence
    introducing a list is the colon a list takes, and is not counted."""
    text = prose_text(markdown)
    intros = sum(
        bool(re.search(r"(：|(?<=[\u3400-\u9fff]):)$", token.content.rstrip()))
        for token in _list_intros(parse_markdown(markdown))
    )
    colons = text.count("：") + len(re.findall(r"(?<=[\u3400-\u9fff]):", text)) - intros
    semicolons = text.count("；") + len(re.findall(r"(?<=[\u3400-\u9fff]);", text))
    return ProseCount(len(CJK.findall(text)), colons, semicolons)


def rhythm_problems(name: str, count: ProseCount) -> list[str]:
    colons, semicolons = count.per_1000()
    if colons <= MAX_COLONS_PER_1000 and semicolons <= MAX_SEMICOLONS_PER_1000:
        return []
    return [
        f"{name}: {colons:.1f} colons and {semicolons:.1f} semicolons per 1,000 Chinese "
        f"characters of prose (at most {MAX_COLONS_PER_1000:g} and "
        f"{MAX_SEMICOLONS_PER_1000:g}): shorter sentences, a colon only before a list or a "
        "definition, semicolons rarely"
    ]


def check_pair(
    english: Path,
    chinese: Path,
    terms: list[tuple[list[str], list[str]]],
    retired: list[tuple[str, str]] | None = None,
) -> list[str]:
    name = str(chinese.relative_to(ROOT))
    if not chinese.exists():
        return [
            f"{name}: missing (the Chinese twin of {english.relative_to(ROOT)}); start it with "
            f"`python tools/zh_edition.py new {english.relative_to(ROOT)}`"
        ]
    try:
        _, en_cells = read_cells(english)
        _, zh_cells = read_cells(chinese)
    except ToolError as error:
        return [str(error)]
    problems = language_problems(
        name, [(f"{name}:{c.line_no}", c) for c in zh_cells if c.kind == "code"], "zh"
    )
    problems += comment_share_problems(name, comment_count(zh_cells))
    problems += retired_term_problems(name, zh_cells, retired or [])
    problems += retired_term_problems(display(english), en_cells, retired or [])
    problems += language_problems(
        display(english),
        [(f"{display(english)}:{c.line_no}", c) for c in en_cells if c.kind == "code"],
        "en",
    )
    if [c.kind for c in en_cells] != [c.kind for c in zh_cells]:
        problems.insert(
            0,
            f"{name}: its cells differ from the English ones "
            f"({len(zh_cells)} vs {len(en_cells)} cells, or their kinds differ); the two "
            "editions must have the same cells in the same order",
        )
        return problems
    called_zh = any(
        call.name == "setup_lesson"
        for c in zh_cells
        if c.kind == "code"
        for call in language_calls(c.text)
    )
    for index, (en, zh) in enumerate(zip(en_cells, zh_cells, strict=True)):
        where = f"{name}:{zh.line_no} (cell {index})"
        if en.metadata != zh.metadata:
            problems.append(
                f"{where}: metadata {zh.metadata!r} but the English cell has {en.metadata!r}"
            )
        if en.kind == "code":
            first_row = zh.line_no + next((i for i, line in enumerate(zh.lines) if line.strip()), 0)
            problems.extend(code_problems(where, en.text, zh.text, first_row))
            continue
        recorded, current = zh.recorded_hash, en_hash(en)
        if recorded is None:
            problems.append(f"{where}: no {HASH_KEY} (which English text does it translate?)")
        elif recorded != current:
            first = en.text.strip().split("\n")[0][:70] if en.text.strip() else ""
            problems.append(
                f"{where}: the English text changed ({english.relative_to(ROOT)}:{en.line_no}: "
                f"{first!r}...); revisit the translation, then "
                f"`python tools/zh_edition.py stamp {name} --cells {index}`"
            )
        problems.extend(wrap_problems(where, zh))
        problems.extend(typography_problems(where, zh))
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


def rhythm_check() -> list[str]:
    """Colon and semicolon rates of each Chinese lesson's prose, and of the solutions together."""
    problems: list[str] = []
    solutions = ProseCount(0, 0, 0)
    for _, chinese in pairs():
        if not chinese.exists():
            continue
        try:
            _, cells = read_cells(chinese)
        except ToolError:
            continue  # check_pair reports it
        count = ProseCount(0, 0, 0)
        for cell in cells:
            if cell.kind == "markdown":
                count = count + prose_count(cell.text)
        if "solutions" in chinese.parts:
            solutions = solutions + count
        else:
            problems.extend(rhythm_problems(display(chinese), count))
    problems.extend(rhythm_problems("notebooks/zh/solutions (all together)", solutions))
    return problems


def check() -> list[str]:
    terms = glossary_terms()
    retired = retired_terms()
    problems: list[str] = []
    for english, chinese in pairs():
        problems.extend(check_pair(english, chinese, terms, retired))
    problems.extend(rhythm_check())
    chinese_twins = {chinese for _, chinese in pairs()}
    for extra in sorted(ZH.glob("**/scripts/*.py")):
        if extra not in chinese_twins:
            problems.append(f"{display(extra)}: has no English twin")
    for script in sorted(NOTEBOOKS.glob("**/scripts/*.py")):
        notebook_dir = script.parent.parent
        try:
            _, cells = read_cells(script)
        except ToolError as error:
            if not any(str(error) in p for p in problems):
                problems.append(str(error))
            continue
        markdown = "\n".join(c.text for c in cells if c.kind == "markdown")
        problems.extend(link_problems(display(script), notebook_dir, markdown))
    return problems


def chinese_script(path: Path, command: str) -> Path:
    """``path`` if it is a Chinese lesson or solution script, else a ``ToolError`` saying why."""
    path = path.resolve()
    if not path.is_relative_to(ZH) or path.suffix != ".py":
        raise ToolError(
            f"{display(path)} is not a Chinese script: `{command}` takes a script in "
            f"{display(ZH / 'scripts')}/ or {display(ZH / 'solutions' / 'scripts')}/"
        )
    return path


def comment_report(paths: list[Path]) -> list[tuple[str, CommentCount]]:
    """(script, its comment count) of each Chinese script, in the order given."""
    return [(display(path), comment_count(read_cells(path)[1])) for path in paths]


def print_comment_report(report: list[tuple[str, CommentCount]]) -> None:
    width = max([len(name) for name, _ in report] + [len("all")])
    print(f"{'script':<{width}}  Chinese  English  neither  share (prose comments)")
    for name, count in [*report, ("all", _total(count for _, count in report))]:
        share = "-" if count.share is None else f"{count.share:.0%}"
        low = count.share is not None and count.share < MIN_COMMENT_SHARE
        print(
            f"{name:<{width}}  {count.chinese:7d}  {count.english:7d}  {count.other:7d}  "
            f"{share:>5}{'  < ' + format(MIN_COMMENT_SHARE, '.0%') if low else ''}"
        )
    for name, count in report:
        for line, text in count.english_comments:
            print(f"{name}:{line}: {text}")


def _total(counts: Iterable[CommentCount]) -> CommentCount:
    """The counts added up (without the list of English comments)."""
    counts = list(counts)
    return CommentCount(
        sum(c.chinese for c in counts), sum(c.english for c in counts), sum(c.other for c in counts)
    )


def english_script(path: Path) -> Path:
    """``path`` if it is an English lesson or solution script, else a ``ToolError`` saying why."""
    path = path.resolve()
    if path.is_relative_to(ZH):
        raise ToolError(
            f"{display(path)} is a Chinese script; `new` takes the English one "
            f"({display(NOTEBOOKS / path.relative_to(ZH))})"
        )
    if path.suffix != ".py" or path.parent not in (
        NOTEBOOKS / "scripts",
        NOTEBOOKS / "solutions" / "scripts",
    ):
        raise ToolError(
            f"{display(path)} is not an English lesson script: `new` takes a percent script in "
            f"{display(NOTEBOOKS / 'scripts')}/ or {display(NOTEBOOKS / 'solutions' / 'scripts')}/"
        )
    if not path.is_file():
        raise ToolError(f"{display(path)}: no such file")
    return path


def new(english: Path) -> Path:
    """Start the Chinese twin: the English cells, hashes recorded, ``lang="zh"`` in the setup."""
    english = english_script(english)
    chinese = twin(english)
    if chinese.exists():
        raise ToolError(
            f"{display(chinese)} exists already; `new` never overwrites a translation (use "
            f"`stamp` after revisiting it)"
        )
    text = read_text(english)
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
    try:
        chinese.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ToolError(
            f"{display(chinese.parent)}: cannot be created ({error.strerror})"
        ) from None
    write_cells(chinese, preamble, cells, layout_of(text))
    return chinese


def stamp(chinese: Path, cells: list[int] | None) -> list[int]:
    """Record the current English hash in the given markdown cells (all of them if None).

    Every index must name a markdown cell of the script; otherwise nothing is written.
    """
    chinese = chinese.resolve()
    if not chinese.is_relative_to(ZH) or chinese.suffix != ".py":
        raise ToolError(
            f"{display(chinese)} is not a Chinese script: `stamp` takes a script in "
            f"{display(ZH / 'scripts')}/ or {display(ZH / 'solutions' / 'scripts')}/"
        )
    english = NOTEBOOKS / chinese.relative_to(ZH)
    preamble, zh_cells = read_cells(chinese)
    if not english.is_file():
        raise ToolError(
            f"{display(chinese)} has no English twin ({display(english)} does not exist); a "
            "Chinese script translates an English one of the same name"
        )
    _, en_cells = read_cells(english)
    if [c.kind for c in en_cells] != [c.kind for c in zh_cells]:
        raise ToolError(
            f"{display(chinese)}: its cells differ from the English ones ({len(zh_cells)} vs "
            f"{len(en_cells)} cells, or their kinds differ); align them first"
        )
    markdown = [i for i, c in enumerate(zh_cells) if c.kind == "markdown"]
    if cells is not None:
        wrong = [i for i in cells if i not in markdown]
        if wrong:
            reasons = [
                f"cell {i} is a code cell (code carries no {HASH_KEY})"
                if 0 <= i < len(zh_cells)
                else f"there is no cell {i} (the cells are 0..{len(zh_cells) - 1})"
                for i in dict.fromkeys(wrong)
            ]
            raise ToolError(
                f"{display(chinese)}: {'; '.join(reasons)}; nothing was stamped. Its markdown "
                f"cells are {markdown}"
            )
    done = []
    for index in markdown:
        if cells is None or index in cells:
            zh_cells[index].header = with_hash(zh_cells[index].header, en_hash(en_cells[index]))
            done.append(index)
    write_cells(chinese, preamble, zh_cells)
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="check both editions (exit 1 on a problem)")
    start = sub.add_parser("new", help="start the Chinese twin of English scripts")
    start.add_argument("scripts", nargs="+", type=Path)
    mark = sub.add_parser("stamp", help="record that cells of a Chinese script were revisited")
    mark.add_argument("script", type=Path)
    which = mark.add_mutually_exclusive_group(required=True)
    which.add_argument("--cells", nargs="+", type=int)
    which.add_argument("--all", action="store_true")
    comments = sub.add_parser(
        "comments",
        help="the share of Chinese among the prose comments of Chinese scripts (all of them "
        # argparse formats help with %: a percent sign is written %%
        f"by default); exit 1 when one is below {MIN_COMMENT_SHARE:.0%}%",
    )
    comments.add_argument("scripts", nargs="*", type=Path)
    joining = sub.add_parser("join", help="one line per Chinese paragraph (all Chinese scripts)")
    joining.add_argument("scripts", nargs="*", type=Path)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except ToolError as error:
        print(f"zh_edition.py {args.command}: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        where = f"{display(Path(error.filename))}: " if error.filename else ""
        print(f"zh_edition.py {args.command}: {where}{error.strerror or error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"zh_edition.py {args.command}: interrupted; no file was half-written", file=sys.stderr
        )
        return 130


def run(args: argparse.Namespace) -> int:
    if args.command == "check":
        problems = check()
        for problem in problems:
            print(problem)
        twins = [chinese for _, chinese in pairs() if chinese.exists()]
        with contextlib.suppress(ToolError):  # an unreadable script is among the problems
            report = comment_report(twins)
            shares = [(c.share, name) for name, c in report if c.share is not None]
            total = _total(c for _, c in report)
            if shares and total.share is not None:
                lowest, where = min(shares)
                print(
                    f"prose comments in Chinese: {total.chinese} of {total.chinese + total.english}"
                    f" ({total.share:.0%}); lowest {lowest:.0%} ({where}); at least "
                    f"{MIN_COMMENT_SHARE:.0%} each (`python tools/zh_edition.py comments`)"
                )
        print(f"zh edition: {len(pairs())} pairs checked, {len(problems)} problem(s)")
        return 1 if problems else 0
    if args.command == "new":
        scripts = [english_script(script) for script in args.scripts]  # all checked, then written
        for script in scripts:
            print(f"wrote {display(new(script))}")
        return 0
    if args.command == "comments":
        paths = [chinese_script(p, "comments") for p in args.scripts] or [
            chinese for _, chinese in pairs() if chinese.exists()
        ]
        report = comment_report(paths)
        print_comment_report(report)
        low = [
            name
            for name, count in report
            if count.share is not None and count.share < MIN_COMMENT_SHARE
        ]
        return 1 if low else 0
    if args.command == "join":
        paths = [p.resolve() for p in args.scripts] or sorted(ZH.glob("**/scripts/*.py"))
        print(f"joined the Chinese paragraphs of {join(paths)} script(s)")
        return 0
    done = stamp(args.script, None if args.all else args.cells)
    print(f"stamped cells {done} of {display(args.script)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _toolkit  # tools/_toolkit.py: any other expected failure is one line and exit 2

    _toolkit.run(main, "zh_edition.py")
