"""Dates written with a two-digit year (``13.03.23``), which are never read as dates.

Polars reads ``%d.%m.%Y`` (and its other date patterns) with a year of one or two digits as that
year AD: ``13.03.23`` becomes 0023-03-13, silently, so a release would publish the year 23 and a
query filter on 2023 would count nothing. Which century such a year means cannot be known, so
crowdsafe never reads it as a date:

- a CSV column the reader inferred as dates holding a year before 100 is read as text instead,
  with a note naming it (:func:`columns`, :func:`note`; custodian-only: the years are a fact
  about the data). A lazy scan infers its types from the first :data:`HEAD_ROWS` rows and is
  looked at there; the rows after them are looked at in the pass that reads every row anyway
  (:func:`among`, on each column's distinct values: :mod:`crowdsafe.data.streamed_table`,
  :func:`crowdsafe.data.streaming.frequency_table`), which then reads the column again as text;
- a column declared ``type = "date"`` whose text reads as a year before 100 is refused naming the
  column, the value and the accepted forms (:data:`ACCEPTED`, in :func:`crowdsafe.data.coerce.coerce`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

__all__ = ["ACCEPTED", "among", "columns", "early", "note"]

#: The date forms crowdsafe reads (each with a four-digit year), as a refusal names them.
ACCEPTED = "YYYY-MM-DD, YYYY/MM/DD, YYYY.MM.DD, DD.MM.YYYY, DD/MM/YYYY or DD-MM-YYYY, each with a four-digit year"

#: Where a column's head is looked at in a scan (the rows Polars inferred the column's type from).
HEAD_ROWS = 10_000


def early(column: pl.Expr) -> pl.Expr:
    """Whether a date or timestamp ``column``'s value is in a year before 100 (a two-digit year
    read as written)."""
    return column.dt.year() < 100


def columns(frame: pl.DataFrame | pl.LazyFrame) -> list[str]:
    """The date and timestamp columns of ``frame`` holding a year before 100. A lazy frame is
    looked at in its first :data:`HEAD_ROWS` rows (those its types were inferred from); none
    when those cannot be read (the scan's own read then refuses the file)."""
    dates = [c for c, t in frame.collect_schema().items() if t == pl.Date or isinstance(t, pl.Datetime)]
    if not dates:
        return []
    if isinstance(frame, pl.LazyFrame):
        try:
            found = frame.head(HEAD_ROWS).select(early(pl.col(c)).any().alias(c) for c in dates).collect().row(0)
        except pl.exceptions.PolarsError:  # (a file that cannot be read: the caller's read says why, in its words)
            return []
    else:
        found = frame.select(early(pl.col(c)).any().alias(c) for c in dates).row(0)
    return [c for c, has in zip(dates, found) if has]


def among(values: Mapping[str, pl.Series]) -> list[str]:
    """The names of the date and timestamp series in ``values`` (each column's distinct values, as
    a pass over every row collects them) holding a year before 100."""
    dates = [c for c, v in values.items() if v.dtype == pl.Date or isinstance(v.dtype, pl.Datetime)]
    return [c for c in dates if bool(values[c].to_frame(c).select(early(pl.col(c)).any()).item())]


def note(label: str, names: Sequence[str]) -> str:
    """The note of a read that kept ``names`` (dates with two-digit years) as text."""
    which = ", ".join(f"'{n}'" for n in names)
    plural = len(names) > 1
    return (f"{label}: column{'s' if plural else ''} {which} read as text, not as dates: "
            f"{'their' if plural else 'its'} dates are written with a two-digit year (such as 13.03.23), whose "
            "century crowdsafe cannot know (a custodian-only fact about the data); write the years with four "
            "digits (13.03.2023 or 2023-03-13) to read them as dates")
