"""The values of a declared domain (``--domains FILE``, ``domains=``) read in a column's type.

A JSON file holds numbers, text, booleans and nulls only, so the dates and timestamps of a date
or datetime column are written as ISO 8601 text (:func:`iso_series`): ``"2024-01-31"`` for a
date, ``"2024-01-31T14:00:00"`` (or with a space, fractional seconds, a ``Z`` or ``+01:00``
offset; a date alone is midnight) for a timestamp. A timestamp without an offset in a column
with a time zone is a time in that zone; one with an offset in a column without a zone is
refused (which local time it means is not said). Any other text is refused in one line naming
the column and the value, and so is a whole number beyond the column's integer type
(:func:`refuse_wide_integers`; a real number beyond it, NaN or infinity too), which Polars
would refuse in words of its own.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

from crowdsafe.errors import ParameterError

__all__ = ["iso_series", "refuse_wide_integers"]

_DATE_FORM = "an ISO date (YYYY-MM-DD)"
_TIME_FORM = "an ISO date and time (YYYY-MM-DDTHH:MM:SS, optionally with fractional seconds and a UTC offset)"


def _refused(name: str, value: Any, reason: str) -> ParameterError:
    return ParameterError(f"the declared domain of '{name}': {value!r} {reason}", parameter="domains")


def iso_series(name: str, listed: Sequence[Any], dtype: pl.Date | pl.Datetime) -> pl.Series:
    """``listed`` (ISO texts and nulls) as a Series of ``dtype``, a Date or Datetime type."""
    is_date = isinstance(dtype, pl.Date)
    form = _DATE_FORM if is_date else _TIME_FORM
    zone = dtype.time_zone if isinstance(dtype, pl.Datetime) else None
    values: list[Any] = []
    for value in listed:
        if value is None:
            values.append(None)
            continue
        if not isinstance(value, str):
            raise _refused(name, value, f"is not {form}: write every value of a {dtype} column as ISO text")
        try:
            parsed: Any = dt.date.fromisoformat(value) if is_date else dt.datetime.fromisoformat(value)
        except ValueError:
            raise _refused(name, value, f"is not {form}") from None
        if not is_date:
            if parsed.tzinfo is not None and zone is None:
                raise _refused(name, value, "has a UTC offset, but the column has no time zone: "
                                            "write its local time without an offset")
            if zone is not None:  # every value as UTC, naive (then given the column's zone)
                aware = parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=ZoneInfo(zone))
                parsed = aware.astimezone(dt.UTC).replace(tzinfo=None)
        values.append(parsed)
    if not isinstance(dtype, pl.Datetime):
        return pl.Series(name, values, dtype=pl.Date)
    series = pl.Series(name, values, dtype=pl.Datetime(dtype.time_unit))
    return series.dt.replace_time_zone("UTC").dt.convert_time_zone(zone) if zone is not None else series


def refuse_wide_integers(name: str, listed: Sequence[Any], dtype: pl.DataType) -> None:
    """Refuse a whole number of ``listed`` that an integer ``dtype`` cannot hold (2^70 in Int64)."""
    if not dtype.is_integer():
        return
    try:
        bounds = np.iinfo(str(dtype).lower())
    except (TypeError, ValueError):
        return
    low, high = int(bounds.min), int(bounds.max)
    wide = next((v for v in listed if isinstance(v, int | float) and not isinstance(v, bool)
                 and not low <= v <= high), None)  # (NaN too: no comparison holds)
    if wide is not None:
        raise _refused(name, wide, f"cannot be held by its column ({dtype}: whole numbers from {low} to {high}); "
                                   "drop it")
