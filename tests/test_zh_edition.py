"""The Chinese edition stays in step with the English one (tools/zh_edition.py).

The first test is the real check over the repository; the others build a tiny course in a temporary
folder and show that each kind of drift is caught: an English cell edited without its translation
being revisited, a cell added to one edition only, code that differs (comments aside: each is
translated in its place), an untranslated cell, a glossary term without its English term, a broken
link, prose with too many colons, code comments left in English, a wording the glossary retired.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent


def _load_tool():
    spec = importlib.util.spec_from_file_location("zh_edition", ROOT / "tools" / "zh_edition.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["zh_edition"] = module
    spec.loader.exec_module(module)
    return module


zh_edition = _load_tool()


def test_the_repository_editions_are_in_step():
    problems = zh_edition.check()
    assert problems == [], "\n".join(problems[:20])


ENGLISH = """# ---
# jupyter:
#   kernelspec:
#     name: python3
# ---

# %% [markdown]
# # 03 · Causal attention
#
# A **causal mask** (因果掩码) hides the future tokens from every query. See
# [lesson 02](02_trainable_qkv.ipynb).

# %%
import mhsa_helpers as mh

mh.setup_lesson(seed=789)

# %% [markdown]
# Each row of the weights sums to one after the renormalization step.

# %%
print(1 + 1)
"""

CHINESE_TEXT = [
    "# # 03 · 因果注意力\n#\n# **因果掩码**（causal mask）让每个查询都看不到后面的词元。"
    "参见[第 02 课](02_trainable_qkv.ipynb)。",
    "# 重新归一化（renormalization）之后，权重的每一行加起来都等于一。",
]


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A one-lesson course in tmp_path, the Chinese twin started and translated."""
    return _tiny_course(tmp_path, monkeypatch)


def _tiny_course(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    notebooks = tmp_path / "notebooks"
    (notebooks / "scripts").mkdir(parents=True)
    (notebooks / "solutions" / "scripts").mkdir(parents=True)
    (notebooks / "02_trainable_qkv.ipynb").write_text("{}")
    (tmp_path / "data").mkdir()
    glossary = {
        "terms": [
            {"en": "causal mask", "zh": "因果掩码", "note": ""},
            {"en": "renormalization", "zh": "重新归一化", "note": ""},
        ]
    }
    (tmp_path / "data" / "glossary.json").write_text(json.dumps(glossary, ensure_ascii=False))
    english = notebooks / "scripts" / "03_causal_attention.py"
    english.write_text(ENGLISH)
    monkeypatch.setattr(zh_edition, "ROOT", tmp_path)
    monkeypatch.setattr(zh_edition, "NOTEBOOKS", notebooks)
    monkeypatch.setattr(zh_edition, "ZH", notebooks / "zh")
    monkeypatch.setattr(zh_edition, "GLOSSARY", tmp_path / "data" / "glossary.json")
    chinese = zh_edition.new(english)
    (notebooks / "zh" / "02_trainable_qkv.ipynb").write_text("{}")
    translate(chinese, CHINESE_TEXT)
    return english, chinese


def translate(chinese: Path, texts: list[str]) -> None:
    """Replace the bodies of the markdown cells, keeping their headers (and en_hash)."""
    preamble, cells = zh_edition.read_cells(chinese)
    markdown = [c for c in cells if c.kind == "markdown"]
    for cell, text in zip(markdown, texts, strict=True):
        cell.lines = [*text.split("\n"), ""]
    zh_edition.write_cells(chinese, preamble, cells)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_translated_twin_passes(course):
    _english, chinese = course
    assert zh_edition.check() == []
    assert 'mh.setup_lesson(seed=789, lang="zh")' in chinese.read_text(encoding="utf-8")


def test_new_records_the_hash_of_every_english_markdown_cell(course):
    english, chinese = course
    _, en_cells = zh_edition.read_cells(english)
    _, zh_cells = zh_edition.read_cells(chinese)
    for en, zh in zip(en_cells, zh_cells, strict=True):
        if en.kind == "markdown":
            assert zh.recorded_hash == zh_edition.en_hash(en)


def test_an_english_edit_is_caught_until_the_translation_is_stamped(course):
    english, chinese = course
    edit(english, "sums to one after", "sums to exactly one after")
    problems = zh_edition.check()
    assert len(problems) == 1
    assert "English text changed" in problems[0] and "cell 2" in problems[0]
    assert "stamp" in problems[0]
    zh_edition.stamp(chinese, [2])
    assert zh_edition.check() == []


def test_stamping_another_cell_does_not_hide_the_change(course):
    english, chinese = course
    edit(english, "sums to one after", "sums to exactly one after")
    zh_edition.stamp(chinese, [0])
    assert any("English text changed" in p for p in zh_edition.check())


def test_a_cell_added_to_one_edition_is_caught(course):
    english, _ = course
    english.write_text(ENGLISH + "\n# %% [markdown]\n# One more English cell.\n", encoding="utf-8")
    problems = zh_edition.check()
    assert len(problems) == 1 and "cells differ" in problems[0]


def test_code_that_differs_is_caught(course):
    _english, chinese = course
    edit(chinese, "print(1 + 1)", "print(1 + 2)")
    problems = zh_edition.check()
    assert len(problems) == 1 and "code differs" in problems[0]


def test_the_chinese_lesson_must_set_its_language(course):
    _english, chinese = course
    edit(chinese, 'mh.setup_lesson(seed=789, lang="zh")', "mh.setup_lesson(seed=789)")
    assert any('lang="zh"' in p for p in zh_edition.check())


def test_an_untranslated_cell_is_caught(course):
    _english, chinese = course
    translate(
        chinese,
        [CHINESE_TEXT[0], "# Each row of the weights sums to one after the renormalization step."],
    )
    problems = zh_edition.check()
    assert any("not translated" in p and "cell 2" in p for p in problems)


def test_a_glossary_term_without_its_english_term_is_caught(course):
    _english, chinese = course
    edit(chinese, "**因果掩码**（causal mask）", "**因果掩码**")
    problems = zh_edition.check()
    assert len(problems) == 1 and "因果掩码" in problems[0] and "causal mask" in problems[0]


def test_a_broken_link_is_caught_in_either_edition(course):
    english, chinese = course
    edit(chinese, "(02_trainable_qkv.ipynb)", "(../02_missing.ipynb)")
    edit(english, "(02_trainable_qkv.ipynb)", "(02_gone.ipynb)")
    problems = zh_edition.check()
    assert sum("does not exist" in p for p in problems) == 2


def test_an_orphan_chinese_script_is_caught(course):
    _english, chinese = course
    (chinese.parent / "99_extra.py").write_text("# %%\nprint(1)\n", encoding="utf-8")
    assert any("no English twin" in p for p in zh_edition.check())


def test_a_missing_twin_is_caught(course):
    _english, chinese = course
    chinese.unlink()
    problems = zh_edition.check()
    assert len(problems) == 1 and "missing" in problems[0] and "zh_edition.py new" in problems[0]


def test_the_english_term_may_come_first(course):
    _english, chinese = course
    edit(chinese, "**因果掩码**（causal mask）", "**causal mask**（因果掩码）")
    assert zh_edition.check() == []


def test_a_line_break_between_chinese_characters_is_caught_and_joined(course):
    _english, chinese = course
    edit(chinese, "让每个查询都看不到后面的词元。", "让每个查询都看不到\n# 后面的词元。")
    problems = zh_edition.check()
    assert len(problems) == 1 and "line break" in problems[0]
    assert zh_edition.join([chinese]) == 1
    assert zh_edition.check() == []
    assert "都看不到后面的词元" in chinese.read_text(encoding="utf-8")


def test_join_keeps_lists_code_and_a_space_next_to_latin_text():
    lines = [
        "# 第一行中文",
        "# 接着写 `code`",
        "# and English，然后",
        "# 中文。",
        "# - 列表项",
        "# ```mermaid",
        "# 图",
        "# 图",
        "# ```",
    ]
    assert zh_edition.join_paragraph_lines(lines) == [
        "# 第一行中文接着写 `code`",  # Latin on both sides: the break shows as the space it is
        "# and English，然后中文。",
        "# - 列表项",
        "# ```mermaid",
        "# 图",
        "# 图",
        "# ```",
    ]


# --- A lesson keeps its language --------------------------------------------------------------


def add_code_cell(path: Path, code: str) -> None:
    """Append one code cell (the same text in either edition keeps the code check quiet)."""
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "\n# %%\n" + code + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    "code",
    [
        'mh.set_language("en")',
        "mh.i18n.set_language('en')",
        'with mh.i18n.using_language("en"):\n    print(mh.i18n.language())',
        'from mhsa_helpers.i18n import set_language as speak\n\nspeak("en")',
        "lang = 'en'\nmh.setup_lesson(seed=5, lang=lang)",
        "mh.setup_lesson(5, 1, 'en')",
        'options = {"lang": "en"}\nmh.setup_lesson(**options)',
        '%time mh.set_language("en")\nmh.set_language("en")',
    ],
    ids=[
        "set_language",
        "module-path",
        "using_language",
        "alias",
        "variable",
        "positional",
        "options",
        "with-a-magic",
    ],
)
def test_a_chinese_lesson_that_switches_language_is_caught(course, code):
    english, chinese = course
    add_code_cell(english, code)
    add_code_cell(chinese, code)
    problems = zh_edition.check()
    assert any(
        "switches the Chinese lesson" in p and "03_causal_attention.py" in p for p in problems
    ), problems


def test_a_later_explicit_english_setup_is_caught_twice(course):
    """``lang="en"`` in the Chinese copy only: the code differs *and* the language changes."""
    english, chinese = course
    add_code_cell(english, "mh.setup_lesson(seed=123)")
    add_code_cell(chinese, 'mh.setup_lesson(seed=123, lang="en")')
    problems = zh_edition.check()
    assert any("code differs" in p for p in problems)
    assert any("switches the Chinese lesson to 'en'" in p for p in problems)


def test_a_later_setup_without_a_language_keeps_chinese(course):
    english, chinese = course
    for path in (english, chinese):
        add_code_cell(path, "mh.setup_lesson(seed=123)\nmh.setup_lesson(789, threads=1)")
    add_code_cell(english, "x = 1")
    add_code_cell(chinese, "x = 1")
    assert zh_edition.check() == []


def test_the_first_setup_of_a_chinese_lesson_must_name_chinese(course):
    english, chinese = course
    edit(chinese, 'mh.setup_lesson(seed=789, lang="zh")', "mh.setup_lesson(seed=789)")
    add_code_cell(english, "mh.setup_lesson(seed=1)")
    add_code_cell(chinese, 'mh.setup_lesson(seed=1, lang="zh")')
    problems = zh_edition.check()
    assert any("the first mh.setup_lesson(seed=789)" in p and 'lang="zh"' in p for p in problems)


def test_an_english_lesson_that_switches_to_chinese_is_caught(course):
    english, chinese = course
    add_code_cell(english, 'mh.set_language("zh")')
    add_code_cell(chinese, 'mh.set_language("zh")')
    problems = zh_edition.check()
    assert len(problems) == 1 and "switches the English lesson to 'zh'" in problems[0]


def test_language_calls_read_what_a_cell_does():
    calls = zh_edition.language_calls(
        'mh.setup_lesson(seed=1)\nmh.setup_lesson(lang="zh")\nmh.set_language(x)\n'
        "print('setup_lesson(lang=\"en\")')"
    )
    assert [(c.name, c.lang) for c in calls] == [
        ("setup_lesson", None),
        ("setup_lesson", "zh"),
        ("set_language", "?"),
    ]
    # not Python (a cell the parser cannot read): the text still shows the call
    broken = zh_edition.language_calls('mh.set_language("en")\nif :')
    assert [(c.name, c.lang) for c in broken] == [("set_language", "en")]


# --- join never changes code ------------------------------------------------------------------

CODE_BLOCKS = {
    "tilde-fence": ["# ~~~python", "# 中文 = 1", "# 值 = 中文", "# ~~~"],
    "backtick-fence-with-info": ["# ```text", "# 第一行", "# 第二行", "# ```"],
    "indented": ["#     张量 = torch.ones(2)", "#     形状 = 张量.shape"],
    "display-math": ["# $$", r"# \text{注意力} = ", r"# \text{权重}", "# $$"],
    "html": ["# <div>", "# 第一行", "# 第二行", "# </div>"],
    "table": ["# | 名称 | 形状 |", "# |---|---|", "# | 查询 | (b, T) |", "# | 键 | (b, T) |"],
}


@pytest.mark.parametrize("block", list(CODE_BLOCKS.values()), ids=list(CODE_BLOCKS))
def test_join_leaves_code_math_html_and_tables_alone(block):
    lines = ["# 前面的段落", "# 接着写。", "#", *block, "#", "# 后面的段落"]
    joined = zh_edition.join_paragraph_lines(lines)
    assert joined == ["# 前面的段落接着写。", "#", *block, "#", "# 后面的段落"]


def test_join_keeps_hard_breaks_quotes_and_code_spans():
    lines = [
        "# 第一行两个空格结尾  ",
        "# 第二行",
        "#",
        "# 反斜杠结尾\\",
        "# 下一行",
        "#",
        "# > 引文第一行",
        "# > 引文第二行",
        "#",
        "# 一个跨行的 `代码",
        "# 片段` 不动",
    ]
    assert zh_edition.join_paragraph_lines(lines) == lines


def test_join_joins_a_list_items_continuation():
    lines = ["# - 列表项的第一行", "#   接着写", "# - 第二项"]
    assert zh_edition.join_paragraph_lines(lines) == ["# - 列表项的第一行接着写", "# - 第二项"]


def test_join_rewrites_a_file_without_touching_its_code_blocks(course):
    _english, chinese = course
    block = "# ~~~\n# 甲\n# 乙\n# ~~~\n#\n#     丙\n#     丁"
    edit(chinese, "权重的每一行加起来都等于一。", "权重的每一行\n# 加起来都等于一。\n#\n" + block)
    assert zh_edition.join([chinese]) == 1
    text = chinese.read_text(encoding="utf-8")
    assert "权重的每一行加起来都等于一。" in text and block in text
    assert zh_edition.join([chinese]) == 0  # nothing left to join


_PARAGRAPH_LINE = st.lists(
    st.sampled_from(["中文", "词元", "，", "。", "Q", "code", " ", "*", "`x`", "$a$"]),
    min_size=1,
    max_size=5,
).map("".join)
_CODE_LINE = st.lists(
    st.sampled_from(["中", "文", "x", "=", " ", "(", ")", "#", "`"]), min_size=1, max_size=6
).map("".join)


@st.composite
def _markdown_cells(draw):
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["paragraph", "tilde", "backtick", "indented"]))
        if kind == "paragraph":
            body = draw(st.lists(_PARAGRAPH_LINE, min_size=1, max_size=4))
            lines += ["# " + line.strip() for line in body if line.strip()]
        else:
            body = draw(st.lists(_CODE_LINE, min_size=1, max_size=4))
            if kind == "indented":
                lines += ["#     " + line for line in body]
            else:
                fence = "~~~" if kind == "tilde" else "```"
                lines += ["# " + fence, *("# " + line for line in body), "# " + fence]
        lines.append("#")
    return lines


@settings(max_examples=150, deadline=None)
@given(_markdown_cells())
def test_join_never_changes_code_and_is_idempotent(lines):
    joined = zh_edition.join_paragraph_lines(lines)
    text = "\n".join(zh_edition._md(line) for line in lines)
    after = "\n".join(zh_edition._md(line) for line in joined)
    assert zh_edition.verbatim_parts(after) == zh_edition.verbatim_parts(text)
    assert zh_edition.join_paragraph_lines(joined) == joined
    assert len(joined) <= len(lines)


# --- messages, never tracebacks; files never corrupted ----------------------------------------


def run_tool(capsys, *argv: str) -> tuple[int, str]:
    """``zh_edition.py ARGV`` in this process: (exit status, what it printed to stderr)."""
    status = zh_edition.main(list(argv))
    return status, capsys.readouterr().err


def test_a_script_in_another_encoding_is_named(course, capsys):
    _english, chinese = course
    chinese.write_bytes(chinese.read_text(encoding="utf-8").encode("gb18030"))
    problems = zh_edition.check()
    assert any("03_causal_attention.py" in p and "not UTF-8" in p for p in problems), problems
    before = chinese.read_bytes()
    status, err = run_tool(capsys, "stamp", str(chinese), "--all")
    assert status == 2 and "not UTF-8" in err and "03_causal_attention.py" in err
    assert chinese.read_bytes() == before
    status, err = run_tool(capsys, "join", str(chinese))
    assert status == 2 and "save it again as UTF-8" in err


def test_a_utf16_script_is_recognised(course, capsys):
    _english, chinese = course
    chinese.write_bytes(chinese.read_text(encoding="utf-8").encode("utf-16"))
    status, err = run_tool(capsys, "stamp", str(chinese), "--all")
    assert status == 2 and "UTF-16" in err


def test_new_refuses_what_is_not_an_english_lesson_script(course, tmp_path, capsys):
    english, chinese = course
    outside = tmp_path / "elsewhere.py"
    outside.write_text("# %%\nprint(1)\n", encoding="utf-8")
    for path, says in [
        (outside, "not an English lesson script"),
        (chinese, "is a Chinese script"),
        (english.with_name("04_missing.py"), "no such file"),
        (english.with_suffix(".txt"), "not an English lesson script"),
        (english, "exists already"),
    ]:
        status, err = run_tool(capsys, "new", str(path))
        assert status == 2 and says in err, (path, err)
    assert sorted(p.name for p in chinese.parent.iterdir()) == [chinese.name]


def test_stamp_refuses_a_script_without_an_english_twin(course, tmp_path, capsys):
    english, chinese = course
    orphan = chinese.with_name("99_orphan.py")
    orphan.write_text(chinese.read_text(encoding="utf-8"), encoding="utf-8")
    status, err = run_tool(capsys, "stamp", str(orphan), "--all")
    assert status == 2 and "no English twin" in err and "99_orphan.py" in err
    status, err = run_tool(capsys, "stamp", str(english), "--all")
    assert status == 2 and "not a Chinese script" in err
    status, err = run_tool(capsys, "stamp", str(chinese.with_name("98_gone.py")), "--all")
    assert status == 2 and "no such file" in err


@pytest.mark.parametrize(
    ("cells", "says"),
    [
        (["99"], "there is no cell 99"),
        (["1"], "cell 1 is a code cell"),
        (["-1"], "no cell -1"),
        (["0", "7"], "no cell 7"),
    ],
    ids=["past-the-end", "code-cell", "negative", "one-of-two"],
)
def test_stamp_refuses_cells_that_do_not_exist_and_writes_nothing(course, capsys, cells, says):
    english, chinese = course
    edit(english, "sums to one after", "sums to exactly one after")
    before = chinese.read_bytes()
    status, err = run_tool(capsys, "stamp", str(chinese), "--cells", *cells)
    assert status == 2 and says in err and "nothing was stamped" in err
    assert chinese.read_bytes() == before


def test_the_command_line_prints_no_traceback(tmp_path):
    outside = tmp_path / "lesson.py"
    outside.write_text("# %%\nprint(1)\n", encoding="utf-8")
    for argv in (
        ["new", str(outside)],
        ["stamp", str(ROOT / "notebooks" / "zh" / "scripts" / "99_no_such_lesson.py"), "--all"],
    ):
        done = subprocess.run(
            [sys.executable, str(ROOT / "tools" / "zh_edition.py"), *argv],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2, done  # an expected failure, as every tool reports one
        assert "Traceback" not in done.stderr and done.stderr.strip(), done.stderr


@settings(max_examples=30, deadline=None)
@given(
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
    bom=st.booleans(),
    final=st.booleans(),
)
def test_stamp_and_join_keep_line_endings_bom_and_the_last_break(
    tmp_path_factory, newline, bom, final
):
    course_dir = tmp_path_factory.mktemp("course")
    with pytest.MonkeyPatch.context() as patch:
        english, chinese = _tiny_course(course_dir, patch)
        edit(english, "sums to one after", "sums to exactly one after")
        lines = chinese.read_text(encoding="utf-8").split("\n")[:-1]
        lines[-4] += "\u2028保留"  # a line separator inside a line is text, not a line break
        text = ("\ufeff" if bom else "") + newline.join(lines) + (newline if final else "")
        chinese.write_bytes(text.encode("utf-8"))
        zh_edition.stamp(chinese, [2])
        after = chinese.read_bytes().decode("utf-8")
        assert after.startswith("\ufeff") == bom
        assert after.endswith(newline) == final
        assert len(zh_edition.LINE_BREAK.findall(after)) == len(lines) - (not final)
        assert all(found == newline for found in zh_edition.LINE_BREAK.findall(after))
        assert "\u2028保留" in after
        assert zh_edition.check() == []
        raw = chinese.read_bytes().decode("utf-8")  # bytes: read_text would turn CRLF into LF
        raw = raw.replace("都看不到后面的词元。", "都看不到" + newline + "# 后面的词元。")
        chinese.write_bytes(raw.encode("utf-8"))
        assert zh_edition.join([chinese]) == 1
        joined = chinese.read_bytes().decode("utf-8")
        assert set(zh_edition.LINE_BREAK.findall(joined)) == {newline}
        assert joined.startswith("\ufeff") == bom and "都看不到后面的词元。" in joined


def test_a_failed_write_leaves_the_file_as_it_was(course, monkeypatch, capsys):
    english, chinese = course
    edit(english, "sums to one after", "sums to exactly one after")
    before = chinese.read_bytes()

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(zh_edition.os, "replace", full_disk)
    status, err = run_tool(capsys, "stamp", str(chinese), "--cells", "2")
    assert status == 2 and "No space left on device" in err and "unchanged" in err
    assert chinese.read_bytes() == before
    assert sorted(p.name for p in chinese.parent.iterdir()) == [chinese.name]


@pytest.mark.parametrize(
    ("glossary", "says"),
    [
        ("{not json", "not valid JSON (line 1"),
        ('{"terms": [{"en": "x"}]}', "expected"),
        ("", "JSON"),
    ],
    ids=["broken-json", "missing-key", "empty"],
)
def test_a_broken_glossary_is_a_message(course, capsys, glossary, says):
    zh_edition.GLOSSARY.write_text(glossary, encoding="utf-8")
    status, err = run_tool(capsys, "check")
    assert status == 2 and "glossary.json" in err and says in err


# The Chinese edition translates code comments; everything else in a code cell stays identical.
CODE_EN = """# NBVAL_IGNORE_OUTPUT
x = torch.ones(2, 3)  # (b, T), one row per token
# the weights, then
# their sum
y = x.sum(-1)  # (b,)
print("# not a comment", y)
"""
CODE_ZH = """# NBVAL_IGNORE_OUTPUT
x = torch.ones(2, 3)  # (b, T)，每个词元一行
# 先求权重，再求和
y = x.sum(-1)  # (b,)
print("# not a comment", y)
"""


def test_translated_comments_in_their_places_pass():
    assert zh_edition.code_problems("cell", CODE_EN, CODE_ZH, 0) == []


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("# 先求权重，再求和", "# the weights, then", "not translated"),
        ("，每个词元一行", "", "not translated"),
        ("# (b,)", "# (b, 1)", "keep it as it is"),
        ("# NBVAL_IGNORE_OUTPUT\n", "", "no Chinese counterpart"),
        ("# NBVAL_IGNORE_OUTPUT", "# NBVAL_IGNORE_OUTPUT 忽略", "directive"),
        ('"# not a comment"', '"# 不是注释"', "code differs"),
        ("x.sum(-1)", "x.sum(1)", "code differs"),
        ("y = x.sum(-1)  # (b,)\n", "y = x.sum(-1)\n# (b,)\n", "does not have there"),
    ],
    ids=[
        "block-left-in-English",
        "inline-left-in-English",
        "shape-comment-changed",
        "directive-dropped",
        "directive-changed",
        "printed-text-changed",
        "code-changed",
        "comment-moved",
    ],
)
def test_each_comment_drift_is_named(old, new, expected):
    assert old in CODE_ZH
    problems = zh_edition.code_problems("cell", CODE_EN, CODE_ZH.replace(old, new, 1), 0)
    assert problems and all(p.startswith("cell") for p in problems)
    assert any(expected in p for p in problems), problems


def test_the_exercise_markers_have_one_chinese_wording():
    english = "answer = None  # YOUR CODE HERE\n"
    assert zh_edition.code_problems("c", english, "answer = None  # 在这里写代码\n", 0) == []
    problems = zh_edition.code_problems("c", english, "answer = None  # 在此处填写代码\n", 0)
    assert len(problems) == 1 and "在这里写代码" in problems[0]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["x = 1", "y = f(x)", "z = [x,\n     y]", "if x:\n    y = 2"]),
            st.sampled_from(["", "  # the value", "  # (b, T)"]),
        ),
        min_size=1,
        max_size=6,
    )
)
@settings(max_examples=60, deadline=None)
def test_any_code_with_its_comments_translated_in_place_passes(lines):
    """Comments translated where they stand (block comments may change length) never fail."""
    english = "".join(f"# about {code.split()[0]}\n{code}{c}\n" for code, c in lines)
    chinese = "".join(
        f"# 关于 {code.split()[0]}\n# 第二行\n{code}{c.replace('the value', '这个值')}\n"
        for code, c in lines
    )
    assert zh_edition.code_problems("cell", english, chinese, 0) == []


def test_colons_and_semicolons_are_counted_in_prose_only():
    markdown = (
        "## 标题：不计\n\n| 表格：不计 | 分号；不计 |\n|---|---|\n| a：b | c；d |\n\n"
        "正文有一个冒号：这里。还有一个分号；这里。`代码：不计` $a：b$\n\n* 列表：计入\n"
    )
    count = zh_edition.prose_count(markdown)
    assert (count.colons, count.semicolons) == (2, 1)
    assert count.chinese == len(
        zh_edition.CJK.findall("正文有一个冒号这里还有一个分号这里列表计入")
    )
    assert zh_edition.rhythm_problems("x", count)  # 2 colons in 20 characters: far too many
    assert zh_edition.rhythm_problems("x", zh_edition.ProseCount(1000, 6, 1)) == []


# --- Chinese typography: no italics, a list takes ： (issue 29) ---------------------------------


def _markdown_cell(text: str) -> zh_edition.Cell:
    return zh_edition.Cell("markdown", " [markdown]", [f"# {line}" for line in text.split("\n")], 1)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("一次算出*所有*头的结果。", "italic Chinese *所有*"),
        ("先看 _之后_ 的词元。", "italic Chinese *之后*"),
        ("***重点***在这里。", "italic Chinese *重点*"),
        ("有两点值得注意。\n\n* 第一点\n* 第二点", "introduces a list"),
        ("计算分为三步。\n1. 投影\n2. 打分\n3. 加权求和", "introduces a list"),
        ("* 外层列表有两项。\n  * 内层一\n  * 内层二", "introduces a list"),
        ("你会遇到下面两种约定。\n\n| 库 | 含义 |\n|---|---|\n| a | b |", "a table"),
    ],
    ids=["star", "underscore", "bold-italic", "bullets", "numbered", "nested", "table"],
)
def test_italic_chinese_and_a_list_after_a_full_stop_are_caught(text, says):
    problems = zh_edition.typography_problems("cell", _markdown_cell(text))
    assert len(problems) == 1 and says in problems[0], problems


@pytest.mark.parametrize(
    "text",
    [
        "一次算出**所有**头的结果。",
        "有两点值得注意：\n\n* 第一点\n* 第二点",
        "英文的 *emphasis* 不算，`*所有*` 是代码，$a*b*c$ 是公式。",
        "前一段以句号结束。\n\n下一段不是列表。",
        "公式如下。\n\n$$a = b$$",
        "**小结**\n* 第一点",
    ],
    ids=["bold", "colon", "english-code-math", "paragraphs", "display-math", "bold-heading"],
)
def test_bold_colons_and_code_pass_the_typography_check(text):
    assert zh_edition.typography_problems("cell", _markdown_cell(text)) == []


def test_the_colon_that_introduces_a_list_is_not_counted_in_the_colon_rate():
    assert zh_edition.prose_count("有两点值得注意：\n\n* 第一点\n* 第二点").colons == 0
    assert zh_edition.prose_count("定义：注意力。\n\n有两点：\n* 一\n* 二").colons == 1


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("看不到后面的词元。", "看不到*后面*的词元。", "italic Chinese *后面*"),
        ("看不到后面的词元。", "看不到后面的词元。有两种情况。\n# * 左填充\n# * 右填充", "a list"),
    ],
    ids=["italics", "list"],
)
def test_check_names_italics_and_a_list_after_a_full_stop(course, old, new, says):
    _, chinese = course
    edit(chinese, old, new)
    problems = zh_edition.check()
    assert len(problems) == 1 and says in problems[0], problems
    assert problems[0].startswith("notebooks/zh/scripts/03_causal_attention.py:"), problems


# --- The code comments are Chinese (issue 33) --------------------------------------------------


@pytest.mark.parametrize(
    ("comment", "kind"),
    [
        ("# NBVAL_IGNORE_OUTPUT", "directive"),
        ("# noqa: B023", "directive"),
        ("# (b, T, d_out)", "bare"),
        ("# (T, d_in) = (6, 3)", "bare"),
        ("# float32", "bare"),
        ("# head_dim = 32 // 4 = 8", "bare"),
        ('# "journey"', "bare"),
        ("# W_query, W_key, W_value", "bare"),
        ("# `mh.head_entropy(weights)`", "bare"),
        ("# x = x.sum(-1)", "code"),
        ("# torch.ones(3)", "code"),
        ("# data/char_lm.pt", "code"),
        ("# w >= T", "code"),
        ("# (T, T)，每行之和为 1", "zh"),
        ("# 在这里写代码", "zh"),
        ("# causal", "en"),
        ("# (T, T), rows sum to 1", "en"),
        ("# Q @ K^T and weights @ V", "en"),
        ("# YOUR CODE HERE", "en"),
        ("# the package's MultiHeadAttention agrees", "en"),
    ],
)
def test_each_comment_counts_by_its_kind(comment, kind):
    assert zh_edition.comment_kind(comment) == kind


NOTE_EN = [f"# line {n} of the note about the sum" for n in ("one", "two", "three", "four", "five")]
NOTE_ZH = [f"# 关于求和的说明，第 {n} 行" for n in ("一", "二", "三", "四", "五")]


def _add_note(english: Path, chinese: Path, translated: int) -> None:
    """A code cell with a five-line comment block; the Chinese one translates its first lines."""
    code = "y = torch.ones(2, 3).sum(-1)  # (b,)"
    add_code_cell(english, "\n".join([*NOTE_EN, code]))
    add_code_cell(chinese, "\n".join([*NOTE_ZH[:translated], *NOTE_EN[translated:], code]))


@pytest.mark.parametrize(("translated", "passes"), [(5, True), (4, True), (3, False), (1, False)])
def test_a_lesson_with_english_comments_fails_the_comment_share(course, translated, passes):
    """The drift check is content with one Chinese line per block; the share counts each line."""
    english, chinese = course
    _add_note(english, chinese, translated)
    count = zh_edition.comment_count(zh_edition.read_cells(chinese)[1])
    assert (count.chinese, count.english, count.other) == (translated, 5 - translated, 1)
    problems = zh_edition.check()
    if passes:
        assert problems == []
        return
    assert len(problems) == 1, problems
    assert f"{translated / 5:.0%} of its prose comments are Chinese" in problems[0]
    assert "at least 80%" in problems[0] and "03_causal_attention.py" in problems[0]
    first_english = chinese.read_text(encoding="utf-8").split("\n").index(NOTE_EN[translated]) + 1
    assert f"line {first_english}: {NOTE_EN[translated]!r}" in problems[0]


def test_the_comments_command_reports_the_share_and_the_english_comments(course, capsys):
    english, chinese = course
    _add_note(english, chinese, 2)
    assert zh_edition.main(["comments", str(chinese)]) == 1
    out = capsys.readouterr().out
    assert "03_causal_attention.py" in out and "40%" in out and "< 80%" in out
    assert all(line in out for line in NOTE_EN[2:]) and NOTE_EN[1] not in out
    preamble, cells = zh_edition.read_cells(chinese)
    cells[-1].lines = [*NOTE_ZH, *cells[-1].lines[5:]]
    zh_edition.write_cells(chinese, preamble, cells)
    assert zh_edition.main(["comments", str(chinese)]) == 0
    assert "100%" in capsys.readouterr().out
    status, err = run_tool(capsys, "comments", str(english))
    assert status == 2 and "not a Chinese script" in err  # an expected failure: one line, exit 2


def test_a_script_without_prose_comments_passes(course):
    english, chinese = course
    for path in (english, chinese):
        add_code_cell(path, "x = 1  # (b, T)\n# NBVAL_IGNORE_OUTPUT\n# x = x + 1")
    count = zh_edition.comment_count(zh_edition.read_cells(chinese)[1])
    assert count.share is None and count.other == 3
    assert zh_edition.check() == []


# --- The glossary's retired wordings never come back (issue 33) --------------------------------


def test_the_glossary_retires_the_three_wordings():
    retired = zh_edition.retired_terms()
    assert ("信息泄漏", "信息泄露") in retired
    assert ("分块精确注意力", "FlashAttention") in retired
    assert ("约定测试", "契约测试") in retired
    assert all(zh_edition.CJK.search(bad) for bad, _ in retired)  # not "one-hot"


def _retire(glossary: Path) -> None:
    data = json.loads(glossary.read_text(encoding="utf-8"))
    data["terms"] += [
        {"en": "information leakage", "zh": "信息泄露", "note": "", "avoid": ["信息泄漏"]},
        {"en": "one-hot vector", "zh": "独热向量", "note": "", "avoid": ["one-hot"]},
    ]
    data["avoid"] = [{"use": "键（词元）", "avoid": ["键词元"], "note": ""}]
    glossary.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


@pytest.mark.parametrize(
    ("old", "new", "bad", "right"),
    [
        ("看不到后面的词元。", "看不到后面的词元，以免信息泄漏。", "信息泄漏", "信息泄露"),
        ("看不到后面的词元。", "看不到后面的键词元。", "键词元", "键（词元）"),
        ("print(1 + 1)", "print(1 + 1)  # 不会信息泄漏", "信息泄漏", "信息泄露"),
    ],
    ids=["markdown", "top-level-avoid", "comment"],
)
def test_a_retired_wording_is_caught(course, old, new, bad, right):
    english, chinese = course
    _retire(zh_edition.GLOSSARY)
    if old.startswith("print"):
        edit(english, old, old + "  # no leak")
    edit(chinese, old, new)
    problems = zh_edition.check()
    line = next(
        n for n, text in enumerate(chinese.read_text("utf-8").split("\n"), 1) if bad in text
    )
    assert problems == [
        f"notebooks/zh/scripts/03_causal_attention.py:{line}: {bad} is retired by the glossary "
        f"(data/glossary.json); write {right}"
    ]


def test_the_glossary_wording_and_the_english_term_pass(course):
    _english, chinese = course
    _retire(zh_edition.GLOSSARY)
    edit(
        chinese,
        "看不到后面的词元。",
        "看不到后面的词元，以免信息泄露（information leakage）。独热向量（one-hot vector）也一样。",
    )
    assert zh_edition.check() == []


def test_a_retired_wording_in_the_english_editions_gloss_is_caught(course):
    english, _chinese = course
    _retire(zh_edition.GLOSSARY)
    edit(
        english, "hides the future", "prevents information leakage (信息泄漏) and hides the future"
    )
    problems = zh_edition.check()
    assert any(
        p.startswith("notebooks/scripts/03_causal_attention.py:") and "信息泄漏" in p
        for p in problems
    ), problems
