"""Reading tables into Spark: Parquet or CSV on any path Spark can read (local, HDFS, S3...)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from crowdsafe.errors import InputError

_CSV_ENDINGS = (".csv", ".csv.gz", ".tsv", ".txt", ".data")


def read_frame(spark: Any, path: str, *, columns: Sequence[str] | None = None,
               missing_tokens: Sequence[str] = ("", "?", "NA")) -> Any:
    """A Spark DataFrame of the table at ``path`` (a file or a directory of part files).

    Parquet unless the name ends like a CSV file; CSV is read with a header and the given
    missing-value tokens as nulls (every column as text: types come from the crowdsafe schema,
    never from Spark's inference). ``columns``, when given, are selected and must exist.
    """
    from pyspark.errors import AnalysisException

    name = str(path).rstrip("/").lower()
    try:
        if name.endswith(_CSV_ENDINGS):
            reader = spark.read.option("header", True).option("inferSchema", False)
            frame = reader.csv(str(path))
            frame = frame.replace(list(missing_tokens), None) if missing_tokens else frame
        else:
            frame = spark.read.parquet(str(path))
    except AnalysisException as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"Spark cannot read {path}: {first}") from None
    if columns is not None:
        absent = [c for c in columns if c not in frame.columns]
        if absent:
            raise InputError(f"{path} has no column '{absent[0]}' (it has {', '.join(frame.columns)})")
        frame = frame.select(*columns)
    return frame
