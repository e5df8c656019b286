"""The rows of a hierarchy file's text (:meth:`crowdsafe.data.hierarchy.Hierarchy.from_csv`).

The text is parsed whole by the ``csv`` module, as the data loader parses a table: a quoted label
keeps the separators and line breaks it holds (``"Bäcker\\nMeister"`` is one label, and so is
``"Lehrer; Schule"``), any line break (LF, CRLF, CR) ends a row, and blank rows are skipped. The
separator, when not given, is the one of ``;`` (ARX's default), ``,`` and tab that reads the file
as a hierarchy (every row of one width, one root label in the last column), outside quoted labels
(a separator ending every line is ignored: it adds an empty column, no level):
a ``;`` inside ``"Lehrer; Schule"`` (or an unquoted ``Lehrer; Schule,Bildung,*`` among other rows)
does not make a comma file ``;``-separated; ``;`` wins a tie.
"""

from __future__ import annotations

import csv
import io

__all__ = ["SEPARATORS", "rows", "sniff_separator"]

#: The separators a hierarchy file may use, in the order a tie is decided.
SEPARATORS = (";", ",", "\t")


def _records(text: str, separator: str) -> list[list[str]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=separator)
    return _without_trailing_separator([row for row in reader if any(cell.strip() for cell in row)])


def _without_trailing_separator(records: list[list[str]]) -> list[list[str]]:
    """``records`` without a last column that every row has and none fills: what a separator at the
    end of every line (``13053;1305*;*;``, as a spreadsheet export may write) adds. Such a column
    holds no label, so dropping it changes no level; a column empty in some rows only is kept
    (its empty labels are refused, naming the value)."""
    while (records and len(records[0]) > 2 and all(len(row) == len(records[0]) for row in records)
           and not any(row[-1].strip() for row in records)):
        records = [row[:-1] for row in records]
    return records


def _fit(records: list[list[str]]) -> tuple[bool, bool, bool, int]:
    """How well ``records`` read as a hierarchy: every row of one width with one root label in
    the last column, no empty label, every row of one width, and the width of the first row."""
    if not records:
        return False, False, False, 0
    width = len(records[0])
    even = width > 1 and all(len(row) == width for row in records)
    rooted = even and len({row[-1].strip() for row in records}) == 1
    filled = even and all(cell.strip() for row in records for cell in row)  # one column: nothing to fill
    return rooted, filled, even, width


def sniff_separator(text: str) -> str:
    """The separator of a hierarchy file's ``text``, quotes respected: the one that reads every
    row with one width and one root label (and no empty label), else every row with one width,
    else the first row with the most fields (``;`` first on a tie)."""
    fits = {}
    for separator in SEPARATORS:
        try:
            fits[separator] = _fit(_records(text, separator))
        except csv.Error:
            fits[separator] = (False, False, False, 0)
    return max(SEPARATORS, key=lambda s: (*fits[s], -SEPARATORS.index(s)))


def rows(text: str, separator: str | None) -> list[list[str]]:
    """The non-blank rows of ``text`` (cells stripped), split by ``separator`` (sniffed when None)."""
    if separator is None:
        separator = sniff_separator(text)
    return [[cell.strip() for cell in row] for row in _records(text, separator)]
