"""A DP query of a file read whole (``crowdsafe.data.load`` + ``polars_aggregate``: the reference
twin) or batch by batch (``crowdsafe.data.streamed_table`` + ``crowdsafe.engines.streamed_query``):
on either side of ``reads_eagerly`` (``EAGER_BYTES`` patched to the file's size − 1, the size,
+ 1) the same answer (value, notes, custodian-only facts) and the same ledger rows (the dataset's
keyed identity, the entry), with the same seed, for every query kind."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from test_streamed_publish import _csv
from test_streamed_publish import _rows as _publish_rows

import crowdsafe.data.streamed_table as streamed_table
from crowdsafe import api
from crowdsafe.data import Schema, streaming
from crowdsafe.errors import CrowdsafeError
from crowdsafe.mechanisms.query_aggregates import histogram_exact
from crowdsafe.privacy.ledger import Ledger


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """The ledger every run starts from (a copy each): one identity key, so identities compare."""
    with Ledger(tmp_path_factory.mktemp("ledger") / "template.ledger") as ledger:
        return Path(ledger.path)


def _rows(n: int = 3000, seed: int = 2) -> pl.DataFrame:
    """The streamed publish's test rows, with a person column (about three rows a household)."""
    rows = _publish_rows(n, seed).drop("flag", "ref")
    return rows.insert_column(5, pl.Series("household", np.random.default_rng(seed + 1).integers(0, n // 3, n)))


# every query kind: (text, options)
QUERIES = {
    "count": ("count", {}),
    "count-filtered": ("count where age >= 30 and city in ('Lyon', 'Nice') and day >= '2020-02-01'", {}),
    "count-change": ("count where sex = 'Male'", {"neighbours": "change"}),
    "sum-integer": ("sum(age) clamp 20..60", {}),
    "sum-real": ("sum(score) clamp -2.5..7.25 where city is not null", {}),
    "mean": ("mean(score) clamp 0..10", {}),
    "mean-gaussian": ("mean(age) clamp 20..60", {"mechanism": "gaussian", "delta": 1e-6}),
    "histogram-values": ("histogram sex in ('Female', 'Male'), city in ('Lyon', 'Paris', 'Nice')", {}),
    "histogram-bins-gaussian": ("histogram age[0..100 by 10]", {"mechanism": "gaussian", "delta": 1e-6}),
    "histogram-private": ("histogram city, income", {"delta": 1e-6}),
    "histogram-private-many": ("histogram age", {"delta": 1e-3}),
    "quantile": ("quantile(score, 0.9) clamp 0..10", {}),
    "median": ("median(age) clamp 17..90 where sex = 'Female'", {}),
    "partition": ("count where sex = 'Male'", {"partition": "sex"}),
}


def _answer(path: Path, template: Path, work: Path, text: str, **options) -> dict:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    shutil.copy(template, work / "l.ledger")
    (work / "l.ledger").chmod(0o600)
    try:
        answer = api.query(str(path), text, epsilon=1.0, randomness=7, ledger=str(work / "l.ledger"),
                           budget=(100.0, 1e-2), **options)
    except CrowdsafeError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    public = answer.as_dict(custodian=True)
    public["ledger"].pop("path")
    with sqlite3.connect(work / "l.ledger") as con:
        ledger = [con.execute("select fingerprint, name from datasets").fetchall(),
                  con.execute("select fingerprint, kind, description, mechanism, epsilon, delta, neighbours, "
                              "partition_key, part, seeded, status, details, outcome from entries").fetchall()]
    return {"answer": json.dumps(public, sort_keys=True, default=str), "ledger": ledger}


def _twins(path: Path, template: Path, tmp_path: Path, monkeypatch, text: str, **options) -> dict:
    """The answers at EAGER_BYTES = size − 1 (streamed), size and size + 1 (read whole): equal.
    ``streamed``: True when the one streamed try read the file, else the tries' outcomes."""
    tries: list[bool] = []
    read = streamed_table.read_streamed
    monkeypatch.setattr(streamed_table, "read_streamed", lambda *a, **k: _noted(tries, read(*a, **k)))
    size = streaming.disk_bytes(path)
    answers = {}
    for limit in (size - 1, size, size + 1):
        monkeypatch.setattr(streaming, "EAGER_BYTES", limit)
        answers[streaming.reads_eagerly(path), limit] = _answer(path, template, tmp_path / "run", text, **options)
    assert list(answers) == [(False, size - 1), (True, size), (True, size + 1)]
    first, *others = answers.values()
    assert all(other == first for other in others)
    return {**first, "streamed": tries == [True] if "error" not in first else tries}


def _noted(tries: list[bool], table: object) -> object:
    tries.append(table is not None)
    return table


@pytest.fixture(scope="module")
def csv_file(tmp_path_factory) -> Path:
    return _csv(tmp_path_factory.mktemp("csv") / "t.csv", _rows())


@pytest.fixture(scope="module")
def parquet_file(tmp_path_factory) -> Path:
    frame = _rows(2500, seed=9).with_columns(
        pl.col("city").cast(pl.Categorical), pl.col("sex").cast(pl.Enum(["Female", "Male"])),
        pl.col("age").cast(pl.Int8), pl.col("score").cast(pl.Float32))
    path = tmp_path_factory.mktemp("parquet") / "t.parquet"
    frame.write_parquet(path)
    return path


@pytest.mark.parametrize("kind", list(QUERIES))
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_csv_every_kind(kind, csv_file, template, tmp_path, monkeypatch):
    text, options = QUERIES[kind]
    out = _twins(csv_file, template, tmp_path, monkeypatch, text, **options)
    assert out["streamed"] is True and out["ledger"][1][0][10] == "completed"


@pytest.mark.parametrize("kind", ["count-filtered", "sum-integer", "mean", "histogram-values", "histogram-private",
                                  "quantile"])
def test_parquet_types(kind, parquet_file, template, tmp_path, monkeypatch):
    text, options = QUERIES[kind]
    out = _twins(parquet_file, template, tmp_path, monkeypatch, text, **options)
    assert out["streamed"] is True


@pytest.mark.parametrize("kind", ["count", "sum-real", "histogram-private", "quantile"])
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_missing_dropped(kind, csv_file, template, tmp_path, monkeypatch):
    text, options = QUERIES[kind]
    out = _twins(csv_file, template, tmp_path, monkeypatch, text, missing="drop", **options)
    assert out["streamed"] is True


def test_missing_error_same_message(csv_file, template, tmp_path, monkeypatch):
    out = _twins(csv_file, template, tmp_path, monkeypatch, "count", missing="error")
    assert "rows with missing values (first in column 'city')" in out["error"]


@pytest.mark.parametrize("kind", ["count", "count-filtered", "sum-integer", "histogram-private", "median"])
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_person_identifier_bounds_the_same_rows(kind, csv_file, template, tmp_path, monkeypatch):
    """c rows per person, chosen by random keys drawn in row order: the streamed query collects the
    rows the filter keeps in file order, so the same rows are kept."""
    schema = dataclasses.replace(Schema.infer(pl.read_csv(csv_file, n_rows=10)), person_id="household")
    text, options = QUERIES[kind]
    out = _twins(csv_file, template, tmp_path, monkeypatch, text, schema=schema, max_rows_per_person=2, **options)
    assert out["streamed"] is True and "rows_dropped_by_contribution_bound" in out["answer"]


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_declared_identifier_refused_and_name_warning(tmp_path, template, monkeypatch):
    """A column the schema declares an identifier is refused before the ledger is touched; an
    inferred column named like one adds the same warning."""
    path = _csv(tmp_path / "t.csv", _rows(1500, seed=4).with_columns(
        pl.format("p{}@example.org", pl.col("household")).alias("email")))
    schema = tmp_path / "schema.toml"
    schema.write_text('[attributes.email]\nrole = "identifier"\ntype = "categorical"\n', encoding="utf-8")
    refused = _twins(path, template, tmp_path, monkeypatch, "count where email is not null", schema=str(schema))
    assert "identifier" in refused["error"] and refused["streamed"] == []  # from the schema, before any read
    warned = _twins(path, template, tmp_path, monkeypatch, "count where email is not null and age > 30")
    assert warned["streamed"] is True and "email" in warned["answer"]


@pytest.mark.slow
def test_bad_query_refused_alike(csv_file, template, tmp_path, monkeypatch):
    for text in ("sum(sex) clamp 0..1", "count where nowhere = 1", "histogram city"):
        out = _twins(csv_file, template, tmp_path, monkeypatch, text)
        assert "error" in out


def test_declared_type_refused_reads_whole(tmp_path, template, monkeypatch):
    """A value the declared type refuses: the in-memory read answers (naming the row)."""
    frame = _rows(2000).with_columns(pl.col("age").cast(pl.String))
    frame = frame.with_columns(pl.when(pl.int_range(pl.len()) == 1500).then(pl.lit("old")).otherwise("age")
                               .alias("age"))
    path = _csv(tmp_path / "t.csv", frame)
    schema = tmp_path / "schema.toml"
    schema.write_text('[attributes.age]\ntype = "numeric"\n', encoding="utf-8")
    out = _twins(path, template, tmp_path, monkeypatch, "count", schema=str(schema))
    assert "row 1501" in out["error"] and out["streamed"] == [False]


def test_without_a_ledger(csv_file, monkeypatch):
    answers = []
    for limit in (0, 1 << 40):
        monkeypatch.setattr(streaming, "EAGER_BYTES", limit)
        answer = api.query(str(csv_file), "histogram city", epsilon=1.0, delta=1e-6, randomness=3, ledger=None)
        answers.append(json.dumps(answer.as_dict(custodian=True), sort_keys=True, default=str))
    assert answers[0] == answers[1]


def test_private_histogram_cells_sorted():
    """Without a public domain the cells are sorted (missing first) before the noise, whatever order
    the engine's group-by gave them in: the seeded answer does not depend on that order."""
    from crowdsafe.mechanisms.query_plan import QueryPlan

    counts = pl.DataFrame({"__crowdsafe_cell_city": ["Nice", None, "Brest", "Lyon"], "count": [3, 1, 4, 2]},
                          schema_overrides={"count": pl.UInt32})
    plan = dataclasses.replace(_a_plan("histogram city"), domains=((None, "values present in the data (private)"),))
    assert isinstance(plan, QueryPlan)
    table = histogram_exact(counts, plan).values["table"]
    assert table.get_column("__crowdsafe_cell_city").to_list() == [None, "Brest", "Lyon", "Nice"]
    assert table.get_column("count").to_list() == [1, 4, 2, 3]
    shuffled = histogram_exact(counts.sample(fraction=1.0, shuffle=True, seed=1), plan).values["table"]
    assert shuffled.equals(table)


def _a_plan(text: str):
    from crowdsafe.data import Dataset
    from crowdsafe.mechanisms.queries import _plan
    from crowdsafe.mechanisms.query_plan import QueryRequest

    frame = pl.DataFrame({"city": ["Nice", "Lyon"]})
    return _plan(Dataset(frame, Schema.infer(frame)), QueryRequest(text, epsilon=1.0, delta=1e-6))


@pytest.mark.slow
def test_many_batches_keep_file_order(tmp_path, template, monkeypatch):
    """Over several of the streaming engine's batches, the rows a contribution bound (one row per
    person, so any other order keeps other rows) and a quantile read come in file order."""
    path = _csv(tmp_path / "t.csv", _rows(300_000, seed=5))
    schema = dataclasses.replace(Schema.infer(pl.read_csv(path, n_rows=10)), person_id="household")
    bounded = _twins(path, template, tmp_path, monkeypatch, "sum(age) clamp 20..60 where city is not null",
                     schema=schema, max_rows_per_person=1)
    assert bounded["streamed"] is True
    quantile = _twins(path, template, tmp_path, monkeypatch, "quantile(score, 0.3) clamp 0..10")
    assert quantile["streamed"] is True
