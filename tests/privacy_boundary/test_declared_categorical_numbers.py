"""A declared categorical column held as numbers is read as canonical text, whatever its file type.

Found by a neighbouring-table sweep: a Parquet file written by pandas holds whole numbers as
int64, but as float64 once one value is missing. A column declared ``categorical`` kept the
file's type, so D published ``1`` and D plus one row with a missing grade published ``1.0``:
the release's format told that an unpublished row had a missing value. Declared categorical
and ordinal columns held as numbers are now text, an integer as written and a whole float as
that integer, on every reader (in memory, streamed, Spark). Each with a broken variant.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from crowdsafe.data import coerce, load, pipeline
from crowdsafe.data import streamed_table as streamed

SCHEMA = '[attributes.grade]\ntype = "categorical"\n[attributes.sex]\ntype = "categorical"\n'


def _pair(tmp_path: Path) -> tuple[Path, Path, Path]:
    """D (grade as int64) and D plus one row whose grade is missing (grade as float64, as pandas
    writes it), as Parquet files; and the schema."""
    rng = np.random.default_rng(1)
    grade, sex = rng.integers(1, 4, 200), rng.choice(["F", "M"], 200)
    first, second = tmp_path / "d.parquet", tmp_path / "d1.parquet"
    pl.DataFrame({"grade": grade, "sex": sex}).write_parquet(first)
    pl.DataFrame({"grade": [*grade.astype(float), np.nan], "sex": [*sex, "F"]}).write_parquet(second)
    schema = tmp_path / "schema.toml"
    schema.write_text(SCHEMA)
    return first, second, schema


def _grades(frame: pl.DataFrame) -> list[str]:
    """The distinct grades as a release writes them."""
    return sorted(set(frame.get_column("grade").drop_nulls().cast(pl.String).to_list()))


def test_the_values_are_the_same_text_in_both_files(tmp_path):
    first, second, schema = _pair(tmp_path)
    assert pl.read_parquet(second).schema["grade"] == pl.Float64  # the file's writer chose another type
    for path in (first, second):
        assert _grades(load(path, schema=str(schema)).frame) == ["1", "2", "3"]


def test_the_streamed_reader_reads_them_the_same(tmp_path, monkeypatch):
    from crowdsafe.data import streaming

    first, second, schema = _pair(tmp_path)
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    for path in (first, second):
        table = streamed.read_streamed(path, schema=load(first, schema=str(schema)).schema)
        assert table is not None
        assert _grades(table.rows.collect()) == ["1", "2", "3"]


def test_canonical_number_text():
    frame = pl.DataFrame({"x": [1.0, 2.5, None, float("nan"), -3.0, 1e300]})
    texts = frame.select(coerce.number_text(pl.col("x"), pl.Float64)).to_series().to_list()
    assert texts[:5] == ["1", "2.5", None, None, "-3"]
    assert float(texts[5]) == 1e300


def test_the_text_rule_can_fail(tmp_path, monkeypatch):
    """Broken variant: the file's type kept, as before: D' reads 1.0 where D reads 1."""
    monkeypatch.setattr(pipeline, "declared_text", lambda frame, schema: frame)
    monkeypatch.setattr(coerce, "declared_text", lambda frame, schema: frame)
    first, second, schema = _pair(tmp_path)
    assert _grades(load(first, schema=str(schema)).frame) != _grades(load(second, schema=str(schema)).frame)


@pytest.mark.spark
def test_spark_reads_them_the_same(spark, tmp_path):
    from crowdsafe.engines.spark.table import spark_table
    from crowdsafe.engines.spark.typed_table import load_table

    first, second, schema = _pair(tmp_path)
    for path in (first, second):
        typed = load_table(spark, str(path), schema=str(schema))
        assert sorted(r[0] for r in typed.frame.select("grade").distinct().collect() if r[0] is not None) == [
            "1", "2", "3"]
        table = spark_table(spark, str(path), schema=str(schema), count=False)
        assert sorted(r[0] for r in table.frame.select("grade").distinct().collect() if r[0] is not None) == [
            "1", "2", "3"]
