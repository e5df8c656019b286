"""Timestamps with a time zone in a Parquet file, on Spark as on Polars.

The Polars engine reads a zoned column as the wall-clock times of its zone, without the zone,
with a note (crowdsafe.data.column_types.zone_free). Spark reads the column as instants and
forgets the zone the file names: until 2026-11-30 the Spark engine read a column in
Europe/Berlin as UTC times (00:30 on 1 March in Berlin was 23:30 on 29 February), so a date, a
query's filter or a published class differed from the Polars engine's, and the note named UTC
and "the data" (or the Spark session's own time zone) instead of the file's zone and name."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from crowdsafe.data import load
from crowdsafe.engines.spark.typed_table import load_table

pytestmark = pytest.mark.spark

LOCAL = [dt.datetime(2024, 3, 1, 0, 30), dt.datetime(2024, 6, 30, 23, 45), dt.datetime(2024, 1, 1, 0, 15)]


def _zoned(path, zone: str = "Europe/Berlin"):
    pl.DataFrame({"when": LOCAL, "dx": ["A", "B", "C"]}).with_columns(
        pl.col("when").dt.replace_time_zone(zone)).write_parquet(path)
    return path


def _as_text(frame, column: str, form: str) -> list[str]:
    from pyspark.sql import functions as F

    return sorted(r[0] for r in frame.select(F.date_format(column, form)).collect())


@pytest.mark.parametrize("folder", [False, True])
def test_a_zoned_parquet_column_reads_as_on_polars(spark, tmp_path, capsys, folder):
    path = tmp_path / "t.parquet"
    if folder:  # a folder of part files, as Spark writes tables (the Polars engine reads the file)
        path.mkdir()
        file = _zoned(path / "part-0.parquet")
    else:
        file = _zoned(path)
    polars = load(file).frame.get_column("when")
    polars_note = capsys.readouterr().err
    table = load_table(spark, str(path))
    spark_note = capsys.readouterr().err
    assert _as_text(table.frame, "when", "yyyy-MM-dd HH:mm:ss") == sorted(
        polars.dt.strftime("%Y-%m-%d %H:%M:%S").to_list()) == sorted(t.strftime("%Y-%m-%d %H:%M:%S") for t in LOCAL)
    assert "'when' (Europe/Berlin) read as times of day in that zone" in spark_note
    if not folder:
        assert spark_note == polars_note
    # declared a date: each value's date in its zone, as the Polars engine reads it
    schema = tmp_path / "s.toml"
    schema.write_text('[attributes.when]\ntype = "date"\n')
    dates = load(file, schema=schema).frame.get_column("when")
    assert _as_text(load_table(spark, str(path), schema=schema).frame, "when", "yyyy-MM-dd") == sorted(
        dates.dt.strftime("%Y-%m-%d").to_list()) == ["2024-01-01", "2024-03-01", "2024-06-30"]


def test_the_session_time_zone_does_not_change_the_values(spark, tmp_path, capsys):
    path = _zoned(tmp_path / "t.parquet", "Asia/Tokyo")
    before = spark.conf.get("spark.sql.session.timeZone")
    try:
        spark.conf.set("spark.sql.session.timeZone", "America/New_York")
        read = _as_text(load_table(spark, str(path)).frame, "when", "yyyy-MM-dd HH:mm:ss")
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
    assert read == sorted(t.strftime("%Y-%m-%d %H:%M:%S") for t in LOCAL)
    assert "'when' (Asia/Tokyo)" in capsys.readouterr().err
