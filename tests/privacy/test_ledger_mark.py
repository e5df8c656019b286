"""A ledger is marked (SQLite application id): crowdsafe opens only its own ledgers, new or empty
files and SQLite files without tables, and never writes into another application's database."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pytest

from crowdsafe.errors import InputError
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.privacy.ledger_mark import APPLICATION_ID
from foreign_sqlite import write_foreign_sqlite


def _header_id(path: Path) -> int:
    return int.from_bytes(path.read_bytes()[68:72], "big")


def _folder(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.parent.iterdir())}


def test_the_mark_is_the_bytes_cslg():
    assert APPLICATION_ID.to_bytes(4, "big") == b"CSLG"


def test_a_new_ledger_is_marked_in_the_file_itself_from_its_first_transaction(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    with Ledger(path) as ledger:
        # still open (WAL mode): the mark was committed before WAL mode, so the file holds it
        assert _header_id(path) == APPLICATION_ID
        ledger.set_budget("f", "data", 1.0, 1e-6)
    assert _header_id(path) == APPLICATION_ID


@pytest.mark.parametrize("journal", ["delete", "wal"])
@pytest.mark.parametrize("application_id", [0, 0x47504B47], ids=["no-id", "geopackage-id"])
def test_another_applications_database_is_refused_and_left_as_it_was(tmp_path, journal, application_id):
    path = write_foreign_sqlite(tmp_path / "contacts.db", application_id, journal)
    before = _folder(path)
    with pytest.raises(InputError) as refused:
        Ledger(path)
    message = str(refused.value)
    assert "\n" not in message and "not a crowdsafe ledger" in message and "never writes into it" in message
    assert ("contacts" in message) if application_id == 0 else ("0x47504b47" in message)
    assert _folder(path) == before  # the file byte for byte, and no -wal, -shm or -journal beside it


def test_a_database_with_a_table_named_like_crowdsafes_is_stillwrite_foreign_sqlite(tmp_path):
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")  # a common name, but no schema_version
    conn.execute("CREATE TABLE entries (id INTEGER)")
    conn.commit()
    conn.close()
    path.chmod(0o600)
    before = _folder(path)
    with pytest.raises(InputError, match=r"other tables \(entries, meta\)"):
        Ledger(path)
    assert _folder(path) == before


def test_a_foreign_database_whose_tables_are_only_in_its_write_ahead_log_is_refused_unwritten(tmp_path):
    path = tmp_path / "app.db"
    holder = sqlite3.connect(path)  # another application, still running: its table is in its -wal only
    holder.execute("PRAGMA journal_mode = WAL")
    holder.execute("CREATE TABLE contacts (name TEXT)")
    holder.commit()
    for name in os.listdir(tmp_path):
        (tmp_path / name).chmod(0o600)
    main = path.read_bytes()
    wal = Path(f"{path}-wal").read_bytes()
    with pytest.raises(InputError, match=r"other tables \(contacts\)"):
        Ledger(path)
    assert path.read_bytes() == main and Path(f"{path}-wal").read_bytes() == wal
    holder.close()


@pytest.mark.parametrize("content", [b"", None], ids=["zero-bytes", "sqlite-without-tables"])
def test_an_empty_file_or_database_becomes_a_marked_ledger(tmp_path, content):
    path = tmp_path / "new.sqlite3"
    if content is None:
        sqlite3.connect(path).execute("PRAGMA user_version = 7").connection.close()  # a header, no table
        assert path.stat().st_size > 0
    else:
        path.write_bytes(content)
    path.chmod(0o600)
    with Ledger(path) as ledger:
        ledger.set_budget("f", "data", 1.0, 1e-6)
    assert _header_id(path) == APPLICATION_ID
    with Ledger(path) as again:
        assert again.budget("data") is not None


def test_a_ledger_of_an_earlier_crowdsafe_opens_and_is_marked(tmp_path):
    path = tmp_path / "old.sqlite3"
    with Ledger(path) as ledger:
        ledger.set_budget("f", "data", 1.0, 1e-6)
        with ledger.charge("data", epsilon=0.25, description="count", mechanism="m"):
            pass
    conn = sqlite3.connect(path)  # as an earlier crowdsafe left it: its tables, no application id
    conn.execute("PRAGMA application_id = 0")
    conn.execute("DROP TABLE budget_changes")  # no budget history either
    conn.commit()
    conn.close()
    assert _header_id(path) == 0
    with Ledger(path) as ledger:
        assert ledger.budget("data").spent.epsilon == 0.25
        assert ledger.budget_changes("data") == []
    assert _header_id(path) == APPLICATION_ID


@pytest.mark.parametrize("content", [b"SQLite format 3\x00" + b"\xff" * 84, b"plain text, not a database\n"])
def test_a_file_that_is_not_a_database_is_refused_unchanged(tmp_path, content):
    path = tmp_path / "l.sqlite3"
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(InputError, match="not a usable crowdsafe ledger"):
        Ledger(path)
    assert _folder(path) == {"l.sqlite3": content}


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs")
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    path = tmp_path / "pipe"
    os.mkfifo(path, 0o600)
    with pytest.raises(InputError, match="not a regular file"):
        Ledger(path)  # reading it would block until a writer comes


def test_a_foreign_database_is_named_before_its_permissions(tmp_path):
    path = write_foreign_sqlite(tmp_path / "contacts.db")
    path.chmod(0o644)  # another application's file: the fix is another path, not chmod
    with pytest.raises(InputError, match="not a crowdsafe ledger"):
        Ledger(path)
