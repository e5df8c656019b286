"""Where the privacy-budget ledger lives and how its SQLite file is laid out.

The file is private to its owner (0600 in a 0700 folder when crowdsafe makes it): whoever can read
it has the identity key and the custodian-only reports, whoever can write it can hand themselves
budget, so a ledger that other users may read or write is refused.
"""

from __future__ import annotations

import getpass
import os
import shlex
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path

from crowdsafe.arguments import kind
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.files import check_input

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
CREATE INDEX IF NOT EXISTS entries_by_notion ON entries(fingerprint, neighbours);
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
CREATE TABLE IF NOT EXISTS budget_changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT NOT NULL REFERENCES datasets(fingerprint),
    change TEXT NOT NULL CHECK (change IN ('set', 'lowered', 'raised')),
    epsilon_before REAL,
    delta_before REAL,
    epsilon_after REAL NOT NULL,
    delta_after REAL NOT NULL,
    spent_epsilon REAL NOT NULL,
    spent_delta REAL NOT NULL,
    changed_by TEXT NOT NULL,
    reason TEXT NOT NULL,
    created_at TEXT NOT NULL,
    CHECK ((change = 'set') = (epsilon_before IS NULL))
);
CREATE INDEX IF NOT EXISTS budget_changes_by_dataset ON budget_changes(fingerprint);
"""


# The files SQLite keeps beside the database (WAL mode's log and index, a rollback journal).
SIDE_FILES = ("-wal", "-shm", "-journal")


def create_private(path: Path) -> None:
    """Make the ledger file readable and writable by its owner only (0600), in a folder made
    0700 when crowdsafe creates it; refuse an existing ledger that other users may read or write,
    before SQLite opens it. Whoever can read it has the identity key (and can test a guess of
    the data against the keyed identities) and the custodian-only reports; whoever can write it
    can hand themselves budget. SQLite gives the -wal, -shm and -journal files the database
    file's permissions; an existing one open to others is refused too. (Windows: not checked,
    its access lists are not POSIX modes.)"""
    check_input(path, "ledger")  # a FIFO would block SQLite's first read
    missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    if sys.platform == "win32":
        return
    files = [path, *(Path(f"{path}{suffix}") for suffix in SIDE_FILES)]
    shared = [(f, f.stat().st_mode & 0o777) for f in files if f.exists() and f.stat().st_mode & 0o066]
    if shared:
        modes = ", ".join(f"{f} is {mode:o}" for f, mode in shared)
        command = " ".join(shlex.quote(str(f)) for f, _ in shared)
        raise InputError(
            f"the ledger {path} is open to other users ({modes}): it holds the secret identity key "
            f"and custodian-only reports; make it private with `chmod 600 {command}`"
        )


def ledger_path(spec: str | os.PathLike[str] | None) -> Path:
    """The file a ledger is named by: the default location for None or ``"default"``
    (:func:`default_ledger_path`), else the path given, ``~`` expanded (a ledger's path is the one
    path crowdsafe expands: it is configuration, named the same way in every place it is used).
    Anything else (a number, a dict) is refused in one line naming the parameter."""
    if spec is not None and not isinstance(spec, (str, os.PathLike)):
        raise ParameterError(f"ledger must be 'default', the path of a ledger file, a crowdsafe Ledger, or None "
                             f"(no ledger); got {kind(spec)}", parameter="ledger")
    return default_ledger_path() if spec is None or spec == "default" else Path(spec).expanduser()


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


def custodian() -> str:
    """Who changes a budget, for its history: the operating-system user running crowdsafe."""
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):  # no user name in the environment or the password database
        return "unknown user"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def upgrade_from_v1(conn: sqlite3.Connection) -> None:
    """Schema 1 identified datasets by an unkeyed digest of their rows in file order. Those
    identities cannot be recomputed under the keyed, order-invariant scheme, and reading the
    old entries under new names would hand out fresh budget, so a version-1 ledger that
    holds any dataset is refused; an empty one is upgraded in place."""
    used = conn.execute("SELECT COUNT(*) FROM datasets").fetchone()[0]
    if used:
        raise InputError(
            "this ledger was written by an earlier crowdsafe (schema 1) whose dataset identities this "
            "version cannot match: its spent budgets would not be found. Keep it for your records, "
            "start a new ledger (ledger=PATH or CROWDSAFE_LEDGER) and register each dataset's "
            "remaining budget with set_budget(DATA, epsilon=E, delta=D)", parameter=("ledger", "budget"),
        )
    conn.execute("DROP TABLE IF EXISTS samples")
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
    conn.execute("INSERT OR IGNORE INTO meta VALUES ('identity_key', ?)", (os.urandom(32).hex(),))
