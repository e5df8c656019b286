"""A table file larger than memory, read as the loader reads it but never held whole.

:func:`read_streamed` applies the load pipeline (:mod:`crowdsafe.data.pipeline`) to a CSV or
Parquet file without reading its rows into memory, and gives a :class:`StreamedTable`: a lazy
scan that yields the rows batch by batch exactly as :func:`crowdsafe.data.load` would hold them
(same columns, order, types, stripped text, missing-value policy), and a small *domain*
:class:`~crowdsafe.data.Dataset`: one row per distinct value of each column, loaded by the data
layer itself (schema inferred or declared, coercion checks, hierarchies from the schema,
coverage), so its schema and hierarchies are those of the table loaded whole.

Why the same: every decision the loader takes is either per value (stripping, a cast, NaN made
missing) or depends only on the *set* of a column's values (CSV's numeric conversion, the
declared types, hierarchies built over the distinct values, the flat hierarchies), never on how
many rows hold a value or where. The set is found by one streaming pass (Polars' streaming
engine); a second one counts missing values when a NaN may turn into one or a policy other than
``keep`` needs them (and, for ``drop``, finds the set again over the rows kept).

It reads the whole file and never less: where an input cannot be read this way with exactly the
loader's result, :func:`read_streamed` returns None and the caller reads it whole (a folder, a
compressed CSV, a declared date read from text, a column type other than numbers, text, dates and
booleans, or a value the declared type refuses: the in-memory read then names its row). Other
refusals (an unknown column, a hierarchy that does not cover a value, a missing value under
``missing="error"``) are raised here with the loader's one-line messages, without reading the
file whole; so is a declared date column holding a two-digit year past the rows the scan inferred
its types from (:mod:`crowdsafe.data.short_years`; such an inferred column is read again as text).
The data layer knows nothing of privacy: what leaves a run is decided by the drivers.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import polars as pl

from crowdsafe.data import decimal_comma as comma
from crowdsafe.data import short_years
from crowdsafe.data.coerce import NOT_AS_DECLARED, coerce, number_text
from crowdsafe.data.column_names import describe_renames, stable_names
from crowdsafe.data.column_types import settle
from crowdsafe.data.dataset import Dataset
from crowdsafe.data.io import CSV_SUFFIXES, PARQUET, _suffix, ragged_row_error, sniff_format, tidied_text
from crowdsafe.data.missing import (
    MissingPolicy,
    MissingReport,
    dotted_columns,
    dotted_note,
    emptied_by_drop,
    missing_refusal,
)
from crowdsafe.data.nul_bytes import refuse_nul
from crowdsafe.data.schema import AttributeType, Schema, complete_schema, declared_and_reading
from crowdsafe.data.streaming import Scan, reads_eagerly, scan_table
from crowdsafe.data.text_bytes import NOT_UTF8, utf8_complaint
from crowdsafe.errors import EMPTY_TABLE, CrowdsafeError, InputError, SchemaError
from crowdsafe.files import check_input_path, literal_path
from crowdsafe.identity import note_line
from crowdsafe.progress import tracked, working

__all__ = ["BATCH_ROWS", "StreamedTable", "load_or_stream", "read_streamed", "streams"]

#: Rows per batch of a pass over the rows (about 25 MB of a 15-column table; larger batches only make
#: the CSV reader buffer more).
BATCH_ROWS = 1 << 18


@dataclass(frozen=True)
class StreamedTable:
    """A table file read batch by batch (module docstring). ``rows``: the table as the loader
    holds it, lazily (every pass over it reads the file again); ``domain``: the distinct values
    loaded by the data layer (its schema, hierarchies and roles are the table's); ``n_rows``: the
    rows after the missing-value policy; ``missing``: the policy's report. ``given``: when the
    policy dropped rows, the rows and the distinct-value frame before it did (the table's
    identity in the ledger is the table's as given: the same people, one budget)."""

    path: Path
    rows: pl.LazyFrame
    domain: Dataset
    n_rows: int
    missing: MissingReport
    given: tuple[pl.LazyFrame, pl.DataFrame, int] | None = None

    @property
    def name(self) -> str | None:
        return self.domain.name

    def batches(self, columns: Sequence[str] | None = None, *, ordered: bool = True,
                label: str = "reading the table") -> Iterator[pl.DataFrame]:
        """The rows of ``columns`` (all: None) in batches of about :data:`BATCH_ROWS`, in file order
        when ``ordered`` (a generator; each batch is a Polars frame); the pass is shown as ``label``
        on a terminal (:mod:`crowdsafe.progress`)."""
        lazy = self.rows if columns is None else self.rows.select(list(columns))
        return tracked(lazy.collect_batches(chunk_size=BATCH_ROWS, maintain_order=ordered), label, self.n_rows)

    def as_given(self, label: str) -> tuple[pl.LazyFrame, pl.DataFrame, Iterator[pl.DataFrame]]:
        """The table as given, before ``missing='drop'`` removed rows: its rows (lazily), a frame
        holding every distinct value of each column, and the rows in batches in no particular
        order (the pass shown as ``label``)."""
        if self.given is None:
            return self.rows, self.domain.frame, self.batches(ordered=False, label=label)
        rows, values, n_rows = self.given
        return rows, values, tracked(rows.collect_batches(chunk_size=BATCH_ROWS, maintain_order=False), label, n_rows)

    def frequency(self, columns: Sequence[str]) -> tuple[Dataset, np.ndarray]:
        """The frequency table of ``columns``: their distinct tuples as a Dataset (the domain's
        schema and hierarchies, in no particular order) and the rows holding each, counted by one
        pass of Polars' streaming engine (memory: the distinct tuples, not the rows). A missing
        value is a value of its own, as in a group-by of the table loaded whole."""
        names = list(columns)
        with working("counting the table's classes"):
            counted = (self.rows.select(names).group_by(names).agg(pl.len().alias(_ROWS))
                       .collect(engine="streaming"))
        part = self.domain.select(names)
        tuples = part.with_frame(counted.drop(_ROWS).cast(part.frame.schema))
        return tuples, counted.get_column(_ROWS).to_numpy().astype(np.int64)


def streams(data: object) -> bool:
    """Whether :func:`read_streamed` is tried for ``data``: a path to a file (not a folder) larger
    than ``crowdsafe.data.streaming.EAGER_BYTES`` on disk and not a compressed CSV (the rule of
    :func:`crowdsafe.data.streaming.reads_eagerly`)."""
    if not isinstance(data, (str, os.PathLike)):
        return False
    path = literal_path(data)
    check_input_path(path)  # a name too long for the system: one line, not an OSError midway
    if not path.is_file():
        return False
    try:
        return not reads_eagerly(path)
    except CrowdsafeError:
        return False  # the in-memory read names the problem


_ROWS = "__crowdsafe_rows"
_SIMPLE = (pl.String, pl.Boolean, pl.Date, pl.Categorical, pl.Enum)


def _simple(dtype: pl.DataType) -> bool:
    return dtype.is_numeric() or isinstance(dtype, (pl.Datetime, pl.Duration, *_SIMPLE)) or dtype in (pl.Time,)


def _scan(path: Path, text_columns: Sequence[str], infer_all: bool, decimal_comma: bool | None) -> Scan:
    """The lazy scan (:func:`crowdsafe.data.streaming.scan_table`); its notes on standard error once."""
    if infer_all:  # the second try: the renames were reported by the first
        with contextlib.redirect_stderr(io.StringIO()):
            return scan_table(path, text_columns=text_columns, infer_all=True, decimal_comma=decimal_comma)
    scan = scan_table(path, text_columns=text_columns, decimal_comma=decimal_comma)
    if not scan.is_csv:
        names, renames = stable_names(pl.scan_parquet(path, glob=False).collect_schema().names())
        if renames:
            print(note_line(describe_renames(str(path), renames)), file=sys.stderr)
    return scan


def _distinct(lazy: pl.LazyFrame, names: Sequence[str], label: str = "reading the table: its values"
              ) -> tuple[int, dict[str, pl.Series], dict[str, int], int]:
    """One pass over the rows, batch by batch: the rows, each column's distinct values, its
    missing values and the rows with a missing value. (A streaming ``unique().implode()`` holds
    the columns whole; batches hold one batch and the distinct values.)"""
    rows = with_missing = 0
    nulls = dict.fromkeys(names, 0)
    held: dict[str, list[pl.Series]] = {c: [] for c in names}
    sizes = dict.fromkeys(names, 0)
    for batch in tracked(lazy.collect_batches(chunk_size=BATCH_ROWS, maintain_order=False), label, None):
        rows += batch.height
        counts = batch.null_count().row(0, named=True)
        if any(counts.values()):
            with_missing += int(batch.select(pl.any_horizontal(pl.all().is_null()).sum()).item())
        distinct = batch.select([pl.col(c).unique().implode() for c in names])  # the columns in parallel
        for column in names:
            nulls[column] += counts[column]
            values = distinct.get_column(column)[0].alias(column)
            held[column].append(values)
            sizes[column] += len(values)
            if len(held[column]) > 1 and sizes[column] > 4 * BATCH_ROWS:
                held[column] = [pl.concat(held[column]).unique()]
                sizes[column] = len(held[column][0])
    values = {c: (pl.concat(held[c]).unique() if held[c] else lazy.select(c).clear().collect().get_column(c))
              for c in names}
    return rows, values, nulls, with_missing


def _domain_frame(values: dict[str, pl.Series]) -> pl.DataFrame:
    """Every column's distinct values in one frame, shorter columns padded by repeating their
    first value (only each column's set of values means anything)."""
    height = max(len(v) for v in values.values())
    return pl.DataFrame([v.extend(v.head(1).extend_constant(v[0], height - len(v) - 1)) if len(v) < height else v
                         for v in values.values()])


def _read_error(path: Path, exc: pl.exceptions.PolarsError, is_csv: bool) -> InputError:
    """The loader's one-line messages for a file that does not parse."""
    text = str(exc).strip()
    if is_csv and utf8_complaint(exc):
        return InputError(f"{path} {NOT_UTF8}")
    ragged = ragged_row_error(path) if is_csv else None  # a row longer than the header, named by its line
    if ragged is not None:
        return ragged
    first = text.splitlines()[0] if text else type(exc).__name__
    what = "parse" if is_csv and isinstance(exc, pl.exceptions.ComputeError) else "read"
    return InputError(f"cannot {what} {path} as {'CSV' if is_csv else 'Parquet'}: {first}")


def _conversions(raw: pl.DataFrame, typed: pl.DataFrame, schema: Schema, commas: Sequence[str]) -> list[pl.Expr] | None:
    """Per-value expressions that turn a batch of raw columns into the loader's types (the
    decisions read from the domain: ``raw`` -> ``typed``; ``commas``: the columns whose numbers are
    written with a decimal comma); None when one cannot be made per value."""
    expressions = []
    for attribute in schema:
        name = attribute.name
        before, after = raw.schema[name], typed.schema[name]
        if not (_simple(before) and _simple(after)):
            return None
        if before == after:
            expressions.append(pl.col(name))
        elif after.is_numeric() and before == pl.String:
            text = pl.col(name).str.strip_chars()
            if name in commas:  # every value matched the pattern in the domain: per value, the same text
                text = comma.number_text(text)
            if after.is_integer():  # a declared integer written '40.0' was read as a float, found whole
                expressions.append(pl.coalesce(text.cast(after, strict=False),
                                               text.cast(pl.Float64, strict=False).cast(after, strict=False)))
            else:
                expressions.append(text.cast(after, strict=False))
        elif after.is_numeric() and before.is_numeric():  # a declared integer or real (checked on the domain)
            expressions.append(pl.col(name).cast(after, strict=False))
        elif after == pl.String and before.is_numeric():  # a declared categorical held as numbers
            expressions.append(number_text(pl.col(name), before))
        elif after == pl.Date and isinstance(before, pl.Datetime):
            expressions.append(pl.col(name).dt.date())
        else:  # a date parsed from text infers its format from the values it sees: read it whole
            return None
    return expressions


def read_streamed(
    path: str | os.PathLike[str],
    *,
    schema: Schema | None = None,
    qi: Sequence[str] | None = None,
    sensitive: Sequence[str] | str | None = None,
    missing: MissingPolicy | str = MissingPolicy.KEEP,
    decimal_comma: bool | None = None,
) -> StreamedTable | None:
    """The table at ``path`` as the loader reads it (module docstring), or None when it must be
    read whole. ``schema`` (declared), ``qi``, ``sensitive``, ``missing`` and ``decimal_comma`` as
    in :func:`crowdsafe.data.load`. The reader's notes (renamed columns, a decimal comma, a
    column dropped for its type) reach standard error once: not when the file is then read whole
    (that read gives them)."""
    notes = io.StringIO()
    declared, reading = declared_and_reading(schema, decimal_comma)
    try:
        with contextlib.redirect_stderr(notes):
            table = _read_streamed(Path(path), declared, qi, sensitive, MissingPolicy.parse(missing), reading)
    except BaseException:
        sys.stderr.write(notes.getvalue())
        raise
    if table is not None:
        sys.stderr.write(notes.getvalue())
    return table


def load_or_stream(
    data: object,
    *,
    schema: Schema | str | os.PathLike[str] | None = None,
    qi: Sequence[str] | None = None,
    sensitive: Sequence[str] | str | None = None,
    missing: MissingPolicy | str = MissingPolicy.KEEP,
    decimal_comma: bool | None = None,
    empty: bool = False,
) -> Dataset | StreamedTable:
    """The table ``data`` as :func:`crowdsafe.data.load` reads it: a :class:`StreamedTable` when
    :func:`streams` says so and :func:`read_streamed` can take it, else the Dataset loaded whole
    (the reference twin). ``schema``: a Schema or a TOML file. ``empty``: a table without rows
    is read (:func:`~crowdsafe.data.load`'s)."""
    from crowdsafe.data.pipeline import load

    if isinstance(schema, (str, os.PathLike)):
        schema = Schema.from_toml(Path(schema))
    if isinstance(data, (str, os.PathLike)) and streams(data):  # larger than EAGER_BYTES: batch by batch if it can be
        streamed = read_streamed(data, schema=schema, qi=qi, sensitive=sensitive, missing=missing,
                                 decimal_comma=decimal_comma)
        if streamed is not None:
            return streamed
    return load(data, schema=schema, qi=qi, sensitive=sensitive, missing=missing, decimal_comma=decimal_comma,
                empty=empty)


def _read_streamed(path: Path, schema: Schema | None, qi: Sequence[str] | None,
                   sensitive: Sequence[str] | str | None, policy: MissingPolicy,
                   decimal_comma: bool | None) -> StreamedTable | None:
    from crowdsafe.data.pipeline import load

    text_columns = [a.name for a in (schema or ()) if a.type in (AttributeType.CATEGORICAL, AttributeType.ORDINAL)]
    kind = sniff_format(path)[0]
    if kind != PARQUET and _suffix(path) not in (*CSV_SUFFIXES, ""):
        return None  # text named as Parquet or by an unknown suffix: the loader's own rules and messages
    lazy, is_csv, reading, unusable = _scan(path, text_columns, False, decimal_comma)
    schema = settle(unusable, schema, qi, sensitive, str(path))
    infer_all = False
    try:
        names = lazy.collect_schema().names()
        try:
            rows, values, nulls, with_missing = _distinct(lazy, names)
        except pl.exceptions.ComputeError as exc:
            if not is_csv or any(word in str(exc).lower() for word in ("utf", "more fields")):
                raise
            infer_all = True
            lazy = _scan(path, text_columns, True, decimal_comma).lazy  # a late value the first rows' types miss
            rows, values, nulls, with_missing = _distinct(lazy, names)
        late = short_years.among(values) if is_csv else []
        if late:  # a two-digit year past the rows the types came from: read as text, as read whole (io.read_file)
            _refuse_declared_short_years(schema, late, values, path)
            print(note_line(short_years.note(str(path), late)), file=sys.stderr)
            text_columns = [*text_columns, *late]
            with contextlib.redirect_stderr(io.StringIO()):  # its other notes were given by the first scan
                lazy = scan_table(path, text_columns=text_columns, infer_all=infer_all,
                                  decimal_comma=decimal_comma).lazy
            rows, values, nulls, with_missing = _distinct(lazy, names, "reading the table again: dates as text")
    except pl.exceptions.PolarsError as exc:
        raise _read_error(path, exc, is_csv) from None
    if rows == 0:
        raise InputError(f"{path} has a header but no rows" + EMPTY_TABLE)
    ragged = ragged_row_error(path) if is_csv and len(names) > 1 and nulls[names[-1]] else None
    if ragged is not None:  # a row shorter than the header leaves the last column missing (io._read_csv)
        raise ragged
    raw = _domain_frame(values)
    refuse_nul(raw, path, rows=False)  # the head was sniffed: a NUL further on (ds6 #3)
    tidied, commas = tidied_text(raw, set(text_columns), reading) if is_csv else (raw, [])
    if commas and reading == "auto":
        print(note_line(comma.note(str(path), commas, comma.points(tidied, commas))), file=sys.stderr)
    unread = comma.unread(tidied, [a.name for a in schema or ()], decimal_comma) if is_csv else []
    if unread:
        print(note_line(comma.unread_note(str(path), unread)), file=sys.stderr)
    dotted = dotted_columns(tidied, [a.name for a in schema or ()]) if is_csv else []
    if dotted:
        print(note_line(dotted_note(str(path), dotted)), file=sys.stderr)
    table_schema = complete_schema(schema, tidied) if schema is not None else Schema.infer(tidied)
    # the columns whose reading the data decides (from the header and the schema): marked, as read whole
    decided = comma.undeclared(tidied.columns, set(text_columns), reading) if is_csv else []
    try:
        typed = coerce(tidied.select(table_schema.names), table_schema, str(path)) if schema is not None else tidied
    except CrowdsafeError:
        return None  # the in-memory read refuses it, naming the row
    expressions = _conversions(raw, typed, table_schema, commas)
    if expressions is None:
        return None
    nulls = {c: nulls[c] for c in table_schema.names}
    floats = [c for c, t in typed.schema.items() if t.is_float()]
    rows_lazy = lazy.select(expressions)
    if floats:
        rows_lazy = rows_lazy.with_columns(pl.col(floats).fill_nan(None))
        if any(typed.get_column(c).is_nan().any() for c in floats):  # a NaN becomes missing: count again
            try:
                rows, nulls, with_missing = _missing_counts(rows_lazy, table_schema.names)
            except pl.exceptions.PolarsError as exc:
                raise _read_error(path, exc, is_csv) from None
        typed = typed.with_columns(pl.col(floats).fill_nan(None))
    report = _report(policy, nulls, with_missing, str(path))
    given = None
    if policy is MissingPolicy.DROP and with_missing:
        given = rows_lazy, typed, rows
        rows_lazy = rows_lazy.filter(~pl.any_horizontal(pl.all().is_null()))
        rows -= with_missing
        if rows == 0:
            raise emptied_by_drop(str(path))
        try:
            _, kept, _, _ = _distinct(rows_lazy, table_schema.names, "reading the table: the rows kept")
        except pl.exceptions.PolarsError as exc:
            raise _read_error(path, exc, is_csv) from None
        typed = _domain_frame(kept)
    # refusals here (roles, hierarchies) do not depend on rows: raised as they are, without a read
    # whole (a value a hierarchy does not cover may be another uncovered value than that read names)
    domain = load(typed, schema=schema, qi=qi, sensitive=sensitive, missing="keep", name=path.name)
    return StreamedTable(path, rows_lazy, replace(domain, missing=report, schema=domain.schema.marked_read(decided)),
                         rows, report, given)


def _refuse_declared_short_years(schema: Schema | None, late: Sequence[str], values: dict[str, pl.Series],
                                 path: Path) -> None:
    """Refuse a column declared a date whose rows past the first ``short_years.HEAD_ROWS`` hold a
    two-digit year (read as the year 23): the table cannot be read as declared, as a whole read
    refuses it (:func:`crowdsafe.data.coerce.coerce`), without reading it whole. The text as
    written is not at hand (the scan read the value as a date), so the year read is named."""
    for attribute in schema or ():
        if attribute.type is AttributeType.DATE and attribute.name in late:
            years = values[attribute.name].dt.year()
            year = years.filter(years < 100).sort().to_list()[0]  # the smallest: the same on every run
            raise SchemaError(
                f"column '{attribute.name}' is declared a date but {path} holds, past its first "
                f"{short_years.HEAD_ROWS:,} rows, a date with a two-digit year (read as the year {year}); "
                f"write dates as {short_years.ACCEPTED}{NOT_AS_DECLARED}")


def _missing_counts(lazy: pl.LazyFrame, names: Sequence[str]) -> tuple[int, dict[str, int], int]:
    """The rows, each column's missing values and the rows with one (a NaN made missing), by one
    streaming pass over the typed rows."""
    with working("reading the table: its missing values"):
        row = lazy.select(
            pl.len().alias("__rows"),
            pl.any_horizontal(pl.all().is_null()).sum().alias("__with_missing"),
            *[pl.col(c).null_count().alias(f"__null_{j}") for j, c in enumerate(names)],
        ).collect(engine="streaming")
    nulls = {c: int(row.get_column(f"__null_{j}")[0]) for j, c in enumerate(names)}
    return int(row.get_column("__rows")[0]), nulls, int(row.get_column("__with_missing")[0] or 0)


def _report(policy: MissingPolicy, nulls: dict[str, int], with_missing: int, label: str) -> MissingReport:
    """:func:`crowdsafe.data.missing.apply_missing_policy`'s report and refusal, from the counts."""
    if not any(nulls.values()):
        return MissingReport(policy, {k: 0 for k in nulls})
    if policy is MissingPolicy.ERROR:
        column = next(c for c, v in nulls.items() if v)
        raise missing_refusal(label, with_missing, column)
    dropped = with_missing if policy is MissingPolicy.DROP else 0
    return MissingReport(policy, nulls, with_missing, dropped)
