"""Build the report of a written release from its two files: the table and its certificate.

``publish``, ``anonymize`` and ``perturb`` (an α-β view: :mod:`crowdsafe.report.view_content`)
call :func:`write_report` right after the table and its certificate are in place, and
``crowdsafe report RELEASE`` calls the same function later: both read the same two files and
nothing else, so they write the same bytes. That is the proof that the report uses nothing but
the release and its certificate (the privacy boundary, docs/report.md). The report is written
atomically (:func:`crowdsafe.files.write_text_atomic`) as ``<stem>.report.html`` beside the table.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from crowdsafe.data.text_csv import scan_text_csv
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.report.classes import WrittenClasses
from crowdsafe.report.content import (
    BeforeDistribution,
    ReportContent,
    check_shown_fields,
    is_view_certificate,
    report_content,
)

REPORT_SUFFIX = ".report.html"
#: A report with before-distributions, when no path is given (``crowdsafe report --before``).
BEFORE_REPORT_SUFFIX = ".before.report.html"


class ReportWarning(UserWarning):
    """A report that could not be written beside a table that was (the table stands)."""


def report_path(table_path: str | os.PathLike[str], *, before: bool = False) -> Path:
    """Where the report of the table at ``table_path`` goes (``r.csv`` -> ``r.report.html``);
    with ``before`` (a report with before-distributions, new DP answers) ``r.before.report.html``,
    so that the report written at publish is kept as it was."""
    path = Path(table_path)
    return path.with_name(path.stem + (BEFORE_REPORT_SUFFIX if before else REPORT_SUFFIX))


def _scan_table(path: Path) -> pl.LazyFrame:
    """The release's rows, every column as text (as the file holds them), scanned lazily: the
    report reduces them to a tuple table (:func:`crowdsafe.report.content.tuple_table`) without
    holding the release in memory (a Spark release may have billions of rows)."""
    if path.is_dir():  # a Spark release: a folder of part files
        scans = _part_scans(path)
        return pl.concat(scans, how="vertical") if scans else pl.LazyFrame()
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return scan_text_csv(path)
    if suffix in (".parquet", ".pq"):
        return pl.scan_parquet(path, glob=False).select(pl.all().cast(pl.String))
    raise InputError(f"cannot tell the format of the release {path}: expected a .csv or .parquet file")


def _part_scans(folder: Path) -> list[pl.LazyFrame]:
    """The part files of a release folder (hidden and ``_`` files and empty parts left out), each
    scanned as :func:`_scan_table` scans a file."""
    parts = sorted(p for p in folder.iterdir()
                   if p.is_file() and p.stat().st_size > 0 and not p.name.startswith((".", "_")))
    if not parts:
        raise InputError(f"the release folder {folder} holds no part files")
    return [_scan_table(p) for p in parts if p.suffix.lower() in (".csv", ".parquet", ".pq")]


def _counted_parts(folder: Path, certificate: dict[str, Any]) -> pl.DataFrame | None:
    """A release folder's rows counted part by part: each distinct row (every column, as text,
    formula escapes undone as :func:`read_release` undoes them) with its number of records in
    :data:`~crowdsafe.report.content.ROWS`, the parts' counts summed. The same rows, weighted, as
    scanning the whole folder, with memory bounded by one part rather than the release (Polars'
    streaming group-by over every part at once holds far more: 1.1 GB for 33M rows in 17 parts).
    None when a column is named like the count (then the folder is scanned)."""
    from crowdsafe.csv_safety import escaped_by, unescape_frame
    from crowdsafe.report.content import ROWS

    scans = _part_scans(folder)
    if folder.suffix.lower() == ".csv" and escaped_by(certificate.get("format_notes") or []):
        scans = [unescape_frame(scan) for scan in scans]
    columns = scans[0].collect_schema().names() if scans else []
    if not scans or not columns or ROWS in columns:
        return None
    counted = [scan.group_by(columns).agg(pl.len().cast(pl.Int64).alias(ROWS)).collect(engine="streaming")
               for scan in scans]
    return pl.concat(counted, how="vertical").group_by(columns).agg(pl.col(ROWS).sum())


def read_certificate(table_path: str | os.PathLike[str],
                     certificate: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The certificate (its JSON, as a dict) of the release or view at ``table_path``: the file
    ``certificate``, else ``<stem>.certificate.json`` beside the table. It is checked as
    :meth:`crowdsafe.privacy.certificate.Certificate.from_dict` checks every certificate it reads
    (each field there, of its JSON type; ε, δ and the rest within their ranges): a malformed one is
    refused by an :class:`InputError` naming the file and its first bad field."""
    from crowdsafe.anonymize.release import certificate_path
    from crowdsafe.files import check_input, read_input_text
    from crowdsafe.privacy.certificate import Certificate
    from crowdsafe.privacy.certificate_check import check_stated

    path = check_input(table_path, "release")
    if not path.exists():
        raise InputError(f"no release at {path}")
    beside = check_input(certificate if certificate is not None else certificate_path(path), "certificate")
    if not beside.is_file():
        raise InputError(f"the release {path} has no certificate beside it ({beside.name}): the report is built "
                         "from both")
    try:
        found = json.loads(read_input_text(beside, "certificate"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the certificate {beside}: {exc}") from exc
    if not isinstance(found, dict) or found.get("format") != "crowdsafe-certificate":
        raise InputError(f"{beside} is not a crowdsafe certificate")
    try:  # checked as every reader of a certificate checks it; the report shows the JSON as written
        check_stated(found, Certificate.from_dict(found))
        check_shown_fields(found)
    except (InputError, ParameterError) as exc:
        raise InputError(f"the certificate {beside} is not valid: {exc}") from None
    if certificate is None and isinstance(found.get("components"), list) and found["components"]:
        count = len(found["components"])
        raise InputError(f"{beside} is the composed certificate of {count} release{'s' if count != 1 else ''} "
                         f"(publish --releases), not the certificate of {path}: it certifies no single table")
    return found


def read_release(table_path: str | os.PathLike[str]) -> tuple[pl.LazyFrame, dict[str, Any]]:
    """The release's rows, scanned lazily (formula escapes undone for a formula-safe CSV), and its
    certificate. Nothing but the header is read until the scan is collected."""
    from crowdsafe.csv_safety import escaped_by, unescape_frame

    path = Path(table_path)
    certificate = read_certificate(path)
    try:
        frame = _scan_table(path)
        frame.collect_schema()  # a file that is not a table fails here, by name
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise unreadable_release(path, exc) from exc
    if path.suffix.lower() == ".csv" and escaped_by(certificate.get("format_notes") or []):
        frame = unescape_frame(frame)
    return frame, certificate


def release_content(table_path: str | os.PathLike[str], before: Sequence[BeforeDistribution] = (),
                    classes: WrittenClasses | None = None, certificate: dict[str, Any] | None = None
                    ) -> ReportContent:
    """The report content of the release written at ``table_path`` (its rows read once, by a
    streaming scan, into the tuple table the report is computed from). ``classes``: the classes
    the run has just written there; when the file is exactly those classes written, its rows are
    read as the class lines weighted by their sizes (:func:`crowdsafe.report.classes.class_rows`:
    the same rows, counted, without parsing each again), and the file is not scanned.
    ``certificate``: the release's certificate, when the caller has read it already."""
    from crowdsafe.report.classes import class_rows

    if classes is not None:
        known = certificate if certificate is not None else read_certificate(table_path)
        rows = class_rows(table_path, classes, known)
        if rows is not None:
            return certified_table(report_content(rows, known, Path(table_path).name, before, weighted=True))
    frame, found = read_release(table_path)
    try:
        if Path(table_path).is_dir():  # a folder of parts: counted part by part
            counted = _counted_parts(Path(table_path), found)
            if counted is not None:
                return certified_table(report_content(counted, found, Path(table_path).name, before, weighted=True))
        return certified_table(report_content(frame, found, Path(table_path).name, before))
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise unreadable_release(table_path, exc) from exc


def unreadable_release(path: str | os.PathLike[str], exc: Exception) -> InputError:
    """The refusal of a release file that could not be read: one saved again in another encoding
    than UTF-8 (a spreadsheet's Windows-1252) is named so, as every other reader of a release
    names it (it was Polars' "invalid utf-8 sequence")."""
    from crowdsafe.data.text_bytes import NOT_UTF8, utf8_complaint

    if utf8_complaint(exc):
        return InputError(f"the release {path} {NOT_UTF8}")
    return InputError(f"cannot read the release {path}: {exc}")


def certified_table(content: ReportContent) -> ReportContent:
    """``content``, once its table is seen to be one its certificate can certify; else an
    :class:`InputError` naming what does not fit. A release written under a k (publish, anonymize)
    has no class below k, and a certified one (guarantee dp or dps) publishes the certificate's
    columns only: a table beside the certificate that breaks either was edited, or is another
    table, and its report would state the certificate's guarantee for rows it does not cover (an
    officer's sweep, 2026-11-30: a row added to a release with k = 34 was reported "fit for
    release" with a smallest class of 1, a raw column appended as "1 other"). Another run's release
    under the same plan passes (the two files alone cannot tell it)."""
    title, k, sizes = content.title, content.k, content.class_sizes
    listed = content.certificate.get("parameters", {}).get("quasi_identifiers") or ()
    extra = [c for c in content.columns if c not in listed]
    if listed and extra and content.certificate.get("guarantee") in ("dp", "dps"):
        raise InputError(f"{title} holds the column '{extra[0]}', which its certificate does not certify: it is not "
                         "the release the certificate was written with; put that release beside it")
    if k is not None and sizes.size and int(sizes[0]) < k:
        smallest = int(sizes[0])
        raise InputError(f"{title} holds a class of {smallest:,} record{'' if smallest == 1 else 's'}, below its "
                         f"certificate's k = {k:,}: it is not the release the certificate was written with (rows "
                         "edited or added, or another table); put that release beside it")
    return content


def build_report(table_path: str | os.PathLike[str], before: Sequence[BeforeDistribution] = (),
                 certificate: str | os.PathLike[str] | None = None, classes: WrittenClasses | None = None) -> str:
    """The report page of the release or α-β view written at ``table_path``, with its certificate
    beside it (or at ``certificate``). A view is told by its certificate
    (:func:`crowdsafe.report.content.is_view_certificate`) and gets the view's report.
    ``classes``: what the run wrote at ``table_path``, if it knows (:func:`release_content`)."""
    from crowdsafe.report.html import render_html

    found = read_certificate(table_path, certificate)
    if is_view_certificate(found):
        from crowdsafe.report.view_content import build_view_report

        if before:
            raise ParameterError("a view's report shows estimates computed from the view; --before is for releases")
        return build_view_report(table_path, found)
    if certificate is not None:
        raise ParameterError("a release's certificate is read from beside it: --certificate is for α-β views")
    return render_html(release_content(table_path, before, classes, found))


def write_report(table_path: str | os.PathLike[str], out: str | os.PathLike[str] | None = None,
                 before: Sequence[BeforeDistribution] = (), certificate: str | os.PathLike[str] | None = None,
                 classes: WrittenClasses | None = None) -> Path:
    """Build the report of the release or view at ``table_path`` and write it atomically to
    ``out`` (default: ``<stem>.report.html`` beside the table, ``<stem>.before.report.html`` with
    ``before`` distributions: the report written at publish stays as it was); return where it went.
    ``certificate``: a view's certificate when it is not beside the view. ``classes``: what the
    run wrote at ``table_path``, if it knows (:func:`release_content`)."""
    from crowdsafe.files import write_text_atomic

    target = Path(out) if out is not None else report_path(table_path, before=bool(before))
    return write_text_atomic(target, build_report(table_path, before, certificate, classes))


def write_reports(tables: Sequence[str | os.PathLike[str]],
                  classes: Sequence[WrittenClasses | None] | None = None) -> tuple[list[str], list[str]]:
    """The reports of freshly written releases: (paths written, notes). A table that is not a
    local path (e.g. ``s3a://``) gets a note instead; a report that cannot be built gets a note
    naming the error and the command that rebuilds it (the release itself stands). ``classes``:
    per table, the classes the run wrote there (:func:`crowdsafe.report.classes.written_classes`),
    or None; the report is the same either way, only cheaper to build."""
    written: list[str] = []
    notes: list[str] = []
    known = list(classes) if classes is not None and len(classes) == len(tables) else [None] * len(tables)
    for table, wrote in zip(tables, known, strict=True):
        if "://" in str(table) or not Path(table).exists():
            notes.append(f"no report was written for {table} (not a local path): copy the release and its "
                         "certificate to a local folder and run `crowdsafe report` on it")
            continue
        try:
            written.append(str(write_report(table, classes=wrote)))
        except Exception as exc:  # any failure: the release stands, and the note says how to rebuild the report
            notes.append(f"the report of {table} could not be written ({exc}); rebuild it with "
                         f"`crowdsafe report {table}`")
    return written, notes


__all__ = ["BEFORE_REPORT_SUFFIX", "REPORT_SUFFIX", "ReportWarning", "build_report", "read_certificate", "read_release",
           "report_path", "write_report", "write_reports"]
