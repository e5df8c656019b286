"""A full or failing disk at the ledger (sweep ds5, item 5): one line, status 2, the ledger unchanged
and never called unusable (it was `internal error: OperationalError: database or disk is full`,
or `... is not a usable crowdsafe ledger: disk I/O error`, which could make a custodian delete a
healthy ledger). SQLite is made to fail by a page limit (SQLITE_FULL) or a raised I/O error."""

from __future__ import annotations

import sqlite3

import polars as pl
import pytest

from crowdsafe import cli
from crowdsafe.errors import InputError
from crowdsafe.privacy import ledger as ledger_module
from crowdsafe.privacy.ledger import Ledger

_connect = sqlite3.connect


def _table(tmp_path):
    path = tmp_path / "data.csv"
    pl.DataFrame({"age": [20 + i % 50 for i in range(200)], "sex": ["MF"[i % 2] for i in range(200)]}).write_csv(path)
    return path


def _entries(path) -> list[tuple]:
    with _connect(path) as db:
        return db.execute("SELECT id, status FROM entries").fetchall()


def _full_disk(monkeypatch):
    """Every ledger connection may not grow the file beyond its pages (SQLite: database or disk is full)."""
    def connect(*args, **kwargs):
        conn = _connect(*args, **kwargs)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {max(pages, 1)}")
        return conn

    monkeypatch.setattr(ledger_module.sqlite3, "connect", connect)


class FullAtCommit(sqlite3.Connection):
    """SQLite's answer when the disk fills as the charge is committed (where the sweep saw it)."""

    charging = False

    def execute(self, sql, *args):
        self.charging = self.charging or sql.startswith("INSERT INTO entries")
        if sql == "COMMIT" and self.charging:
            error = sqlite3.OperationalError("database or disk is full")
            error.sqlite_errorcode = 13  # SQLITE_FULL
            raise error
        return super().execute(sql, *args)


def test_a_full_disk_at_the_charge_is_one_line_and_charges_nothing(tmp_path, monkeypatch, capsys):
    ledger = tmp_path / "ledger.sqlite3"
    monkeypatch.setenv("CROWDSAFE_LEDGER", str(ledger))
    data = _table(tmp_path)
    assert cli.main(["ledger", "init", str(data), "--epsilon", "10", "--delta", "1e-6"]) == 0
    before = ledger.read_bytes()
    capsys.readouterr()
    monkeypatch.setattr(ledger_module.sqlite3, "connect", lambda *a, **k: _connect(*a, **k, factory=FullAtCommit))
    code = cli.main(["query", str(data), "count", "--epsilon", "0.1"])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    assert lines[-1].startswith(f"crowdsafe: error: the privacy ledger {ledger} could not be written: its disk is "
                                "full (database or disk is full); the ledger is unchanged and intact (keep it), "
                                "and nothing was charged or run"), err
    assert "internal error" not in err and "not a usable" not in err
    monkeypatch.undo()
    assert _entries(ledger) == [] and ledger.read_bytes() == before
    with _connect(ledger) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_full_disk_when_a_new_ledger_is_made(tmp_path, monkeypatch):
    _full_disk(monkeypatch)  # a real SQLITE_FULL: its tables need pages the file may not grow to
    with pytest.raises(InputError, match="could not be written: its disk is full") as caught:
        Ledger(tmp_path / "new.sqlite3")
    assert "\n" not in str(caught.value) and "not a usable" not in str(caught.value)


def test_a_disk_io_error_on_opening_is_not_an_unusable_ledger(tmp_path, monkeypatch):
    path = tmp_path / "ledger.sqlite3"
    Ledger(path).close()

    class Failing(sqlite3.Connection):
        def execute(self, sql, *args):
            if sql.startswith("BEGIN"):
                error = sqlite3.OperationalError("disk I/O error")
                error.sqlite_errorcode = 10 | (4 << 8)  # SQLITE_IOERR_WRITE
                raise error
            return super().execute(sql, *args)

    monkeypatch.setattr(ledger_module.sqlite3, "connect", lambda *a, **k: _connect(*a, **k, factory=Failing))
    with pytest.raises(InputError) as caught:
        Ledger(path)
    message = str(caught.value)
    assert "could not be written: its disk could not be read or written (disk I/O error)" in message
    assert "not a usable" not in message and "keep it" in message


def test_other_sqlite_errors_are_unchanged(tmp_path, monkeypatch):
    path = tmp_path / "ledger.sqlite3"
    Ledger(path).close()

    class Corrupt(sqlite3.Connection):
        def execute(self, sql, *args):
            if sql.startswith("BEGIN"):
                raise sqlite3.DatabaseError("file is not a database")
            return super().execute(sql, *args)

    monkeypatch.setattr(ledger_module.sqlite3, "connect", lambda *a, **k: _connect(*a, **k, factory=Corrupt))
    with pytest.raises(InputError, match="is not a usable crowdsafe ledger: file is not a database"):
        Ledger(path)
