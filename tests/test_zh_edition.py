"""The Chinese edition stays in step with the English one (tools/zh_edition.py).

The first test is the real check over the repository; the others build a tiny course in a temporary
folder and show that each kind of drift is caught: an English cell edited without its translation
being revisited, a cell added to one edition only, code that differs, an untranslated cell, a
glossary term without its English term, a broken link.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

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
