"""How a crowdsafe ledger is told from any other file, so that crowdsafe never writes into
another application's database.

A ledger is marked with SQLite's application id (the 32-bit number at offset 68 of the database
header, ``PRAGMA application_id``): :data:`APPLICATION_ID`, the bytes ``CSLG``. A path given as
a ledger is opened only if it is

- missing or empty (0 bytes): a new ledger is made there, marked in its first transaction;
- an SQLite database marked as a crowdsafe ledger;
- an SQLite database with no tables (a new ledger is made in it and marked);
- an unmarked ledger of an earlier crowdsafe, recognised by its tables: only crowdsafe's
  (:data:`LEDGER_TABLES`), among them ``meta`` holding a ``schema_version``. It is marked in
  the first transaction that opens it.

Anything else is refused in one line (:class:`~crowdsafe.errors.InputError`) before SQLite opens
it for writing: a file that is not SQLite, a database with another application id or with
tables of its own, a FIFO, device or socket. :func:`look` decides from the file's header and
a read of its table names that changes no file (SQLite's ``immutable`` mode, which takes no
lock and opens no side file); when a write-ahead log (``-wal``) lies beside an unmarked file,
whose tables may be only in that log, the read is a plain read-only one, which may create the
``-shm`` index but neither writes the database nor moves its log into it. :func:`check_and_mark`
repeats the decision inside the first write transaction, under SQLite's write lock, and marks
the file; nothing is written to a file it refuses.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from pathlib import Path

from crowdsafe.errors import InputError

APPLICATION_ID = int.from_bytes(b"CSLG", "big")
LEDGER_TABLES = frozenset({"meta", "datasets", "entries", "totals", "samples", "budget_changes"})
_SQLITE_MAGIC = b"SQLite format 3\x00"
_USE_ANOTHER = "give a new file (ledger=PATH or CROWDSAFE_LEDGER)"


def carries_mark(header: bytes) -> bool:
    """Whether a file's first bytes (at least 72) are those of a crowdsafe ledger: an SQLite
    database whose header holds :data:`APPLICATION_ID`."""
    return (len(header) >= 72 and header.startswith(_SQLITE_MAGIC)
            and int.from_bytes(header[68:72], "big") == APPLICATION_ID)


def look(path: Path) -> None:
    """Refuse ``path`` as a ledger unless it is missing, empty, a crowdsafe ledger or an SQLite
    database without tables; changes no file."""
    try:
        status = path.stat()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(f"cannot open the privacy ledger at {path}: {exc}") from exc
    if not stat.S_ISREG(status.st_mode):
        raise InputError(f"the ledger {path} is not a regular file (a FIFO, device or socket); {_USE_ANOTHER}",
                         parameter="ledger")
    if status.st_size == 0:
        return
    try:
        with path.open("rb") as file:
            header = file.read(100)
    except OSError as exc:
        raise InputError(f"cannot open the privacy ledger at {path}: {exc}") from exc
    if not header.startswith(_SQLITE_MAGIC):
        raise InputError(f"{path} is not a usable crowdsafe ledger: it is not an SQLite database; {_USE_ANOTHER}",
                         parameter="ledger")
    if carries_mark(header):
        return
    log = Path(f"{path}-wal")
    mode = "mode=ro" if log.exists() and log.stat().st_size > 0 else "immutable=1"
    try:
        with contextlib.closing(sqlite3.connect(f"{path.absolute().as_uri()}?{mode}", uri=True)) as conn:
            refuse_foreign(conn, path)
    except sqlite3.DatabaseError as exc:
        raise disk_failure(exc, path) or InputError(f"{path} is not a usable crowdsafe ledger: {exc}",
                                                    parameter="ledger") from exc


#: SQLite's primary result codes of a disk that refused a write or a read (SQLITE_FULL, SQLITE_IOERR)
_DISK_CODES = {13: "its disk is full", 10: "its disk could not be read or written"}


def disk_failure(exc: sqlite3.Error, path: Path, after: str = "nothing was charged or run") -> InputError | None:
    """The one-line error of a ledger whose disk is full or failed (SQLite's SQLITE_FULL or
    SQLITE_IOERR, on writing or opening it), or None for another error. The ledger itself is
    intact (SQLite rolled the write back), so it is never called unusable: a custodian told so
    might delete a healthy ledger and its budget history. ``after``: what the run did not do."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary not in _DISK_CODES:
        return None
    return InputError(
        f"the privacy ledger {path} could not be written: {_DISK_CODES[primary]} ({exc}); the ledger is "
        f"unchanged and intact (keep it), and {after}. Free space on that disk (or fix it) and run again",
        parameter="ledger")


def check_and_mark(conn: sqlite3.Connection, path: Path) -> None:
    """Inside the caller's write transaction: refuse a file that is not (or cannot become) a
    crowdsafe ledger, and mark one that is not marked yet."""
    if refuse_foreign(conn, path) != APPLICATION_ID:
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")


def refuse_foreign(conn: sqlite3.Connection, path: Path) -> int:
    """Raise InputError unless the database on ``conn`` is a crowdsafe ledger (marked, or with
    only crowdsafe's tables and a schema version) or has no table; return its application id."""
    application_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    if application_id == APPLICATION_ID:
        return application_id
    if application_id != 0:
        raise InputError(
            f"{path} is not a crowdsafe ledger: it is the SQLite database of another application (application "
            f"id {application_id:#010x}), and crowdsafe never writes into it; {_USE_ANOTHER}", parameter="ledger",
        )
    tables = sorted(row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                    if not str(row[0]).startswith("sqlite_"))
    if tables and not (set(tables) <= LEDGER_TABLES and "meta" in tables and _has_version(conn)):
        shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        raise InputError(
            f"{path} is not a crowdsafe ledger: it is an SQLite database with other tables ({shown}), and "
            f"crowdsafe never writes into it; {_USE_ANOTHER}", parameter="ledger",
        )
    return application_id


def _has_version(conn: sqlite3.Connection) -> bool:
    try:
        return conn.execute("SELECT 1 FROM meta WHERE key = 'schema_version'").fetchone() is not None
    except sqlite3.OperationalError:  # a table named meta without crowdsafe's columns
        return False


__all__ = ["APPLICATION_ID", "LEDGER_TABLES", "carries_mark", "check_and_mark", "disk_failure", "look",
           "refuse_foreign"]


def read_only_reason(path: Path) -> str | None:
    """Why the existing ledger at ``path`` cannot be written, or None: its folder is read-only
    (SQLite must create ``<ledger>-shm`` and ``-wal`` beside it) or the file itself is."""
    if not path.is_file():
        return None
    folder = path.absolute().parent
    if not os.access(folder, os.W_OK):
        return f"its folder {folder} is read-only (SQLite must create {path.name}-shm beside it)"
    if not os.access(path, os.W_OK):
        return "the file is read-only"
    return None


def open_failure(exc: sqlite3.Error, path: Path) -> InputError:
    """The one-line error of a ledger SQLite could not open or read (ds6 #5: a read-only folder
    was called "not a usable crowdsafe ledger: unable to open database file")."""
    reason = read_only_reason(path) if "unable to open" in str(exc) else None
    if reason is not None:
        return InputError(f"the ledger {path} cannot be written: {reason}; nothing was charged. Use a ledger you "
                          "can write (ledger=PATH or CROWDSAFE_LEDGER); 'crowdsafe ledger show' reads it as it is",
                          parameter="ledger")
    return disk_failure(exc, path) or InputError(f"{path} is not a usable crowdsafe ledger: {exc}")


def open_read_only(path: Path, schema_version: int) -> sqlite3.Connection:
    """A connection that only reads the crowdsafe ledger at ``path``, which cannot be written
    (:func:`read_only_reason`): ``immutable`` when no write-ahead log holds changes (SQLite then
    needs no ``-shm`` file), else ``mode=ro``."""
    log = Path(f"{path}-wal")
    mode = "mode=ro" if log.exists() and log.stat().st_size > 0 else "mode=ro&immutable=1"
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?{mode}", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise open_failure(exc, path) from exc
    conn.row_factory = sqlite3.Row
    try:
        refuse_foreign(conn, path)
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise open_failure(exc, path) from exc
    except InputError:
        conn.close()
        raise
    if row is None or int(row["value"]) != schema_version:
        conn.close()
        raise InputError(f"the ledger {path} (read-only) has schema version {row['value'] if row else 'none'}, this "
                         f"crowdsafe reads version {schema_version}: open it once where it can be written")
    return conn
