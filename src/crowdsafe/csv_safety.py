"""Formula-safe CSV cells: a text cell a spreadsheet would run as a formula is written as text.

A spreadsheet that opens a CSV file runs a cell that begins with ``=``, ``+``, ``-`` or ``@``
as a formula, and a leading tab or carriage return can hide such a cell (CSV or formula
injection). A release holds the values its data subjects wrote, so any one of them could make
whoever opens the release run a formula. Following the OWASP advice on CSV injection, every CSV
file crowdsafe writes has each such text cell, and each such column name, written with a leading
apostrophe (``=1+1`` -> ``'=1+1``): a spreadsheet shows the cell as the text ``=1+1`` and does
not evaluate it.

What is escaped, exactly (:data:`FORMULA_START`):

- text cells (String, Categorical or Enum columns) and column names whose first character,
  after any apostrophes, is one of ``= + - @ \\t \\r``; one apostrophe more is put in front, so
  ``'=x`` (a cell that already starts with an apostrophe) is written ``''=x`` and reading it
  back (:func:`unescape_text`) gives ``'=x`` again: the escape is one-to-one and undone exactly;
- except a text cell that is a plain decimal number (``-5``, ``+1.5``, ``-2e3``): a spreadsheet
  reads it as a number, not a formula, so it is written as is;
- numeric, date and boolean columns are never changed (``-5`` in a numeric column stays ``-5``).

The escape is a property of the CSV text only: Parquet files keep the raw values, and so do the
frames the Python API returns. ``escape_formulas=False`` (the keyword of every CSV writer that
takes it) writes cells as they are, for machine readers that do not want the apostrophe.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TypeVar

import polars as pl

# the first characters a spreadsheet reads as the start of a formula (OWASP, "CSV Injection")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
APOSTROPHE = "'"
_NEEDS_ESCAPE = r"^'*[=+\-@\t\r]"
_PLAIN_NUMBER = r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
_ESCAPED = r"^'+[=+\-@\t\r]"
_TEXT_TYPES = (pl.String, pl.Categorical, pl.Enum)

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)


def _needs_escape(text: str) -> bool:
    body = text.lstrip(APOSTROPHE)
    if not body or body[0] not in FORMULA_START:
        return False
    if len(body) == len(text):  # no apostrophe: a plain number stays a number
        return re.match(_PLAIN_NUMBER, text) is None
    return True


def escape_text(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet shows as text (see the module docstring).

    >>> escape_text("=1+1"), escape_text("-5"), escape_text("'@x"), escape_text("abc")
    ("'=1+1", '-5', "''@x", 'abc')
    """
    return APOSTROPHE + text if _needs_escape(text) else text


def unescape_text(text: str) -> str:
    """Undo :func:`escape_text`: one leading apostrophe before ``'* [=+-@\\t\\r]`` is dropped."""
    body = text.lstrip(APOSTROPHE)
    if len(body) < len(text) and body and body[0] in FORMULA_START:
        return text[1:]
    return text


def escape_expr(column: str | pl.Expr) -> pl.Expr:
    """The Polars expression form of :func:`escape_text` for a String column (vectorised;
    missing values stay missing). Keeps the column's name."""
    expr = pl.col(column) if isinstance(column, str) else column
    needs = expr.str.contains(_NEEDS_ESCAPE) & ~expr.str.contains(_PLAIN_NUMBER)
    return pl.when(needs).then(pl.lit(APOSTROPHE) + expr).otherwise(expr)


def unescape_expr(column: str | pl.Expr) -> pl.Expr:
    """The Polars expression form of :func:`unescape_text` for a String column."""
    expr = pl.col(column) if isinstance(column, str) else column
    return pl.when(expr.str.contains(_ESCAPED)).then(expr.str.slice(1)).otherwise(expr)


def escape_frame(frame: pl.DataFrame, *, escape_formulas: bool = True) -> pl.DataFrame:
    """``frame`` ready to be written as formula-safe CSV: every text column with a cell to escape
    through :func:`escape_expr` (Categorical and Enum columns as text), every column name through
    :func:`escape_text`. Other columns are untouched (CSV writes them as the same text).
    ``escape_formulas=False`` returns ``frame`` itself."""
    if not escape_formulas:
        return frame
    text = [name for name, dtype in frame.schema.items() if isinstance(dtype, _TEXT_TYPES) or dtype == pl.String]
    if text:  # a column with no cell to escape is written as it is (most are: no copy of its cells)
        flagged = frame.select(pl.col(name).cast(pl.String).str.contains(_NEEDS_ESCAPE).any() for name in text).row(0)
        text = [name for name, flag in zip(text, flagged) if flag]
    if text:
        frame = frame.with_columns(escape_expr(pl.col(name).cast(pl.String)).alias(name) for name in text)
    names = {name: escape_text(name) for name in frame.columns if _needs_escape(name)}
    return frame.rename(names) if names else frame


def unescape_frame(frame: FrameT) -> FrameT:
    """Undo :func:`escape_frame` on a frame read from a formula-safe CSV (String columns and
    column names); a LazyFrame stays lazy."""
    schema = frame.collect_schema()
    text = [name for name, dtype in schema.items() if dtype == pl.String]
    if text:
        frame = frame.with_columns(unescape_expr(name).alias(name) for name in text)
    names = {name: unescape_text(name) for name in schema.names() if unescape_text(name) != name}
    return frame.rename(names) if names else frame


def write_csv(frame: pl.DataFrame, target: str | os.PathLike[str], *, escape_formulas: bool = True,
              separator: str = ",") -> Path:
    """Write ``frame`` as CSV to ``target`` (a path the caller owns, e.g. the temporary path of
    :func:`crowdsafe.files.atomic_path`), formula-safe unless ``escape_formulas`` is False."""
    path = Path(target)
    escape_frame(frame, escape_formulas=escape_formulas).write_csv(path, separator=separator)
    return path


# The format notes a certificate carries about the file written beside it
# (:attr:`crowdsafe.privacy.certificate.Certificate.format_notes`). Each is fixed by the option and
# the file name alone, before the data is read, so it may appear in public outputs.
ESCAPED_CSV_NOTE = (
    "CSV cells are formula-safe (OWASP, CSV injection): a text cell or column name whose first character, "
    "after any apostrophes, is = + - @, a tab or a carriage return, and that is not a plain number, is "
    "written with one leading apostrophe more, so a spreadsheet shows it as text; numeric columns are "
    "unchanged; crowdsafe.csv_safety.unescape_frame (read_table(..., unescape_formulas=True)) restores "
    "the values exactly"
)
RAW_CSV_NOTE = (
    "CSV cells are written as they are (--no-escape-formulas, escape_formulas=False): a cell that starts "
    "with = + - @, a tab or a carriage return may run as a formula when the file is opened in a spreadsheet"
)
PARQUET_NOTE = "Parquet keeps the raw values (no formula escaping)"


def format_note(target: str | os.PathLike[str], *, escape_formulas: bool = True) -> str | None:
    """The certificate's note on how the table at ``target`` holds its cells: formula-safe CSV
    (:data:`ESCAPED_CSV_NOTE`), raw CSV (:data:`RAW_CSV_NOTE`) or Parquet (:data:`PARQUET_NOTE`);
    None for another name. Decided by the name and the option alone (no data)."""
    name = str(target).rstrip("/").lower()
    if name.endswith((".csv", ".tsv", ".csv.gz")):
        return ESCAPED_CSV_NOTE if escape_formulas else RAW_CSV_NOTE
    if name.endswith((".parquet", ".pq")):
        return PARQUET_NOTE
    return None


def certificate_beside(path: str | os.PathLike[str]) -> dict:
    """The JSON object written beside a release or view file (``<stem>.certificate.json``), read
    through the checked input reader; an empty dict when there is none, it is not a JSON object or
    it is the composed certificate of several releases (``publish --releases``), no table's own."""
    import json

    from crowdsafe.files import read_input_text

    beside = Path(path).with_name(Path(path).stem + ".certificate.json")
    if not beside.exists():
        return {}
    try:
        data = json.loads(read_input_text(beside, "certificate"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or (isinstance(data.get("components"), list) and data["components"]):
        return {}  # (a composed certificate of several releases, publish --releases: no table's own)
    return data


def escaped_release(path: object) -> bool:
    """Whether ``path`` names a CSV release or view crowdsafe wrote formula-safe: a ``.csv`` file
    with a crowdsafe certificate beside it (:func:`certificate_beside`) that does not say its
    cells are raw. Anything else (no certificate, another format) is read as it is."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).lower().endswith(".csv"):
        return False
    certificate = certificate_beside(path)
    if certificate.get("format") != "crowdsafe-certificate":
        return False
    return escaped_by(certificate.get("format_notes") or [])


def escaped_by(format_notes: tuple[str, ...] | list[str]) -> bool:
    """Whether a CSV file whose certificate carries ``format_notes`` was written formula-safe:
    True unless it says the cells are raw (the default, :func:`write_csv`, escapes). Notes that are
    not a list (a hand-edited certificate) say nothing."""
    return not isinstance(format_notes, (list, tuple)) or RAW_CSV_NOTE not in format_notes
