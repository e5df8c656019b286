"""A :class:`Release`: the published table, the certificate it carries, and how it was made.

A release is written as two files side by side, both atomically: the table (CSV or Parquet, by
the file name; CSV cells formula-safe by default, :mod:`crowdsafe.csv_safety`) and its
certificate, ``<name>.certificate.json`` (``release.csv`` -> ``release.certificate.json``), whose
``format_notes`` say how the table holds its cells. Both are complete and on disk before either is put in
place, so a failure leaves neither half-written; then the certificate and report of the release replaced
are removed and the table and its certificate renamed into place at once (:func:`replaced_first`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import polars as pl

from crowdsafe.anonymize.apply import Applied
from crowdsafe.anonymize.counted import SAMPLE_WITHHELD
from crowdsafe.anonymize.recoding import LocalRecoding, Recoding
from crowdsafe.csv_safety import escape_frame, format_note, write_csv
from crowdsafe.data import Dataset
from crowdsafe.errors import ParameterError
from crowdsafe.files import atomic_paths
from crowdsafe.privacy import Certificate
from crowdsafe.stopping import finishing

if TYPE_CHECKING:
    from crowdsafe.anonymize.counted import AppliedCounts
    from crowdsafe.metrics import InformationLoss

TABLE_SUFFIXES = (".csv", ".parquet", ".pq")
#: A class's repeated lines are written in blocks of about this many bytes (:func:`write_classes_csv`).
WRITE_BLOCK = 1 << 20
CERTIFICATE_SUFFIX = ".certificate.json"


def certificate_path(table_path: str | os.PathLike[str]) -> Path:
    """Where the certificate of a table written at ``table_path`` goes."""
    path = Path(table_path)
    return path.with_name(path.stem + CERTIFICATE_SUFFIX)


def replaced_first(tables: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """What is removed just before new tables are put in place at ``tables``: each one's
    certificate and the report crowdsafe wrote beside it (:func:`crowdsafe.output_guard.replaced_first`)."""
    from crowdsafe.output_guard import replaced_first as beside

    return [stale for table in tables for stale in beside(table, certificate_path(table))]


def discard_written(paths: Sequence[str | os.PathLike[str]]) -> None:
    """Remove the files a failed run wrote at ``paths`` (a folder or a missing path is left as is)."""
    for path in map(Path, paths):
        if path.is_file() or path.is_symlink():
            path.unlink(missing_ok=True)


def check_release_paths(path: str | os.PathLike[str], *, report: bool, force: bool) -> None:
    """The checks of :mod:`crowdsafe.output_guard` on what :meth:`Release.write` writes at a local
    ``path`` (the table, its certificate and its report), before anything is written: an existing
    file crowdsafe did not write is replaced only with ``force``, a ledger never."""
    from crowdsafe.output_guard import Output, OutputKind, RunFiles, is_local
    from crowdsafe.report.build import report_path

    if not is_local(path):  # (a Spark path such as s3a://: the engine that writes it owns it)
        return
    beside = certificate_path(path)
    outputs = [Output(path, "the release", OutputKind.TABLE, parameter="path", certificate=beside),
               Output(beside, "the certificate", OutputKind.CERTIFICATE, parameter="path", of=path),
               *([Output(report_path(path), "the report", OutputKind.REPORT, parameter="path")] if report else [])]
    RunFiles(outputs=tuple(outputs), force=force).check()


def write_table_and_certificate(frame: pl.DataFrame, certificate: Certificate,
                                path: str | os.PathLike[str], *, escape_formulas: bool = True) -> tuple[Path, Path]:
    """Write ``frame`` to ``path`` (CSV or Parquet) and the certificate beside it, atomically.

    CSV cells are formula-safe unless ``escape_formulas`` is False (:mod:`crowdsafe.csv_safety`;
    Parquet keeps raw values); the certificate written says which in its ``format_notes``
    (fixed by the option and the file name, before the data is read)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise ParameterError(f"cannot tell the output format of {path}: use a .csv or .parquet file name")
    beside = certificate_path(path)
    text = certificate.with_format_notes(format_note(path, escape_formulas=escape_formulas)).to_json()
    finishing()  # a run that starts writing its release finishes (crowdsafe.stopping)
    with atomic_paths([path, beside], remove_first=replaced_first([path])) as (table_tmp, certificate_tmp):
        if suffix == ".csv":
            write_csv(frame, table_tmp, escape_formulas=escape_formulas)
        else:
            frame.write_parquet(table_tmp)
        certificate_tmp.write_text(text, encoding="utf-8")
    return path, beside


def class_lines(classes: pl.DataFrame, *, escape_formulas: bool = True) -> tuple[bytes, list[bytes]] | None:
    """The CSV header and one line per row of ``classes`` (each ending in a line break), formatted
    as :func:`crowdsafe.csv_safety.write_csv` formats them (formula-safe unless ``escape_formulas``
    is False); None when a value holds a line break (a row would span lines)."""
    classes = escape_frame(classes, escape_formulas=escape_formulas)
    lines = classes.write_csv().encode("utf-8").split(b"\n")
    if len(lines) != classes.height + 2 or lines[-1] != b"":
        return None
    return lines[0] + b"\n", [line + b"\n" for line in lines[1:-1]]


def write_classes_csv(classes: pl.DataFrame, sizes: np.ndarray, path: str | os.PathLike[str], *,
                      escape_formulas: bool = True, lines: tuple[bytes, list[bytes]] | None = None) -> None:
    """Write the table whose rows are ``classes``' rows, row i repeated ``sizes[i]`` times, as CSV:
    byte for byte what :func:`crowdsafe.csv_safety.write_csv` writes for that table (formula-safe
    unless ``escape_formulas`` is False), from one formatted line per class (``lines``: those of
    :func:`class_lines`, when the caller has them)."""
    formatted = lines or class_lines(classes, escape_formulas=escape_formulas)
    if formatted is None:  # a value holds a line break: format every row
        escaped = escape_frame(classes, escape_formulas=escape_formulas)
        escaped.gather(np.repeat(np.arange(classes.height), sizes)).write_csv(cast("str | Path", path))
        return
    header, rows = formatted
    with open(path, "wb") as out:
        out.write(header)
        for row, size in zip(rows, np.asarray(sizes).tolist()):
            per_block = max(1, WRITE_BLOCK // len(row))
            if size <= per_block:
                out.write(row * size)
                continue
            # a large class: one block of its lines made once and written again and again (a
            # class of millions of rows as one bytes object is memory to fault in and fill)
            block = row * per_block
            full, rest = divmod(size, per_block)
            for _ in range(full):
                out.write(block)
            if rest:
                out.write(row * rest)




@dataclass(frozen=True)
class Release:
    """A published table with its certificate.

    ``frame``: the published rows (quasi-identifiers recoded, identifiers dropped, suppressed
    rows removed), given as ``rows``: the table, or a function that builds it on first use (a
    release made from a frequency table is written from its classes and need not build it).
    ``certificate``: the guarantee it carries. ``applied``: what Apply did (classes,
    suppression). ``recoding``: the g it applied. ``source``: the dataset it was made from
    (classic algorithms: kept for utility measures, never written). A release made by
    ``publish`` from a secret sample has ``source=None`` and an ``applied`` that holds only its
    published classes: the sample never reaches the caller (its exact facts are custodian-only).
    ``custodian``: exact facts about the input that are not part of the release (for the
    custodian; see :meth:`custodian_report`). ``frame_kind``: the kind of frame the data was
    given as (:func:`crowdsafe.data.io.frame_kind`), the kind :attr:`table` returns.
    """

    rows: pl.DataFrame | Callable[[], pl.DataFrame]
    certificate: Certificate
    algorithm: str
    k: int
    quasi_identifiers: tuple[str, ...]
    sensitive: str | None
    recoding: Recoding
    applied: Applied | AppliedCounts  # AppliedCounts: Apply on the frequency table (safe pipeline, Spark)
    source: Dataset | None
    parameters: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    custodian: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    frame_kind: str = "polars"

    @functools.cached_property
    def frame(self) -> pl.DataFrame:
        """The published rows as a Polars frame (a Spark DataFrame for a Spark release)."""
        return self.rows() if callable(self.rows) else self.rows

    @functools.cached_property
    def published_classes(self) -> pl.DataFrame:
        """One row per published class, the values the release shows, in class order
        (:func:`~crowdsafe.anonymize.counted.class_frame`), for a release made from a frequency table
        with a full-domain scheme: made once, read by the CSV writer and by the report."""
        from crowdsafe.anonymize.counted import AppliedCounts, Dictionaries, class_frame

        return class_frame(cast(AppliedCounts, self.applied), cast(Dictionaries, self.recoding),
                           self.quasi_identifiers)

    def class_lines(self, escape_formulas: bool) -> tuple[bytes, list[bytes]] | None:
        """:func:`class_lines` of :attr:`published_classes`, made once for each escaping: the
        lines the CSV writer writes and the report checks the written file against."""
        made = self.__dict__.setdefault("_class_lines", {})
        if escape_formulas not in made:
            made[escape_formulas] = class_lines(self.published_classes, escape_formulas=escape_formulas)
        return cast("tuple[bytes, list[bytes]] | None", made[escape_formulas])

    @property
    def table(self) -> Any:
        """The published rows as the kind of frame the data was given as: a pandas DataFrame for a
        pandas input, else :attr:`frame` (pandas in gives pandas out, Polars in gives Polars out;
        a Spark release's rows stay its Spark DataFrame)."""
        from crowdsafe.data.io import in_kind

        return in_kind(self.frame, self.frame_kind)

    @property
    def sample_withheld(self) -> bool:
        """True for a release made from a secret sample (``publish``): no input facts are kept."""
        return self.source is None

    @property
    def rows_in(self) -> int:
        """Rows Apply read (custodian-only; unavailable for a release made from a secret sample)."""
        if self.sample_withheld:
            raise ParameterError(SAMPLE_WITHHELD)
        return self.applied.rows_in

    @property
    def rows_published(self) -> int:
        """Rows of the release (computed from the release itself)."""
        return self.applied.rows_published

    @property
    def rows_suppressed(self) -> int:
        """Rows Apply suppressed (custodian-only; unavailable for a release made from a secret sample)."""
        if self.sample_withheld:
            raise ParameterError(SAMPLE_WITHHELD)
        return self.applied.rows_suppressed

    def __repr__(self) -> str:
        # concise: what a public field shows (rows and classes are counted on the release itself)
        return (f"Release({self.algorithm!r}, k={self.k}, rows_published={self.rows_published:,}, "
                f"classes={self.classes:,}, {self.certificate.headline()}, "
                f"fit_for_release={self.certificate.fit_for_release})")

    @property
    def classes(self) -> int:
        """Published equivalence classes (computed from the release itself)."""
        return self.applied.classes

    def _repr_html_(self) -> str:
        """The notebook view (:mod:`crowdsafe.report.views`): the guarantee and the released classes."""
        from crowdsafe.report.views import release_html

        return release_html(self)

    def utility(self) -> InformationLoss:
        """Information loss of this release against its source (:mod:`crowdsafe.metrics`).

        For a microaggregated release, whose cells are centroids rather than generalized
        values, coverage measures (NCP) are those of each class's extent: the range or hierarchy
        node of its rows' original values (class-size measures are the release's own). Not
        available for a release made from a secret sample (its utility is in the custodian report).
        """
        from crowdsafe.metrics import information_loss

        if self.source is None:
            raise ParameterError(SAMPLE_WITHHELD)
        frame = self.frame
        extents = getattr(self.recoding, "extents", None)
        if extents is not None:
            # extents: a local recoding, applied to the rows
            classes = cast(LocalRecoding, self.recoding).class_of_row[cast(Applied, self.applied).kept]
            frame = pl.DataFrame([extents[c].gather(classes).alias(c) for c in self.quasi_identifiers])
        return information_loss(self.source, frame, qi=list(self.quasi_identifiers), k=self.k,
                                input_rows=self.rows_in)

    def write(self, path: str | os.PathLike[str], *, escape_formulas: bool = True,
              report: bool = True, force: bool = False) -> tuple[Path | str, Path | str]:
        """Write the table to ``path`` and the certificate beside it, then (unless ``report`` is
        False) the HTML report built from those two files (:mod:`crowdsafe.report`); return the
        table's and the certificate's paths (strings for a Spark release). CSV cells
        are formula-safe unless ``escape_formulas`` is False (:func:`write_table_and_certificate`).
        Before anything is written, the files are checked as ``anonymize(out=...)`` checks them
        (:mod:`crowdsafe.output_guard`): an existing file crowdsafe did not write (the very table
        the release was made from, say) is replaced only with ``force=True``, a ledger never."""
        check_release_paths(path, report=report, force=force)
        written = write_table_and_certificate(self.frame, self.certificate, path, escape_formulas=escape_formulas)
        if report:
            from crowdsafe.report import write_report

            try:
                write_report(written[0])
            except BaseException:
                discard_written(written)  # a failed run leaves no output
                raise
        return written

    def summary(self) -> dict[str, Any]:
        """A JSON-ready public account of the release: its parameters and what is computed from
        the release itself (rows, classes, smallest class), without input facts or utility
        measures (those are in :meth:`custodian_report`)."""
        sizes = self.applied.published_class_sizes
        return {
            "algorithm": self.algorithm,
            "k": self.k,
            "quasi_identifiers": list(self.quasi_identifiers),
            "sensitive": self.sensitive,
            "rows_published": self.rows_published,
            "classes": self.classes,
            "smallest_class": int(sizes.min()) if len(sizes) else None,
            "recoding": self.recoding.describe(),
            "parameters": dict(self.parameters),
            "guarantee": self.certificate.summary(),
            "notes": list(self.notes),
        }

    as_dict = summary  # the name every result's public dict has (crowdsafe.api)

    def custodian_report(self) -> dict[str, Any]:
        """Exact facts about the input, for the custodian only (not part of the release, not
        covered by any guarantee): rows read, rows suppressed, suppression rate, and what the
        algorithm recorded (e.g. the lattice search's diagnostics)."""
        if self.sample_withheld:
            raise ParameterError(SAMPLE_WITHHELD)
        return {
            "notice": "CUSTODIAN ONLY: exact facts about the input, not part of the release and not "
                      "covered by any guarantee; do not store them beside the release",
            "rows_in": self.rows_in,
            "rows_suppressed": self.rows_suppressed,
            "suppression_rate": self.applied.suppression_rate,
            **{k: v for k, v in self.custodian.items()},
        }
