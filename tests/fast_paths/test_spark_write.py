"""The Spark engine's two writers of a release (engines/spark/write): the driver writes the part
files of a local Parquet release from its classes (``write_class_parts``), Spark writes any other
(``class_rows``); on either side of the rule ``driver_writes`` the same rows are written, with the
same column types as Spark and Polars read them back, across part files and row groups
(``ROWS_PER_PARTITION``, ``ROW_GROUP_ROWS`` patched small)."""

from __future__ import annotations

import datetime

import numpy as np
import polars as pl
import pytest

from crowdsafe.engines.spark import write

pytestmark = pytest.mark.spark



CLASSES = pl.DataFrame({
    "text": ["a", None, "=b", "c"],
    "n": pl.Series([1, -2, 3, 40], dtype=pl.Int64),
    "small": pl.Series([1, 2, 3, 4], dtype=pl.Int32),
    "flag": [True, False, None, True],
    "x": [0.5, 1.25, -3.0, None],
    "day": [datetime.date(2020, 1, d) for d in (1, 2, 3, 4)],
})
SIZES = np.array([3, 1, 7, 4], dtype=np.int64)


def _write(spark, tmp_path, name, classes, sizes, driver):
    target = str(tmp_path / name)
    frame = write.class_rows(spark, classes, sizes)
    write.write_releases(spark, [frame], ["{}"], [target], classes=[(classes, sizes)] if driver else None)
    return target


def _read(spark, target):
    rows = pl.read_parquet(f"{target}/*.parquet")
    on_spark = spark.read.parquet(target)
    return rows, [(f.name, f.dataType.simpleString()) for f in on_spark.schema.fields], on_spark.count()


@pytest.mark.parametrize("rows_per_part, group_rows", [(2_000_000, 1 << 20), (4, 3), (5, 1), (15, 15)])
def test_driver_and_spark_write_the_same_rows(spark, tmp_path, monkeypatch, rows_per_part, group_rows):
    monkeypatch.setattr(write, "ROWS_PER_PARTITION", rows_per_part)
    monkeypatch.setattr(write, "ROW_GROUP_ROWS", group_rows)
    on_driver = _write(spark, tmp_path, "driver.parquet", CLASSES, SIZES, True)
    by_spark = _write(spark, tmp_path, "spark.parquet", CLASSES, SIZES, False)
    parts = sorted(p.name for p in (tmp_path / "driver.parquet").glob("part-*.parquet"))
    assert len(parts) == -(-int(SIZES.sum()) // rows_per_part)
    assert not list((tmp_path / "driver.parquet").glob("*.crc"))
    (rows, schema, count), (expected, spark_schema, spark_count) = _read(spark, on_driver), _read(spark, by_spark)
    assert rows.schema == expected.schema and schema == spark_schema and count == spark_count == SIZES.sum()
    assert rows.equals(CLASSES.gather(np.repeat(np.arange(len(SIZES)), SIZES)))  # in class order
    assert rows.sort(pl.all(), nulls_last=True).equals(expected.sort(pl.all(), nulls_last=True))


def test_an_empty_release_is_one_empty_part_with_the_schema(spark, tmp_path):
    empty, none = CLASSES.head(0), np.zeros(0, dtype=np.int64)
    on_driver = _write(spark, tmp_path, "driver.parquet", empty, none, True)
    by_spark = _write(spark, tmp_path, "spark.parquet", empty, none, False)
    (rows, schema, count), (expected, spark_schema, _) = _read(spark, on_driver), _read(spark, by_spark)
    assert rows.height == count == 0 and rows.schema == expected.schema and schema == spark_schema


def test_text_categories_are_written_as_text(spark, tmp_path):
    classes = pl.DataFrame({"c": pl.Series(["x", "y"], dtype=pl.Categorical)})
    target = str(tmp_path / "cat.parquet")
    write.write_releases(spark, [spark.range(1)], ["{}"], [target], classes=[(classes, np.array([2, 1]))])
    assert pl.read_parquet(f"{target}/*.parquet").equals(pl.DataFrame({"c": ["x", "x", "y"]}))


def test_the_rule(spark, tmp_path):
    files = write._Files(spark, str(tmp_path / "r.parquet"))
    assert files.local
    assert write.driver_writes(CLASSES, str(tmp_path / "r.parquet"), files)
    assert not write.driver_writes(None, str(tmp_path / "r.parquet"), files)
    assert not write.driver_writes(CLASSES, str(tmp_path / "r.csv"), files)  # CSV: Spark's formula-safe writer
    stamped = CLASSES.with_columns(pl.lit(datetime.datetime(2020, 1, 1)).alias("t"))
    assert not write.driver_writes(stamped, str(tmp_path / "r.parquet"), files)  # Spark's own timestamp type
