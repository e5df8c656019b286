"""Writing releases from Spark: all or nothing, on any path Spark can write.

A release is a directory of part files (``release.parquet/part-*.parquet``, or CSV parts with a
header each) with its certificate beside it (``release.certificate.json``). Every table is first
written to a temporary sibling directory and every certificate to a temporary sibling file;
only when all are complete are they renamed into place, one after another (the certificates of
the releases replaced, and crowdsafe's reports beside them, removed first; a previous table of
the same name moved aside and deleted once every new file is in place). A failure leaves the
targets as they were.

The rows are generated from the published classes (tuple, size), never from the sample's rows:
each class becomes ``size`` identical rows, in the classes' sorted order (so the row order
carries nothing about the input's).

Two writers of the same rows (a fast path and its reference twin): a Parquet release on the
local file system whose class values are text, integers, booleans, floats or dates is written
by the driver itself from its classes (:func:`write_class_parts`: Arrow row groups gathered
from the class table, never the whole release in memory), without a Spark job; any other
release is written by Spark from :func:`class_rows` (any path Spark can write, CSV with
formula-safe cells). Both give a directory of Parquet part files holding the same rows.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.anonymize.release import CERTIFICATE_SUFFIX, replaced_first
from crowdsafe.engines.spark.io import spark_path
from crowdsafe.errors import InputError

CHUNK_ROWS = 8192  # rows generated from one class-table row (large classes are split)
ROWS_PER_PARTITION = 2_000_000
ROW_GROUP_ROWS = 1 << 18  # rows per Parquet row group written by the driver (its memory per step)
_DRIVER_TYPES = (pl.String, pl.Categorical, pl.Enum, pl.Boolean, pl.Int8, pl.Int16, pl.Int32, pl.Int64,
                 pl.Float32, pl.Float64, pl.Date)


def class_rows(spark: Any, classes: pl.DataFrame, sizes: np.ndarray) -> Any:
    """A Spark DataFrame with ``sizes[i]`` copies of row i of ``classes`` (the published tuples)."""
    from pyspark.sql import functions as F

    sizes = np.asarray(sizes, dtype=np.int64)
    which, repeat = chunk_plan(sizes, CHUNK_ROWS)
    table = classes.gather(which).with_columns(pl.Series("__crowdsafe_repeat", repeat, dtype=pl.Int32))
    rows = int(sizes.sum())
    partitions = max(1, min(rows // ROWS_PER_PARTITION + 1, max(len(which), 1)))
    frame = spark.createDataFrame(table.to_arrow())
    if partitions > 1:
        frame = frame.repartition(partitions)
    expanded = frame.withColumn("__crowdsafe_one", F.explode(F.array_repeat(F.lit(True), F.col("__crowdsafe_repeat"))))
    return expanded.select(*classes.columns)


def chunk_plan(sizes: np.ndarray, chunk_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Class i split into pieces of at most ``chunk_rows`` rows: each piece's class (in class
    order) and row count; the pieces of class i add up to ``sizes[i]`` whatever ``chunk_rows``
    (blocking only: one Spark row is exploded into at most ``chunk_rows`` rows)."""
    chunks = np.maximum((sizes + chunk_rows - 1) // chunk_rows, 0)
    which = np.repeat(np.arange(len(sizes)), chunks)
    before = np.repeat(np.cumsum(chunks) - chunks, chunks)
    piece = np.arange(len(which)) - before
    return which, np.minimum(sizes[which] - piece * chunk_rows, chunk_rows)


def driver_writes(classes: pl.DataFrame | None, path: str, files: _Files) -> bool:
    """The rule between the twins: the driver writes the release itself when it is Parquet, on
    the local file system, and every class column has a type the two writers store alike."""
    return (classes is not None and not str(path).lower().endswith(".csv") and files.local
            and all(isinstance(t, _DRIVER_TYPES) for t in classes.dtypes))


def write_class_parts(classes: pl.DataFrame, sizes: np.ndarray, folder: str) -> None:
    """Write the rows that repeat row i of ``classes`` ``sizes[i]`` times, in class order, as
    Parquet part files in the new directory ``folder`` (at most ``ROWS_PER_PARTITION`` rows per
    file, row groups of ``ROW_GROUP_ROWS``; one empty part when there are no rows). Text
    categories are written as text, as Spark writes them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = [c for c, t in classes.schema.items() if isinstance(t, (pl.Categorical, pl.Enum))]
    table = classes.with_columns(pl.col(text).cast(pl.String)).to_arrow().combine_chunks()
    # text columns as indices into the class values (no copy of a string per row); the file
    # stores no Arrow schema, so a reader sees plain text, as in the file Spark writes
    strings = [pa.types.is_string(t) or pa.types.is_large_string(t) for t in table.schema.types]
    schema = pa.schema([pa.field(f.name, pa.dictionary(pa.int32(), f.type) if is_text else f.type)
                        for f, is_text in zip(table.schema, strings)])
    encoded = [column.chunk(0).dictionary_encode() if is_text else column.chunk(0)  # nulls: null indices
               for column, is_text in zip(table.columns, strings)]
    sizes = np.asarray(sizes, dtype=np.int64)
    ends = np.cumsum(sizes)
    total = int(ends[-1]) if len(ends) else 0
    os.makedirs(folder)
    for part, first in enumerate(range(0, max(total, 1), ROWS_PER_PARTITION)):
        last = min(first + ROWS_PER_PARTITION, total)
        with pq.ParquetWriter(os.path.join(folder, f"part-{part:05d}.parquet"), schema,
                              compression="snappy", store_schema=False) as writer:
            for start in range(first, max(last, first + 1), ROW_GROUP_ROWS):  # one empty group for no rows
                stop = min(start + ROW_GROUP_ROWS, last)
                which = pa.array(np.searchsorted(ends, np.arange(start, stop, dtype=np.int64), side="right")
                                 .astype(np.int32))
                columns = [pa.DictionaryArray.from_arrays(column.indices.take(which), column.dictionary) if is_text
                           else column.take(which) for column, is_text in zip(encoded, strings)]
                writer.write_table(pa.Table.from_arrays(columns, schema=schema), row_group_size=max(stop - start, 1))
    open(os.path.join(folder, "_SUCCESS"), "wb").close()


def escape_spark_frame(frame: Any) -> Any:
    """``frame`` (a Spark DataFrame) with every string column and column name formula-safe, as
    :func:`crowdsafe.csv_safety.escape_frame` does for Polars (same regular expressions, run by
    the executors); other columns untouched."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    from crowdsafe.csv_safety import _NEEDS_ESCAPE, _PLAIN_NUMBER, APOSTROPHE, escape_text

    columns = []
    for column in frame.schema.fields:
        value = F.col(f"`{column.name}`")
        if isinstance(column.dataType, StringType):
            needs = value.rlike(_NEEDS_ESCAPE) & ~value.rlike(_PLAIN_NUMBER)
            value = F.when(needs, F.concat(F.lit(APOSTROPHE), value)).otherwise(value)
        columns.append(value.alias(escape_text(column.name)))
    return frame.select(*columns)


def certificate_location(path: str) -> str:
    """``<dir>/<stem>.certificate.json`` for a table at ``<dir>/<stem>.<suffix>`` (any URI scheme)."""
    head, _, name = str(path).rstrip("/").rpartition("/")
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return f"{head}/{stem}{CERTIFICATE_SUFFIX}" if head else f"{stem}{CERTIFICATE_SUFFIX}"


class _Files:
    """The Hadoop file system of a path (local, HDFS, S3...), through the Spark JVM."""

    def __init__(self, spark: Any, path: str) -> None:
        jvm = spark._jvm
        self._jvm = jvm
        self.path = jvm.org.apache.hadoop.fs.Path(spark_path(path))
        self.fs = self.path.getFileSystem(spark._jsc.hadoopConfiguration())
        try:  # no .crc sidecar beside a local certificate (only checksummed file systems have it)
            self.fs.setWriteChecksum(False)
        except Exception:  # noqa: BLE001 - py4j raises its own error for a missing method
            pass

    @property
    def local(self) -> bool:
        """Whether the path is on this machine's file system (``file:``), which the driver can write."""
        return str(self.fs.getScheme()) == "file"

    def local_path(self, path: Any) -> str:
        """The local file name of ``path`` (on a local file system)."""
        return str(path.toUri().getPath())

    def sibling(self, suffix: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(self.path.getParent(), f".{self.path.getName()}.{suffix}")

    def exists(self, path: Any) -> bool:
        return bool(self.fs.exists(path))

    def delete(self, path: Any) -> None:
        if self.fs.exists(path):
            self.fs.delete(path, True)

    def rename(self, source: Any, target: Any) -> None:
        if not self.fs.rename(source, target):
            raise InputError(f"cannot move {source.toString()} to {target.toString()}")

    def write_text(self, path: Any, text: str) -> None:
        stream = self.fs.create(path, True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()


def write_releases(spark: Any, tables: Sequence[Any], certificates: Sequence[str], paths: Sequence[str],
                   combined: tuple[str, str] | None = None, *, escape_formulas: bool = True,
                   classes: Sequence[tuple[pl.DataFrame, np.ndarray] | None] | None = None) -> dict[str, Any]:
    """Write every release table (Spark DataFrames) and certificate (JSON text) at ``paths``, all
    or nothing; ``combined`` = (path, text) of the composed certificate of several releases. CSV
    cells are formula-safe unless ``escape_formulas`` is False (:func:`escape_spark_frame`);
    Parquet keeps raw values. ``classes``: per table, the (classes, sizes) it was generated from,
    when known: the driver then writes the table where :func:`driver_writes` allows."""
    token = uuid.uuid4().hex[:12]
    staged: list[tuple[_Files, Any, Any]] = []  # (file system, temporary, final)
    known = list(classes) if classes is not None else [None] * len(paths)
    try:
        for table, text, path, written in zip(tables, certificates, paths, known):
            files = _Files(spark, str(path))
            temporary = files.sibling(f"tmp-{token}")
            staged.append((files, temporary, files.path))
            writer = table.write.mode("error")
            if written is not None and driver_writes(written[0], str(path), files):
                write_class_parts(written[0], written[1], files.local_path(temporary))
            elif str(path).lower().endswith(".csv"):
                if escape_formulas:
                    writer = escape_spark_frame(table).write.mode("error")
                writer.option("header", True).csv(temporary.toString())
            else:
                writer.parquet(temporary.toString())
            certificate = _Files(spark, certificate_location(str(path)))
            temporary = certificate.sibling(f"tmp-{token}")
            staged.append((certificate, temporary, certificate.path))
            certificate.write_text(temporary, text)
        if combined is not None:
            files = _Files(spark, combined[0])
            temporary = files.sibling(f"tmp-{token}")
            staged.append((files, temporary, files.path))
            files.write_text(temporary, combined[1])
        # nothing slow between the renames: the certificates (and crowdsafe's reports) of the
        # releases replaced go first, so that no certificate ever stands beside a table it does
        # not describe; then each file is renamed into place; the old tables moved aside are
        # deleted (a recursive delete) only once every new file is in place
        local = [p for p in paths if "://" not in str(p)]
        for stale in replaced_first(local):
            if stale.suffix != ".json":  # a report: local only (certificates go below, on any file system)
                stale.unlink(missing_ok=True)
        certificate_files = {id(files) for files, _, _ in staged[1::2]} | (
            {id(staged[-1][0])} if combined is not None else set())
        for files, _, final in staged:
            if id(files) in certificate_files and files.exists(final):
                files.delete(final)
        asides = []
        for number, (files, temporary, final) in enumerate(staged):
            if files.exists(final):
                aside = files.sibling(f"old-{token}-{number}")
                files.rename(final, aside)
                asides.append((files, aside))
            files.rename(temporary, final)
        for files, aside in asides:
            files.delete(aside)
    except BaseException:
        for files, temporary, _ in staged:
            files.delete(temporary)
        raise
    return {
        "tables": [str(p) for p in paths],
        "certificates": [certificate_location(str(p)) for p in paths],
        "combined_certificate": combined[0] if combined else None,
    }
