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
    """How a message names ``dataset``, a ledger's name or identity for a table: by its name, and
    an identity (a digest of the data, custodian-only) never, as "this table"."""
    return "this table" if _IDENTITY.fullmatch(dataset) else f"dataset {dataset!r}"
