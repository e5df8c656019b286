"""Reading tables into Spark: Parquet or CSV on any path Spark can read (local, HDFS, S3...).

Column names follow the same stable rule as the Polars engine (:mod:`crowdsafe.data.column_names`):
Spark's own renaming of a repeated header (``charge12``, ``charge13``) or an empty one (``_c3``)
is replaced, so one schema file matches the table on both engines.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from typing import Any

from crowdsafe.data.column_names import describe_renames, stable_names
from crowdsafe.data.column_types import settle
from crowdsafe.data.schema import AttributeType, Schema, declared_and_reading
from crowdsafe.errors import InputError, ParameterError, first_line
from crowdsafe.identity import note_line

_CSV_ENDINGS = (".csv", ".csv.gz", ".tsv", ".txt", ".data")
_URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


def spark_path(path: str | os.PathLike[str]) -> str:
    """``path`` as Spark should see it: a local path without a scheme is made absolute against
    this process's working directory (the JVM resolves relative paths against its own, which
    differs once the process has changed directory); ``hdfs://``, ``s3a://``, ``file:`` ... pass."""
    text = os.fspath(path)
    return text if _URI_SCHEME.match(text) else os.path.abspath(text)


def literal_reader(spark: Any) -> Any:
    """Spark's DataFrameReader with glob expansion off: a path is read as it is written
    (``data[1].csv`` is that file, a folder named ``runs**`` that folder), as the Polars engine
    reads it. Spark (through Hadoop) reads a path with ``* ? [ ] { }`` as a pattern unless its
    ``__globPaths__`` option is false (the option Spark's own file streams use; Spark 3.1+)."""
    return spark.read.option("__globPaths__", "false")


def csv_separator(spark: Any, path: str) -> str:
    """The field separator of the CSV table at ``path`` (a file or a folder of parts, local or a
    URI), found from its header line as the Polars engine finds it
    (:func:`crowdsafe.data.io.resolve_separator`: ``,`` ``;`` tab ``|``, a comma when none
    appears). A local file's first bytes are read here (decompressed:
    :func:`crowdsafe.data.io.sniff_format`); anything else's first line through Spark. A first
    line ``sep=;`` (Excel's hint, :mod:`crowdsafe.data.sep_line`), which Spark's CSV reader
    cannot skip, is refused in one line."""
    from crowdsafe.data.io import resolve_separator, sniff_format
    from crowdsafe.data.sep_line import sep_line

    if not _URI_SCHEME.match(path) and os.path.isfile(path):
        head = sniff_format(path)[1]
    else:
        first = literal_reader(spark).text(path).first()
        head = ("" if first is None else str(first[0])).encode("utf-8")
    excel = sep_line(head)
    if excel is not None:
        raise InputError(f"{path} starts with Excel's separator line 'sep={excel.separator}', which the Spark "
                         "engine cannot skip; remove that first line, or read the file with the Polars engine")
    return resolve_separator(None, head)


def read_frame(spark: Any, path: str, *, columns: Sequence[str] | None = None,
               missing_tokens: Sequence[str] = ("", "?", "NA")) -> Any:
    """A Spark DataFrame of the table at ``path`` (a file or a directory of part files).

    The path is literal (:func:`literal_reader`). Parquet unless the name ends like a CSV file;
    CSV is read with its own separator (:func:`csv_separator`), a header and the given
    missing-value tokens as nulls (every column as text: types come from the crowdsafe schema,
    never from Spark's inference). Column names are made stable (:func:`stable_columns`).
    ``columns``, when given, are selected and must exist.
    """
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import AnalysisException

    label, path = str(path), spark_path(path)
    name = str(path).rstrip("/").lower()
    if not _URI_SCHEME.match(label) and not os.path.exists(path):  # as the Polars engine says it
        raise InputError(f"file not found: {label}")
    try:
        if name.endswith(_CSV_ENDINGS):
            separator = csv_separator(spark, str(path))
            reader = literal_reader(spark).option("header", True).option("inferSchema", False).option("sep", separator)
            frame = reader.csv(str(path))
            header = (literal_reader(spark).option("header", False).option("sep", separator)
                      .csv(str(path)).first())  # the header as written
            written = [("" if v is None else str(v)) for v in header] if header is not None else frame.columns
            frame = stable_columns(frame, written, str(path))
            frame = frame.replace(list(missing_tokens), None) if missing_tokens else frame
        else:
            frame = literal_reader(spark).parquet(str(path))
            frame = stable_columns(zone_free(spark, frame, str(path), label), frame.columns, str(path))
    except AnalysisException as exc:
        first = first_line(exc)
        raise InputError(f"Spark cannot read {path}: {first}") from None
    except Py4JJavaError as exc:  # a file that is not Parquet (a folder of other files): the JVM's first line
        raise InputError(f"Spark cannot read {path}: {java_message(exc)}") from None
    if columns is not None:
        absent = [c for c in columns if c not in frame.columns]
        if absent:
            raise InputError(f"{path} has no column '{absent[0]}' (it has {', '.join(frame.columns)})")
        frame = frame.select(*columns)
    return frame


def parquet_zones(path: str) -> dict[str, str]:
    """The time zone of each zoned timestamp column of the Parquet table at ``path``, as the
    Polars engine reads it: the Arrow schema a Polars or pyarrow writer keeps in the file (a local
    file, or the first part file of a local folder). Spark reads such a column as instants and
    forgets the zone; a file without that schema, or one not on this machine, gives none."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if _URI_SCHEME.match(path) and not path.startswith("file:"):
        return {}
    local = path.removeprefix("file://").removeprefix("file:")
    if os.path.isdir(local):
        parts = sorted(f for f in os.listdir(local) if f.endswith(".parquet") and not f.startswith((".", "_")))
        if not parts:
            return {}
        local = os.path.join(local, parts[0])
    try:
        schema = pq.read_schema(local)
    except (OSError, pa.ArrowException):
        return {}
    return {f.name: str(f.type.tz) for f in schema if pa.types.is_timestamp(f.type) and f.type.tz}


def zone_free(spark: Any, frame: Any, path: str, label: str) -> Any:
    """``frame`` (a Parquet read) with each timestamp column Spark reads as instants held as the
    wall-clock times of the file's time zone, without it (``timestamp_ntz``), with the note the
    Polars engine prints (:func:`crowdsafe.data.column_types.zone_free`): the same values and
    the same note on both engines, whatever the Spark session's time zone. A column whose zone
    the file does not name (no Arrow schema, a remote file) is read in UTC, as Polars reads a
    Parquet column adjusted to UTC without one."""
    import polars as pl
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from crowdsafe.data.column_types import zone_note

    instants = [f.name for f in frame.schema.fields if isinstance(f.dataType, T.TimestampType)]
    if not instants:
        return frame
    found = parquet_zones(path)
    zones = {name: found.get(name, "UTC") for name in instants}
    note = zone_note(label, {name: pl.Datetime("us", zone) for name, zone in zones.items()})
    assert note is not None
    print(note_line(note), file=sys.stderr)
    session = F.lit(spark.conf.get("spark.sql.session.timeZone"))
    return frame.select(*[
        F.convert_timezone(session, F.lit(zones[c]), F.col(f"`{c.replace('`', '``')}`").cast("timestamp_ntz")).alias(c)
        if c in zones else F.col(f"`{c.replace('`', '``')}`") for c in frame.columns])


def java_message(exc: Any) -> str:
    """The first line of the message of the JVM exception behind a Py4J error (its own first line
    is only "An error occurred while calling o28.parquet.")."""
    try:
        text = str(exc.java_exception.getMessage() or "").strip()
    except Exception:  # (the JVM gone): the Python side's message
        text = ""
    return text.splitlines()[0] if text else first_line(exc)


def _unusable_kind(data_type: Any) -> str | None:
    """What a Spark column of ``data_type`` is, when crowdsafe cannot use it (the Polars rule,
    :func:`crowdsafe.data.column_types.unusable_kind`)."""
    from pyspark.sql import types as T

    kinds = (("ArrayType", "a list (nested) column"), ("MapType", "a map (nested) column"),
             ("StructType", "a struct (nested) column"), ("BinaryType", "a binary column"),
             ("DayTimeIntervalType", "a duration column"), ("YearMonthIntervalType", "a duration column"),
             ("CalendarIntervalType", "a duration column"), ("TimeType", "a time-of-day column"))
    for name, kind in kinds:
        cls = getattr(T, name, None)
        if cls is not None and isinstance(data_type, cls):
            return kind
    return None


def usable_frame(frame: Any, schema: Schema | None, qi: Sequence[str] | None, sensitive: Sequence[str] | str | None,
                 label: str) -> tuple[Any, Schema | None]:
    """``frame`` without its columns of a type crowdsafe cannot use, and ``schema`` without them:
    each is refused when the run would use it, else dropped with a note
    (:func:`crowdsafe.data.column_types.settle`, the Polars engine's rule)."""
    unusable = {f.name: kind for f in frame.schema.fields if (kind := _unusable_kind(f.dataType)) is not None}
    if not unusable:
        return frame, schema
    schema = settle(unusable, schema, qi, sensitive, label)
    return frame.select(*[f"`{c.replace('`', '``')}`" for c in frame.columns if c not in unusable]), schema


def reading_schema(schema: Schema | None, *, from_path: bool) -> tuple[Schema | None, bool | None]:
    """The declared schema and its decimal-comma option (:func:`crowdsafe.data.schema.declared_and_reading`);
    a file read by Spark with the option on is refused: Spark reads numbers with a decimal point only."""
    declared, reading = declared_and_reading(schema)
    if reading and from_path:
        raise ParameterError("the Spark engine reads numbers with a decimal point only; read the file with the "
                             "Polars engine (--engine polars) or save it with decimal points",
                             parameter="decimal_comma")
    return declared, reading


def stable_columns(frame: Any, written: Sequence[str], label: str) -> Any:
    """``frame`` with the stable names of the header ``written`` (one line on standard error
    naming each rename). Column names are part of the public schema, so the note may be shown."""
    if len(written) != len(frame.columns):
        written = frame.columns  # a header row Spark split differently: keep Spark's names
    names, renames = stable_names(written)
    if renames:
        print(note_line(describe_renames(label, renames)), file=sys.stderr)
    return frame.toDF(*names) if names != list(frame.columns) else frame


def declared_text(frame: Any, schema: Schema | None) -> Any:
    """Each categorical or ordinal attribute held as numbers as canonical text, as the Polars
    loader reads it (:func:`crowdsafe.data.coerce.declared_text`): an integer as written, a whole
    number as that integer (``1.0`` -> ``1``), NaN missing; another fraction as Spark writes it.
    The file's writer chose the column's type, often from the values."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if schema is None:
        return frame
    declared = {a.name for a in schema if a.type in (AttributeType.CATEGORICAL, AttributeType.ORDINAL)}
    columns = []
    for field in frame.schema.fields:
        column = F.col(f"`{field.name.replace('`', '``')}`")
        if field.name in declared and isinstance(field.dataType, T.NumericType):
            if isinstance(field.dataType, (T.FloatType, T.DoubleType, T.DecimalType)):
                value = F.when(~F.isnan(column), column) if not isinstance(field.dataType, T.DecimalType) else column
                whole = value.try_cast("long")
                column = F.when(whole.cast("double") == value.cast("double"), whole.cast("string")).otherwise(
                    value.cast("string"))
            else:
                column = column.cast("string")
            column = column.alias(field.name)
        columns.append(column)
    return frame.select(*columns)
