"""Column types crowdsafe can use, and what happens to the others.

crowdsafe publishes, measures and queries numbers, text, dates and booleans. A Parquet file (or a
frame given in Python) may hold other types; each is decided by its *type*, never by its values
(the file's schema is fixed before any row is read, so what is said about it is public):

- converted on reading (:func:`usable`): ``Decimal`` and 128-bit integers to 64-bit floats
  (NumPy has neither; a CSV column Polars would read as 128-bit integers is read as text
  instead, :func:`crowdsafe.data.io.wide_integer_columns`), the ``Null`` type (a column with no
  value) to text, as a CSV reader types an empty column;
- unusable (:func:`unusable_kind`): nested (``List``, ``Array``, ``Struct``), ``Binary``,
  ``Duration``, ``Time`` and ``Object`` columns. They are set aside on reading, then
  :func:`settle` decides from the run's roles: a column the run would publish, measure or
  query (a quasi-identifier or sensitive attribute, which every column of an undeclared table
  is) is refused in one line naming it and its type; one the run does not use (declared an
  identifier or insensitive, or left out by ``--qi`` / ``--sensitive``) is dropped with a note.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace

import polars as pl

from crowdsafe.data.schema import Role, Schema
from crowdsafe.errors import SchemaError
from crowdsafe.identity import note_line

__all__ = ["settle", "unusable_kind", "usable", "usable_frame"]

_WIDE = (pl.Decimal, pl.Int128, pl.UInt128)


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
    return None


def usable(schema: pl.Schema) -> tuple[list[pl.Expr] | None, dict[str, str]]:
    """The expressions that give a frame of ``schema`` its usable columns (converted as the
    module docstring says; None: every column as it is), and the unusable columns with what each is."""
    changed = False
    kept: list[pl.Expr] = []
    unusable: dict[str, str] = {}
    for name, dtype in schema.items():
        kind = unusable_kind(dtype)
        if kind is not None:
            unusable[name] = kind
        elif isinstance(dtype, _WIDE):
            kept.append(pl.col(name).cast(pl.Float64))
        elif dtype == pl.Null:
            kept.append(pl.col(name).cast(pl.String))
        else:
            kept.append(pl.col(name))
            continue
        changed = True
    return (kept if changed else None), unusable


def usable_frame(frame: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, str]]:
    """``frame`` with its usable columns (:func:`usable`; itself when nothing changes), and the
    unusable ones with what each is."""
    kept, unusable = usable(frame.schema)
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
    for name, kind in unusable.items():
        role = _role(name, schema, qi, chosen)
        if role in (Role.QUASI_IDENTIFIER, Role.SENSITIVE) or (schema is not None and schema.person_id == name):
            raise SchemaError(
                f"column '{name}' of {label} is {kind}, which crowdsafe cannot publish, measure or query; "
                "declare it role = \"identifier\" in a schema, leave it out of --qi/--sensitive, "
                "or drop it from the file")
        print(note_line(f"column '{name}' of {label} is not read: it is {kind}, which crowdsafe "
                        f"cannot use, and this run does not need it (its role: {role.value})"), file=sys.stderr)
    if schema is None:
        return None
    kept = tuple(a for a in schema if a.name not in unusable)
    return replace(schema, attributes=kept, undeclared=schema.undeclared - frozenset(unusable))
