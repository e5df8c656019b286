"""The Polars engine's publish of a table larger than memory: the same run, rows read batch by batch.

When :func:`crowdsafe.data.streamed_table.read_streamed` reads the input (a file over
``crowdsafe.data.streaming.EAGER_BYTES``), the Polars engine's per-row stages take the
:class:`StreamedPublicationTable` and :class:`StreamedSample` of this module instead of a Dataset,
and the driver's sequence is unchanged (:mod:`crowdsafe.drivers.publish`):

- ``identity``: one pass over every row, :class:`~crowdsafe.data.streamed_fingerprint.MultisetDigest`
  (the table's :meth:`~crowdsafe.data.Dataset.fingerprint`);
- ``sample``: :func:`draw_mask` draws Bernoulli(β) for every row in file order, in batches, from
  the run's stream: :meth:`~crowdsafe.randomness.Randomness.bernoulli` reads one 64-bit word per
  row (the same words for ``a`` then ``b`` rows as for ``a + b``) and continues the rare tied rows
  from its tie stream in row order, so the mask is the in-memory draw's, and both streams end at
  the same place. The mask is kept as bits (n/8 bytes), never rows;
- ``sample_identity``: two passes over the sampled rows (the text values they hold, then their
  hashes): the sample's fingerprint. The second pass also counts the published columns' tuples
  (:class:`TupleCounter`), held in the run until the count stage takes them;
- ``count`` (after the charge): those counts, or, in a run without a ledger (no sample identity),
  one pass over the published columns of the sampled rows. Either way the same
  :class:`~crowdsafe.anonymize.counted.CountedSample` (leaf codes in lexicographic order, counts) as
  the in-memory count.

Memory: one batch, the distinct values, the sample's distinct published tuples and the mask. The
rows, the mask and every count stay in the run, as in memory (docs/privacy-boundary.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from crowdsafe.data import packing
from crowdsafe.data.streamed_fingerprint import MultisetDigest, SubsetValues, text_dictionaries

if TYPE_CHECKING:
    from crowdsafe.anonymize.counted import CountedSample
    from crowdsafe.data import Dataset
    from crowdsafe.data.streamed_table import StreamedTable
    from crowdsafe.privacy.ledger import Ledger
    from crowdsafe.randomness import Randomness

__all__ = ["StreamedPublicationTable", "StreamedSample", "TupleCounter", "count_streamed", "draw_mask",
           "table_identity"]

#: Rows drawn per call when drawing the mask (a multiple of 8: the mask is packed into bytes).
DRAW_ROWS = 1 << 20
#: Partial counts merged once they hold this many tuples.
MERGE_TUPLES = 1 << 18


@dataclass(frozen=True)
class StreamedPublicationTable:
    """A streamed table prepared for the safe pipeline: ``given`` (the rows as read, whose
    fingerprint the ledger knows), ``dataset`` (the domain prepared by
    :func:`~crowdsafe.anonymize.publish.prepare_dataset`: published columns, hierarchies)."""

    given: StreamedTable
    dataset: Dataset
    columns: list[str]
    notes: list[str]
    label: str

    @property
    def n_rows(self) -> int:
        return self.given.n_rows

    @property
    def domain(self) -> Dataset:
        """The prepared dataset holding every distinct value of the published columns."""
        return self.dataset

    @property
    def hierarchies(self) -> Mapping[str, Any]:
        return self.dataset.hierarchies

    @property
    def schema(self) -> dict[str, pl.DataType]:
        return dict(self.given.rows.collect_schema())

    def identity(self, ledger: Ledger) -> str:
        """The table's fingerprint keyed with the ledger's secret: one pass over every row."""
        return table_identity(self.given, ledger)


def table_identity(table: StreamedTable, ledger: Ledger) -> str:
    """A streamed table's :meth:`~crowdsafe.data.Dataset.fingerprint` keyed with the ledger's
    secret (as the table loaded whole gives it, as given: before ``missing='drop'`` removed rows):
    one pass over every row."""
    rows, values, batches = table.as_given("hashing the table (its identity)")
    schema = dict(rows.collect_schema())
    digest = MultisetDigest(schema, text_dictionaries(values))
    for batch in batches:
        digest.add(batch)

    def legacy() -> str:  # a second pass, only for a ledger written by an earlier crowdsafe
        from crowdsafe.data.legacy_fingerprint import legacy_stream_digest

        _, again, passes = table.as_given("hashing the table (its former identity)")
        return ledger.identify(legacy_stream_digest(schema, again, passes))

    return ledger.adopt(digest.hexdigest(ledger.identity_key), legacy)


def draw_mask(n: int, beta: float, stream: Randomness) -> np.ndarray | None:
    """Sample_β's mask over ``n`` rows, drawn from ``stream`` as :func:`crowdsafe.sampling.sample_of`
    draws it (module docstring), packed into bits; None when β = 1 (every row, nothing drawn)."""
    if beta == 1.0:
        stream.bernoulli(0, beta)  # checks β as the one draw does; draws nothing
        return None
    parts = [np.packbits(stream.bernoulli(min(DRAW_ROWS, n - start), beta)) for start in range(0, n, DRAW_ROWS)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)


@dataclass(frozen=True)
class StreamedSample:
    """A Bernoulli sample of a streamed table: the table and the mask (:func:`draw_mask`)."""

    table: StreamedPublicationTable
    mask: np.ndarray | None
    #: tuple counts made on the way by :meth:`identity`, by columns (taken by :func:`count_streamed`)
    counted: dict[tuple[str, ...], CountedSample] = field(default_factory=dict, compare=False, repr=False)

    def batches(self, columns: Sequence[str] | None = None, label: str = "reading the sample"
                ) -> Iterator[pl.DataFrame]:
        """The sampled rows of ``columns`` (None: all), batch by batch in file order (the pass shown
        as ``label`` on a terminal, :mod:`crowdsafe.progress`)."""
        offset = 0
        for batch in self.table.given.batches(columns, ordered=True, label=label):
            n = batch.height
            if self.mask is None:
                yield batch
            else:
                first, last = offset // 8, (offset + n + 7) // 8
                bits = np.unpackbits(self.mask[first:last])[offset % 8: offset % 8 + n].astype(np.bool_)
                yield batch.filter(pl.Series(bits))
            offset += n

    def identity(self, ledger: Ledger) -> str:
        """The sample's fingerprint keyed with the ledger's secret: the text values the sampled rows
        hold (one pass over the text columns), then their hashes (one pass over every column). The
        second pass also counts the published columns' tuples, kept for :func:`count_streamed`
        (one pass fewer; the counts stay in the run, read only after the charge)."""
        schema = self.table.schema
        dictionaries = text_dictionaries(self.table.given.domain.frame)
        if dictionaries:
            present = SubsetValues(dictionaries)
            for batch in self.batches(list(dictionaries), label="finding the sample's values"):
                present.add(batch)
            dictionaries = present.subset_dictionaries()
        digest = MultisetDigest(schema, dictionaries)
        counter = TupleCounter(self.table, self.table.columns)
        for batch in self.batches(label="hashing and counting the sample"):
            digest.add(batch)
            counter.add(batch)
        self.counted[tuple(self.table.columns)] = counter.counted()
        return digest.hexdigest(ledger.identity_key)


def count_streamed(sample: StreamedSample, columns: Sequence[str], label: str = "counting the sample") -> CountedSample:
    """The sample's frequency table over ``columns``: each batch's values mapped to the
    hierarchies' leaf codes (a lookup made once from the domain's distinct values), its code tuples
    counted, the counts merged (:class:`TupleCounter`); the
    :class:`~crowdsafe.anonymize.counted.CountedSample` the in-memory count gives (leaf-code tuples
    in lexicographic order, their counts). Taken from the sample's identity pass when that pass
    counted these columns (:meth:`StreamedSample.identity`), else one pass of its own."""
    kept = sample.counted.pop(tuple(columns), None)
    if kept is not None:
        return kept
    counter = TupleCounter(sample.table, columns)
    for batch in sample.batches(list(columns), label=label):
        counter.add(batch)
    return counter.counted()


class TupleCounter:
    """Counts of the published columns' leaf-code tuples over the batches given to :meth:`add`."""

    def __init__(self, table: StreamedPublicationTable, columns: Sequence[str]) -> None:
        self.columns = list(columns)
        self.hierarchies = {c: table.hierarchies[c] for c in self.columns}
        domain = table.dataset.frame
        self.lookups = {}
        for column in self.columns:
            values = domain.get_column(column).unique()
            self.lookups[column] = pl.DataFrame({column: values, "__code": self.hierarchies[column].leaf_codes(
                values, column=column).astype(np.int64)})
        self.sizes = [self.hierarchies[c].size(0) for c in self.columns]
        self.packed = packing.fits(self.sizes)  # one int64 key per tuple (its order is the tuples' lexicographic order)
        self.names = ["__key"] if self.packed else [f"__c{j}" for j in range(len(self.columns))]
        self.partial: list[pl.DataFrame] = []
        self.held = 0

    def add(self, batch: pl.DataFrame) -> None:
        if not batch.height:
            return
        codes = [batch.select(column).join(self.lookups[column], on=column, how="left", nulls_equal=True,
                                           maintain_order="left").get_column("__code") for column in self.columns]
        coded = (pl.DataFrame({"__key": packing.pack([c.to_numpy() for c in codes], self.sizes)}) if self.packed
                 else pl.DataFrame([c.alias(name) for c, name in zip(codes, self.names)]))
        counted = coded.group_by(self.names).agg(pl.len().cast(pl.Int64).alias("__count"))
        self.partial.append(counted)
        self.held += counted.height
        if self.held > MERGE_TUPLES and len(self.partial) > 1:
            self.partial = [_merged(self.partial, self.names)]
            self.held = self.partial[0].height

    def counted(self) -> CountedSample:
        """The :class:`~crowdsafe.anonymize.counted.CountedSample` of the rows added."""
        from crowdsafe.anonymize.counted import CountedSample

        columns, sizes, names = self.columns, self.sizes, self.names
        if not self.partial:
            return CountedSample(tuple(columns), np.zeros((0, len(columns)), dtype=np.int64),
                                 np.zeros(0, dtype=np.int64), self.hierarchies)
        table = _merged(self.partial, names).sort(names)
        counts = table.get_column("__count").to_numpy().astype(np.int64)
        if not self.packed:
            return CountedSample(tuple(columns), table.select(names).to_numpy().astype(np.int64)
                                 .reshape(-1, len(columns)), counts, self.hierarchies)
        keys = table.get_column("__key").to_numpy().astype(np.int64)
        cells = np.empty((len(keys), len(columns)), dtype=np.int64)
        for j in range(len(columns) - 1, -1, -1):
            keys, cells[:, j] = np.divmod(keys, max(sizes[j], 1))
        return CountedSample(tuple(columns), cells, counts, self.hierarchies)


def _merged(partial: list[pl.DataFrame], names: list[str]) -> pl.DataFrame:
    return pl.concat(partial).group_by(names).agg(pl.col("__count").sum())
