"""Tables that line up in both languages: ``Table`` and ``show_table(rows, header, align)``.

Why: a table printed as monospace text lines up in a terminal when its cells are padded by
display width (``i18n.pad``: a Chinese character takes two columns), but not in JupyterLab's
output area, where the browser draws a Chinese glyph from another font, a little narrower or
wider than two Latin columns: each row drifts by as many fractions of a column as it has Chinese
characters. So a lesson shows its tables as ``Table`` objects, which carry two forms:

* ``text/html`` (``_repr_html_``): a real HTML table, which the browser lines up in any font.
  Every cell is HTML-escaped; text columns read left to right, number columns are right-aligned.
* ``text/plain`` (``str()``, ``repr()``): the same table as text, each cell padded with
  ``i18n.pad`` to its column's display width -- what a terminal, ``print`` and strict nbval see.

Both forms are built from the same cells, so the saved outputs are the same on every run. Cells are
kept as given (``str()`` of each): format numbers before (``f"{x:.2f}"``), so the table shows
exactly the digits a lesson prints. A ``Text`` (``tr(en, zh)``) is read in the current language
when the table is made.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from html import escape

from .i18n import display_width, pad

__all__ = ["Table", "show_table"]

#: Columns of text are separated by this many spaces in the text form.
GAP = 2
#: A cell that reads as a number (12, -0.5, 2,360,064, 33.3%, 12x, 1e-03, < 1e-06, 48 MiB):
#: such columns are right-aligned unless ``align`` says otherwise.
_NUMBER = re.compile(
    r"[<>≈~]?\s*[-+]?((\d[\d,]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?|nan|inf)\s*(%|x|×|[KMG]iB|ms|s)?"
)
#: Cells that say "no value" and do not decide a column's alignment.
_EMPTY = {"", "—", "-", "–"}
_CSS_ALIGN = {"<": "left", ">": "right", "^": "center"}


def _is_number(cell: str) -> bool:
    return bool(_NUMBER.fullmatch(cell.strip()))


class Table:
    """A table with a text form aligned by display width and an HTML form for JupyterLab.

    ``rows``: an iterable of rows, each a sequence of cells (any object; ``str()`` of each is
    shown). ``header``: the column headings, or ``None`` for none. ``align``: one of ``"<"``
    (left), ``">"`` (right) or ``"^"`` (centre) per column, as a string (``"<>>"``) or a
    sequence; ``None`` right-aligns the columns whose every cell is a number and left-aligns the
    others. A row shorter than the widest is filled with empty cells.
    """

    def __init__(
        self,
        rows: Iterable[Sequence[object]],
        header: Sequence[object] | None = None,
        align: str | Sequence[str] | None = None,
    ) -> None:
        if isinstance(rows, str | bytes):
            raise TypeError("rows must be an iterable of rows (sequences of cells), not a string")
        body = []
        for row in rows:
            if isinstance(row, str | bytes) or not isinstance(row, Sequence):
                raise TypeError(f"each row must be a sequence of cells, got {row!r}")
            body.append([str(cell) for cell in row])
        if header is not None and (
            isinstance(header, str | bytes) or not isinstance(header, Sequence)
        ):
            raise TypeError(f"header must be a sequence of headings or None, got {header!r}")
        heads = None if header is None else [str(cell) for cell in header]
        width = max([len(row) for row in body] + [len(heads or [])])
        self.header: list[str] | None = (
            None if heads is None else heads + [""] * (width - len(heads))
        )
        self.rows: list[list[str]] = [row + [""] * (width - len(row)) for row in body]
        self.align: list[str] = self._alignment(align, width)

    def _alignment(self, align: str | Sequence[str] | None, width: int) -> list[str]:
        if align is None:
            columns = [
                [row[i] for row in self.rows if row[i].strip() not in _EMPTY] for i in range(width)
            ]
            return [">" if cells and all(map(_is_number, cells)) else "<" for cells in columns]
        chosen = list(align)
        if len(chosen) != width or any(a not in _CSS_ALIGN for a in chosen):
            raise ValueError(
                f'align must give one of "<", ">" or "^" for each of the {width} columns, '
                f"got {align!r}"
            )
        return chosen

    @property
    def num_columns(self) -> int:
        return len(self.align)

    def text(self) -> str:
        """The table as text: each column as wide as its widest cell in display columns (a Chinese
        character takes two), columns ``GAP`` spaces apart, no trailing spaces."""
        lines = ([self.header] if self.header is not None else []) + self.rows
        widths = [
            max((display_width(line[i]) for line in lines), default=0)
            for i in range(self.num_columns)
        ]
        return "\n".join(
            (" " * GAP)
            .join(pad(cell, w, a) for cell, w, a in zip(line, widths, self.align))
            .rstrip()
            for line in lines
        )

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer, cycle: bool) -> None:  # IPython's text/plain
        printer.text(self.text())

    def _repr_html_(self) -> str:
        """An HTML table: every cell escaped, each column aligned as ``align`` says."""

        def cells(tag: str, row: list[str]) -> str:
            return "".join(
                f'<{tag} style="text-align: {_CSS_ALIGN[a]}">{escape(cell)}</{tag}>'
                for cell, a in zip(row, self.align)
            )

        parts = ['<table class="mhsa-table">']
        if self.header is not None:
            parts.append(f"<thead><tr>{cells('th', self.header)}</tr></thead>")
        parts.append("<tbody>")
        parts += [f"<tr>{cells('td', row)}</tr>" for row in self.rows]
        parts += ["</tbody>", "</table>"]
        return "\n".join(parts)


def show_table(
    rows: Iterable[Sequence[object]] | Table,
    header: Sequence[object] | None = None,
    align: str | Sequence[str] | None = None,
) -> None:
    """Show a table: ``Table(rows, header, align)`` (or ``rows`` itself if it is a ``Table``).

    In a notebook it is displayed (HTML in JupyterLab, the aligned text as ``text/plain``);
    anywhere else the text is printed.
    """
    table = rows if isinstance(rows, Table) else Table(rows, header, align)
    if isinstance(rows, Table) and (header is not None or align is not None):
        raise TypeError("header and align belong to the Table; pass them when making it")
    try:
        from IPython.display import display
    except ImportError:  # no IPython: a plain Python run
        print(table)
        return
    display(table)
