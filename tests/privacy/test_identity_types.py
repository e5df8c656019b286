"""A table's identity in the ledger does not depend on the types its schema declares.

Found by a black-box sweep (F4): the fingerprint hashed each column's declared type with its
values, so ``crowdsafe query D.csv count --schema s.toml`` (``age`` an integer) spent D.csv's
budget, and the same file under ``s_real.toml`` (``age`` real, the documented edit after a schema
draft's review) was "no budget set", then "the name 'D.csv' already belongs to other data", and
under another name got a fresh budget: the same rows, two budgets. The identity now reads each
value in a canonical form (:mod:`crowdsafe.data.fingerprint`); a ledger written under the old
fingerprint moves its tables to the new identity when it meets them
(:mod:`crowdsafe.privacy.ledger_identity`).
"""

from __future__ import annotations

import datetime
import sqlite3
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe import cli
from crowdsafe.data import Dataset, load
from crowdsafe.data.streamed_fingerprint import MultisetDigest, text_dictionaries
from crowdsafe.privacy.ledger import Ledger


def _csv(path: Path) -> Path:
    rng = np.random.default_rng(1)
    rows = ["age,sex,hours,zip,day,flag"]
    for i in range(120):
        rows.append(f"{rng.integers(17, 90)},{rng.choice(['Female', 'Male'])},{round(rng.uniform(1, 99), 1)},"
                    f"0{rng.integers(10, 99)},2020-01-{1 + i % 28:02d},{rng.choice(['true', 'false'])}")
    path.write_text("\n".join(rows) + "\n")
    return path


def _schema(path: Path, **types: str) -> Path:
    path.write_text("".join(f'[attributes.{name}]\ntype = "{kind}"\n' for name, kind in types.items()))
    return path


def _query(capsys, data: Path, ledger: Path, schema: Path, *extra: str) -> tuple[int, str]:
    code = cli.main(["query", str(data), "count", "-e", "1", "--schema", str(schema), "--ledger", str(ledger),
                     *extra])
    return code, capsys.readouterr().err


def test_the_same_file_under_another_declared_type_spends_the_same_budget(capsys, tmp_path):
    """The repro: count under s.toml spends the budget; under s_real.toml (age real) the same
    budget is found spent, with or without --budget, and another name does not open a second one."""
    data, ledger = _csv(tmp_path / "D.csv"), tmp_path / "f4.sqlite3"
    s = _schema(tmp_path / "s.toml", age="integer", sex="categorical", hours="real")
    s_real = _schema(tmp_path / "s_real.toml", age="real", sex="categorical", hours="real")
    assert _query(capsys, data, ledger, s, "--budget", "1,0")[0] == 0
    for extra in ((), ("--budget", "1,0"), ("--name", "D-reviewed", "--budget", "1,0")):
        code, err = _query(capsys, data, ledger, s_real, *extra)
        assert code == 3 and "dataset 'D.csv' has spent (ε=1, δ=0) of its budget (ε=1, δ=0)" in err, (extra, err)
    with sqlite3.connect(ledger) as conn:
        assert conn.execute("SELECT name FROM datasets").fetchall() == [("D.csv",)]


def test_a_name_that_belongs_to_other_rows_says_what_counts(capsys, tmp_path):
    data, ledger = _csv(tmp_path / "D.csv"), tmp_path / "l.sqlite3"
    s = _schema(tmp_path / "s.toml", age="integer")
    assert _query(capsys, data, ledger, s, "--budget", "5,0")[0] == 0
    lines = data.read_text().splitlines()
    (tmp_path / "D2.csv").write_text("\n".join(lines[:-1]) + "\n")  # one row fewer: other data
    for extra in ((), ("--budget", "5,0")):
        code, err = _query(capsys, tmp_path / "D2.csv", ledger, s, "--name", "D.csv", *extra)
        assert code == 2 and err.count("\n") == 1, err
        assert "the name 'D.csv' already belongs to other data" in err, err
        assert "how the schema declares a column's type does not count" in err
        assert "the data changed, or choose another name" not in err


@pytest.mark.parametrize("column, kinds", [
    ("age", ("integer", "real", "categorical", "ordinal")),
    ("hours", ("real", "categorical")),
    ("zip", ("integer", "real", "categorical")),  # '012' read as text, or as the number 12
    ("day", ("date", "categorical")),
    ("flag", ("categorical",)),
])
def test_a_column_declared_as_any_type_gives_one_identity(tmp_path, column, kinds):
    data = _csv(tmp_path / "D.csv")
    undeclared = load(data).fingerprint()
    for kind in kinds:
        typed = load(data, schema=_schema(tmp_path / f"{kind}.toml", **{column: kind}))
        assert typed.fingerprint() == undeclared, kind


def test_values_keep_their_identity_across_column_types():
    def identity(values, dtype) -> str:
        return load(pl.DataFrame({"v": pl.Series(values, dtype=dtype)})).fingerprint()

    whole = identity([30, 41, None, 30], pl.Int64)
    assert whole == identity([30.0, 41.0, None, 30.0], pl.Float64) == identity([30, 41, None, 30], pl.Int16)
    assert whole == identity(["30", "041", None, "30.0"], pl.String) == identity(["30", "41", None, "30"],
                                                                                  pl.Categorical)
    assert identity([30.5], pl.Float64) == identity(["30.5"], pl.String) != identity([30], pl.Int64)
    assert identity([datetime.date(2020, 1, 5)], pl.Date) == identity(["2020-01-05"], pl.String)
    assert identity([True, False], pl.Boolean) == identity(["true", "False"], pl.String)
    # other values stay other data
    assert whole != identity([30, 42, None, 30], pl.Int64)
    assert identity(["a", "b"], pl.String) != identity(["a", "c"], pl.String)
    assert identity(["30"], pl.String) != identity(["thirty"], pl.String)
    assert identity([1], pl.Int64) != identity([True], pl.Boolean)


@pytest.mark.slow  # half a second or more (the quick loop: README)
@settings(max_examples=40, deadline=None)
@given(st.lists(st.none() | st.integers(-(2**53), 2**53), min_size=1, max_size=20))
def test_integers_as_reals_as_text_as_categories_are_one_table(values):
    frames = [pl.Series("v", values, dtype=pl.Int64), pl.Series("v", values, dtype=pl.Float64),
              pl.Series("v", [None if v is None else str(v) for v in values], dtype=pl.String),
              pl.Series("v", [None if v is None else str(v) for v in values], dtype=pl.Categorical)]
    digests = {load(s.to_frame()).fingerprint() for s in frames}
    assert len(digests) == 1


def test_the_streamed_digest_reads_values_as_the_whole_table_does():
    frame = pl.DataFrame({"a": ["030", "x", None, "2020-01-05", "TRUE", "1,5"], "b": [1.5, 2.0, None, 3.0, 4.0, 5.0],
                          "c": pl.Series(["q", "12", "q", None, "r", "12"], dtype=pl.Categorical),
                          "d": [datetime.date(2020, 1, i) for i in range(1, 7)], "e": [True, False] * 3})
    digest = MultisetDigest(dict(frame.schema), text_dictionaries(frame))
    digest.add(frame.slice(0, 4))
    digest.add(frame.slice(4))
    assert digest.hexdigest() == load(frame).fingerprint()


def _old_ledger(path: Path, dataset: Dataset, name: str) -> None:
    """A ledger as crowdsafe wrote it before the canonical identity: no identity mark, the table
    registered under its v3 identity, with one charge."""
    with Ledger(path) as book:
        book._conn.execute("DELETE FROM meta WHERE key = 'identity'")
        old = book.identify(dataset.legacy_fingerprint())
        book.set_budget(old, name, 1.0, 0.0)
        with book.charge(old, epsilon=0.6, delta=0.0, kind="query", description="count", mechanism="laplace"):
            pass
        assert old != dataset.fingerprint(key=book.identity_key)


def test_a_table_registered_by_the_earlier_fingerprint_keeps_its_budget(capsys, tmp_path):
    data, ledger = _csv(tmp_path / "D.csv"), tmp_path / "old.sqlite3"
    s = _schema(tmp_path / "s.toml", age="integer", sex="categorical", hours="real")
    s_real = _schema(tmp_path / "s_real.toml", age="real", sex="categorical", hours="real")
    _old_ledger(ledger, load(data, schema=s), "D.csv")
    # read with other types, the earlier identity (which counted them) is not found: the message says so
    code, err = _query(capsys, data, ledger, s_real, "--budget", "1,0")
    assert code == 2 and "already belongs to other data" in err and "written by an earlier crowdsafe" in err, err
    # read as registered: found under its earlier identity, moved to the new one, its spending kept
    code, err = _query(capsys, data, ledger, s, "-e", "0.5")
    assert code == 3 and "dataset 'D.csv' has spent (ε=0.6, δ=0) of its budget (ε=1, δ=0)" in err, err
    with Ledger(ledger) as book:
        new = load(data, schema=s_real).fingerprint(key=book.identity_key)
        budget = book.budget(new)
        assert budget is not None and budget.name == "D.csv" and budget.entries == 1
        assert [c.change for c in book.budget_changes(new)] == ["set"]
        assert [e.fingerprint for e in book.entries()] == [new]
        assert book.integrity_check() == "ok"
    code, err = _query(capsys, data, ledger, s_real, "-e", "0.4")  # now under any types: the same budget
    assert code == 0, err
    code, err = _query(capsys, data, ledger, s_real, "-e", "0.4")
    assert code == 3 and "dataset 'D.csv' has spent (ε=1, δ=0)" in err, err


def test_without_the_move_an_earlier_ledger_would_lose_the_budget(capsys, tmp_path, monkeypatch):
    """Broken variant: the earlier identity never looked for: the table has no budget."""
    data, ledger = _csv(tmp_path / "D.csv"), tmp_path / "old.sqlite3"
    s = _schema(tmp_path / "s.toml", age="integer")
    _old_ledger(ledger, load(data, schema=s), "D.csv")
    monkeypatch.setattr(Ledger, "adopt", lambda self, identity, legacy: identity)
    code, err = _query(capsys, data, ledger, s, "--budget", "1,0")
    assert code == 2 and "already belongs to other data" in err, err


def test_a_ledger_of_this_version_never_computes_the_earlier_identity(capsys, tmp_path, monkeypatch):
    data, ledger = _csv(tmp_path / "D.csv"), tmp_path / "new.sqlite3"
    s = _schema(tmp_path / "s.toml", age="integer")

    def refuse(self, key=None):
        raise AssertionError("the earlier identity was computed")

    monkeypatch.setattr(Dataset, "legacy_fingerprint", refuse)
    assert _query(capsys, data, ledger, s, "--budget", "2,0")[0] == 0
    (tmp_path / "E.csv").write_text("\n".join(data.read_text().splitlines()[:-1]) + "\n")  # a table it does not know
    assert _query(capsys, tmp_path / "E.csv", ledger, s, "--budget", "2,0")[0] == 0


def test_a_streamed_table_registered_by_the_earlier_fingerprint_keeps_its_budget(tmp_path, monkeypatch):
    from crowdsafe.data import streamed_table as streamed
    from crowdsafe.data import streaming
    from crowdsafe.engines.streamed_publish import table_identity

    data, ledger = _csv(tmp_path / "D.csv"), tmp_path / "old.sqlite3"
    whole = load(data)
    _old_ledger(ledger, whole, "D.csv")
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    table = streamed.read_streamed(data)
    assert table is not None
    with Ledger(ledger) as book:
        identity = table_identity(table, book)
        assert identity == whole.fingerprint(key=book.identity_key)
        budget = book.budget(identity)
        assert budget is not None and budget.name == "D.csv" and budget.entries == 1
