"""The partition part a query reads (``--partition COLUMN``), decided from the schema and the query alone.

Queries on the parts of a partition compose in parallel in the ledger (McSherry 2009) only when
every neighbour (one privacy unit added, removed or changed) touches one part. Two rules make
that hold, both checked here before the ledger is touched:

- **one person, one part.** With a ``person_id`` in the schema a person owns several rows, and
  the contribution bound is applied per query after the filter, so a person whose rows lie in
  two parts spends in both: parallel composition would under-count. A partition is therefore
  refused unless its column is the person identifier itself (nothing else in a schema says a
  column is constant per person);
- **one part, one key.** The part is the literal of ``column = VALUE`` cast to the column's
  type and written in one canonical form (:func:`part_key`), so ``age = 30`` and ``age = 30.0``
  (the same rows) are one part, not two. The key is made of the query's literal and the
  column's declared type only, never of the data.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import polars as pl

from crowdsafe.errors import ParameterError, SchemaError
from crowdsafe.mechanisms.query_language import Query, equality_value, is_text, reconciled_operand
from crowdsafe.privacy.ledger_parts import number_text

# Above 2**53 a float no longer holds every whole number: Polars compares an integer column with
# a float literal as floats, so `x = 9007199254740992.0` also matches 9007199254740993.
_EXACT_FLOAT = 2**53


def partition_part(query: Query, partition: str, names: list[str], dtype: pl.DataType | None,
                   person: str | None) -> tuple[str, str]:
    """(column, canonical value) of the part a query on ``partition`` reads, or a one-line refusal
    (from the schema and the query text only, before anything is charged)."""
    if partition not in names or dtype is None:
        raise SchemaError(f"the partition column '{partition}' is not a column of the data")
    if person is not None and partition != person:
        raise ParameterError(
            f"partition='{partition}' is refused: the schema's person identifier '{person}' lets one person own "
            f"rows in several parts of '{partition}', so queries on its parts do not compose in parallel; leave out "
            f"the partition parameter (the queries then compose sequentially) or use partition='{person}'",
            parameter="partition",
        )
    value = equality_value(query.where, partition)
    if value is None:
        raise ParameterError(f"a query on a part of the partition by '{partition}' must filter on {partition} = VALUE")
    return partition, part_key(partition, dtype, value)


def part_key(column: str, dtype: pl.DataType, value: str | float | int) -> str:
    """The literal ``value`` cast to the column's type, in one canonical text: whole numbers in
    digits (``30``, also for ``30.0`` or a real column), other reals by ``repr`` (``30.5``), −0.0 as
    ``0``, dates ISO (``2020-01-01``, also for ``'20200101'``), date-times ISO (in UTC when they
    carry a zone), true/false in lower case, text as written."""
    if is_text(dtype):
        return str(value)
    _, cast = reconciled_operand(column, dtype, value)
    if dtype.is_numeric():
        if isinstance(cast, float) and math.isnan(cast):  # the query language has no NaN; kept for safety
            raise ParameterError(f"a partition part cannot be NaN (column '{column}')", parameter="partition")
        if dtype.is_integer() and isinstance(cast, float) and abs(cast) >= _EXACT_FLOAT:
            raise ParameterError(
                f"{column} = {value!r}: an integer column is compared with a number written with a point or an "
                f"exponent as floats, which past 2^53 matches several integers; write the whole number in digits",
                parameter="partition",
            )
        return number_text(float(cast) if dtype.is_float() else cast)
    return _temporal_or_plain(cast)


def _temporal_or_plain(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            return value.astimezone(dt.UTC).isoformat()
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


__all__ = ["part_key", "partition_part"]
