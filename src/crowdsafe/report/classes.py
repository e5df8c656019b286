"""The release's rows read as their classes: one row per class line and its number of records.

A release the Polars engine writes as CSV from a frequency table is its header and then, for each
published class, one formatted line repeated by the class's size
(:func:`crowdsafe.anonymize.release.write_classes_csv`). At 10M input rows that is millions of
rows in a few thousand classes. The report needs only the distinct tuples and their counts
(:func:`crowdsafe.report.content.tuple_table`), so scanning and parsing every row again costs time
that grows with the rows and tells it nothing more.

Fast path (:func:`class_rows`): the run hands the report the classes it has just written (a public
DP output: the published classes and their sizes). The report formats them as the writer does,
**compares them with the file's bytes** (header, then each line repeated by its size, and nothing
else), and only when the file is exactly that does it parse each class line once and weight it by
its size. A CSV record here never spans lines (a value with a line break is refused), so parsing the
file gives each class line's record, repeated: the weighted rows are the file's rows, counted.
Whatever the match cannot prove (another writer, a Parquet file, a line break in a value, an
empty line the parser would skip) returns None and the report scans the file
(:func:`crowdsafe.report.build.read_release`, the reference twin). Either way the report is a
function of the release's bytes and its certificate alone, and ``crowdsafe report`` rebuilds it
byte for byte (``tests/fast_paths/test_report_classes.py``).

The classes never outlive the run and are never written: they are the release itself, compressed.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

#: Bytes compared with the file per read (the class lines, repeated, are compared chunk by chunk).
COMPARE_CHUNK = 1 << 20


@dataclass(frozen=True)
class WrittenClasses:
    """The published classes of one release as the run wrote them: ``frame`` one row per class
    (the values the release shows, in the written order), ``sizes`` the records of each class,
    ``escape_formulas`` whether the CSV writer escaped formula cells."""

    frame: pl.DataFrame
    sizes: np.ndarray
    escape_formulas: bool
    #: the header and class lines as the writer formatted them, when it kept them (else made here)
    lines: tuple[bytes, list[bytes]] | None = None


def written_classes(release: Any, escape_formulas: bool) -> WrittenClasses | None:
    """The classes of ``release`` (an :class:`~crowdsafe.anonymize.release.Release` made from a
    frequency table: its published :class:`~crowdsafe.anonymize.counted.AppliedCounts` and its
    full-domain scheme), else None (a release of another kind: the report scans its file)."""
    from crowdsafe.anonymize.counted import AppliedCounts, class_frame
    from crowdsafe.anonymize.published import PublishedScheme
    from crowdsafe.anonymize.recoding import GeneralizationScheme

    applied, scheme = getattr(release, "applied", None), getattr(release, "recoding", None)
    if not isinstance(applied, AppliedCounts) or not isinstance(scheme, (GeneralizationScheme, PublishedScheme)):
        return None
    if not bool(np.all(applied.class_kept)):  # a release holds its published classes only
        return None
    try:
        if hasattr(type(release), "class_lines"):  # the frame and lines the CSV writer wrote (a Release)
            frame, lines = release.published_classes, release.class_lines(escape_formulas)
        else:
            frame, lines = class_frame(applied, scheme, tuple(release.quasi_identifiers)), None
    except Exception:  # only a shortcut: whatever stops it, the report scans the file
        return None
    return WrittenClasses(frame, applied.published_class_sizes, escape_formulas, lines)


def _lines(classes: WrittenClasses) -> tuple[bytes, list[bytes]] | None:
    """The header and one line per class, formatted as the CSV writer formats them; None when a
    value holds a line break (a record would span lines)."""
    from crowdsafe.anonymize.release import class_lines

    if classes.lines is not None:
        return classes.lines
    return class_lines(classes.frame, escape_formulas=classes.escape_formulas)


def _file_is(path: Path, header: bytes, lines: list[bytes], sizes: np.ndarray) -> bool:
    """Whether the file at ``path`` holds exactly ``header`` then each line repeated by its size."""
    counts = np.asarray(sizes, dtype=np.int64).tolist()
    expected = len(header) + sum(len(line) * count for line, count in zip(lines, counts))
    if path.stat().st_size != expected:
        return False
    with open(path, "rb") as source:
        if source.read(len(header)) != header:
            return False
        for line, count in zip(lines, counts):
            per_chunk = max(1, COMPARE_CHUNK // len(line))
            chunk = line * min(count, per_chunk)  # made once per class, compared with every full chunk read
            while count > 0:
                run = min(count, per_chunk)
                expected = chunk if len(line) * run == len(chunk) else line * run
                if source.read(len(expected)) != expected:
                    return False
                count -= run
        return source.read(1) == b""


def class_rows(path: str | os.PathLike[str], classes: WrittenClasses | None, certificate: Mapping[str, Any]
               ) -> pl.DataFrame | None:
    """The rows of the CSV release at ``path`` as :func:`crowdsafe.report.build.read_release` reads
    them (every column as text, formula escapes undone when the certificate says the cells are
    escaped), one row per class line, with the number of records in the column
    :data:`crowdsafe.report.content.ROWS`; None unless the file is exactly ``classes`` written
    (then the report scans the file)."""
    try:
        return _class_rows(Path(path), classes, certificate)
    except (OSError, ValueError, pl.exceptions.PolarsError):  # only a shortcut: the report scans the file
        return None


def _class_rows(target: Path, classes: WrittenClasses | None, certificate: Mapping[str, Any]) -> pl.DataFrame | None:
    from crowdsafe.csv_safety import escaped_by, unescape_frame
    from crowdsafe.report.content import ROWS

    if classes is None or target.suffix.lower() != ".csv" or not target.is_file() or classes.frame.width == 0:
        return None
    formatted = _lines(classes)
    if formatted is None:
        return None
    header, lines = formatted
    if not _file_is(target, header, lines, classes.sizes):
        return None
    rows = pl.scan_csv(io.BytesIO(header + b"".join(lines)), infer_schema=False).collect()
    if rows.height != len(lines) or ROWS in rows.columns:  # a line the parser skipped: scan the file
        return None
    # only a cell or name that begins with an apostrophe can carry an escape
    if escaped_by(certificate.get("format_notes") or []) and (b"'" in header or any(b"'" in line for line in lines)):
        rows = unescape_frame(rows)
    return rows.with_columns(pl.Series(ROWS, np.asarray(classes.sizes, dtype=np.int64)))


__all__ = ["COMPARE_CHUNK", "WrittenClasses", "class_rows", "written_classes"]
