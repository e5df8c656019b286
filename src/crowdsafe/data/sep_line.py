"""Excel's ``sep=`` line: a first line that names a CSV file's field separator.

Excel writes (and reads) a CSV file whose first line is exactly ``sep=;`` (or ``sep=,``, a tab,
``|``...) as a hint of its separator, the header coming on the next line. Read as a header, the
line would give a table with the columns ``sep=`` and ``column_2``, and the real header as its
first row. Every CSV reader of crowdsafe (the loader, whole and lazy; the reader of releases
and views, :mod:`crowdsafe.data.text_csv`; the ragged-row check) recognises it from the file's
first bytes (:func:`sep_line`): the separator is the one it names, and the line is skipped.
Optional around it: a byte-order mark, double quotes (``"sep=;"``), a CR before its LF. The rows
read are those of the same table without the line, so its ledger identity is theirs too.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["SepLine", "sep_line", "sep_note", "without_sep_line"]

# one ASCII character other than a quote or a line break (resolve_separator's rule)
_LINE = re.compile(rb'(?:\xef\xbb\xbf)?("?)sep=([\x00-\x09\x0b\x0c\x0e-\x21\x23-\x7f])\1(\r\n|\n|\r|\Z)')


class SepLine(NamedTuple):
    """The separator a ``sep=`` line names and the line's length in bytes (its line break included)."""

    separator: str
    length: int


def sep_line(head: bytes) -> SepLine | None:
    """The ``sep=X`` line that ``head`` (a CSV file's first bytes, decompressed) starts with, or None."""
    found = _LINE.match(head)
    if found is None:
        return None
    return SepLine(found.group(2).decode("ascii"), found.end())


def without_sep_line(head: bytes) -> bytes:
    """``head`` without its ``sep=`` line, if any (a byte-order mark before it is dropped too)."""
    found = sep_line(head)
    return head if found is None else head[found.length:]


def sep_note(label: str, found: SepLine) -> str:
    """The note of a read that skipped a ``sep=`` line."""
    return (f"{label}: its first line 'sep={found.separator.encode('unicode_escape').decode('ascii')}' "
            "(Excel's separator hint) was read as the separator and skipped")
