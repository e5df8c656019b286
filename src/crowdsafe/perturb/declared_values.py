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

A value whose JSON type is not the column's is refused too, never converted
(:func:`refuse_mistyped`): the number ``1067`` for a text column would be the text ``"1067"``
(and every ``01067`` row fall outside the domain), ``true`` for an integer column the number 1.
A domain file that gives an attribute twice is refused naming it (:func:`refusing_repeated_keys`;
JSON readers keep the last one without a word). Both are decided from the file and the column's
declared type alone, before anything is charged.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

from crowdsafe.errors import InputError, ParameterError

__all__ = ["iso_series", "refuse_mistyped", "refuse_wide_integers", "refusing_repeated_keys"]

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


def refusing_repeated_keys(where: str) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """A ``json.loads`` ``object_pairs_hook`` that refuses an object giving a key twice, naming
    the key and ``where`` (the file): ``{"sex": ["M", "F"], "sex": ["X"]}`` is not read as
    ``{"sex": ["X"]}``."""
    def pairs_to_dict(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        made: dict[str, Any] = {}
        for key, value in pairs:
            if key in made:
                raise InputError(f"{where} gives '{key}' twice (a JSON reader would keep the last one without a "
                                 f"word); give each attribute once")
            made[key] = value
        return made
    return pairs_to_dict


_TEXT_FLOATS = ("inf", "-inf", "nan")  # the texts a certificate writes for non-finite reals


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool | np.bool_)


def _is_number(value: Any) -> bool:
    return not _is_bool(value) and isinstance(value, int | float | Decimal | np.integer | np.floating)


def _mistyped(value: Any, dtype: pl.DataType) -> str | None:
    """Why ``value`` (not null) cannot stand in a declared domain of a ``dtype`` column, or None."""
    if dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum):
        if isinstance(value, str):
            return None
        kind = "a boolean" if _is_bool(value) else "a number" if _is_number(value) else "not text"
        return (f"is {kind}, but the column is text ({dtype}): write it as a string in quotes, keeping any "
                "leading zeros the data has (\"01067\", not 1067)")
    if dtype.is_numeric():
        if _is_number(value) or (dtype.is_float() and value in _TEXT_FLOATS):
            return None
        kind = "a boolean" if _is_bool(value) else "text" if isinstance(value, str) else "not a number"
        return f"is {kind}, but the column holds numbers ({dtype}): write the number itself, without quotes"
    if dtype == pl.Boolean:
        return None if _is_bool(value) else f"is not true or false, but the column is {dtype}: write true or false"
    if isinstance(dtype, pl.Date | pl.Datetime) and (_is_bool(value) or _is_number(value)):
        form = _DATE_FORM if isinstance(dtype, pl.Date) else _TIME_FORM
        return f"is not {form}: write every value of a {dtype} column as ISO text"
    return None


def refuse_mistyped(name: str, listed: Sequence[Any], dtype: pl.DataType) -> None:
    """Refuse a value of a declared domain whose type is not its column's, in one line naming the
    column and the value: a number or a boolean for a text column, a boolean or a text for a
    numeric one (a real column also takes the texts ``inf``, ``-inf`` and ``nan`` a certificate
    writes), anything but true or false for a Boolean one, a number for a date or a timestamp.
    Polars would convert each without a word. From the values and the column's type alone."""
    for value in listed:
        if value is not None:
            reason = _mistyped(value, dtype)
            if reason is not None:
                raise _refused(name, value, reason)
