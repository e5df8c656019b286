"""The coercion step of the load pipeline: each declared column gets the type its schema states.

Text read from a file becomes numbers or dates where the schema declares them; the first value
that does not fit is named with its row, in a :class:`~crowdsafe.errors.SchemaError` (the table
cannot be read as declared). A value outside an ordinal column's declared order is not refused
here: it is a value outside a declared domain, which each command handles without letting one row
stop it (publish: an observed hierarchy; α-β: the row left out; a histogram: the row outside its
cells, custodian-only), and which ``check`` and ``anonymize`` name
(:meth:`~crowdsafe.data.Dataset.validate_domains`).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from crowdsafe.data import decimal_comma as comma
from crowdsafe.data import short_years
from crowdsafe.data.schema import AttributeType, NumberKind, Schema
from crowdsafe.errors import SchemaError

__all__ = ["coerce", "declared_numbers", "declared_text", "first_not_held", "number_text"]


def _first_bad(series: pl.Series, converted: pl.Series) -> tuple[Any, int]:
    bad = (converted.is_null() & series.is_not_null()).arg_true()
    return series[int(bad[0])], int(bad[0]) + 1


#: What every refusal of a value its column's declared type cannot hold ends with: the message names
#: a row and a value of the table, for the custodian who runs it (docs/privacy-boundary.md).
NOT_AS_DECLARED = ("; a custodian-only fact about the data: the table cannot be read as its schema declares, "
                   "nothing was charged")


def numbers(text: pl.Series, decimal_comma: bool) -> pl.Series:
    """Text (blanks stripped) as integers, else floats; with ``decimal_comma``, each value must be
    written with one (:data:`crowdsafe.data.decimal_comma.GROUPED`). A value that is not a number
    becomes null."""
    if decimal_comma:
        text = text.to_frame().select(
            pl.when(pl.col(text.name).str.contains(comma.GROUPED)).then(comma.number_text(pl.col(text.name)))
        ).to_series()
    converted = text.cast(pl.Int64, strict=False)
    if converted.null_count() != text.null_count():
        converted = text.cast(pl.Float64, strict=False)
    return converted


def _refuse_short_years(name: str, text: pl.Series, dates: pl.Series, source: str) -> None:
    """Refuse a declared date column whose text reads as a year before 100 (``13.03.23``: a
    two-digit year, whose century cannot be known; :mod:`crowdsafe.data.short_years`)."""
    bad = dates.to_frame().select(short_years.early(pl.col(dates.name)).fill_null(False)).to_series()
    if bad.any():
        row = int(bad.arg_true()[0])
        raise SchemaError(
            f"column '{name}' is declared a date but row {row + 1} of {source} holds {text[row]!r}, a date with a "
            f"two-digit year (read as the year {dates[row].year}); write dates as {short_years.ACCEPTED}"
            f"{NOT_AS_DECLARED}")


def coerce(frame: pl.DataFrame, schema: Schema, source: str) -> pl.DataFrame:
    """Give each declared column the type its schema states; name the first value that does not
    fit (with a hint when it is written with a decimal comma and the schema does not say so)."""
    changes = []
    for attribute in schema:
        series = frame.get_column(attribute.name)
        dtype = series.dtype
        if attribute.type is AttributeType.NUMERIC and not dtype.is_numeric():
            text = series.cast(pl.String).str.strip_chars()
            converted = numbers(text, bool(schema.decimal_comma))
            if converted.null_count() != text.null_count():
                value, row = _first_bad(text, converted)
                if schema.decimal_comma:
                    raise SchemaError(
                        f"column '{attribute.name}' is declared numeric but row {row} of {source} holds {value!r}, "
                        "which is not a number written with a decimal comma (the reading asked for: "
                        f"--decimal-comma or [csv] decimal_comma = true){NOT_AS_DECLARED}")
                held = ("a blank cell (spaces only: an empty cell, with nothing between the separators, is read as "
                        "missing)" if value == "" else f"the non-numeric value {value!r}{comma.hint(value)}")
                raise SchemaError(
                    f"column '{attribute.name}' is declared numeric but row {row} of {source} holds {held}"
                    f"{NOT_AS_DECLARED}"
                )
            changes.append(converted.alias(attribute.name))
        elif attribute.type is AttributeType.DATE and dtype != pl.Date:
            if isinstance(dtype, pl.Datetime):
                changes.append(series.dt.date())
                continue
            text = series.cast(pl.String).str.strip_chars()
            converted = text.str.to_date(strict=False)
            if converted.null_count() != text.null_count():
                value, row = _first_bad(text, converted)
                raise SchemaError(
                    f"column '{attribute.name}' is declared a date but row {row} of {source} "
                    f"holds {value!r}, which is not a date (expected {short_years.ACCEPTED}){NOT_AS_DECLARED}"
                )
            _refuse_short_years(attribute.name, text, converted, source)
            changes.append(converted.alias(attribute.name))
    frame = frame.with_columns(changes) if changes else frame
    return declared_text(declared_numbers(frame, schema, source), schema)


def declared_numbers(frame: pl.DataFrame, schema: Schema, source: str) -> pl.DataFrame:
    """Each numeric attribute whose declared type says how it holds its numbers
    (:class:`~crowdsafe.data.schema.NumberKind`) in that type, whatever its values: ``integer`` as
    Int64 (a NaN missing; a value with a fraction, an infinity or one past 64 bits refused, naming
    its row, like a non-number: the table cannot be read as declared), ``real`` as Float64. So
    neighbouring tables are read into the same column types (a row holding 40.5 no longer turns a
    column of whole numbers into floats). Columns already numbers of another width are cast too;
    the frame is returned as it is when nothing changes."""
    changes = []
    for attribute in schema:
        name = attribute.name
        if attribute.type is not AttributeType.NUMERIC or attribute.numbers is None or name not in frame.columns:
            continue
        series = frame.get_column(name)
        if not series.dtype.is_numeric():
            continue  # (a column the loader could not read as numbers is refused elsewhere, by coerce)
        if attribute.numbers is NumberKind.REAL:
            if series.dtype != pl.Float64:
                changes.append(series.cast(pl.Float64))
            continue
        if series.dtype == pl.Int64:
            continue
        converted = series.fill_nan(None) if series.dtype.is_float() else series
        whole = converted.cast(pl.Int64, strict=False)
        exact = whole.cast(converted.dtype, strict=False) == converted if not series.dtype.is_integer() else None
        bad = whole.is_null() & converted.is_not_null()
        if exact is not None:
            bad = bad | (exact.fill_null(True).not_())
        if bad.any():
            row = int(bad.arg_true()[0])
            raise SchemaError(
                f"column '{name}' is declared integer but row {row + 1} of {source} holds {series[row]!r}, which is "
                f"not a whole number of 64 bits (declare it type = \"real\" to keep fractions){NOT_AS_DECLARED}")
        changes.append(whole.alias(name))
    return frame.with_columns(changes) if changes else frame


def number_text(column: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """Numbers as canonical text: an integer as written, a whole float as that integer (``1.0``
    -> ``1``), another float as Polars writes it; NaN missing. One value's text does not depend
    on the column's other values, nor on the type a file's writer gave the column."""
    if dtype.is_integer():
        return column.cast(pl.String)
    value = column.fill_nan(None)
    whole = value.cast(pl.Int64, strict=False)
    return pl.when(whole.cast(pl.Float64) == value).then(whole.cast(pl.String)).otherwise(value.cast(pl.String))


def declared_text(frame: pl.DataFrame, schema: Schema) -> pl.DataFrame:
    """Each categorical or ordinal attribute held as numbers (a Parquet file's or a frame's
    column) as canonical text (:func:`number_text`). The file's writer chose the column's type,
    often from the values (pandas writes whole numbers as floats once one is missing); as text,
    a value is published and matched the same way whatever the other rows hold. Booleans, dates
    and text are left as they are."""
    changes = []
    for attribute in schema:
        name = attribute.name
        if attribute.type not in (AttributeType.CATEGORICAL, AttributeType.ORDINAL) or name not in frame.columns:
            continue
        dtype = frame.schema[name]
        if dtype.is_numeric():
            changes.append(number_text(pl.col(name), dtype).alias(name))
    return frame.with_columns(changes) if changes else frame


def first_not_held(given: pl.Series, held: pl.Series) -> int | None:
    """Where ``held`` (``given`` cast to a numeric column's type) first lost or changed a value of
    ``given`` (0.5 cut to 0 or made missing in a column of integers, ``'abc'`` made missing); None
    when it holds every one as it is. A public value list checked against a declared type: what
    the type cannot hold is refused, never silently narrowed."""
    lost = held.is_null() & given.is_not_null()
    if given.dtype.is_float():
        lost &= ~given.is_nan()
    changed = (held.cast(pl.Float64, strict=False) != given.cast(pl.Float64, strict=False)).fill_null(False)
    bad = lost | changed
    return int(bad.arg_true()[0]) if bad.any() else None
