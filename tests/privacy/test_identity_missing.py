"""A table loaded with ``missing='drop'`` has the identity of the table as given.

Found by a black-box sweep: the ledger identifies a table by a digest of its rows, taken after
the missing-value policy. ``perturb adult --missing drop`` (2,399 rows with a missing value
dropped) was therefore another dataset than ``adult``: refused for want of a budget although
``adult`` had one, and given ``--budget`` it opened a second budget for the same people. The
identity is now the rows as given, before the policy removed any, on every engine: the Polars
loader, the streamed reader, and Spark's tables for queries and for publishing. Each is also run
against a broken variant that identifies the rows kept.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from crowdsafe import cli
from crowdsafe.data import Dataset, load
from crowdsafe.data import streamed_table as streamed
from crowdsafe.engines.streamed_publish import table_identity
from crowdsafe.privacy.ledger import Ledger


def _frame() -> pl.DataFrame:
    rng = np.random.default_rng(8)
    age = rng.integers(20, 70, 500).astype(float)
    age[rng.random(500) < 0.05] = np.nan  # a NaN is missing too
    return pl.DataFrame({"age": age, "sex": rng.choice(["F", "M"], 500),
                         "job": pl.Series(rng.choice(["a", "b", "c"], 500)).scatter(np.arange(0, 500, 23), None)})


def _csv(path: Path) -> Path:
    _frame().write_csv(path)
    return path


def test_drop_and_keep_give_one_identity_and_the_rows_kept_another():
    frame = _frame()
    kept, dropped = load(frame), load(frame, missing="drop")
    assert dropped.n_rows < kept.n_rows
    assert dropped.fingerprint() == kept.fingerprint()
    assert dropped.with_roles(qi=["age"]).fingerprint() == kept.fingerprint()  # derived: the same table
    assert load(dropped.frame).fingerprint() != kept.fingerprint()  # the rows kept, given as a table: others
    assert dropped.filter_rows(np.ones(dropped.n_rows, dtype=bool)).fingerprint() != kept.fingerprint()  # a part


def test_the_identity_rule_can_fail(monkeypatch):
    """Broken variant: the rows kept identified: drop and keep disagree."""
    monkeypatch.setattr(Dataset, "identify_as", lambda self, given: None)
    frame = _frame()
    assert load(frame, missing="drop").fingerprint() != load(frame).fingerprint()


def _charged(capsys, tmp_path) -> tuple[int, str, list]:
    data, ledger = _csv(tmp_path / "t.csv"), tmp_path / "ledger.sqlite3"
    domains = tmp_path / "domains.json"
    domains.write_text(json.dumps({"sex": ["F", "M"], "job": ["a", "b", "c"]}))
    assert cli.main(["ledger", "init", str(data), "--epsilon", "10", "--delta", "0", "--ledger", str(ledger)]) == 0
    capsys.readouterr()
    code = cli.main(["perturb", str(data), "--d", "0.1", "--gamma", "0.9", "--max-rows", "600", "--attributes",
                     "sex,job", "--domains", str(domains), "--missing", "drop", "--no-report", "--out",
                     str(tmp_path / "v.csv"), "--ledger", str(ledger)])
    err = capsys.readouterr().err
    with sqlite3.connect(ledger) as conn:
        charged = conn.execute("SELECT d.name, COUNT(e.id) FROM datasets d LEFT JOIN entries e "
                               "ON e.fingerprint = d.fingerprint GROUP BY d.name").fetchall()
    return code, err, charged


def test_a_run_with_drop_spends_the_budget_registered_without_it(capsys, tmp_path):
    code, err, charged = _charged(capsys, tmp_path)
    assert code == 0, err
    assert charged == [("t.csv", 1)]


def test_the_budget_rule_can_fail(capsys, tmp_path, monkeypatch):
    """Broken variant: the rows kept identified: they have no budget, and their name 't.csv' is
    the budget of the table as given (other data, to the ledger)."""
    monkeypatch.setattr(Dataset, "identify_as", lambda self, given: None)
    code, err, charged = _charged(capsys, tmp_path)
    assert code == 2 and "the name 't.csv' already belongs to other data" in err, err
    assert charged == [("t.csv", 0)]


def _streamed(path: Path, monkeypatch) -> streamed.StreamedTable:
    from crowdsafe.data import streaming

    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    table = streamed.read_streamed(path, missing="drop")
    assert table is not None and table.n_rows < 500
    return table


def test_a_streamed_table_is_identified_as_given(tmp_path, monkeypatch):
    path = _csv(tmp_path / "t.csv")
    with Ledger(tmp_path / "ledger.sqlite3") as book:
        assert table_identity(_streamed(path, monkeypatch), book) == load(path).fingerprint(key=book.identity_key)


def test_the_streamed_rule_can_fail(tmp_path, monkeypatch):
    path = _csv(tmp_path / "t.csv")
    table = _streamed(path, monkeypatch)
    broken = streamed.StreamedTable(table.path, table.rows, table.domain, table.n_rows, table.missing, None)
    with Ledger(tmp_path / "ledger.sqlite3") as book:
        assert table_identity(broken, book) != load(path).fingerprint(key=book.identity_key)


@pytest.mark.spark
def test_spark_tables_are_identified_as_given(spark, tmp_path):
    from crowdsafe.engines.spark.table import spark_table
    from crowdsafe.engines.spark.typed_table import load_table

    path = str(_csv(tmp_path / "t.csv"))
    keep, drop = load_table(spark, path), load_table(spark, path, missing="drop")
    assert drop.fingerprint() == keep.fingerprint()
    assert drop.frame.count() < keep.frame.count()
    broken = load_table(spark, path, missing="drop")
    broken.given = None  # broken variant: the rows kept
    assert broken.fingerprint() != keep.fingerprint()
    assert spark_table(spark, path, missing="drop", count=False).fingerprint == spark_table(
        spark, path, count=False).fingerprint
    in_memory = _frame()
    assert spark_table(spark, in_memory, missing="drop", count=False).fingerprint == spark_table(
        spark, in_memory, count=False).fingerprint
