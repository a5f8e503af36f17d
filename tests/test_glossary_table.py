"""mh.glossary_table(): the whole glossary, escaped, in one scrollable table (lesson 00)."""

from __future__ import annotations

import re
from html import escape

import pytest
from IPython.display import HTML

import mhsa_helpers as mh
from mhsa_helpers.i18n import using_language

CJK = re.compile(r"[\u3400-\u9fff]")


@pytest.mark.parametrize(("lang", "note"), [("en", "note"), ("zh", "note_zh")])
def test_every_term_is_a_row_with_its_english_and_chinese_escaped(lang, note):
    with using_language(lang):
        html = mh.glossary_table()
    assert isinstance(html, HTML)
    text = html.data
    terms = mh.load_glossary()
    assert len(terms) > 90
    rows = re.findall(r"<tr>(.*?)</tr>", text, flags=re.S)
    assert len(rows) == len(terms) + 1  # the heading row, then one row per term
    for term, row in zip(terms, rows[1:], strict=True):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
        assert cells == [escape(term["en"]), escape(term["zh"]), escape(term[note])]


def test_every_term_has_a_note_in_each_language():
    for term in mh.load_glossary():
        assert term["note"].strip(), term
        assert CJK.search(term["note_zh"]), term  # the Chinese note is written in Chinese


def test_nothing_is_truncated_and_the_box_scrolls():
    text = mh.glossary_table().data
    assert "..." not in text and "…" not in text
    assert text.startswith("<div") and "max-height: 24em; overflow-y: auto" in text
    assert text.count("<table>") == 1


def test_html_special_characters_are_escaped():
    text = mh.glossary_table().data
    body = re.sub(r"<[^>]+>", "", text)
    assert "<" not in body and ">" not in body  # e.g. the note "one Linear d -> 3d" is &gt;
    assert "d -&gt; 3d" in text


def test_the_table_is_the_same_every_time_and_only_the_note_column_is_translated():
    with using_language("en"):
        english = mh.glossary_table().data
        assert english == mh.glossary_table().data
        assert "<th" in english and ">note</th>" in english
    with using_language("zh"):
        chinese = mh.glossary_table().data
        assert ">说明</th>" in chinese
    translated = english.replace(">note</th>", ">说明</th>")
    for term in mh.load_glossary():
        translated = translated.replace(
            f">{escape(term['note'])}</td></tr>", f">{escape(term['note_zh'])}</td></tr>", 1
        )
    assert translated == chinese


def test_it_is_exported_lazily_from_the_package_and_ui():
    assert "glossary_table" in mh.__all__
    assert "glossary_table" in dir(mh)
    assert mh.glossary_table is mh.ui.glossary_table
