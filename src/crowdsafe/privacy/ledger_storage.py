"""Where the privacy-budget ledger lives and how its SQLite file is laid out.

The file is private to its owner (0600 in a 0700 folder when crowdsafe makes it): whoever can write
it can hand themselves budget, so a ledger that other users may write is refused.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from crowdsafe.errors import InputError

LEDGER_ENV = "CROWDSAFE_LEDGER"
SCHEMA_VERSION = 2

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS datasets (
    fingerprint TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    epsilon_budget REAL NOT NULL CHECK (epsilon_budget > 0),
    delta_budget REAL NOT NULL CHECK (delta_budget >= 0 AND delta_budget < 1),
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT NOT NULL REFERENCES datasets(fingerprint),
    kind TEXT NOT NULL CHECK (kind IN ('query', 'release', 'dps-release')),
    description TEXT NOT NULL,
    mechanism TEXT NOT NULL,
    epsilon REAL NOT NULL CHECK (epsilon >= 0),
    delta REAL NOT NULL CHECK (delta >= 0 AND delta < 1),
    repetitions INTEGER NOT NULL CHECK (repetitions >= 1),
    run_epsilon REAL NOT NULL,
    run_delta REAL NOT NULL,
    composition TEXT NOT NULL,
    neighbours TEXT NOT NULL CHECK (neighbours IN ('add-remove', 'change')),
    partition_key TEXT,
    part TEXT,
    ran_on TEXT,
    seeded INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('charged', 'completed', 'failed')),
    created_at TEXT NOT NULL,
    finished_at TEXT,
    details TEXT NOT NULL DEFAULT '{}',
    outcome TEXT NOT NULL DEFAULT '{}',
    CHECK ((partition_key IS NULL) = (part IS NULL))
);
CREATE INDEX IF NOT EXISTS entries_by_dataset ON entries(fingerprint);
CREATE INDEX IF NOT EXISTS entries_by_data_read ON entries(ran_on);
CREATE TABLE IF NOT EXISTS totals (
    fingerprint TEXT NOT NULL REFERENCES datasets(fingerprint),
    partition_key TEXT NOT NULL,
    neighbours TEXT NOT NULL,
    part TEXT NOT NULL,
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    entries INTEGER NOT NULL,
    PRIMARY KEY (fingerprint, partition_key, neighbours, part)
);
CREATE TABLE IF NOT EXISTS samples (
    sample_id TEXT NOT NULL,
    entry_id INTEGER NOT NULL REFERENCES entries(id),
    rate REAL,
    PRIMARY KEY (sample_id, entry_id)
);
"""


def create_private(path: Path) -> None:
    """Make the ledger file readable and writable by its owner only (0600), in a folder made
    0700 when crowdsafe creates it; refuse an existing ledger that others may write, since whoever
    can write it can hand themselves budget. (SQLite gives its -wal and -shm files the database
    file's permissions.)"""
    missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700)
    if path.exists():
        mode = path.stat().st_mode
        if sys.platform != "win32" and mode & 0o022:
            raise InputError(
                f"the ledger {path} can be written by other users (mode {mode & 0o777:o}); "
                f"make it private with `chmod 600 {path}`"
            )
        return
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


def default_ledger_path() -> Path:
    """``$CROWDSAFE_LEDGER``, else the per-user data folder (see the module docstring)."""
    configured = os.environ.get(LEDGER_ENV)
    if configured:
        return Path(configured).expanduser()
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "crowdsafe" / "ledger.sqlite3"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")
