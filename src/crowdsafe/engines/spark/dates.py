"""Text read as a declared date on Spark, as the Polars engine reads it.

Spark's cast of text to a date reads ISO text only (``13.03.2023`` failed, so a dd.mm.yyyy
table past its first rows was refused) and reads ``0023-03-13`` as the year 23. The Polars engine
(:func:`crowdsafe.data.coerce.coerce`) reads a declared date column in one of the forms of
:data:`crowdsafe.data.short_years.ACCEPTED`, the one its first value is written in, and refuses a
value read as a year before 100 (``13.03.23``: a two-digit year, whose century cannot be known).
Here the form is the one the Polars engine found on the table's first rows (:func:`patterns`),
read on Spark with the same leniency (a year, month or day of any number of digits:
:func:`parsed`), and a value read as a year before 100 is refused (:func:`short_year`).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from crowdsafe.data import short_years

__all__ = ["FORMS", "not_a_date", "parsed", "patterns", "short_year", "two_digit"]

#: Each accepted form: the Polars format and the Spark pattern that reads it (``y``, ``M``, ``d``:
#: any number of digits, as Polars' ``%Y``, ``%m``, ``%d`` read them).
FORMS = (("%Y-%m-%d", "y-M-d"), ("%Y/%m/%d", "y/M/d"), ("%Y.%m.%d", "y.M.d"),
         ("%d.%m.%Y", "d.M.y"), ("%d/%m/%Y", "d/M/y"), ("%d-%m-%Y", "d-M-y"))


def patterns(head: pl.DataFrame, typed: pl.DataFrame) -> dict[str, str]:
    """The Spark pattern of each date column of ``typed`` read from the text of ``head`` (the
    same first rows, as written): the form whose reading of the text gives the dates the Polars
    engine read. A column without a value there, or in no form, has none (:func:`parsed` then
    tries every form)."""
    found = {}
    for name, dtype in typed.schema.items():
        if dtype != pl.Date or head.schema.get(name) != pl.String:
            continue
        text, dates = head.get_column(name).str.strip_chars(), typed.get_column(name)
        if dates.null_count() == len(dates):
            continue
        for polars_format, spark_pattern in FORMS:
            if text.str.to_date(polars_format, strict=False).equals(dates):
                found[name] = spark_pattern
                break
    return found


def parsed(column: Any, pattern: str | None) -> Any:
    """The Spark date that the text ``column`` (blanks stripped, as the Polars engine strips them)
    reads as in ``pattern`` (None: the first form of :data:`FORMS` that reads it); null where it
    reads as no date."""
    from pyspark.sql import functions as F

    chosen = [pattern] if pattern is not None else [p for _, p in FORMS]
    text = F.trim(column)
    return F.coalesce(*[F.try_to_date(text, p) for p in chosen])


def two_digit(date: Any) -> Any:
    """Whether the Spark date ``date`` lies in a year before 100 (text with a two-digit year)."""
    from pyspark.sql import functions as F

    return date.isNotNull() & (F.year(date) < 100)


def not_a_date(name: str, source: str, value: object) -> str:
    """The refusal of a declared date column's ``value`` that reads as no date (the Polars words, without a row)."""
    return (f"column '{name}' is declared a date but {source} holds {value!r}, which is not a date (expected "
            f"{short_years.ACCEPTED})")


def short_year(name: str, source: str, value: object, year: int) -> str:
    """The refusal of a declared date column's ``value`` read as the year ``year`` (before 100)."""
    return (f"column '{name}' is declared a date but {source} holds {value!r}, a date with a two-digit year "
            f"(read as the year {year}); write dates as {short_years.ACCEPTED}")

