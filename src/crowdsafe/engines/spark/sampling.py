"""Bernoulli(β) sampling and counting in one pass over the rows, on the executors.

Each partition draws its mask from its own stream (:class:`.streams.PartitionStreams`: in
release mode a ChaCha20 stream keyed from the executor's ``os.urandom``, no seed shared across
executors), encodes the sampled rows with the broadcast dictionaries (:mod:`.encoding`), maps them
through the recoding's broadcast arrays (leaf code -> node code at the scheme's level; none for the
level-0 table the chooser reads), and counts distinct code tuples. Spark then sums the per-partition
counts: the frequency table of the sample, small, is all that reaches the driver, with the sample's
multiset hash sums (its identity, :mod:`.fingerprint`).

The sample exists only inside this one Spark job and is never re-drawn: everything after it
(choice, suppression, the written rows) is computed from the counts. A retried task draws a
fresh mask for its partition, and only one attempt's output is used, so every row is still kept
independently with probability β.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.engines.spark.encoding import code_column, encode_batch
from crowdsafe.engines.spark.fingerprint import HASH_COLUMNS
from crowdsafe.engines.spark.streams import PartitionStreams

KIND = "__crowdsafe_kind"  # 0: a frequency row; 1 + 2·salt + half: a hash-sum row
COUNT = "__crowdsafe_count"
_LOW = np.uint64(0xFFFFFFFF)
_MERGE_EVERY = 32  # batches counted before their tables are merged


@dataclass(frozen=True)
class SampleCounter:
    """The per-partition function (picklable; shipped to the executors by ``mapInArrow``).

    Input batches: the published columns (in order), then the hash columns. ``dictionaries[j]``:
    value -> leaf code of column j; ``maps[j]``: leaf code -> node code (None: keep leaf codes).
    """

    streams: PartitionStreams
    beta: float
    dictionaries: tuple[pl.DataFrame, ...]
    maps: tuple[np.ndarray | None, ...]

    def output_schema(self) -> str:
        codes = ", ".join(f"{code_column(j)} long" for j in range(len(self.maps)))
        return f"{KIND} int, {codes}, {COUNT} long"

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark import TaskContext

        d = len(self.maps)
        names = [code_column(j) for j in range(d)]
        context = TaskContext.get()
        assert context is not None  # this runs in a Spark task
        stream = self.streams.for_partition(context.partitionId())
        sums = np.zeros(len(HASH_COLUMNS), dtype=np.uint64)
        parts = []
        for batch in batches:
            keep = stream.bernoulli(batch.num_rows, self.beta)
            if not keep.any():
                continue
            columns = {}
            for j, name in enumerate(names):
                codes = encode_batch(batch.column(j).filter(pa.array(keep)), self.dictionaries[j])
                table = self.maps[j]
                columns[name] = codes if table is None else table[codes].astype(np.int64)
            for i, name in enumerate(HASH_COLUMNS):
                hashes = batch.column(name).to_numpy(zero_copy_only=False)[keep].view(np.uint64)
                with np.errstate(over="ignore"):  # sums modulo 2^64 by design
                    sums[i] += np.add.reduce(hashes, dtype=np.uint64)
            parts.append(pl.DataFrame(columns).group_by(names).len(name=COUNT).with_columns(pl.col(COUNT).cast(pl.Int64)))
            if len(parts) >= _MERGE_EVERY:  # bounded memory: at most one table per distinct tuple
                parts = [pl.concat(parts).group_by(names).agg(pl.col(COUNT).sum())]
        if parts:
            counted = pl.concat(parts).group_by(names).agg(pl.col(COUNT).sum())
        else:
            counted = pl.DataFrame({**{n: pl.Series([], dtype=pl.Int64) for n in names},
                                    COUNT: pl.Series([], dtype=pl.Int64)})
        counted = counted.select(pl.lit(0, dtype=pl.Int32).alias(KIND), *[pl.col(n).cast(pl.Int64) for n in names],
                                 pl.col(COUNT).cast(pl.Int64))
        # hash sums as 32-bit halves (kind 1 + 2·salt + half), so Spark's long sums cannot overflow
        halves = [int((sums[i] >> np.uint64(32 * half)) & _LOW) for i in range(len(sums)) for half in (0, 1)]
        hashed = pl.DataFrame({
            KIND: pl.Series(range(1, len(halves) + 1), dtype=pl.Int32),
            **{n: pl.Series([0] * len(halves), dtype=pl.Int64) for n in names},
            COUNT: pl.Series(halves, dtype=pl.Int64),
        })
        out = pl.concat([counted, hashed])
        for batch in out.to_arrow().to_batches(max_chunksize=1 << 16):
            yield pa.RecordBatch.from_arrays(batch.columns, names=[KIND, *names, COUNT])


def count_sample(rows: Any, streams: PartitionStreams, beta: float, dictionaries: Sequence[pl.DataFrame],
                 maps: Sequence[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Sample ``rows`` (published columns + hash columns) and count: (codes (m, d), counts (m,),
    the sample's hash sums). One Spark job; only the counted table reaches the driver."""
    from pyspark.sql import functions as F

    counter = SampleCounter(streams, float(beta), tuple(dictionaries), tuple(maps))
    names = [code_column(j) for j in range(len(maps))]
    mapped = rows.mapInArrow(counter, counter.output_schema())
    table = mapped.groupBy(KIND, *names).agg(F.sum(COUNT).alias(COUNT)).toArrow()
    kind = table.column(KIND).to_numpy()
    codes = np.column_stack([table.column(n).to_numpy() for n in names]).astype(np.int64)
    counts = table.column(COUNT).to_numpy().astype(np.int64)
    rows = kind == 0
    order = np.lexsort(codes[rows].T[::-1]) if rows.any() else np.zeros(0, dtype=np.int64)
    sums = [0] * len(HASH_COLUMNS)
    for which, value in zip(kind[~rows], counts[~rows]):
        salt, half = divmod(int(which) - 1, 2)
        sums[salt] += int(value) << (32 * half)
    return codes[rows][order], counts[rows][order], sums
