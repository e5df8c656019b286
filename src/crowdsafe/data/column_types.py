"""Column types crowdsafe can use, and what happens to the others.

crowdsafe publishes, measures and queries numbers, text, dates and booleans. A Parquet file (or a
frame given in Python) may hold other types; each is decided by its *type*, never by its values
(the file's schema is fixed before any row is read, so what is said about it is public):

- converted on reading (:func:`usable`): ``Decimal`` and 128-bit integers to 64-bit floats
  (NumPy has neither; a CSV column Polars would read as 128-bit integers is read as text
  instead, :func:`crowdsafe.data.io.wide_integer_columns`), with a note when the type can hold
  more digits than a float keeps (:func:`rounding_note`), the ``Null`` type (a column with no
  value) to text, as a CSV reader types an empty column; the one exception decided by values:
  a ``UInt64`` column holding a value beyond int64 (:func:`beyond_int64`) is read as text,
  exactly, with the note of a CSV's whole numbers beyond 64 bits (:func:`wide_integer_note`);
  a ``Datetime`` with a time zone to the wall-clock times of its zone, without the zone (Polars
  reads a CSV's UTC offsets, ``2024-03-01T00:30:00+01:00``, as UTC: ``2024-02-29 23:30:00``),
  with a note (:func:`zone_note`): every step reads and writes zone-less timestamps, and each
  value keeps the date it had (a datetime counts by its date in the table's identity);
- unusable (:func:`unusable_kind`): extension types (an Arrow ``json_``, a pandas ``Period``,
  any registered one: their values are their storage's, whose meaning crowdsafe cannot know),
  nested (``List``, ``Array``, ``Struct``), ``Binary``,
  ``Duration``, ``Time`` and ``Object`` columns. They are set aside on reading, then
  :func:`settle` decides from the run's roles: a column the run would publish, measure or
  query (a quasi-identifier or sensitive attribute, which every column of an undeclared table
  is) is refused in one line naming it and its type; one the run does not use (declared an
  identifier or insensitive, or left out by ``--qi`` / ``--sensitive``) is dropped with a note.
  A DP query uses the columns its text names, whatever their roles: within :func:`reading_only`
  (the query driver's read) an unusable column it does not name is dropped with the note, where
  every column of an undeclared table, a quasi-identifier, was refused (``query(df, "count")`` on
  a pandas frame holding a timedelta column, until 2026-11-30).
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TypeGuard, TypeVar

import polars as pl

from crowdsafe.data.schema import Role, Schema
from crowdsafe.errors import SchemaError
from crowdsafe.identity import note_line

__all__ = ["beyond_int64", "reading_notes", "reading_only", "rounding_note", "settle", "unusable_kind", "usable",
           "usable_frame", "wide_integer_note", "zone_free", "zone_note"]

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)

#: The columns the run reads when it names them (:func:`reading_only`); None: its roles decide.
_READ: contextvars.ContextVar[frozenset[str] | None] = contextvars.ContextVar("read_columns", default=None)


@contextlib.contextmanager
def reading_only(columns: Iterable[str]) -> Iterator[None]:
    """Within it, :func:`settle` keeps to ``columns`` (the ones a query's text names): an unusable
    column outside them is dropped with a note whatever its role, one among them refused."""
    token = _READ.set(frozenset(columns))
    try:
        yield
    finally:
        _READ.reset(token)

_WIDE = (pl.Decimal, pl.Int128, pl.UInt128)
_INT64_MAX = 2**63 - 1
#: significant decimal digits a 64-bit float keeps exactly (a Decimal of this precision or less round-trips)
_FLOAT_DIGITS = 15


def wide_integer_note(label: str, names: Sequence[str]) -> str:
    """The note of a read that read ``names`` (whole numbers beyond 64 bits) as text."""
    which = ", ".join(f"'{n}'" for n in names)
    return (f"{label}: column{'s' if len(names) > 1 else ''} {which} read as text: whole numbers beyond 64 bits "
            "(codes such as account numbers stay exact); declare type = \"real\" in a schema to read them "
            "as numbers")


def beyond_int64(frame: pl.DataFrame | pl.LazyFrame) -> list[str]:
    """The ``UInt64`` columns of ``frame`` holding a value beyond int64 (NumPy's and the
    encoders' integers): :func:`usable` reads them as text, exactly. Scans those columns only."""
    names = [n for n, t in frame.collect_schema().items() if t == pl.UInt64]
    if not names:
        return []
    maxima = frame.select(pl.col(names).max())
    row = (maxima.collect() if isinstance(maxima, pl.LazyFrame) else maxima).row(0)
    return [n for n, top in zip(names, row) if top is not None and top > _INT64_MAX]


def _type_words(dtype: pl.DataType) -> str:
    return f"Decimal({dtype.precision}, {dtype.scale})" if isinstance(dtype, pl.Decimal) else str(dtype)


def rounding_note(label: str, schema: Mapping[str, pl.DataType]) -> str | None:
    """The note of a read whose ``Decimal`` or 128-bit integer columns (by type: a Decimal of
    more than 15 digits, any 128-bit integer) may be rounded by their reading as 64-bit floats."""
    names = [f"'{n}' ({_type_words(t)})" for n, t in schema.items()
             if isinstance(t, (pl.Int128, pl.UInt128))
             or (isinstance(t, pl.Decimal) and (t.precision is None or t.precision > _FLOAT_DIGITS))]
    if not names:
        return None
    return (f"{label}: column{'s' if len(names) > 1 else ''} {', '.join(names)} read as 64-bit floats, which keep "
            f"{_FLOAT_DIGITS} significant digits: a value with more is rounded, and distinct values may become "
            "equal; save the column as text (or with fewer digits) to keep every digit")


def _zoned(dtype: pl.DataType) -> TypeGuard[pl.Datetime]:
    """Whether ``dtype`` is a timestamp with a time zone."""
    return isinstance(dtype, pl.Datetime) and bool(dtype.time_zone)


def zone_note(label: str, schema: Mapping[str, pl.DataType]) -> str | None:
    """The note of a read whose timestamp columns with a time zone :func:`usable` reads as
    wall-clock times of that zone, without it."""
    zoned = [f"'{n}' ({t.time_zone})" for n, t in schema.items() if _zoned(t)]
    if not zoned:
        return None
    return (f"{label}: timestamp column{'s' if len(zoned) > 1 else ''} {', '.join(zoned)} read as times of day in "
            "that zone, without it (a CSV's UTC offsets are read as UTC: 2024-03-01T00:30:00+01:00 is "
            "2024-02-29 23:30:00, whose date is 2024-02-29); write local times without an offset to keep "
            "local dates")


def zone_free(frame: FrameT, label: str) -> FrameT:
    """``frame`` (a CSV file's read or scan) with its timestamp columns with a time zone read as
    :func:`usable` reads a Parquet file's (wall-clock times of the zone, without it), and the
    note of :func:`zone_note` printed when it has any."""
    schema = frame.collect_schema()
    note = zone_note(label, schema)
    if note is None:
        return frame
    print(note_line(note), file=sys.stderr)
    zoned = [n for n, t in schema.items() if _zoned(t)]
    return frame.with_columns(pl.col(zoned).dt.replace_time_zone(None))


def unusable_kind(dtype: pl.DataType) -> str | None:
    """What a column of ``dtype`` is, when crowdsafe cannot use it (else None)."""
    if isinstance(dtype, (pl.List, pl.Array)):
        return "a list (nested) column"
    if isinstance(dtype, pl.Struct):
        return "a struct (nested) column"
    if dtype == pl.Binary:
        return "a binary column"
    if isinstance(dtype, pl.Duration):
        return "a duration column"
    if dtype == pl.Time:
        return "a time-of-day column"
    if dtype == pl.Object:
        return "a column of Python objects"
    if isinstance(dtype, pl.Extension):
        return (f"a column of the extension type '{dtype.ext_name()}' (stored as {dtype.ext_storage()}; "
                "convert it to plain text or numbers to use it)")
    return None


def usable(schema: pl.Schema, as_text: Collection[str] = ()) -> tuple[list[pl.Expr] | None, dict[str, str]]:
    """The expressions that give a frame of ``schema`` its usable columns (converted as the
    module docstring says, ``as_text``: :func:`beyond_int64`'s columns; None: every column as it
    is), and the unusable columns with what each is."""
    changed = False
    kept: list[pl.Expr] = []
    unusable: dict[str, str] = {}
    for name, dtype in schema.items():
        kind = unusable_kind(dtype)
        if kind is not None:
            unusable[name] = kind
        elif name in as_text:
            kept.append(pl.col(name).cast(pl.String))
        elif isinstance(dtype, _WIDE):
            kept.append(pl.col(name).cast(pl.Float64))
        elif dtype == pl.Null:
            kept.append(pl.col(name).cast(pl.String))
        elif _zoned(dtype):
            kept.append(pl.col(name).dt.replace_time_zone(None))
        else:
            kept.append(pl.col(name))
            continue
        changed = True
    return (kept if changed else None), unusable


def reading_notes(label: str, schema: Mapping[str, pl.DataType], as_text: Sequence[str]) -> None:
    """Print the notes of :func:`usable`'s conversions that may change a value's reading."""
    if as_text:
        print(note_line(wide_integer_note(label, as_text)), file=sys.stderr)
    for note in (rounding_note(label, schema), zone_note(label, schema)):
        if note is not None:
            print(note_line(note), file=sys.stderr)


def usable_frame(frame: pl.DataFrame, label: str = "the data") -> tuple[pl.DataFrame, dict[str, str]]:
    """``frame`` with its usable columns (:func:`usable`; itself when nothing changes), and the
    unusable ones with what each is; the notes of :func:`reading_notes` name ``label``."""
    as_text = beyond_int64(frame)
    kept, unusable = usable(frame.schema, as_text)
    reading_notes(label, frame.schema, as_text)
    return (frame if kept is None else frame.select(kept)), unusable


def _role(name: str, schema: Schema | None, qi: Sequence[str] | None, sensitive: Sequence[str] | None) -> Role:
    """The role ``name`` gets in the run (the rules of :meth:`Schema.with_roles`)."""
    role = schema[name].role if schema is not None and name in schema else Role.QUASI_IDENTIFIER
    if qi is not None:
        role = Role.QUASI_IDENTIFIER if name in qi else (Role.INSENSITIVE if role is Role.QUASI_IDENTIFIER else role)
    if sensitive is not None:
        role = Role.SENSITIVE if name in sensitive else (Role.INSENSITIVE if role is Role.SENSITIVE else role)
    return role


def settle(
    unusable: Mapping[str, str],
    schema: Schema | None,
    qi: Sequence[str] | None,
    sensitive: Sequence[str] | str | None,
    label: str,
) -> Schema | None:
    """Refuse an unusable column the run would use, or note that it is dropped (module
    docstring); returns ``schema`` without the dropped columns. From the file's types, the
    schema and the roles only."""
    if not unusable:
        return schema
    chosen = [sensitive] if isinstance(sensitive, str) else sensitive
    read = _READ.get()
    for name, kind in unusable.items():
        role = _role(name, schema, qi, chosen)
        used = name in read if read is not None else role in (Role.QUASI_IDENTIFIER, Role.SENSITIVE)
        if used or (schema is not None and schema.person_id == name):
            raise SchemaError(
                f"column '{name}' of {label} is {kind}, which crowdsafe cannot publish, measure or query; "
                "declare it role = \"identifier\" in a schema, leave it out of --qi/--sensitive, "
                "or drop it from the file")
        why = ("this query does not read it" if read is not None
               else f"this run does not need it (its role: {role.value})")
        print(note_line(f"column '{name}' of {label} is not read: it is {kind}, which crowdsafe "
                        f"cannot use, and {why}"), file=sys.stderr)
    if schema is None:
        return None
    kept = tuple(a for a in schema if a.name not in unusable)
    return replace(schema, attributes=kept, undeclared=schema.undeclared - frozenset(unusable))
