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


def test_a_declared_categorical_enum_column_declares_no_cells(tmp_path):
    """Found by the sweep: an Enum column's categories were a histogram's public cells even
    where the schema declares the column plain categorical; an Enum built from the values then
    added a cell for a new value, δ = 0, fit. Declared categorical: no public cells (refused at
    δ = 0; thresholded at δ > 0). Inferred: its order, marked, not fit."""
    from crowdsafe import api
    from crowdsafe.errors import ParameterError

    def table(values: list[str]) -> Path:
        path = tmp_path / f"t{len(values)}.parquet"
        pl.DataFrame({"sex": pl.Series(values, dtype=pl.Enum(sorted(set(values))))}).write_parquet(path)
        return path

    schema = tmp_path / "schema.toml"
    schema.write_text('[attributes.sex]\ntype = "categorical"\n')
    for path in (table(["F", "M"] * 50), table(["F", "M"] * 50 + ["Other"])):
        with pytest.raises(ParameterError, match="not public"):
            api.query(str(path), "histogram sex", epsilon=1.0, schema=str(schema), ledger=None)
        inferred = api.query(str(path), "histogram sex", epsilon=1.0, ledger=None)
        assert not inferred.fit_for_release and "sex" in inferred.unreviewed_schema


def test_the_enum_rule_can_fail(tmp_path, monkeypatch):
    """Broken variant: the Enum's categories as cells again: the declared column is answered."""
    from crowdsafe import api
    from crowdsafe.mechanisms import queries

    original = queries.histogram_domain

    def with_enum(dataset, dimension, domain=None, *, dtype=None):
        values, source = original(dataset, dimension, domain, dtype=dtype)
        if values is None and isinstance(dtype, pl.Enum):
            return dtype.categories.to_list(), "categories of the Enum column"
        return values, source

    monkeypatch.setattr(queries, "histogram_domain", with_enum)
    # (the check before the read types the table as declared, without the Enum: a second guard, left out here)
    monkeypatch.setattr("crowdsafe.drivers.query.declared_shell", lambda *args: None)
    path = tmp_path / "t.parquet"
    pl.DataFrame({"sex": pl.Series(["F", "M", "Other"], dtype=pl.Enum(["F", "M", "Other"]))}).write_parquet(path)
    schema = tmp_path / "schema.toml"
    schema.write_text('[attributes.sex]\ntype = "categorical"\n')
    answer = api.query(str(path), "histogram sex", epsilon=1.0, schema=str(schema), ledger=None)
    assert answer.value.height == 3
