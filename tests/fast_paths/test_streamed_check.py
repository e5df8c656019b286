"""``crowdsafe check`` and ``crowdsafe publish --plan-only`` of a file read whole (the reference
twin: ``crowdsafe.data.load``, ``models.check_report.check_report``) or batch by batch
(``crowdsafe.data.streamed_table``; ``models.check_report.streamed_check_report``, the classes
from ``EquivalenceClasses.of_frequency_table``): on either side of ``reads_eagerly``
(``EAGER_BYTES`` patched to the file's size − 1, the size, + 1) the same printed report, text and
JSON, byte for byte, and the same refusals."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from test_streamed_publish import _csv, _rows, at_thresholds, declared_table, spied

import crowdsafe.data.streamed_table as streamed_table
import crowdsafe.models.check_report as check_report
from crowdsafe import cli
from crowdsafe.data import Dataset, Schema
from crowdsafe.models import EquivalenceClasses


def _printed(argv: list[str], capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _twins(argv: list[str], path, capsys, monkeypatch) -> dict:
    """The output (text and JSON) at EAGER_BYTES = size − 1 (streamed), size and size + 1 (read
    whole): equal; ``streamed``: whether the streamed check gave a report, at each call (None:
    it handed the rows to the in-memory report); ``read``: whether the streamed read took the file."""
    monkeypatch.setenv("COLUMNS", "200")
    streamed = spied(monkeypatch, check_report, "streamed_check_report")  # api.check imports it when called
    reads = spied(monkeypatch, streamed_table, "read_streamed")
    results = at_thresholds(path, monkeypatch, lambda: [_printed([*argv, *fmt], capsys) for fmt in ([], ["--json"])])
    return {"printed": results[0], "streamed": streamed, "read": reads}


def _check(path, *options: str) -> list[str]:
    return ["check", str(path), *options]


def _plan(path, *options: str) -> list[str]:
    return ["publish", str(path), "--epsilon", "1", "--delta", "1e-6", "--plan-only", *options]


@pytest.mark.slow
def test_check_csv_with_every_model(tmp_path, capsys, monkeypatch):
    path = _csv(tmp_path / "t.csv", _rows(5000))
    out = _twins(_check(path, "--qi", "age,sex,city,day", "--sensitive", "income,flag", "--k", "5",
                        "--population-size", "90000"), path, capsys, monkeypatch)
    assert out["streamed"] == [True, True] and out["printed"][0][0] == 0
    assert "k = " in out["printed"][0][1]


@pytest.mark.slow
@pytest.mark.parametrize("missing", ["keep", "drop"])
def test_check_missing_and_nan_in_float_columns(tmp_path, capsys, monkeypatch, missing):
    """NaN made missing, a float quasi-identifier and sensitive attribute (no packed key in memory:
    the rows twin there), missing values kept or dropped (the other columns' counts too)."""
    path = _csv(tmp_path / "t.csv", _rows(4000, seed=7).with_columns(
        pl.Series("zero", np.random.default_rng(1).choice([0.0, -0.0, 2.5], 4000))))
    out = _twins(_check(path, "--qi", "score,zero,day", "--sensitive", "income", "--missing", missing),
                 path, capsys, monkeypatch)
    assert out["streamed"] == [True, True]


def test_check_parquet_types_and_population(tmp_path, capsys, monkeypatch):
    frame = _rows(3000, seed=9).with_columns(
        pl.col("city").cast(pl.Categorical), pl.col("sex").cast(pl.Enum(["Female", "Male"])),
        pl.col("age").cast(pl.Int8), pl.col("score").cast(pl.Float32))
    path = tmp_path / "t.parquet"
    frame.write_parquet(path)
    population = tmp_path / "people.parquet"
    pl.concat([frame, frame.head(500)]).write_parquet(population)
    out = _twins(_check(path, "--qi", "age,sex,city", "--sensitive", "income", "--population", str(population)),
                 path, capsys, monkeypatch)
    assert out["streamed"] == [True, True] and "journalist" in out["printed"][0][1]


@pytest.mark.slow
def test_check_declared_schema_with_hierarchies(tmp_path, capsys, monkeypatch):
    path, schema = declared_table(tmp_path)
    out = _twins(_check(path, "--schema", str(schema), "--l", "3", "--ground", "ordered"), path, capsys, monkeypatch)
    assert out["streamed"] == [True, True]


def test_check_key_too_wide_holds_the_rows(tmp_path, capsys, monkeypatch):
    """Every column a quasi-identifier (inferred schema) on a wide table: the classes' key does
    not fit 64 bits, the streamed check hands the rows it read to the in-memory report."""
    rng = np.random.default_rng(4)
    frame = pl.DataFrame({f"c{j}": rng.integers(0, 60_000, 2000) for j in range(7)})
    path = tmp_path / "wide.csv"
    frame.write_csv(path)
    out = _twins(_check(path), path, capsys, monkeypatch)
    assert out["streamed"] == [False, False] and out["read"][0] is True


@pytest.mark.parametrize("options", [
    ("--missing", "error"), ("--qi", "age,sex", "--sensitive", "sex"), ("--qi", "age,salary"),
    ("--qi", "age,sex", "--l", "0"), ("--qi", "age", "--sensitive", "income", "--ground", "manhattan"),
])
@pytest.mark.slow
def test_check_refusals(tmp_path, capsys, monkeypatch, options):
    path = _csv(tmp_path / "t.csv", _rows(2000))
    out = _twins(_check(path, *options), path, capsys, monkeypatch)
    code, _, err = out["printed"][0]
    assert code == 2 and err.startswith("crowdsafe: error: ")


def test_check_single_row_and_one_class(tmp_path, capsys, monkeypatch):
    path = tmp_path / "one.csv"
    path.write_text("a,b\n1,x\n", encoding="utf-8")
    out = _twins(_check(path), path, capsys, monkeypatch)
    assert "single row" in out["printed"][0][1]


@pytest.mark.parametrize("options", [
    (), ("--qi", "age,sex,city", "--sensitive", "income"),
    ("--columns", "age,sex", "--columns", "age,city,day,score"),
    ("--qi", "age,city", "--scheme", "coarse"),
    ("--objective", "classification", "--target", "income", "--qi", "age,sex", "--sensitive", "income"),
    ("--qi", "age,salary"),
])
@pytest.mark.slow
def test_plan_only(tmp_path, capsys, monkeypatch, options):
    path = _csv(tmp_path / "t.csv", _rows(3000, seed=5))
    out = _twins(_plan(path, *options), path, capsys, monkeypatch)
    refused = "age,salary" in options  # refused by the streamed read's load of the domain, before a pass
    assert out["printed"][0][0] == (2 if refused else 0) and out["read"][:1] == ([] if refused else [True])


def test_plan_only_declared_schema_parquet(tmp_path, capsys, monkeypatch):
    path = tmp_path / "t.parquet"
    _rows(3000, seed=8).write_parquet(path)
    schema = tmp_path / "schema.toml"
    schema.write_text('[attributes.age]\ntype = "numeric"\nhierarchy = { widths = [5, 10, 20] }\n'
                      '[attributes.ref]\nrole = "identifier"\ntype = "categorical"\n', encoding="utf-8")
    out = _twins(_plan(path, "--schema", str(schema), "--beta", "0.3"), path, capsys, monkeypatch)
    assert out["read"][0] is True and out["printed"][0][0] == 0


@pytest.mark.parametrize("seed", range(6))
def test_classes_of_a_frequency_table_are_the_rows(seed):
    """EquivalenceClasses.of_frequency_table (the distinct tuples, weighted, in any order) and
    EquivalenceClasses of the rows: the same sizes, sensitive counts and column counts."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    frame = pl.DataFrame({
        "a": rng.integers(0, 1 + int(rng.integers(1, 40)), n),
        "b": pl.Series(["x", "y", None, "z"]).gather(rng.integers(0, 4, n)),
        "f": rng.choice([0.5, 1.5, -0.0, 0.0], n),
        "s": rng.choice(["p", "q", "r"], n),
        "t": rng.integers(0, 5, n),
    }).with_columns(pl.when(pl.Series(rng.random(n) < 0.1)).then(None).otherwise(pl.col("f")).alias("f"))
    dataset = Dataset(frame, Schema.infer(frame).with_roles(qi=["a", "b", "f"], sensitive=["s", "t"]))
    rows = EquivalenceClasses(dataset, sensitive=["s", "t"])
    counted = frame.group_by(["a", "b", "f", "s", "t"]).len().sample(fraction=1.0, shuffle=True, seed=seed)
    tuples = dataset.with_frame(counted.drop("len"))
    given = EquivalenceClasses.of_frequency_table(tuples, counted.get_column("len").to_numpy(), sensitive=["s", "t"])
    assert given is not None
    assert np.array_equal(given.sizes, rows.sizes) and given.rows == rows.rows == n
    for attribute in ("s", "t"):
        a, b = given.sensitive(attribute), rows.sensitive(attribute)
        assert all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("cls", "code", "count", "overall"))
        assert a.values.equals(b.values)
    assert given.published().equals(rows.published())
    twin = check_report.column_counts(frame, ["a", "b", "f", "s", "t"])
    assert given.column_counts() == twin
