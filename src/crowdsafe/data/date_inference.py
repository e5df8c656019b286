"""Polars' date inference, run only on files that could hold dates.

crowdsafe reads CSV files with Polars' ``try_parse_dates``, so a column of dates is read as dates.
That inference is slow: Polars tries its date patterns on every text value of the rows it infers
types from, about 10 µs a value, whether or not the column looks like a date. Ten text columns
cost about 1 s in the first 10,000 rows, and about 3 s for a 32,561-row file read in full (the
second try, when a late value does not fit the first rows' types: a generalized release's ages
``17`` then ``[18, 35]``).

So a file is first read without it. Polars infers a column as a date, a time or a timestamp only
if every value it infers from (the column's values in the inference window, nulls aside) matches
one of its patterns, and every such value starts with a digit, after blanks, quotes and a sign
(``2021-12-31``, ``31.12.2021``, ``12:30``, ``+2021-01-01``; tested against Polars itself in
tests/data/test_date_inference.py). A column whose window holds a value that does not
(:data:`DATE_START`) stays text either way. A file none of whose text columns could be dates has
been read exactly as ``try_parse_dates`` reads it; only the others are read again with it.
"""

from __future__ import annotations

from collections.abc import Collection

import polars as pl

__all__ = ["DATE_START", "could_hold_dates"]

#: How every value Polars can infer as a date, a time or a timestamp starts: blanks (a no-break
#: space too), quotes or a sign, then a digit. A looser test than Polars' own (it never decides the
#: type, only whether Polars is asked): ``17`` matches, and is then read as Polars reads it.
DATE_START = r"^[\s'\"]*[+-]?\d"


def could_hold_dates(frame: pl.DataFrame | pl.LazyFrame, window: int | None, text: Collection[str] = ()) -> bool:
    """Whether Polars' date inference could read a column of ``frame`` (read without it) as
    dates: some text column not in ``text`` (read as text whatever it holds) has only values
    matching :data:`DATE_START` among its first ``window`` rows (all rows: None), nulls aside.
    A lazy frame is read for that one answer (in the streaming engine: a file's rows)."""
    schema = frame.collect_schema()
    candidates = [name for name, dtype in schema.items() if dtype == pl.String and name not in text]
    if not candidates:
        return False
    head = frame if window is None else frame.head(window)
    checks = head.select(pl.col(c).str.contains(DATE_START).all().alias(c) for c in candidates)
    answers = checks.collect(engine="streaming") if isinstance(checks, pl.LazyFrame) else checks
    return any(answers.row(0))
