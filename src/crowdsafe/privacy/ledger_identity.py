"""Tables registered by an earlier crowdsafe, found under their new identity.

A table's identity in the ledger is its fingerprint keyed with the ledger's secret. The
fingerprint changed (``crowdsafe-dataset-multiset-v4``, :mod:`crowdsafe.data.fingerprint`: each
value in a canonical form, so that the declared column types no longer count), so a ledger written
before holds its tables under their v3 identities (:mod:`crowdsafe.data.legacy_fingerprint`).
Reading such a table under its new identity alone would find no budget, and registering it again
would hand out a fresh one. So, for a ledger that may hold v3 identities, a table whose new
identity is unknown is also identified the old way; when the ledger knows that identity, every
record of it (the dataset, its entries, running totals and budget history) is moved to the new
identity in one transaction, and the table keeps its budget and what it spent. A ledger made
by this version, or one that held no table when this version first opened it, is marked
(``meta``: ``identity = v4``) and never computes the old identity.

What cannot be mended: the same rows registered under two v3 identities (two schemas typing a
column otherwise, the defect this change removes) have two budgets; the first one found under
the new identity keeps it, and the other stays under its old identity, listed in ``crowdsafe
ledger show`` with what it spent. Samples consumed by a DPS release keep their v3 identities (a
sample never leaves its run, so no later input is one).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

__all__ = ["CURRENT", "KEY", "Identified", "adopt", "known", "may_hold_legacy", "mark_current", "move"]


class Identified(Protocol):
    """A table the ledger can name (a :class:`~crowdsafe.data.Dataset`): its fingerprint, and the
    one an earlier crowdsafe gave it (both unkeyed, hex)."""

    def fingerprint(self) -> str: ...

    def legacy_fingerprint(self) -> str: ...

KEY, CURRENT = "identity", "v4"


def mark_current(conn: sqlite3.Connection) -> None:
    """Mark the ledger as holding only current identities when it holds no table yet (a new
    ledger, or an old one still empty); inside the caller's write transaction."""
    if conn.execute("SELECT 1 FROM datasets LIMIT 1").fetchone() is None:
        conn.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (KEY, CURRENT))


def may_hold_legacy(conn: sqlite3.Connection) -> bool:
    """Whether the ledger may hold identities of an earlier fingerprint (it is not marked)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (KEY,)).fetchone()
    return row is None or row[0] != CURRENT


def known(conn: sqlite3.Connection, identity: str) -> bool:
    return conn.execute("SELECT 1 FROM datasets WHERE fingerprint = ?", (identity,)).fetchone() is not None


def adopt(conn: sqlite3.Connection, identity: str, legacy: Callable[[], str],
          write: Callable[[], AbstractContextManager[sqlite3.Connection]]) -> str:
    """``identity``, after moving a table the ledger knows by its ``legacy()`` identity to it
    (:func:`move`, in the transaction ``write()`` opens) when the ledger may hold such identities
    and does not know ``identity``."""
    if not may_hold_legacy(conn) or known(conn, identity):
        return identity
    old = legacy()
    if old == identity or not known(conn, old):
        return identity
    with write() as tx:
        if known(tx, old) and not known(tx, identity):
            move(tx, old, identity)
    return identity


def move(conn: sqlite3.Connection, old: str, new: str) -> None:
    """Every record of the table ``old`` moved to the identity ``new`` (inside the caller's write
    transaction; the foreign keys are checked at its commit)."""
    conn.execute("PRAGMA defer_foreign_keys = ON")
    conn.execute("UPDATE datasets SET fingerprint = ? WHERE fingerprint = ?", (new, old))
    conn.execute("UPDATE entries SET fingerprint = ? WHERE fingerprint = ?", (new, old))
    conn.execute("UPDATE entries SET ran_on = ? WHERE ran_on = ?", (new, old))
    conn.execute("UPDATE totals SET fingerprint = ? WHERE fingerprint = ?", (new, old))
    conn.execute("UPDATE budget_changes SET fingerprint = ? WHERE fingerprint = ?", (new, old))
