"""Polars' date inference, run only on files that could hold dates.

crowdsafe reads CSV files with Polars' ``try_parse_dates``, so a column of dates is read as dates.
That inference is slow: Polars tries its date patterns on every text value of the rows it infers
types from, about 10 µs a value, whether or not the column looks like a date. Ten text columns
cost about 1 s in the first 10,000 rows, and about 3 s for a 32,561-row file read in full (the
second try, when a late value does not fit the first rows' types: a generalized release's ages
``17`` then ``[18, 35]``).

So a file is first read without it, and then only the text columns that could be dates are read
again with it (:func:`with_dates`). Polars infers a column as a date, a time or a timestamp only
if every value it infers from (the column's values in the inference window, nulls aside) matches
one of its patterns, and every such value starts with a digit, after blanks, quotes and a sign
(``2021-12-31``, ``31.12.2021``, ``12:30``, ``+2021-01-01``; tested against Polars itself in
tests/data/test_date_inference.py). A column whose window holds a value that does not
(:data:`DATE_START`) stays text either way. The others are written, as read, into a CSV text of
their own and read back by Polars with ``try_parse_dates`` over the same rows: Polars' own
inference and parsing, on the same values (quoting does not change its inference; nulls and
empty texts are kept apart). When that inference needs every row while the file's other columns
did not (a date column with a late value that is not a date), Polars' single read decides, since
its second try also re-infers the other columns from every row: the caller reads the file again.
A lazy scan (:mod:`crowdsafe.data.streaming`) is given the types those columns take in its first
rows (in every row: from their distinct values), as type overrides (:func:`dated_types`): Polars
then parses every row as it would have.
"""

from __future__ import annotations

import io
from collections.abc import Collection

import polars as pl

__all__ = ["DATE_START", "dated_types", "with_dates"]

#: How every value Polars can infer as a date, a time or a timestamp starts: blanks (a no-break
#: space too), quotes or a sign, then a digit. A looser test than Polars' own (it never decides the
#: type, only whether Polars is asked): ``17`` matches, and is then read as Polars reads it.
DATE_START = r"^[\s'\"]*[+-]?\d"

#: Inferring a scan's types from every row reads each could-be-date column's distinct values: at
#: most this many (more, and the scan infers them itself, about 10 µs a value).
DISTINCT_LIMIT = 1_000_000


def _candidates(frame: pl.DataFrame | pl.LazyFrame, window: int | None, text: Collection[str]) -> list[str]:
    """The text columns of ``frame`` (read without date inference) not in ``text`` (read as text
    whatever they hold) whose values among the first ``window`` rows (all: None) all match
    :data:`DATE_START`, nulls aside. A lazy frame is read for that answer (those rows)."""
    schema = frame.collect_schema()
    candidates = [name for name, dtype in schema.items() if dtype == pl.String and name not in text]
    if not candidates:
        return []
    head = frame if window is None else frame.head(window)
    checks = head.select(pl.col(c).str.contains(DATE_START).all().alias(c) for c in candidates)
    answers = checks.collect(engine="streaming") if isinstance(checks, pl.LazyFrame) else checks
    return [name for name, could in zip(candidates, answers.row(0)) if could]


def _read_dated(columns: pl.DataFrame, window: int | None, decimal_comma: bool) -> pl.DataFrame | None:
    """``columns`` (text, as read) through Polars' CSV reader with ``try_parse_dates``: written
    into a CSV text of their own, with a row number to check that every row comes back in order.
    None when that read needs every row (a late value) or a row did not come back."""
    row = next(name for name in ("row", *(f"row{i}" for i in range(columns.width + 1))) if name not in columns.columns)
    own = columns.with_row_index(row).write_csv(quote_style="non_numeric")
    try:
        dated = pl.read_csv(io.StringIO(own), try_parse_dates=True, infer_schema_length=window, null_values=None,
                            decimal_comma=decimal_comma)
    except pl.exceptions.ComputeError:  # a late value: Polars' second try re-infers every column
        return None
    if not dated.get_column(row).equals(pl.Series(row, range(columns.height), dtype=dated.schema[row])):
        return None  # never seen; the whole read is then the exact one
    return dated.drop(row)


def with_dates(frame: pl.DataFrame, window: int | None, text: Collection[str] = (), *,
               decimal_comma: bool = False) -> pl.DataFrame | None:
    """``frame``, read from a CSV file without date inference with types inferred from its first
    ``window`` rows (None: all), with the columns that could be dates read as Polars'
    ``try_parse_dates`` reads them; None when that read needs every row and the file's other
    columns did not (then only a read of the whole file with it is exact: the caller's).
    ``decimal_comma``: the file was read with Polars' decimal comma (its other option that changes
    what a text is inferred as: ``1.25`` is then text, not a number)."""
    candidates = _candidates(frame, window, text)
    if not candidates:
        return frame
    dated = _read_dated(frame.select(candidates), window, decimal_comma)
    return None if dated is None else frame.with_columns(dated)


def dated_types(lazy: pl.LazyFrame, window: int | None, text: Collection[str] = (), *,
                decimal_comma: bool = False) -> dict[str, pl.DataType] | None:
    """For a lazy CSV scan made without date inference, whose types come from its first
    ``window`` rows: the types Polars' ``try_parse_dates`` infers for the columns that could be
    dates, from those rows (read here), as the scan's type overrides: Polars parses a column given
    a date type as it parses one it inferred (tested). With a ``window`` of None (types from every
    row) the types come from the columns' distinct values (:func:`_types_of_distinct_values`).
    None when that cannot be done exactly (a late value past the window, too many distinct
    values): the caller scans with date inference."""
    candidates = _candidates(lazy, window, text)
    if not candidates:
        return {}
    if window is None:
        return _types_of_distinct_values(lazy, candidates, decimal_comma)
    dated = _read_dated(lazy.head(window).select(candidates).collect(), window, decimal_comma)
    return None if dated is None else dict(dated.schema)


def _types_of_distinct_values(lazy: pl.LazyFrame, candidates: list[str], decimal_comma: bool
                              ) -> dict[str, pl.DataType] | None:
    """The types Polars infers for ``candidates`` from every row, inferred from each column's
    distinct values (Polars infers a type per value and merges the set of types, so neither the
    order nor the repeats of the values change it; tested against the scan that infers from every
    row). None when a column holds more than :data:`DISTINCT_LIMIT` distinct values (the scan then
    infers them itself) or a read fails."""
    distinct = lazy.select(pl.col(c).unique().implode() for c in candidates).collect(engine="streaming")
    types: dict[str, pl.DataType] = {}
    for name in candidates:
        values = distinct.get_column(name)[0]
        if len(values) > DISTINCT_LIMIT:
            return None
        dated = _read_dated(values.to_frame(name), None, decimal_comma)
        if dated is None:
            return None
        types[name] = dated.schema[name]
    return types
