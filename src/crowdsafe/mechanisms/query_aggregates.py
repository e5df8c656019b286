"""The exact aggregate of a DP query on the Polars engine: the rows it reads and what they sum to.

Nothing computed here is shown: :mod:`crowdsafe.mechanisms.query_noise` adds the noise that the
plan's (ε, δ) and sensitivity call for. Histogram cells come from public domains only
(:func:`histogram_domain`); sums run on an exact integer grid (:func:`sum_grid`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from crowdsafe.data import Dataset, unicode_forms
from crowdsafe.data.coerce import first_not_held
from crowdsafe.errors import ParameterError, SchemaError
from crowdsafe.mechanisms.contribution import bound_contributions
from crowdsafe.mechanisms.query_language import Dimension, is_text
from crowdsafe.mechanisms.query_plan import ExactAggregate, QueryPlan
from crowdsafe.mechanisms.sensitivity import change_per_row
from crowdsafe.randomness import Randomness

_KEY = "__crowdsafe_cell_{}"
Engine = Literal["auto", "streaming"]  # how a Polars query is collected (rows_aggregate)
_SUM_UNIT_BITS = 30  # a real value is summed on a grid of 2^-30 of its largest bound


def polars_aggregate(dataset: Dataset, plan: QueryPlan, randomness: Randomness) -> tuple[ExactAggregate, int]:
    """The exact aggregate on the Polars engine (in this process)."""
    return rows_aggregate(dataset.frame.lazy(), dataset, plan, randomness)


def rows_aggregate(frame: pl.LazyFrame, dataset: Dataset, plan: QueryPlan, randomness: Randomness, *,
                   engine: Engine = "auto") -> tuple[ExactAggregate, int]:
    """The exact aggregate of the rows of ``frame`` (the table ``dataset`` describes: its schema
    and types), each Polars query collected by ``engine``: ``"auto"`` for a frame in memory,
    ``"streaming"`` for a file scanned lazily (:mod:`crowdsafe.engines.streamed_query`). Counts,
    histogram cells and sums on the :func:`sum_grid` are integers, so they do not depend on how
    the rows are split; rows the contribution bound or a quantile reads are collected in file
    order either way."""
    rows, dropped = _rows(frame, dataset, plan, randomness, engine)
    return _EXACT[plan.query.kind](rows, plan, dataset, engine), dropped


def _rows(frame: pl.LazyFrame, dataset: Dataset, plan: QueryPlan, randomness: Randomness,
          engine: Engine) -> tuple[pl.LazyFrame, int]:
    """The rows the query reads: filtered, then bounded to c rows per person.

    Without a person identifier the result stays lazy, so the aggregate runs in one Polars pass.
    """
    columns = list(plan.query.columns) or dataset.schema.names[:1]  # a count without a filter
    if plan.person is not None and plan.person not in columns:
        columns.append(plan.person)
    lazy = frame.select(columns).filter(plan.condition)
    if plan.person is None:
        return lazy, 0
    bounded = bound_contributions(lazy.collect(engine=engine), plan.person, plan.rows_per_person, randomness)
    return bounded.frame.lazy(), bounded.dropped


# -- exact aggregates (never shown) ------------------------------------------------------------


def _count(rows: pl.LazyFrame, plan: QueryPlan, dataset: Dataset, engine: Engine) -> ExactAggregate:
    return ExactAggregate("count", {"count": int(rows.select(pl.len()).collect(engine=engine).item())})


def _integer_sum(
    rows: pl.LazyFrame, dtype: pl.DataType, column: str, low: float, high: float, engine: Engine = "auto"
) -> tuple[int, float, int, dict[str, int]]:
    """The exact clamped sum as an integer number of ``unit`` (1 for integer data and bounds,
    else a power of two 2^30 times smaller than the largest bound), with the count of values.

    Each real value is rounded toward zero to the unit before summing, so the sum is exact integer
    arithmetic: its sensitivity is exactly that of the rounded values (no floating-point drift
    of the kind Casacuberta et al. 2022 found in DP libraries). |value| < 2^31 units and the sum is
    taken in Int128, so it cannot overflow for any realistic number of rows.
    """
    integer, unit = sum_grid(dtype, low, high)
    value = pl.col(column).fill_nan(None) if dtype.is_float() else pl.col(column)
    if integer:
        low, high = int(low), int(high)  # integer literals: comparing with a float would cast the column
        clamped = pl.when(value < low).then(low).when(value > high).then(high).otherwise(value)
        scaled = clamped.cast(pl.Int64)
    else:
        value = value.cast(pl.Float64)
        clamped = pl.when(value < low).then(low).when(value > high).then(high).otherwise(value)
        # x/unit is exact (a power of two) and below 2^31 in magnitude after clamping, so the cast
        # truncates toward zero without any overflow.
        scaled = (clamped * (1.0 / unit)).cast(pl.Int64, wrap_numerical=True)
    stats = rows.select(
        total=scaled.cast(pl.Int128).sum(),  # |value| < 2^31 units: no overflow below 2^96 values
        values=value.count(),
        below=(value < low).sum(),
        above=(value > high).sum(),
    ).collect(engine=engine).row(0, named=True)
    return sum_stats(stats, unit)


def sum_grid(dtype: pl.DataType, low: float, high: float) -> tuple[bool, float]:
    """Whether a clamped sum is summed as integers, and its unit (1, or the power of two 2^30
    times smaller than the largest bound); see :func:`_integer_sum`."""
    integer = dtype.is_integer() and float(low).is_integer() and float(high).is_integer()
    if integer:
        return True, 1.0
    return False, math.ldexp(1.0, math.floor(math.log2(max(abs(low), abs(high)))) - _SUM_UNIT_BITS)


def sum_stats(stats: Mapping[str, Any], unit: float) -> tuple[int, float, int, dict[str, int]]:
    """(total in units, unit, count of values, clamping counts for the custodian) from an
    engine's one-pass statistics ``total``, ``values``, ``below``, ``above``. The total is summed
    in 128-bit (Polars) or 38-digit decimal (Spark) integers, so no row count makes it overflow
    and nothing here aborts on the data."""
    clamped = {"values_clamped_up": int(stats["below"] or 0), "values_clamped_down": int(stats["above"] or 0)}
    return int(stats["total"] or 0), unit, int(stats["values"] or 0), clamped


def _sum_units_sensitivity(plan: QueryPlan, unit: float) -> int:
    """The sum's sensitivity in units: c·max(|L|, |U|) (add/remove) or c·max(U − L, |L|, |U|)
    (change: a replaced row can also leave or enter the sum through the filter, the partition's
    part or a missing value; :func:`~crowdsafe.mechanisms.sensitivity.change_per_row`), with the
    bounds rounded toward zero to the unit like the values (a monotone map, so every rounded value
    lies between the rounded bounds)."""
    assert plan.query.bounds is not None
    low, high = (math.trunc(b / unit) for b in plan.query.bounds)
    per_row = max(abs(low), abs(high)) if plan.neighbours == "add-remove" else change_per_row(low, high)
    return plan.rows_per_person * max(1, int(per_row))


def _sum(rows: pl.LazyFrame, plan: QueryPlan, dataset: Dataset, engine: Engine) -> ExactAggregate:
    assert plan.query.column is not None and plan.query.bounds is not None
    dtype = dataset.frame.schema[plan.query.column]
    return sum_exact(plan, _integer_sum(rows, dtype, plan.query.column, *plan.query.bounds, engine=engine))


def sum_exact(plan: QueryPlan, summed: tuple[int, float, int, dict[str, int]]) -> ExactAggregate:
    """The exact aggregate of a sum or mean from (total, unit, count, clamping diagnostics)."""
    total, unit, count, clamped = summed
    values = {"total": total, "unit": unit, "units_sensitivity": _sum_units_sensitivity(plan, unit), "count": count}
    return ExactAggregate(plan.query.kind, values, diagnostics=clamped)


def _quantile(rows: pl.LazyFrame, plan: QueryPlan, dataset: Dataset, engine: Engine) -> ExactAggregate:
    assert plan.query.column is not None and plan.query.bounds is not None
    column = rows.select(pl.col(plan.query.column)).collect(engine=engine).to_series()
    if column.dtype.is_float():
        column = column.fill_nan(None)  # NaN is missing, as in sums: no data-dependent abort
    column = column.drop_nulls()
    low, high = plan.query.bounds
    integer = column.dtype.is_integer() and float(low).is_integer() and float(high).is_integer()
    values = column.cast(pl.Float64).to_numpy()
    clamped = {
        "values_clamped_up": int(np.count_nonzero(values < low)),
        "values_clamped_down": int(np.count_nonzero(values > high)),
    }
    return ExactAggregate("quantile", {"values": values, "integer": integer}, diagnostics=clamped)


# -- histograms ----------------------------------------------------------------------------------


#: Where a histogram column's public values come from when the schema declares its order.
SCHEMA_ORDER = "declared order in the schema"


def histogram_domain(
    dataset: Dataset, dimension: Dimension, domain: Mapping[str, Sequence[Any]] | None = None, *,
    dtype: pl.DataType | None = None,
) -> tuple[list[Any] | None, str]:
    """The public values of one histogram column, and where they come from.

    In order: bins or a value list written in the query; ``domain`` given by the caller; the
    declared order of an ordinal attribute (an Enum column's categories when the schema was
    inferred, marked as such); the leaves of a bundled dataset's hierarchy (written from the
    dataset's documentation, not from its rows). None when there is no public domain: the values
    present in the data are themselves private. ``dtype`` is accepted for the callers' symmetry.
    """
    column = dimension.column
    if dimension.bins is not None:
        return dimension.bins.labels(), "bins in the query"
    if dimension.values is not None:
        return list(dimension.values), "values in the query"
    if domain and column in domain:
        return list(domain[column]), "domain given by the caller"
    attribute = dataset.schema[column]
    if attribute.order is not None:
        return [str(v) for v in attribute.order], SCHEMA_ORDER
    # (an Enum column's categories count only through the schema: inferred, they are its order,
    # marked as read from the file; a column declared plain categorical declares no values)
    # a bundled dataset's declared hierarchy: the provenance is the schema's ``bundled`` flag (set
    # only by crowdsafe.datasets' loaders) and the hierarchy's own (not built from the values
    # present), never the schema's ``source`` text, which is a file name anyone can choose
    hierarchy = dataset.hierarchies.get(column)
    if hierarchy is not None and dataset.schema.bundled and not hierarchy.observed:
        return hierarchy.leaves.to_list(), "hierarchy of the bundled dataset (data-independent)"
    return None, "values present in the data (private)"


def cells_fit(column: str, values: Sequence[Any] | None, dtype: pl.DataType) -> None:
    """Refuse public cells of a numeric column that its type cannot hold as they are (40.5 in a
    column of integers, 'abc' in one of numbers), naming the first: the histogram would silently
    lose or merge them. From the query, the caller's domain and the column's declared type."""
    if values is None or not dtype.is_numeric():
        return
    given = pl.Series(column, list(values), strict=False)
    if given.dtype == pl.String:
        given = given.str.strip_chars()
    at = first_not_held(given, given.cast(dtype, strict=False))
    if at is not None:
        value = list(values)[at]
        raise ParameterError(f"the cells of '{column}' include {value!r}, which its column ({dtype}) cannot hold: "
                             f"drop it, or declare '{column}' real in the schema (nothing was charged)",
                             parameter="query")


def cell_key(dataset: Dataset, dimension: Dimension, dtype: pl.DataType | None = None) -> pl.Expr:
    """The expression of a histogram cell's key for ``dimension`` (``dtype``: its column's type,
    read from the frame when not given); raises a SchemaError for bins on a non-numeric column."""
    column = dimension.column
    name = _KEY.format(column)
    dtype = dtype if dtype is not None else dataset.frame.schema[column]
    if dimension.bins is not None:
        if not dtype.is_numeric():
            raise SchemaError(f"bins need a numeric column; '{column}' holds {dtype}")
        bins = dimension.bins
        index = ((pl.col(column).cast(pl.Float64).clip(bins.low, bins.high) - bins.low) / bins.width).floor()
        labels = pl.Series(bins.labels(), dtype=pl.String)
        return index.cast(pl.Int64).clip(0, bins.count - 1).replace_strict(
            list(range(bins.count)), labels, return_dtype=pl.String
        ).alias(name)
    return pl.col(column).alias(name)  # text keys become String after the group-by


def _histogram(rows: pl.LazyFrame, plan: QueryPlan, dataset: Dataset, engine: Engine) -> ExactAggregate:
    dims = plan.query.dimensions
    schema = dataset.frame.schema  # read once: each read builds a new Schema
    keys = [cell_key(dataset, d, schema[d.column]) for d in dims]
    names = [_KEY.format(d.column) for d in dims]
    text = [pl.col(n).cast(pl.String) for d, n in zip(dims, names) if d.bins is None
            and is_text(schema[d.column])]
    counts = rows.select(keys).group_by(names).len(name="count").with_columns(text).collect(engine=engine)
    return histogram_exact(counts, plan)


def cell_column(column: str) -> str:
    """The name of a histogram's cell-key column for ``column`` in an engine's count table."""
    return _KEY.format(column)


def histogram_exact(counts: pl.DataFrame, plan: QueryPlan) -> ExactAggregate:
    """The exact histogram from an engine's counts of the cells present (one column per
    dimension, named :func:`cell_column`, binned columns as their bin labels, text as String;
    and ``count``): every cell of a public domain, empty ones included, in the grid's order;
    without a public domain the cells present, sorted by their values (missing first)."""
    dims = plan.query.dimensions
    names = [_KEY.format(d.column) for d in dims]
    domains = plan.domains
    notes = [f"cells of '{d.column}': {source}" for d, (_, source) in zip(dims, domains)]
    if plan.public_domain:
        counts = _in_one_form(counts, names)
        schema = counts.schema  # read once: each read builds a new Schema
        parts = []
        for name, (values, _) in zip(names, domains):
            series = pl.Series(name, values, dtype=schema[name] if values else None, strict=False)
            if series.dtype == pl.String:  # the public cells in the form the counts are in
                series = series.str.normalize(unicode_forms.FORM)
            parts.append(series if series.n_unique() == len(series) else series.unique(maintain_order=True))
        table = public_table(counts, names, parts)
        outside = int(counts.get_column("count").sum()) - int(table.get_column("count").sum())
        return ExactAggregate("histogram", {"table": table, "names": names, "public": True},
                              diagnostics={"rows_outside_the_domain": outside}, notes=notes)
    # sorted by cell: a group-by's order varies from run to run (threads, batches) and with the rows'
    # order, and the noise is drawn cell by cell in this order
    table = counts.with_columns(pl.col("count").cast(pl.Int64)).sort(names, nulls_last=False)
    return ExactAggregate("histogram", {"table": table, "names": names, "public": False}, notes=notes)


def _in_one_form(counts: pl.DataFrame, names: list[str]) -> pl.DataFrame:
    """``counts`` with its text cells in one Unicode form (NFC; :mod:`crowdsafe.data.unicode_forms`)
    and the counts of cells that differed only in their form added: a public cell typed in NFC
    counts the values an NFD table holds (the ledger's identity takes the two tables for one)."""
    text = [n for n in names if counts.schema[n] == pl.String]
    if not text:
        return counts
    normal = counts.with_columns(pl.col(text).str.normalize(unicode_forms.FORM))
    if normal.select(text).equals(counts.select(text)):
        return counts
    return normal.group_by(names, maintain_order=True).agg(pl.col("count").sum())


PYTHON_GRID = 4096  # public histograms of at most this many cells (and counts): grid and join in Python
_PYTHON_KEYS = (pl.String, pl.Boolean, pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32,
                pl.UInt64)  # key types whose Python equality is Polars' join equality (not floats)


def public_table(counts: pl.DataFrame, names: list[str], parts: list[pl.Series]) -> pl.DataFrame:
    """Every cell of the grid of ``parts`` (each dimension's distinct public values, the first
    varying slowest) with its count from ``counts`` (0 for a cell not there; Int64), as the left
    join of the grid with the counts on ``names`` (missing values equal).

    Fast path :func:`_public_table_by_python` for grids and counts of at most
    :data:`PYTHON_GRID` cells, keys of a type in :data:`_PYTHON_KEYS` equal to the counts' (where
    Python's equality is the join's), counts holding ``names`` and ``count`` only, one row per
    cell; else its reference twin :func:`_public_table_by_polars`, one Polars query."""
    if (math.prod(len(p) for p in parts) <= PYTHON_GRID and counts.height <= PYTHON_GRID
            and counts.columns == [*names, "count"]
            and all(p.dtype == counts.schema[n] and p.dtype in _PYTHON_KEYS for p, n in zip(parts, names))):
        table = _public_table_by_python(counts, names, parts)
        if table is not None:
            return table
    return _public_table_by_polars(counts, names, parts)


def _public_table_by_polars(counts: pl.DataFrame, names: list[str], parts: list[pl.Series]) -> pl.DataFrame:
    """:func:`public_table` as one Polars query: cross joins in order, then a left join."""
    grid = parts[0].to_frame().lazy()
    for part in parts[1:]:
        grid = grid.join(part.to_frame().lazy(), how="cross", maintain_order="left_right")
    return grid.join(counts.lazy(), on=names, how="left", nulls_equal=True, maintain_order="left").with_columns(
        pl.col("count").fill_null(0).cast(pl.Int64)
    ).collect()


def _public_table_by_python(counts: pl.DataFrame, names: list[str], parts: list[pl.Series]) -> pl.DataFrame | None:
    """:func:`public_table` over Python lists and dictionaries (no Polars query); None when a
    cell appears twice in ``counts`` (the join would repeat its grid row)."""
    values = [p.to_list() for p in parts]
    sizes = [len(v) for v in values]
    total = math.prod(sizes)
    cell = [0] * counts.height  # each counted cell's row in the grid, -1 outside it
    stride = total
    for j, name in enumerate(names):
        stride //= max(sizes[j], 1)
        index = {v: i for i, v in enumerate(values[j])}
        for r, v in enumerate(counts.get_column(name).to_list()):
            i = index.get(v, -1)
            cell[r] = -1 if i < 0 or cell[r] < 0 else cell[r] + i * stride
    found = [(c, n) for c, n in zip(cell, counts.get_column("count").to_list()) if c >= 0]
    if len({c for c, _ in found}) < len(found):
        return None
    count = np.zeros(total, dtype=np.int64)
    for c, n in found:
        count[c] = n or 0
    columns, outer, stride = [], 1, total
    for part, listed, size in zip(parts, values, sizes):
        stride //= max(size, 1)
        columns.append(pl.Series(part.name, [v for v in listed for _ in range(stride)] * outer, dtype=part.dtype))
        outer *= size
    return pl.DataFrame([*columns, pl.Series("count", count)])


_EXACT = {"count": _count, "sum": _sum, "mean": _sum, "histogram": _histogram, "quantile": _quantile}
