"""Keyed identities: how the ledger names a table without revealing anything about it.

A table's fingerprint (:meth:`crowdsafe.data.Dataset.fingerprint`, or the Spark engine's
multiset digest) is a plain digest of its content: anyone holding a candidate table can compute
it, so an attacker who knows every row but one could test each candidate for the missing row.
The ledger therefore stores only :func:`keyed_identity` of it, keyed with a secret made with the
ledger (:attr:`crowdsafe.privacy.ledger.Ledger.identity_key`). No identity, keyed or not, belongs
in a public output. Like :mod:`crowdsafe.errors`, this module sits below every layer.
"""

from __future__ import annotations

import hashlib
import re

# A table's identity in the ledger (a keyed BLAKE2b-256 digest, hex).
_IDENTITY = re.compile(r"[0-9a-f]{64}")


def keyed_identity(fingerprint: str, key: bytes) -> str:
    """BLAKE2b-256 (hex) of a hex ``fingerprint`` keyed with ``key`` (a MAC: without the key the
    result cannot be recomputed from a guess of the data)."""
    return hashlib.blake2b(bytes.fromhex(fingerprint), key=key, digest_size=32).hexdigest()


def dataset_named(dataset: str) -> str:
    """How a message names ``dataset``, a ledger's name or identity for a table: by its name
    (quoted as ``repr`` quotes it, so a control character in it is escaped, never sent to the
    terminal raw), and an identity (a digest of the data, custodian-only) never, as "this table"."""
    return "this table" if _IDENTITY.fullmatch(dataset) else f"dataset {dataset!r}"


def printable(text: str, *, keep: str = "") -> str:
    """``text`` with every character ``repr`` escapes (control characters such as ESC, CR, LF and
    tab, bidirectional overrides, other non-printable ones) written as ``repr`` writes it
    (``\x1b``, ``\n``, ``\u202e``), the quotes left out: a name or path as the terminal may
    show it (an escape sequence in a ``--name`` or a file name would colour, move or clear the
    terminal). ``keep``: characters left as they are (a line break of a rendered table)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else repr(c)[1:-1] for c in text)


def note_line(text: str) -> str:
    """The line a note about the input is printed as on standard error: ``crowdsafe: note: ``
    and ``text`` with no control character raw (:func:`printable`; a file or column name may
    hold one)."""
    return f"crowdsafe: note: {printable(text)}"


def warning_line(text: str) -> str:
    """The line a warning is printed as on standard error: ``crowdsafe: warning: `` and ``text``
    with no control character raw, as an error reads ``crowdsafe: error: ...`` (:func:`note_line`)."""
    return f"crowdsafe: warning: {printable(text)}"
