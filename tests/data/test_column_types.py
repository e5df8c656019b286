"""Column types crowdsafe cannot use (issue 33, point 6): a nested, binary, duration or time
column is refused in one line when the run would use it, dropped with a note when it does not
(left out by --qi/--sensitive, declared an identifier); Decimal, 128-bit integers and the Null type
are converted. Whole and batch-by-batch reads decide the same."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import polars as pl
import pytest

from crowdsafe import api, cli
from crowdsafe.data import Schema, load
from crowdsafe.data.column_types import unusable_kind
from crowdsafe.data.streamed_table import load_or_stream
from crowdsafe.errors import SchemaError

BASE = {"age": [20 + i % 40 for i in range(80)], "sex": ["FM"[i % 2] for i in range(80)]}


def _parquet(tmp_path, name, **extra):
    path = tmp_path / name
    pl.DataFrame(BASE).with_columns(**extra).write_parquet(path)
    return path


@pytest.mark.parametrize(("dtype", "kind"), [
    (pl.List(pl.Int64), "a list (nested) column"), (pl.Array(pl.Int64, 2), "a list (nested) column"),
    (pl.Struct({"a": pl.Int64}), "a struct (nested) column"), (pl.Binary, "a binary column"),
    (pl.Duration("us"), "a duration column"), (pl.Time, "a time-of-day column"),
    (pl.Object, "a column of Python objects"),
    (pl.Int64, None), (pl.Float64, None), (pl.String, None), (pl.Boolean, None), (pl.Date, None),
    (pl.Datetime("us"), None), (pl.Categorical, None), (pl.Decimal(10, 2), None), (pl.Null, None),
])
def test_the_kinds(dtype, kind):
    assert unusable_kind(dtype) == kind


EXTRAS = {
    "tags": lambda: pl.concat_list("age", "age"),
    "place": lambda: pl.struct("age", "sex"),
    "blob": lambda: pl.col("sex").cast(pl.Binary),
    "stay": lambda: pl.duration(days=pl.col("age")),
    "seen": lambda: pl.lit(dt.time(8, 30)),
}


@pytest.mark.parametrize("column", list(EXTRAS))
def test_refused_when_the_run_would_use_it(tmp_path, column):
    path = _parquet(tmp_path, "t.parquet", **{column: EXTRAS[column]()})
    with pytest.raises(SchemaError) as caught:
        load(path)  # no schema: every column a quasi-identifier
    message = str(caught.value)
    assert message.startswith(f"column '{column}' of {path} is a") and "\n" not in message
    assert "declare it role = \"identifier\"" in message
    with pytest.raises(SchemaError, match=f"column '{column}'"):
        load(path, qi=["age"], sensitive=[column])


@pytest.mark.parametrize("column", list(EXTRAS))
def test_dropped_with_a_note_when_the_run_does_not_need_it(tmp_path, column, capsys):
    path = _parquet(tmp_path, "t.parquet", **{column: EXTRAS[column]()})
    dataset = load(path, qi=["age", "sex"])
    assert dataset.columns == ["age", "sex"] and dataset.n_rows == 80
    assert f"note: column '{column}' of {path} is not read" in capsys.readouterr().err
    declared = Schema.of({"age": "numeric", "sex": "categorical", column: "categorical"}, identifiers=[column])
    assert load(path, schema=declared).columns == ["age", "sex"]


def test_streamed_reads_decide_the_same(tmp_path, monkeypatch, capsys):
    from crowdsafe.data import streaming

    path = _parquet(tmp_path, "t.parquet", tags=EXTRAS["tags"]())
    whole = load(path, qi=["age", "sex"])
    whole_note = capsys.readouterr().err
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    streamed = load_or_stream(path, qi=["age", "sex"])
    assert not hasattr(streamed, "frame") and streamed.rows.collect().equals(whole.frame)
    assert capsys.readouterr().err == whole_note
    with pytest.raises(SchemaError) as streamed_refusal:
        load_or_stream(path)
    monkeypatch.setattr(streaming, "EAGER_BYTES", 1 << 28)
    with pytest.raises(SchemaError) as whole_refusal:
        load_or_stream(path)
    assert str(streamed_refusal.value) == str(whole_refusal.value)


def test_wide_numbers_and_null_columns_are_converted(tmp_path):
    frame = pl.DataFrame({
        "amount": pl.Series([decimal.Decimal("1.50"), decimal.Decimal("2.25")], dtype=pl.Decimal(10, 2)),
        "big": pl.Series([1, 2], dtype=pl.Int128),
        "nothing": pl.Series([None, None], dtype=pl.Null),
    })
    frame.write_parquet(tmp_path / "w.parquet")
    loaded = load(tmp_path / "w.parquet").frame
    assert loaded.schema == pl.Schema({"amount": pl.Float64, "big": pl.Float64, "nothing": pl.String})
    assert loaded.get_column("amount").to_list() == [1.5, 2.25] and loaded.get_column("big").to_list() == [1.0, 2.0]


def test_commands_name_or_drop_it(tmp_path, capsys):
    path = _parquet(tmp_path, "t.parquet", tags=EXTRAS["tags"]())
    assert cli.main(["check", str(path), "--k", "2"]) == 2
    assert capsys.readouterr().err.startswith("crowdsafe: error: column 'tags' of ")
    assert cli.main(["check", str(path), "--k", "2", "--qi", "age,sex", "--json"]) == 0
    out = capsys.readouterr().out
    assert [a["name"] for a in json.loads(out)["attributes"]] == ["age", "sex"]
    release = api.anonymize(path, k=2, qi=["age", "sex"])
    assert release.frame.columns == ["age", "sex"]
    assert api.check(pl.read_parquet(path), qi=["age"]).to_dict()["rows"] == 80  # a frame given in Python too
