"""Bernoulli(β) sampling and counting in one pass over the rows, on the executors.

Each partition draws its mask from its own stream (:class:`.streams.PartitionStreams`: in
release mode a ChaCha20 stream keyed from the executor's ``os.urandom``, no seed shared across
executors), encodes the sampled rows with the broadcast dictionaries (:mod:`.encoding`), maps them
through the recoding's broadcast arrays (leaf code -> node code at the scheme's level; none for the
level-0 table the chooser reads), and counts distinct code tuples. Spark then sums the per-partition
counts: the frequency table of the sample, small, is all that reaches the driver. The job reads
the published columns only: the sample's identity is digested from that table on the driver
(:func:`.fingerprint.sample_digest`), not from per-row hashes of every column.

Two ways to feed the executors' Python, the same sample and the same counts (a fast path and its
reference twin, :func:`packs_on_jvm` the rule): :class:`PackedSampleCounter` gets one long per
row, the row's leaf codes looked up and packed on the JVM (:func:`packed_codes`), where every
published column is text, integral or boolean, each dictionary has at most
``JVM_DICTIONARY_LIMIT`` values and the code grid stays below ``PACK_LIMIT``, and counts the
sampled keys (the driver unpacks the summed keys and maps them to the scheme's levels);
:class:`SampleCounter` gets the raw values and encodes them in Python. Both draw each batch's
mask with the same call on the same batch (the partition's rows in the same order, cut into
the same Arrow batches of ``maxRecordsPerBatch`` rows), so the sample is the same row set.

The sample exists only inside this one Spark job and is never re-drawn: everything after it
(choice, suppression, the written rows) is computed from the counts. A retried task draws a
fresh mask for its partition, and only one attempt's output is used, so every row is still kept
independently with probability β.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import polars as pl

from crowdsafe.data import packing
from crowdsafe.engines.spark.encoding import code_column, encode_batch
from crowdsafe.engines.spark.streams import PartitionStreams

COUNT = "__crowdsafe_count"
KEY = "__crowdsafe_key"
_MERGE_ROWS = 1 << 20  # sampled rows held before they are counted into the partition's table
PACK_LIMIT = 2.0**62  # the packed fast path: code grid (Π radices) below this
JVM_DICTIONARY_LIMIT = 4096  # the packed fast path: values per dictionary looked up on the JVM
_JVM_TYPES = ("string", "tinyint", "smallint", "int", "bigint", "boolean")


class _Tally:
    """The counts of one partition's sampled rows, fed batch by batch (frames of the key columns
    ``names``). Rows wait in ``pending`` until there are as many as the table has distinct keys
    (at least ``_MERGE_ROWS``), then are counted and merged into it: memory stays within a few
    times the distinct keys, and each row is merged a bounded number of times on average (the
    table at least doubles its rows between merges, or the pending rows do)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.table = pl.DataFrame({**{n: pl.Series([], dtype=pl.Int64) for n in self.names},
                                   COUNT: pl.Series([], dtype=pl.Int64)})
        self.pending: list[pl.DataFrame] = []
        self.rows = 0

    def add(self, keys: pl.DataFrame) -> None:
        self.pending.append(keys)
        self.rows += keys.height
        if self.rows >= max(_MERGE_ROWS, self.table.height):
            self._merge()

    def _merge(self) -> None:
        if not self.pending:
            return
        counted = pl.concat(self.pending).group_by(self.names).len(name=COUNT).with_columns(
            pl.col(COUNT).cast(pl.Int64))
        if self.table.height:
            counted = pl.concat([self.table, counted]).group_by(self.names).agg(pl.col(COUNT).sum())
        self.table = counted
        self.pending, self.rows = [], 0

    def counted(self) -> pl.DataFrame:
        """Every key fed with its count (keys in no particular order)."""
        self._merge()
        return self.table


@dataclass(frozen=True)
class SampleCounter:
    """The per-partition function (picklable; shipped to the executors by ``mapInArrow``).

    Input batches: the published columns (in order). ``dictionaries[j]``: value -> leaf code of
    column j; ``maps[j]``: leaf code -> node code (None: keep leaf codes).
    """

    streams: PartitionStreams
    beta: float
    dictionaries: tuple[pl.DataFrame, ...]
    maps: tuple[np.ndarray | None, ...]

    def output_schema(self) -> str:
        codes = ", ".join(f"{code_column(j)} long" for j in range(len(self.maps)))
        return f"{codes}, {COUNT} long"

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark import TaskContext

        d = len(self.maps)
        names = [code_column(j) for j in range(d)]
        context = TaskContext.get()
        assert context is not None  # this runs in a Spark task
        stream = self.streams.for_partition(context.partitionId())
        tally = _Tally(names)
        for batch in batches:
            keep = stream.bernoulli(batch.num_rows, self.beta)
            if not keep.any():
                continue
            columns = {}
            for j, name in enumerate(names):
                codes = encode_batch(batch.column(j).filter(pa.array(keep)), self.dictionaries[j])
                table = self.maps[j]
                columns[name] = codes if table is None else table[codes].astype(np.int64)
            tally.add(pl.DataFrame(columns))
        yield from _partition_output(tally.counted(), names)


def _partition_output(counted: pl.DataFrame, names: Sequence[str]) -> Iterator[Any]:
    """A partition's Arrow output: its frequency rows."""
    import pyarrow as pa

    counted = counted.select(*[pl.col(n).cast(pl.Int64) for n in names], pl.col(COUNT).cast(pl.Int64))
    for batch in counted.to_arrow().to_batches(max_chunksize=1 << 16):
        yield pa.RecordBatch.from_arrays(batch.columns, names=[*names, COUNT])


@dataclass(frozen=True)
class PackedSampleCounter:
    """The fast path's per-partition function: input batches hold the packed leaf-code key
    (``KEY``, :func:`packed_codes`); the output is the sampled keys with their counts. The driver
    unpacks the keys and maps them to the scheme's levels (:func:`count_sample`)."""

    streams: PartitionStreams
    beta: float

    @staticmethod
    def output_schema() -> str:
        return f"{KEY} long, {COUNT} long"

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        context = TaskContext.get()
        assert context is not None  # this runs in a Spark task
        stream = self.streams.for_partition(context.partitionId())
        tally = _Tally([KEY])
        for batch in batches:
            keep = stream.bernoulli(batch.num_rows, self.beta)  # the twin's call on the same batch
            if not keep.any():
                continue
            tally.add(pl.DataFrame({KEY: batch.column(KEY).to_numpy(zero_copy_only=False)[keep]}))
        yield from _partition_output(tally.counted(), [KEY])


def radices_of(dictionaries: Sequence[pl.DataFrame]) -> list[int]:
    """The key's radix of each column: one more than its largest leaf code."""
    return [int(cast(int, d.get_column("code").max() or 0)) + 1 for d in dictionaries]


def packs_on_jvm(types: Sequence[str], dictionaries: Sequence[pl.DataFrame]) -> bool:
    """The rule between the twins: the packed fast path when every published column's Spark type
    is text, integral or boolean, every dictionary has at most ``JVM_DICTIONARY_LIMIT`` values
    and the code grid is below ``PACK_LIMIT``."""
    return (all(t in _JVM_TYPES for t in types)
            and all(d.height <= JVM_DICTIONARY_LIMIT for d in dictionaries)
            and packing.fits(radices_of(dictionaries), PACK_LIMIT))


def code_expression(name: str, spark_type: str, table: pl.DataFrame) -> Any:
    """The leaf code (long) of column ``name`` as a Spark expression: its (value, code)
    dictionary ``table`` as a literal map (keys cast to the column's type), a null by the code of
    the null value. Every value of the column is in the dictionary (it was made from them)."""
    from pyspark.sql import functions as F

    column = F.col(f"`{name}`")
    pairs = [(v, int(c)) for v, c in zip(table.get_column("value").to_list(), table.get_column("code").to_list())
             if v is not None]
    null_codes = [int(c) for v, c in zip(table.get_column("value").to_list(), table.get_column("code").to_list())
                  if v is None]
    missing = F.lit(null_codes[0] if null_codes else None).cast("long")
    if not pairs:
        return missing
    lookup = F.create_map(*[x for v, c in pairs for x in (F.lit(v).cast(spark_type), F.lit(c).cast("long"))])
    return F.when(column.isNull(), missing).otherwise(F.try_element_at(lookup, column))


def packed_codes(rows: Any, columns: Sequence[str], dictionaries: Sequence[pl.DataFrame]) -> Any:
    """``rows`` (the published columns) as the packed key of the leaf codes (on the JVM:
    :func:`code_expression`, :func:`crowdsafe.engines.spark.packing.pack`); row order and
    partitioning unchanged (a projection)."""
    from crowdsafe.engines.spark import packing as spark_packing

    types = {f.name: f.dataType.simpleString() for f in rows.schema.fields}
    codes = [code_expression(c, types[c], d) for c, d in zip(columns, dictionaries)]
    key = spark_packing.pack(codes, radices_of(dictionaries)).alias(KEY)
    return rows.select(key)


def count_sample(rows: Any, streams: PartitionStreams, beta: float, dictionaries: Sequence[pl.DataFrame],
                 maps: Sequence[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray]:
    """Sample ``rows`` (the published columns) and count: (codes (m, d), counts (m,)), the code
    tuples in lexicographic order. One Spark job; only the counted table reaches the driver."""
    from pyspark.sql import functions as F

    columns = rows.columns
    types = [f.dataType.simpleString() for f in rows.schema.fields]
    if packs_on_jvm(types, dictionaries):
        packed = PackedSampleCounter(streams, float(beta))
        mapped = packed_codes(rows, columns, dictionaries).mapInArrow(packed, packed.output_schema())
        names = [KEY]
    else:
        counter = SampleCounter(streams, float(beta), tuple(dictionaries), tuple(maps))
        mapped = rows.mapInArrow(counter, counter.output_schema())
        names = [code_column(j) for j in range(len(maps))]
    table = mapped.groupBy(*names).agg(F.sum(COUNT).alias(COUNT)).toArrow()
    counts = table.column(COUNT).to_numpy().astype(np.int64)
    if names == [KEY]:  # leaf codes from the keys, then the scheme's levels
        keys = table.column(KEY).to_numpy().astype(np.int64)
        codes = np.column_stack(packing.unpack(keys, radices_of(dictionaries))).astype(np.int64)
        if any(m is not None for m in maps):
            codes = np.column_stack([c if m is None else m[c] for c, m in zip(codes.T, maps)]).astype(np.int64)
            grouped = pl.DataFrame(codes).with_columns(pl.Series(COUNT, counts)).group_by(pl.exclude(COUNT)).agg(
                pl.col(COUNT).sum())
            codes = grouped.drop(COUNT).to_numpy().astype(np.int64).reshape(grouped.height, len(maps))
            counts = grouped.get_column(COUNT).to_numpy().astype(np.int64)
    else:
        codes = np.column_stack([table.column(n).to_numpy() for n in names]).astype(np.int64)
    order = np.lexsort(codes.T[::-1]) if len(codes) else np.zeros(0, dtype=np.int64)
    return codes.reshape(len(counts), len(maps))[order], counts[order]
