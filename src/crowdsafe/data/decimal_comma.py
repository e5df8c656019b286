"""Numbers written with a decimal comma (``35.309,24``: German, French, ... spreadsheet exports).

Such a file is usually ``;``-separated (the comma being taken), and Polars reads its numbers as
text. The rule (the reading *mode*, :func:`mode`):

- ``"auto"`` (a ``;``-separated file, nothing said): a text column whose every value is a
  number written with a decimal comma (:data:`PATTERN`: an optional sign, digits with optional
  ``.`` thousands separators, then ``,`` and digits) and at least one of which has the comma is
  read as numbers, with a note naming it (:func:`note`);
- ``"on"`` (``--decimal-comma``, ``decimal_comma=True``, or ``[csv] decimal_comma = true`` in
  the schema): the same without needing a comma, in any file, and a declared numeric column must
  be written so (a ``.`` is then a thousands separator, never a decimal point);
- ``"off"`` (``--no-decimal-comma``, ``decimal_comma=False``, or a file separated otherwise with
  nothing said): numbers are read with a decimal point only; a declared numeric column that
  fails on a value written with a decimal comma says so (:func:`hint`).

A column converted holds the numbers the text stands for: ``1.234,5`` is 1234.5, ``-12,5`` is
-12.5, ``7`` is 7 (integers stay integers when every value is one). Only the *set* of a column's
values decides, so a file read whole and one read batch by batch
(:mod:`crowdsafe.data.streamed_table`) convert the same columns the same way.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any, Literal

import polars as pl

from crowdsafe.data.column_words import is_code_name
from crowdsafe.errors import ParameterError, SchemaError

__all__ = ["GROUPED", "PATTERN", "Mode", "columns", "csv_options", "hint", "mode", "note", "number_text", "option",
           "pattern", "points", "undeclared", "unread", "unread_note"]

Mode = Literal["off", "auto", "on"]

#: A number written with a decimal comma (the whole of a value, blanks stripped).
PATTERN = r"^[+-]?(?:[0-9]{1,3}(?:\.[0-9]{3})+|[0-9]+)(?:,[0-9]+)?$"
#: The thousands separators a number read with ``--decimal-comma`` may also use: a space, a no-break
#: space (U+00A0) or a narrow no-break space (U+202F), as French, Swiss and Nordic exports write
#: ``29 824,00`` (one kind in a value).
GROUP_SPACES = " \u00a0\u202f"
#: :data:`PATTERN` with thousands grouped by one of :data:`GROUP_SPACES` too: the ``"on"`` reading.
GROUPED = (r"^[+-]?(?:[0-9]{1,3}(?:\.[0-9]{3})+|[0-9]{1,3}(?: [0-9]{3})+|[0-9]{1,3}(?:\x{00a0}[0-9]{3})+"
           r"|[0-9]{1,3}(?:\x{202f}[0-9]{3})+|[0-9]+)(?:,[0-9]+)?$")


#: A value whose comma can only be a decimal one: not three digits after it, or a '.' group before.
_DECIMAL = r",(?:[0-9]{1,2}|[0-9]{4,})$|\.[0-9]{3},"


def pattern(reading: Mode) -> str:
    """The pattern a value must match to be read as a number under ``reading``: space-grouped
    thousands only when the reading was asked for (``"on"``), never guessed (``"auto"``)."""
    return GROUPED if reading == "on" else PATTERN


def mode(separator: str, decimal_comma: bool | None) -> Mode:
    """The reading mode of a CSV file separated by ``separator``, given what the user said
    (None: nothing)."""
    if decimal_comma is None:
        return "auto" if separator == ";" else "off"
    return "on" if decimal_comma else "off"


def undeclared(names: Iterable[str], text: Collection[str], reading: Mode) -> list[str]:
    """The columns whose reading an ``"auto"`` read leaves to the data (none in another mode):
    every column of the file but the declared text ones (``text``) and those named like a postal
    code (kept as text). Whether such a column is read with a decimal comma (and ``1.234`` as
    1234) depends on its values, so one row written ``40,5`` changes how every value is read.
    Which columns these are comes from the header and the schema alone, never from a value, so
    the mark they get (:meth:`crowdsafe.data.schema.Schema.marked_read`) is the same on
    neighbouring tables; the note (:func:`note`) names the columns the values did convert."""
    if reading != "auto":
        return []
    return [c for c in names if c not in text and not is_code_name(c)]


def number_text(text: pl.Expr) -> pl.Expr:
    """Text written with a decimal comma as text with a decimal point (``1.234,5`` -> ``1234.5``),
    ready for a cast; only meaningful for values matching :data:`PATTERN`."""
    return text.str.replace_all(f"[.{GROUP_SPACES}]", "").str.replace(",", ".", literal=True)


def columns(frame: pl.DataFrame, skip: Collection[str], reading: Mode) -> list[str]:
    """The text columns of ``frame`` (blanks already stripped), other than ``skip``, that
    ``reading`` reads as numbers written with a decimal comma (module docstring)."""
    if reading == "off":
        return []
    text = [c for c, t in frame.schema.items() if t == pl.String and c not in skip]
    if text and reading == "auto":  # a cheap literal search first: most text columns hold no comma
        found = frame.select(pl.col(c).str.contains(",", literal=True).any().alias(c) for c in text).row(0)
        text = [c for c, has in zip(text, found) if has]
    if not text:
        return []
    facts = frame.select(
        (pl.col(c).str.contains(pattern(reading)) | pl.col(c).is_null()).all() & pl.col(c).is_not_null().any()
        for c in text
    ).row(0)
    return [c for c, every in zip(text, facts) if every]


def points(frame: pl.DataFrame, converted: Collection[str]) -> list[str]:
    """The columns of ``frame`` besides ``converted`` that Polars read as numbers with a decimal
    point, each value with at most three decimals, at least 1 when it has some, and one with
    some: in a file whose other
    columns are written with a decimal comma, their ``.`` most likely groups thousands (a
    population ``250.523`` read as 250.523, not 250523)."""
    floats = [c for c, t in frame.schema.items() if t.is_float() and c not in converted]
    if not floats:
        return []
    facts = frame.select(
        ((pl.col(c) * 1000).round(0).sub(pl.col(c) * 1000).abs().lt(1e-6).all()
         & ((pl.col(c).abs() >= 1) | (pl.col(c) == pl.col(c).floor())).all()  # 0.5 groups nothing
         & (pl.col(c) != pl.col(c).floor()).any()) for c in floats).row(0)
    return [c for c, thousands in zip(floats, facts) if thousands]


def note(label: str, names: list[str], pointed: Collection[str] = ()) -> str:
    """The note of an ``"auto"`` read that converted ``names``; ``pointed``: the columns it read
    with a decimal point whose ``.`` may group thousands (:func:`points`)."""
    which = ", ".join(f"'{n}'" for n in names)
    plural = len(names) > 1
    also = ""
    if pointed:
        others = ", ".join(f"'{n}'" for n in pointed)
        also = (f"; {others} {'were' if len(pointed) > 1 else 'was'} read with a decimal point (1.234 as 1.234), "
                "though in a file written with decimal commas a '.' groups thousands (1.234 is 1234): "
                "--decimal-comma reads every column so")
    return (f"{label}: column{'s' if plural else ''} {which} read with a decimal comma (e.g. 1.234,5 as 1234.5), "
            "because the values looked so (a custodian-only fact about the data; a release or answer that uses "
            f"{'them' if plural else 'it'} is not fit for release until the reading is declared); say so with "
            "--decimal-comma or [csv] decimal_comma = true in the schema, or give --no-decimal-comma "
            f"(decimal_comma=False) to read {'them' if plural else 'it'} as text{also}")


def unread(frame: pl.DataFrame, declared: Collection[str], said: bool | None) -> list[str]:
    """The text columns of a CSV file read as ``frame`` that an ``"auto"`` read would read as
    numbers written with a decimal comma, when nothing was said (``said`` None) and none was
    declared (``declared``: a declared numeric one is refused with :func:`hint`): a French export
    separated by commas writes ``"72,5"`` in quotes, and such a column was read as text,
    categories, without a word (a ``;`` file's were converted already)."""
    if said is not None:
        return []
    skip = {*declared, *(c for c in frame.columns if is_code_name(c))}
    text = [c for c, t in frame.schema.items() if t == pl.String and c not in skip]
    if not text:
        return []
    # a necessary condition, on the first rows: a column of words is passed over without a search
    head = frame.head(1000).select((pl.col(c).str.contains(PATTERN) | pl.col(c).is_null()).all() for c in text).row(0)
    found = columns(frame.select(c for c, numbers in zip(text, head) if numbers), (), "auto")
    if not found:
        return []
    # "1,234" alone may be a thousands comma (an English export's quoted numbers): only a column
    # with a comma that is surely decimal (not three digits after it, or after a '.' group) is named
    surely = frame.select(pl.col(c).str.contains(_DECIMAL).any() for c in found).row(0)
    return [c for c, decimal in zip(found, surely) if decimal]


def unread_note(label: str, names: list[str]) -> str:
    """The note naming the columns :func:`unread` found."""
    which = ", ".join(f"'{n}'" for n in names)
    plural = len(names) > 1
    return (f"{label}: column{'s' if plural else ''} {which} read as text, though every value looks like a number "
            "written with a decimal comma, e.g. 1.234,5 (a custodian-only fact about the data); give "
            f"--decimal-comma (or [csv] decimal_comma = true in the schema) to read {'them' if plural else 'it'} as "
            "numbers, or "
            "--no-decimal-comma to keep the text and this note away")


def hint(value: object) -> str:
    """What to add to a refusal of ``value`` as a number: a hint when it is written with a
    decimal comma, else nothing."""
    if isinstance(value, str) and "," in value:
        matched = pl.Series([value.strip()]).str.contains(GROUPED).item()
        if matched:
            return (": a decimal comma? give --decimal-comma (decimal_comma=True), or [csv] decimal_comma = true "
                    "in the schema")
    return ""


def option(decimal_comma: object) -> bool | None:
    """The ``decimal_comma`` parameter of a function that reads a table: True, False or None
    (the schema's ``[csv]`` table, else ``"auto"``), else a ParameterError (``"yes"`` is no
    boolean: it was taken as true)."""
    if decimal_comma is None or isinstance(decimal_comma, bool):
        return decimal_comma
    raise ParameterError(f"decimal_comma must be True, False or None, got {decimal_comma!r}", parameter="decimal_comma")


def csv_options(table: Any, where: str) -> bool | None:
    """The ``[csv]`` table of a schema file (``where``): how the data file is written (``decimal_comma``)."""
    if not isinstance(table, dict):
        raise SchemaError(f"{where}: csv must be a table, e.g. [csv] decimal_comma = true")
    unknown = set(table) - {"decimal_comma"}
    if unknown:
        raise SchemaError(f"{where}: unknown key(s) {sorted(unknown)} in [csv]; it takes decimal_comma")
    value = table.get("decimal_comma")
    if value is not None and not isinstance(value, bool):
        raise SchemaError(f"{where}: [csv] decimal_comma must be true or false, got {value!r}")
    return value
