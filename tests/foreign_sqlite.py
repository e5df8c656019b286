"""Another application's SQLite database, for the tests that give one to crowdsafe as its ledger."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def write_foreign_sqlite(path: Path, application_id: int = 0, journal: str = "delete") -> Path:
    """A database with one table of its own and a row (``application_id`` set when not 0), private
    to its owner: crowdsafe must refuse it and leave it, and its folder, byte for byte as they were."""
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA journal_mode = {journal}")
    if application_id:
        conn.execute(f"PRAGMA application_id = {application_id}")
    conn.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
    conn.execute("INSERT INTO contacts VALUES ('Ada', '555-0100')")
    conn.commit()
    conn.close()
    path.chmod(0o600)
    return path
