"""The course glossary as one table in a notebook: ``glossary_table()``.

What: every term of ``data/glossary.json`` (``mhsa_helpers.data.load_glossary()``) as one HTML
table -- English / 中文 / note -- in a box that scrolls, so that its ~100 rows take little room.

Why: lesson 00 shows the learner, in either edition, the words the course uses in both
languages. The table is written here rather than with pandas so that no row is ever truncated
("..."), every cell is HTML-escaped, and the saved output is the same on every run (CI compares
it). The third column follows the lesson language: its heading, and the note itself (each term's
``note`` in English, ``note_zh`` in Chinese); the terms are bilingual anyway.
"""

from __future__ import annotations

from html import escape

from IPython.display import HTML

from ..data import load_glossary
from ..i18n import language, say

__all__ = ["glossary_table"]

#: The scrolling box around the table: about 24 lines of text high.
BOX_STYLE = "max-height: 24em; overflow-y: auto"
#: Every cell reads left to right (JupyterLab right-aligns table cells by default).
CELL_STYLE = "text-align: left"


def glossary_table() -> HTML:
    """The whole glossary as one scrollable HTML table (columns English, 中文, note); the note
    in the lesson language."""
    headings = ["English", "中文", say("note", "说明")]
    note = "note_zh" if language() == "zh" else "note"
    lines = [
        f'<div class="mhsa-glossary" style="{BOX_STYLE}">',
        "<table>",
        "<thead><tr>"
        + "".join(f'<th style="{CELL_STYLE}">{escape(h)}</th>' for h in headings)
        + "</tr></thead>",
        "<tbody>",
    ]
    for term in load_glossary():
        cells = (term["en"], term["zh"], term.get(note, ""))
        lines.append(
            "<tr>" + "".join(f'<td style="{CELL_STYLE}">{escape(c)}</td>' for c in cells) + "</tr>"
        )
    lines += ["</tbody>", "</table>", "</div>"]
    return HTML("\n".join(lines))
