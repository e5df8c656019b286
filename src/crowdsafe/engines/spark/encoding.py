"""Dictionary encoding on Spark with the dictionaries the Polars engine would use.

The dictionaries (value -> code) are made on the driver, by the data layer's own encoding
(:meth:`crowdsafe.data.Dataset.encoded`: a column with a hierarchy gets its leaf codes), applied
to a *domain* table: for each column, its distinct values (one Spark aggregation). The publish
looks them up on the JVM as literal maps (:mod:`.sampling`). So the codes are those
of the Polars engine by construction, and the data-dependent part is exactly what the Polars
engine also reads from the data (the values present, for coverage checks and flat hierarchies).

Helpers of the Spark table pass (:mod:`.table`): :func:`domain_scan`, :func:`domain_frame`,
:func:`dictionary`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import polars as pl

from crowdsafe.errors import InputError


def domain_scan(frame: Any, columns: Sequence[str], extra: Sequence[Any] = ()) -> tuple[dict[str, pl.Series], Any]:
    """One aggregation over ``frame``: the distinct values of each of ``columns`` (nulls included,
    as a null value), plus the ``extra`` aggregate expressions. Returns (values per column, the
    Arrow row of the extra aggregates)."""
    from pyspark.sql import functions as F

    aggregates = []
    for j, c in enumerate(columns):
        aggregates.append(F.collect_set(F.col(c)).alias(f"__values_{j}"))
        aggregates.append(F.max(F.col(c).isNull().cast("int")).alias(f"__null_{j}"))
    table = frame.agg(*aggregates, *extra).toArrow()
    values: dict[str, pl.Series] = {}
    for j, c in enumerate(columns):
        listed = cast(pl.Series, pl.from_arrow(table.column(f"__values_{j}"))).explode().drop_nulls()
        series = listed.sort().alias(c)
        if table.column(f"__null_{j}")[0].as_py():
            series = series.extend(pl.Series(c, [None], dtype=series.dtype))
        values[c] = series
    return values, table


def domain_frame(values: Mapping[str, pl.Series]) -> pl.DataFrame:
    """One frame holding every column's distinct values, shorter columns padded by repeating their
    first value (the rows mean nothing; only each column's set of values does)."""
    height = max((len(v) for v in values.values()), default=0)
    columns = []
    for name, series in values.items():
        if len(series) == 0:
            raise InputError(f"column '{name}' has no values")
        pad = height - len(series)
        columns.append(series.extend(series.head(1).extend_constant(series[0], pad - 1)) if pad else series)
    return pl.DataFrame(columns)


def dictionary(raw: pl.Series, codes: np.ndarray) -> pl.DataFrame:
    """The (value, code) pairs of one column: ``raw`` values as Spark holds them, aligned with
    their codes (several raw spellings may share a code, e.g. before and after trimming)."""
    return pl.DataFrame({"value": raw, "code": codes.astype(np.int64)}).unique(subset="value", keep="first")
