"""The Polars engine's DP query on a table larger than memory: the same answer, rows read by streaming.

When :func:`crowdsafe.data.streamed_table.read_streamed` reads the input (a file over
``crowdsafe.data.streaming.EAGER_BYTES``, the rule of :func:`~crowdsafe.data.streamed_table.streams`),
the query driver (:mod:`crowdsafe.drivers.query`) gets a
:class:`~crowdsafe.data.streamed_table.StreamedTable` instead of a Dataset, and its sequence is
unchanged (read and check → budget → charge → exact aggregate and noise):

- the checks (columns, identifiers refused, the filter's types, public domains, the person
  identifier) run on the table's *domain*, whose schema, column types and hierarchies are those
  of the table loaded whole (the loader's decisions depend only on each column's set of values);
- the ledger's identity is :func:`~crowdsafe.engines.streamed_publish.table_identity`: one pass
  over every row, the table's :meth:`~crowdsafe.data.Dataset.fingerprint`;
- after the charge, :class:`StreamedAggregate` runs the in-memory aggregate's own Polars queries
  (:func:`crowdsafe.mechanisms.query_aggregates.rows_aggregate`) on the lazy scan, collected by
  Polars' streaming engine. The exact aggregates are integers (a count, histogram cells, a sum on
  the exact grid of :func:`~crowdsafe.mechanisms.query_aggregates.sum_grid`), so how the rows are
  split does not change them; a histogram without a public domain is sorted by cell before its
  noise. A quantile reads its column in file order (8 bytes a row), and a contribution bound
  (person identifier) the query's columns of the rows the filter keeps, in file order, with the
  same random keys: both as the in-memory query reads them, so the same answer, with memory
  growing with those rows only.

Its reference twin is :func:`~crowdsafe.mechanisms.query_aggregates.polars_aggregate` on the
table loaded whole (tests/fast_paths/test_streamed_query.py runs both on either side of the
threshold). An input the streamed read cannot take as the loader does is read whole. Nothing
computed from the rows leaves the run except the charged answer, as in memory
(docs/privacy-boundary.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from crowdsafe.mechanisms.query_aggregates import rows_aggregate

if TYPE_CHECKING:
    from crowdsafe.data import Dataset
    from crowdsafe.data.streamed_table import StreamedTable
    from crowdsafe.mechanisms.query_plan import ExactAggregate, QueryPlan
    from crowdsafe.randomness import Randomness

__all__ = ["StreamedAggregate"]


@dataclass(frozen=True)
class StreamedAggregate:
    """The exact aggregate of a query on ``table``, streamed (module docstring); called as
    :func:`~crowdsafe.mechanisms.query_aggregates.polars_aggregate` is, with ``table.domain`` as
    the Dataset."""

    table: StreamedTable

    def __call__(self, dataset: Dataset, plan: QueryPlan, randomness: Randomness) -> tuple[ExactAggregate, int]:
        from crowdsafe.progress import working

        with working("reading the table: the query's rows"):
            return rows_aggregate(self.table.rows, dataset, plan, randomness, engine="streaming")
