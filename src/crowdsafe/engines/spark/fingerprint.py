"""The identity of a table on Spark: a digest of its rows as a multiset.

Spark has no row order to speak of (partitions are read in parallel, and a table split in other
files is the same table), so the Spark engine identifies a table by the multiset of its rows:
every row gets two 64-bit xxHash values (different salts; each column hashed with its null
flag, so ``(a, null)`` and ``(null, a)`` differ), the values are summed modulo 2^64 per salt,
and the digest is BLAKE2b-256 of the column names and types, the row count and the two sums.
Equal tables in any order or partitioning get equal digests.

A sample drawn on Spark exists only inside its job: its rows are never written, so no later
input can be it. Its identity (:func:`sample_digest`) is therefore not a digest of its rows but
of what the run made of it: the table's identity and the sample's frequency table (the counted
columns, their levels, the code tuples and counts). So the sampling job reads the published
columns only, not every column with two hashes per row.

It is not the Polars engine's fingerprint (:meth:`crowdsafe.data.Dataset.fingerprint`, which
digests values in row order): the ledger sees the same data under the two engines as two
datasets. Sums of 64-bit hashes are not collision-resistant against a forger; they identify
honest data for the ledger, they are not a cryptographic commitment.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

SALTS = (0, 1)
HASH_COLUMNS = tuple(f"__crowdsafe_h{salt}" for salt in SALTS)
_VERSION = b"crowdsafe-spark-multiset-v1"
_SAMPLE_VERSION = b"crowdsafe-spark-sample-v2"
_MASK = (1 << 64) - 1


def row_hashes(frame: Any) -> list[Any]:
    """The per-row hash columns (one per salt) over every column of ``frame``."""
    from pyspark.sql import functions as F

    parts = [x for c in frame.columns for x in (F.col(c), F.col(c).isNull())]
    return [F.xxhash64(F.lit(salt), *parts).alias(name) for salt, name in zip(SALTS, HASH_COLUMNS)]


_LIMBS = (0, 21, 42)  # a 64-bit hash as three unsigned limbs of 21, 21 and 22 bits
SUM_COLUMNS = tuple(f"{name}_sum{shift}" for name in HASH_COLUMNS for shift in _LIMBS)


def hash_sum_aggregates() -> list[Any]:
    """Aggregates summing each hash column exactly: each hash split into unsigned limbs of at
    most 22 bits, summed as longs (exact below 2^41 rows; Spark's ANSI arithmetic raises rather
    than wraps beyond), named ``SUM_COLUMNS``; :func:`combine_sums` puts them back together. (Long
    sums, not decimal ones: no per-row decimal object on the JVM.)"""
    from pyspark.sql import functions as F

    aggregates = []
    for name in HASH_COLUMNS:
        for shift, next_shift in zip(_LIMBS, (*_LIMBS[1:], 64)):
            limb = F.shiftrightunsigned(F.col(name), shift).bitwiseAND(F.lit((1 << (next_shift - shift)) - 1))
            aggregates.append(F.sum(limb).alias(f"{name}_sum{shift}"))
    return aggregates


def combine_sums(limbs: Sequence[Any]) -> list[int]:
    """Each hash column's sum modulo 2^64 from the limb sums (in ``SUM_COLUMNS`` order; a null
    sum, of no rows, is 0)."""
    values = [int(v or 0) for v in limbs]
    return [sum(values[i * len(_LIMBS) + j] << shift for j, shift in enumerate(_LIMBS)) & _MASK
            for i in range(len(HASH_COLUMNS))]


def digest(names: Sequence[str], types: Sequence[str], rows: int, sums: Sequence[int]) -> str:
    """The multiset digest from column names and Spark types, row count and hash sums."""
    state = hashlib.blake2b(_VERSION, digest_size=32)
    for name, kind in zip(names, types):
        state.update(f"{name}\x00{kind}\x00".encode())
    state.update(str(int(rows)).encode())
    for value in sums:
        state.update((int(value) & _MASK).to_bytes(8, "little"))
    return state.hexdigest()


def frame_digest(frame: Any) -> str:
    """The digest of ``frame``'s rows (module docstring), by one aggregation job."""
    from pyspark.sql import functions as F

    row = frame.select(*row_hashes(frame)).agg(F.count(F.lit(1)), *hash_sum_aggregates()).first()
    return digest(frame.columns, frame_types(frame), int(row[0]), combine_sums(row[1:]))


def frame_types(frame: Any) -> list[str]:
    return [field.dataType.simpleString() for field in frame.schema.fields]


def sample_digest(table: str, columns: Sequence[str], levels: Sequence[int], codes: np.ndarray,
                  counts: np.ndarray) -> str:
    """The identity of a sample counted on Spark (module docstring): BLAKE2b-256 of the table's
    identity ``table``, the counted ``columns`` at their ``levels`` (0: leaves), and the sample's
    frequency table, ``codes`` (m × d code tuples, in lexicographic order) with their ``counts``.
    Two samples with the same counts get the same identity, which the ledger records once."""
    state = hashlib.blake2b(_SAMPLE_VERSION, digest_size=32)
    state.update(table.encode() + b"\x00")
    for name, level in zip(columns, levels):
        state.update(f"{name}\x00{int(level)}\x00".encode())
    state.update(np.ascontiguousarray(codes, dtype="<i8").tobytes())
    state.update(np.ascontiguousarray(counts, dtype="<i8").tobytes())
    return state.hexdigest()
