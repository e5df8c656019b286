"""A schema draft for a table of one's own: roles, types and hierarchies to review.

:func:`draft_schema` reads a table and proposes, column by column:

- **direct identifiers** (role ``identifier``, dropped before any release): by the column's
  name in seven languages (:func:`crowdsafe.data.identifiers.identifier_by_name`, public:
  ``Vorname``, ``date de naissance``, ``Kundennummer``...) or, failing that, by its
  values (:func:`~crowdsafe.data.identifiers.identifier_by_values`: near-unique text, e-mail,
  telephone or SSN patterns; taken from the data, so marked as such);
- **types**: numbers numeric (except postal codes such as ZIP or PLZ, kept as text and never
  taken for an identifier by their values), dates date (text whose every value parses as a
  date too), an Enum's declared order ordinal, the rest categorical. A type read from the values
  is marked ``from_data`` (``"type integer"``, ``"type real"``, ``"type date"``, ``"type
  categorical"``: one row with a fraction, a word or a date makes another type, hence another
  mechanism, grid or format): every type but those the name decides (a code, text), a table's
  type declares (an Enum's order, a Categorical) or a bundled table's schema declares
  (:func:`type_marker`);
- **likely sensitive attributes** (diagnosis, income, charge, disposition, ``Diagnose``,
  ``maladie``, ... by name, in seven languages: :mod:`crowdsafe.data.column_words`): a comment
  only. The convention: the role stays quasi-identifier (the safe choice: the attribute is
  generalized like the others) until the custodian sets ``role = "sensitive"``;
- **a hierarchy for every quasi-identifier** (:mod:`crowdsafe.data.hierarchy_draft`).

The draft is custodian-only: it reads the data. The schema file it becomes is public (the
guarantee of a release is conditional on it), so :meth:`SchemaDraft.to_toml` marks every choice
taken from the data for the custodian to review or replace with public values, and says so in
its header. The choices a release can use (a hierarchy's bounds, mask depth or groups) are
also listed in the attribute's ``from_data`` key, and so is its type when the values chose it:
until the custodian deletes it, a release, view or query answer using that column is certified
not fit for release
(:attr:`crowdsafe.data.schema.Attribute.from_data`). So is a role the values chose (``"role
identifier"`` for near-unique text, ``"role insensitive"`` for an empty column): which columns a
release publishes, and so its plan, would otherwise change with one row. Written by
:mod:`crowdsafe.data.schema_toml`.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import polars as pl

from crowdsafe.data import decimal_comma as comma
from crowdsafe.data.column_names import Rename, stable_names
from crowdsafe.data.column_words import SENSITIVE_ENDINGS, SENSITIVE_WORDS, is_code_name, name_tokens, spelling, words
from crowdsafe.data.hierarchy_draft import HierarchySuggestion, suggest_hierarchy
from crowdsafe.data.identifiers import identifier_by_name, identifier_by_values
from crowdsafe.data.io import as_frame, header_names, read_file, sniff_format
from crowdsafe.data.missing import dotted_columns
from crowdsafe.data.schema import AttributeType, NumberKind, Role, Schema, number_kind_of
from crowdsafe.errors import InputError

__all__ = ["AttributeDraft", "SchemaDraft", "draft_schema", "sensitive_by_name", "type_marker"]

_SENSITIVE = words(SENSITIVE_WORDS)
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def sensitive_by_name(name: str) -> str | None:
    """The word that makes ``name`` look like a sensitive attribute, or None (public: the name).
    Words in seven languages (:data:`crowdsafe.data.column_words.SENSITIVE_WORDS`: ``Diagnose``,
    ``diagnóstico``, ``maladie``, ``ICD-10``, ``Einkommen``...), and German or Dutch compounds
    ending in one (``Hauptdiagnose``, ``Jahreseinkommen``)."""
    tokens = name_tokens(name)
    for token in tokens:
        if spelling(token) in _SENSITIVE:
            return token
    for token in tokens:
        ending = next((e for e in SENSITIVE_ENDINGS if spelling(token).endswith(e) and len(token) > len(e) + 1), None)
        if ending is not None:
            return ending
    return None


#: Why a nameless first column of a file is drafted an identifier (:func:`draft_schema`).
ROW_INDEX = ("a first column without a name is usually the row index that R's write.csv and pandas' to_csv "
             "write: row numbers tell every row apart")


@dataclass(frozen=True)
class AttributeDraft:
    """One column of the draft: role, type, and why.

    ``identifier`` is the reason it looks like a direct identifier and ``identifier_from``
    ``"name"``, ``"values"`` (read from the data), ``"type"`` (a column crowdsafe cannot use) or
    ``"header"`` (a nameless first column, a row index);
    ``sensitive`` the word that makes it look sensitive; ``hierarchy`` the suggestion for a quasi-identifier; ``notes``
    further comment lines (type choices, awkward names); ``type_from_data`` the ``from_data``
    marker of a type read from the values (:func:`type_marker`; empty when the name or a declared
    type decided it)."""

    name: str
    role: Role
    type: AttributeType
    order: tuple[str, ...] | None = None
    hierarchy: HierarchySuggestion | None = None
    identifier: str | None = None
    identifier_from: str | None = None
    sensitive: str | None = None
    notes: tuple[str, ...] = ()
    numbers: NumberKind | None = None  # a numeric column's integers or reals, as its values hold them
    type_from_data: tuple[str, ...] = ()
    role_from_data: tuple[str, ...] = ()  # "role identifier" / "role insensitive" when its values chose the role

    @property
    def from_data(self) -> tuple[str, ...]:
        """The schema file's ``from_data`` markers of this column: its role's, its type's, then its
        hierarchy's."""
        return (*self.role_from_data, *self.type_from_data,
                *(self.hierarchy.from_data if self.hierarchy is not None else ()))


@dataclass(frozen=True)
class SchemaDraft:
    """A proposed schema (custodian-only until reviewed); :meth:`to_toml` is the file text."""

    attributes: tuple[AttributeDraft, ...]
    source: str
    renames: tuple[Rename, ...] = ()
    notes: tuple[str, ...] = field(default=())
    decimal_comma: bool | None = None  # written as [csv] decimal_comma (None: not written)
    rows: int | None = None  # the rows read (custodian-only, never written; None: not counted)

    @property
    def identifiers(self) -> list[str]:
        return [a.name for a in self.attributes if a.role is Role.IDENTIFIER]

    def __repr__(self) -> str:
        # concise and labelled: the field-by-field repr printed every suggestion read from the
        # data (value groups, bounds, the rows read), unlabelled, wherever a notebook showed it
        named = ", ".join(n[:40] for n in self.identifiers[:5]) + (", …" if len(self.identifiers) > 5 else "")
        return (f"SchemaDraft({self.source[:80]!r}, {len(self.attributes)} attributes, identifiers=[{named}], "
                f"{len(self.from_data)} with choices read from the data; CUSTODIAN ONLY until reviewed: "
                ".to_toml() or .write(path) to review it)")

    @property
    def quasi_identifiers(self) -> list[str]:
        return [a.name for a in self.attributes if a.role is Role.QUASI_IDENTIFIER]

    @property
    def sensitive_suggestions(self) -> list[str]:
        return [a.name for a in self.attributes if a.sensitive and a.role is not Role.IDENTIFIER]

    def to_toml(self) -> str:
        """The commented TOML text of the draft (loads with :meth:`Schema.from_toml`)."""
        from crowdsafe.data.schema_toml import draft_toml

        return draft_toml(self)

    def write(self, path: str | os.PathLike[str], *, force: bool = False) -> Path:
        """Write :meth:`to_toml` to ``path`` atomically; an existing file only with ``force`` (a
        draft is the custodian's to edit, so crowdsafe never takes one for its own:
        :mod:`crowdsafe.output_guard`)."""
        from crowdsafe.files import write_text_atomic
        from crowdsafe.output_guard import Output, OutputKind, check_outputs

        target = Path(path)
        if target.is_dir():
            raise InputError(f"output path {target} is a folder, expected a file name")
        check_outputs([Output(target, "the schema draft", OutputKind.PLAIN, parameter="path")], force=force)
        return write_text_atomic(target, self.to_toml())

    @property
    def from_data(self) -> dict[str, tuple[str, ...]]:
        """Per attribute, what its role, type and hierarchy took from the data (the file's
        ``from_data`` markers)."""
        return {a.name: a.from_data for a in self.attributes if a.from_data}

    def summary(self) -> str:
        """A few lines for the custodian: identifiers, quasi-identifiers and their hierarchies, and
        the ``from_data`` markers that keep a release from being fit until they are deleted."""
        lines = [f"schema draft of {self.source} (custodian-only: it was read from the data; "
                 "review every line marked FROM THE DATA before the schema is shared)"]
        ids = [f"{a.name} ({a.identifier_from or 'name'})"
               for a in self.attributes if a.role is Role.IDENTIFIER]
        lines.append(f"  identifiers (dropped before release): {', '.join(ids) or 'none found'}")
        qis = [f"{a.name} [{a.hierarchy.kind}{', from the data' if a.hierarchy.from_data else ''}]"
               for a in self.attributes if a.role is Role.QUASI_IDENTIFIER and a.hierarchy is not None]
        lines.append(f"  quasi-identifiers with hierarchies: {', '.join(qis) or 'none'}")
        if self.sensitive_suggestions:
            lines.append(f"  likely sensitive (left quasi-identifiers, see the comments): "
                         f"{', '.join(self.sensitive_suggestions)}")
        if self.renames:
            lines.append("  renamed columns: " + "; ".join(r.describe() for r in self.renames))
        dropped = {a.name for a in self.attributes if a.role is Role.IDENTIFIER and not a.role_from_data}
        kept = {name: read for name, read in self.from_data.items() if name not in dropped}
        if kept:
            marked = ", ".join(f"{name} ({', '.join(read)})" for name, read in kept.items())
            also = ("; the identifiers' types are marked too (they matter if one is kept)"
                    if len(kept) < len(self.from_data) else "")
            lines.append(f"  read from the data, marked from_data: {marked}{also}; a release, view or query answer "
                         "using one of these columns (any release, for a role) is NOT fit for release until you check "
                         "each is public (or replace it) and delete its from_data line")
        return "\n".join(lines)


def draft_schema(data: Any, *, separator: str | None = None, label: str | None = None,
                 decimal_comma: bool | None = None) -> SchemaDraft:
    """Propose a schema for ``data`` (a CSV/Parquet path, a named table, a Polars or pandas frame).

    ``decimal_comma`` as :func:`crowdsafe.data.load`; the draft writes ``[csv] decimal_comma =
    true`` when it was given or when a column was read with a decimal comma (so later reads take
    the numbers the same way without looking). A column of a type crowdsafe cannot use (nested,
    binary...) is drafted ``role = "identifier"`` (dropped before any release), with a comment, and
    so is a file's first column without a name (:data:`ROW_INDEX`: decided from the header).
    Custodian-only: the result reads the data (see the module's docstring for every rule)."""
    from crowdsafe.progress import working

    with working("reading the table for the draft"):  # (a terminal's transient display only)
        frame, source, renames, commas, unusable, undeclared, declared = _read(data, separator, decimal_comma)
    notes = _awkward_names([*frame.columns, *unusable])
    with working("drafting each column's type, role and hierarchy"):
        drafted = {name: _attribute(name, frame.get_column(name), declared) for name in frame.columns}
    for rename in renames:  # from the header alone (a name, not the values): no role marker
        if rename.position == 1 and rename.reason == "empty name" and rename.new in drafted:
            drafted[rename.new] = replace(drafted[rename.new], role=Role.IDENTIFIER, hierarchy=None,
                                          identifier=ROW_INDEX, identifier_from="header", role_from_data=())
    for name, kind in unusable.items():
        drafted[name] = AttributeDraft(name, Role.IDENTIFIER, AttributeType.CATEGORICAL, identifier=kind,
                                       identifier_from="type", notes=(
            f"{kind}: crowdsafe cannot use it, so it is declared an identifier (dropped before any release)",))
    attributes = tuple(drafted.values())
    # a ';' file read with nothing said leaves each column's reading to its values: the draft says it
    reading = decimal_comma if decimal_comma is not None else (bool(commas) if undeclared else None)
    if commas:
        notes.append(f"numbers written with a decimal comma (1.234,5) in {', '.join(map(repr, commas))}: "
                     "[csv] decimal_comma = true reads them so")
    elif reading is False and decimal_comma is None:
        notes.append("a ';'-separated file with no number written with a decimal comma: [csv] decimal_comma = false "
                     "reads decimal points only (say true if the file writes 1.234,5)")
    return SchemaDraft(attributes, label or source, tuple(renames), tuple(notes), reading, frame.height)


def _read(data: Any, separator: str | None, decimal_comma: bool | None
          ) -> tuple[pl.DataFrame, str, list[Rename], list[str], dict[str, str], bool, Schema | None]:
    """The table as text-faithful as possible: code columns (ZIP...) as text, with the renames,
    the columns read with a decimal comma, those set aside for their type, whether the read
    left columns' reading to their values (a ``;`` file, nothing said), and the schema that comes
    with it (a bundled table's, a Dataset's; None for a file or a frame)."""
    frame = as_frame(data)
    if frame is not None:
        from crowdsafe.data.column_types import usable_frame

        frame, unusable = usable_frame(frame)
        return _codes_as_text(frame), "the data", [], [], unusable, False, None
    from crowdsafe.data.sources import read_source

    if isinstance(data, (str, os.PathLike)) and Path(data).exists():
        path = Path(data)
        _, head = sniff_format(path)
        _, renames = stable_names(header_names(head, separator)) if head else ([], [])
        # a CSV file's codes (ZIP, PLZ...) are read as text, so leading zeros are kept (crowdsafe.data.io)
        read = read_file(path, separator=separator, decimal_comma=decimal_comma)
        return (_codes_as_text(read.frame), path.name, [r for r in renames if r.reason != "blanks around the name"],
                list(read.decimal_comma), dict(read.unusable), bool(read.decided), None)
    source = read_source(data)
    return (_codes_as_text(source.frame), source.label, [], [], dict(source.unusable), bool(source.read_by_data),
            source.schema)


def _codes_as_text(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its numeric columns named like a code (a Parquet file's, a frame's) as text."""
    codes = [c for c, t in frame.schema.items() if is_code_name(c) and t.is_numeric()]
    return frame.with_columns(pl.col(codes).cast(pl.String)) if codes else frame


def _type(name: str, column: pl.Series) -> tuple[AttributeType, tuple[str, ...] | None, list[str]]:
    """The attribute type of ``column``, its declared order, and a note when the data decided."""
    dtype = column.dtype
    if dtype.is_numeric():
        kind = number_kind_of(dtype)
        return AttributeType.NUMERIC, None, [
            "integer: every value is a whole number (from the data); write type = \"real\" if it may hold fractions"
            if kind is NumberKind.INTEGER else "real: its numbers are read as reals (from the data)"]
    if dtype == pl.Date or isinstance(dtype, pl.Datetime):
        return AttributeType.DATE, None, []
    if isinstance(dtype, pl.Enum):
        return AttributeType.ORDINAL, tuple(dtype.categories.to_list()), [
            "ordinal: the order is the one the table's type declares"]
    if dtype == pl.String and not is_code_name(name):
        text = column.drop_nulls().str.strip_chars()
        text = text.filter(text != "")
        if len(text) and text.str.contains(r"^\d{4}-\d{2}-\d{2}$").all():
            parsed = text.str.to_date(strict=False)
            if parsed.null_count() == 0:
                return AttributeType.DATE, None, ["date: every value is text in the form YYYY-MM-DD (from the data)"]
        if _comma_numbers(column):
            return AttributeType.CATEGORICAL, None, [
                "read as text, but every value is a number written with a decimal comma (from the data): "
                "draft again with --decimal-comma to type it numeric"]
        if dotted_columns(column.str.strip_chars().to_frame(), ()):
            return AttributeType.CATEGORICAL, None, [
                "read as text, but besides numbers it holds cells '.', which SAS and SPSS write for a missing "
                "value (from the data): empty those cells and draft again to type it numeric"]
    if is_code_name(name):
        return AttributeType.CATEGORICAL, None, [
            f"categorical, read as text: '{name}' reads as a code (leading zeros are kept)"]
    return AttributeType.CATEGORICAL, None, []


def _comma_numbers(column: pl.Series) -> bool:
    """Whether every value of a text column is a number written with a decimal comma (one at least
    with the comma): numbers a reader without --decimal-comma keeps as text."""
    if column.dtype != pl.String:
        return False
    return bool(comma.columns(column.str.strip_chars().to_frame(), (), "auto"))


def type_marker(name: str, column: pl.Series, kind: AttributeType, numbers: NumberKind | None,
                declared: Schema | None = None) -> tuple[str, ...]:
    """The ``from_data`` marker of the type ``kind`` (``numbers``) drafted for ``column`` when its
    values chose it: ``"type integer"``, ``"type real"``, ``"type date"`` or ``"type categorical"``
    (what the file's type line says). Nothing for a type the column's name decides (a code, read
    as text), that the table's type declares (an Enum's order, a Categorical: a writer lists them,
    no reader infers them) or that the schema coming with the table declares as drafted (a
    bundled table's). Every other type is marked, a typed file's too: a CSV has no types, and a
    Parquet file's int64, float64, date, boolean or text is often its writer's guess from the
    values (pandas writes float64 for whole numbers with one missing value)."""
    if kind is AttributeType.CATEGORICAL and is_code_name(name):
        return ()
    if isinstance(column.dtype, (pl.Enum, pl.Categorical)):
        return ()
    if declared is not None and name in declared and not declared.was_inferred(name):
        stated = declared[name]  # (a type still marked in that schema is no declaration)
        if stated.type is kind and (kind is not AttributeType.NUMERIC or stated.numbers is numbers) \
                and not any(m.split()[0] == "type" for m in stated.from_data):
            return ()
    return (f"type {(numbers or kind).value}",)


def _attribute(name: str, column: pl.Series, declared: Schema | None = None) -> AttributeDraft:
    drafted = _drafted(name, column)
    numbers = number_kind_of(column.dtype) if drafted.type is AttributeType.NUMERIC else None
    marker = type_marker(name, column, drafted.type, numbers, declared)
    notes = drafted.notes
    if marker and not any("(from the data)" in n for n in notes):
        read_as = _TRUE_FALSE if column.dtype == pl.Boolean else _READ_AS[drafted.type]
        notes = (read_as if column.null_count() < len(column) else _NO_VALUE.format(marker[0].split()[1]), *notes)
    elif not marker:  # a declared type: the notes saying the values chose it are not true of it
        notes = tuple(n for n in notes if not (n.startswith(("integer:", "real:")) and "(from the data)" in n))
    return replace(drafted, numbers=numbers, type_from_data=marker, notes=notes)


_TRUE_FALSE = "categorical: every value is true or false (from the data), so the hierarchy is flat"
_NO_VALUE = "{}: no value to type it by (from the data: one value in a neighbouring table would)"
_READ_AS = {AttributeType.DATE: "date: its values were read as dates (from the data)",
            AttributeType.CATEGORICAL: "categorical: its values were read as text, not all numbers or dates "
                                       "(from the data)",
            AttributeType.NUMERIC: "numeric: its values were read as numbers (from the data)",
            AttributeType.ORDINAL: "ordinal (from the data)"}


def _drafted(name: str, column: pl.Series) -> AttributeDraft:
    kind, order, notes = _type(name, column)
    reason = identifier_by_name(name)
    source = "name" if reason else None
    # ISO dates would pass for phone numbers, numbers with a decimal comma for near-unique text, and
    # a postal code is a quasi-identifier however many codes there are
    if reason is None and kind is not AttributeType.DATE and not is_code_name(name) and not _comma_numbers(column):
        evidence = identifier_by_values(column)
        if evidence is not None:
            reason, source = evidence.reason, "values"
    sensitive = sensitive_by_name(name)
    if reason is not None:  # near-unique values make an identifier: which columns are published depends on them
        return AttributeDraft(name, Role.IDENTIFIER, kind, order, None, reason, source, sensitive, tuple(notes),
                              role_from_data=("role identifier",) if source == "values" else ())
    present = column.drop_nulls()
    if present.dtype.is_float():
        present = present.drop_nans()
    if len(present) == 0:
        return AttributeDraft(name, Role.INSENSITIVE, kind, order, None, None, None, sensitive,
                              (*notes, "insensitive: the column holds no value (nothing to generalize)"),
                              role_from_data=("role insensitive",))
    hierarchy = suggest_hierarchy(name, column, kind.value)
    return AttributeDraft(name, Role.QUASI_IDENTIFIER, kind, order, hierarchy, None, None, sensitive, tuple(notes))


def _folded(name: str) -> str:
    """``name`` without its case and punctuation: letters, digits and combining marks of any script
    kept, every other run of characters one ``_``. (It kept only a-z and 0-9, so names in Japanese
    or Arabic all folded to the empty text, and were said to differ only in punctuation.)"""
    kept = "".join(c if c.isalnum() or unicodedata.category(c).startswith("M") else "_" for c in name.casefold())
    return re.sub(r"_+", "_", kept).strip("_")


def _awkward_names(names: list[str]) -> list[str]:
    """Notes on names that are hard to write (quoted in the file) or easy to confuse."""
    notes = []
    quoted = [n for n in names if not _BARE.match(n)]
    if quoted:
        notes.append("names with spaces, punctuation or letters beyond ASCII are kept and written quoted: "
                     + ", ".join(repr(n) for n in quoted))
    folded: dict[str, list[str]] = {}
    for n in names:
        folded.setdefault(_folded(n), []).append(n)
    for group in folded.values():
        if len(group) > 1:
            notes.append("names that differ only in case or punctuation (easy to confuse; consider "
                         "renaming them in the source): " + ", ".join(repr(n) for n in group))
    return notes
