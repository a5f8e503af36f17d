"""``mh.Table`` / ``mh.show_table``: tables that line up in JupyterLab (HTML) and as text.

A Chinese glyph in the browser is not exactly two Latin monospace columns wide, so a lesson's
table is shown as HTML there; ``text/plain`` (what strict nbval compares, and what a terminal
shows) is the same table padded by display width.
"""

from __future__ import annotations

import html
import re

import pytest

import mhsa_helpers as mh
from mhsa_helpers.i18n import display_width, using_language
from mhsa_helpers.tables import Table


def _cells(html_text: str, tag: str) -> list[str]:
    return [html.unescape(c) for c in re.findall(rf"<{tag}(?: [^>]*)?>(.*?)</{tag}>", html_text)]


def test_the_html_escapes_every_cell_and_heading():
    table = Table([["<script>alert(1)</script>", "a & b"]], header=['"x"', "<b>"])
    page = table._repr_html_()
    assert "<script>" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "a &amp; b" in page
    assert _cells(page, "th") == ['"x"', "<b>"]
    assert _cells(page, "td") == ["<script>alert(1)</script>", "a & b"]
    assert page.startswith("<table") and page.rstrip().endswith("</table>")


def test_the_text_lines_up_by_display_width_with_a_chinese_header():
    rows = [["GPT-2 small", 12, "2,360,064", "0.0%"], ["Llama-like", 8, "41,947,136", "37.5%"]]
    table = Table(rows, header=["模型", "K/V 头数", "每层参数", "参数减少"])
    lines = str(table).splitlines()
    assert len(lines) == 3
    # Every line ends at the same display column (number columns are right-aligned) ...
    assert len({display_width(line) for line in lines}) == 1
    # ... and every column starts (left) or ends (right) at the same column in every line.
    assert lines[0].startswith("模型 ") and lines[1].startswith("GPT-2 small ")
    ends = {
        display_width(line[: line.index(cell) + len(cell)])
        for line, cell in zip(lines, ("每层参数", "2,360,064", "41,947,136"))
    }
    assert len(ends) == 1
    assert table.align == ["<", ">", ">", ">"]
    assert repr(table) == str(table)


def test_chinese_cells_are_padded_to_two_columns_each():
    table = Table([["均匀猜测", "8.007"], ["一元计数表", "6.179"], ["model", "3.873"]])
    lines = str(table).splitlines()
    assert [display_width(line) for line in lines] == [17, 17, 17]
    assert lines[2] == "model       3.873"


def test_alignment_rows_of_different_lengths_and_bad_arguments():
    table = Table([["a", "1"], ["b"], ["c", "—"]], header=["", "n"])
    assert table.rows == [["a", "1"], ["b", ""], ["c", "—"]] and table.align == ["<", ">"]
    assert Table([["x", "< 1e-06"], ["y", "nan"]]).align == ["<", ">"]
    assert Table([["x", "a"]], align="^>").align == ["^", ">"]
    with pytest.raises(ValueError, match="align"):
        Table([["x", "1"]], align="<")
    with pytest.raises(TypeError, match="rows"):
        Table("ab")
    with pytest.raises(TypeError, match="row"):
        Table([1, 2])


def test_a_text_in_both_languages_is_read_in_the_lesson_language():
    with using_language("zh"):
        zh = Table([[mh.tr("loss", "损失"), "1.00"]])
    en = Table([[mh.tr("loss", "损失"), "1.00"]])
    assert str(zh) == "损失  1.00" and str(en) == "loss  1.00"


def test_show_table_prints_the_text_outside_a_notebook(capsys):
    mh.show_table([["头", "0.50"]], header=["", "share"])
    assert capsys.readouterr().out == "    share\n头   0.50\n"
    mh.show_table(Table([["a", "1"]]))
    assert capsys.readouterr().out == "a  1\n"
    with pytest.raises(TypeError, match="header"):
        mh.show_table(Table([["a"]]), header=["x"])


def test_ipython_shows_the_html_and_the_aligned_text():
    formatter = pytest.importorskip("IPython.core.formatters")
    table = Table([["二元计数表", "5.17"], ["+ feed-forward", "5.89"]], header=["", "损失"])
    data, _ = formatter.DisplayFormatter().format(table)
    assert data["text/plain"] == str(table)
    assert "<td" in data["text/html"] and "二元计数表" in data["text/html"]
