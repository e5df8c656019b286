"""Reading a published CSV table with every cell as text: a release, an α-β view, or the
k-anonymous output of another tool (ARX writes ``;`` by default; sdcMicro, spreadsheets in many
countries do too).

The bytes are read by the loader's rules (:mod:`crowdsafe.data.io`): the separator is found from
the header line (``,`` ``;`` tab ``|``; a ``.tsv`` file is tab-separated), the line breaks are the
file's own (lone CR too; mixed ones are refused, :mod:`crowdsafe.data.line_endings`), the text is
UTF-8 (a byte-order mark allowed), an Excel ``sep=;`` first line names the separator and is
skipped (:mod:`crowdsafe.data.sep_line`), the path is literal, and a row with more or fewer fields than
the header is refused naming its line. Unlike the loader, no type is guessed and no token is read
as missing: ``?``, ``NA``, ``017`` and ``[25, 34]`` stay as published, and only an empty field is
missing. The Spark engine finds a release file's separator by the same rule
(:func:`crowdsafe.engines.spark.io.csv_separator`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import polars as pl

from crowdsafe.data.io import (
    HEAD_BYTES,
    ragged_row_error,
    refuse_ragged_rows,
    resolve_separator,
    sniff_format,
    with_written_names,
)
from crowdsafe.data.line_endings import line_ending
from crowdsafe.data.sep_line import sep_line, sep_note
from crowdsafe.errors import InputError, first_line
from crowdsafe.identity import note_line


def text_options(path: str | os.PathLike[str], separator: str | None = None) -> dict[str, Any]:
    """The options Polars reads (or scans) the CSV file at ``path`` with, every cell as text
    (module docstring). ``separator``: None to find it (tab for a ``.tsv`` file)."""
    path = Path(path)
    _, head = sniff_format(path)  # a workbook, archive, UTF-16 or binary file is named in one line
    if separator is None and path.suffix.lower() == ".tsv":
        separator = "\t"
    options = dict(separator=resolve_separator(separator, head), infer_schema=False, encoding="utf8",
                   eol_char=line_ending(head, str(path), complete=len(head) < HEAD_BYTES), glob=False)
    excel = sep_line(head)
    if excel is not None:  # Excel's 'sep=;' first line: its separator, and skipped
        print(note_line(sep_note(str(path), excel)), file=sys.stderr)
        options["skip_lines"] = 1
    return options


def read_text_csv(path: str | os.PathLike[str], what: str = "table") -> pl.DataFrame:
    """The CSV file at ``path``, every cell as text, its column names as the header writes them.
    A file Polars cannot read is an :class:`InputError` naming ``what`` and the file."""
    path = Path(path)
    options = text_options(path)
    try:
        frame = pl.read_csv(path, **options)
    except pl.exceptions.NoDataError:
        raise InputError(f"the {what} {path} is empty") from None
    except pl.exceptions.ComputeError as exc:
        text = str(exc).lower()
        if "utf-8" in text or "utf8" in text:
            raise InputError(f"the {what} {path} is not UTF-8 text; re-save it as UTF-8") from None
        raise (ragged_row_error(path, options["separator"], custodian=False)  # a published table: public
               or InputError(f"cannot read the {what} {path}: {first_line(exc)}")) from None
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(f"cannot read the {what} {path}: {first_line(exc)}") from None
    if frame.width > 1 and frame.get_column(frame.columns[-1]).null_count():
        refuse_ragged_rows(path, options["separator"], custodian=False)  # a short row reads as missing fields
    return with_written_names(frame, path, options["separator"])


def scan_text_csv(path: str | os.PathLike[str]) -> pl.LazyFrame:
    """The CSV file at ``path`` scanned lazily, every cell as text (module docstring); a row of
    another width fails when the scan is collected, not before."""
    path = Path(path)
    options = text_options(path)
    return with_written_names(pl.scan_csv(path, **options), path, options["separator"])
