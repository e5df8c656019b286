"""A :class:`Release`: the published table, the certificate it carries, and how it was made.

A release is written as two files side by side, both atomically: the table (CSV or Parquet, by
the file name) and its certificate, ``<name>.certificate.json`` (``release.csv`` ->
``release.certificate.json``). Both are complete before either is put in place, so a failure
leaves neither half-written.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from crowdsafe.anonymize.apply import Applied
from crowdsafe.anonymize.recoding import Recoding
from crowdsafe.data import Dataset
from crowdsafe.errors import ParameterError
from crowdsafe.files import atomic_path
from crowdsafe.privacy import Certificate

if TYPE_CHECKING:
    from crowdsafe.anonymize.counted import AppliedCounts
    from crowdsafe.metrics import InformationLoss

TABLE_SUFFIXES = (".csv", ".parquet", ".pq")
CERTIFICATE_SUFFIX = ".certificate.json"


def certificate_path(table_path: str | os.PathLike[str]) -> Path:
    """Where the certificate of a table written at ``table_path`` goes."""
    path = Path(table_path)
    return path.with_name(path.stem + CERTIFICATE_SUFFIX)


def write_table_and_certificate(frame: pl.DataFrame, certificate: Certificate,
                                path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``frame`` to ``path`` (CSV or Parquet) and the certificate beside it, atomically."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise ParameterError(f"cannot tell the output format of {path}: use a .csv or .parquet file name")
    beside = certificate_path(path)
    text = certificate.to_json()
    with contextlib.ExitStack() as stack:
        table_tmp = stack.enter_context(atomic_path(path))
        certificate_tmp = stack.enter_context(atomic_path(beside))
        if suffix == ".csv":
            frame.write_csv(table_tmp)
        else:
            frame.write_parquet(table_tmp)
        certificate_tmp.write_text(text, encoding="utf-8")
    return path, beside


def write_classes_csv(classes: pl.DataFrame, sizes: np.ndarray, path: str | os.PathLike[str]) -> None:
    """Write the table whose rows are ``classes``' rows, row i repeated ``sizes[i]`` times, as CSV:
    byte for byte what ``write_csv`` writes for that table, from one formatted line per class."""
    text = classes.write_csv().encode("utf-8")
    lines = text.split(b"\n")
    if len(lines) != classes.height + 2:  # a value holds a line break: format every row
        classes.gather(np.repeat(np.arange(classes.height), sizes)).write_csv(path)
        return
    with open(path, "wb") as out:
        out.write(lines[0] + b"\n")
        for line, size in zip(lines[1:-1], np.asarray(sizes).tolist()):
            out.write((line + b"\n") * size)


@dataclass(frozen=True)
class Release:
    """A published table with its certificate.

    ``frame``: the published rows (quasi-identifiers recoded, identifiers dropped, suppressed
    rows removed), given as ``rows``: the table, or a function that builds it on first use (a
    release made from a frequency table is written from its classes and need not build it). ``certificate``: the guarantee it carries. ``applied``: what Apply did
    (classes, suppression). ``recoding``: the g it applied. ``source``: the dataset it was made
    from (kept for utility measures; never written).
    """

    rows: pl.DataFrame | Callable[[], pl.DataFrame]
    certificate: Certificate
    algorithm: str
    k: int
    quasi_identifiers: tuple[str, ...]
    sensitive: str | None
    recoding: Recoding
    applied: Applied | AppliedCounts  # AppliedCounts: Apply on the frequency table (safe pipeline, Spark)
    source: Dataset
    parameters: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @functools.cached_property
    def frame(self) -> pl.DataFrame:
        return self.rows() if callable(self.rows) else self.rows

    @property
    def rows_in(self) -> int:
        return self.applied.rows_in

    @property
    def rows_published(self) -> int:
        return self.applied.rows_published

    @property
    def rows_suppressed(self) -> int:
        return self.applied.rows_suppressed

    @property
    def classes(self) -> int:
        return self.applied.classes

    def utility(self) -> "InformationLoss":
        """Information loss of this release against its source (:mod:`crowdsafe.metrics`).

        For a microaggregated release, whose cells are centroids rather than generalized
        values, coverage measures (NCP) are those of each class's extent: the range or hierarchy
        node of its rows' original values (class-size measures are the release's own).
        """
        from crowdsafe.metrics import information_loss

        frame = self.frame
        extents = getattr(self.recoding, "extents", None)
        if extents is not None:
            classes = self.recoding.class_of_row[self.applied.kept]  # type: ignore[attr-defined]
            frame = pl.DataFrame([extents[c].gather(classes).alias(c) for c in self.quasi_identifiers])
        return information_loss(self.source, frame, qi=list(self.quasi_identifiers), k=self.k,
                                input_rows=self.rows_in)

    def write(self, path: str | os.PathLike[str]) -> tuple[Path, Path]:
        """Write the table to ``path`` and the certificate beside it; return both paths."""
        return write_table_and_certificate(self.frame, self.certificate, path)

    def summary(self) -> dict[str, Any]:
        """A JSON-ready account of the release (without utility measures)."""
        sizes = self.applied.published_class_sizes
        return {
            "algorithm": self.algorithm,
            "k": self.k,
            "quasi_identifiers": list(self.quasi_identifiers),
            "sensitive": self.sensitive,
            "rows_in": self.rows_in,
            "rows_published": self.rows_published,
            "rows_suppressed": self.rows_suppressed,
            "suppression_rate": self.applied.suppression_rate,
            "classes": self.classes,
            "smallest_class": int(sizes.min()) if len(sizes) else None,
            "recoding": self.recoding.describe(),
            "parameters": dict(self.parameters),
            "guarantee": self.certificate.summary(),
            "notes": list(self.notes),
        }
