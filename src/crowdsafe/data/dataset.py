"""A :class:`Dataset` is a Polars frame plus its :class:`~crowdsafe.data.schema.Schema`,
the generalization hierarchies of its attributes, and the missing-value policy applied to it."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data.encoding import EncodedColumn, encode_series, encode_with_hierarchy
from crowdsafe.data.fingerprint import multiset_digest
from crowdsafe.data.hierarchy import Hierarchy
from crowdsafe.data.missing import MissingReport
from crowdsafe.data.schema import AttributeType, Schema
from crowdsafe.data.unicode_forms import name_note
from crowdsafe.errors import CUSTODIAN_REFUSAL, HierarchyError, SchemaError
from crowdsafe.identity import keyed_identity
from crowdsafe.number_text import quantity


@dataclass
class Dataset:
    """A table (``frame``, a Polars DataFrame) with its ``schema`` and ``hierarchies``.

    Treat a Dataset as immutable: derive new ones with :meth:`with_roles`,
    :meth:`with_hierarchies` or :meth:`with_frame`. Encodings are computed once per column and
    cached. ``missing`` reports the missing-value policy that was applied when it was loaded.
    """

    frame: pl.DataFrame
    schema: Schema
    hierarchies: dict[str, Hierarchy] = field(default_factory=dict)
    name: str | None = None
    missing: MissingReport = field(default_factory=MissingReport)
    _encoded: dict[str, EncodedColumn] = field(default_factory=dict, init=False, repr=False, compare=False)
    _fingerprint: str | None = field(default=None, init=False, repr=False, compare=False)
    #: the table as given, when rows were removed after it (:meth:`identify_as`), for the legacy fingerprint
    _given: pl.DataFrame | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._check()

    def _check(self) -> None:
        """The schema and the frame agree and every hierarchy names a column.

        Whether a hierarchy covers its column's values is checked where the column is encoded
        through it (:meth:`encoded`, :meth:`validate_domains`), not here: a command that
        never reads a column is not affected by its values, and the safe pipeline publishes a
        value outside a declared hierarchy as missing (:meth:`Hierarchy.absorbing`) instead of
        refusing the table because of one row."""
        columns = self.frame.columns
        absent = [n for n in self.schema.names if n not in columns]
        if absent:
            raise SchemaError(
                f"column '{absent[0]}' is named in the schema but not in the data "
                f"(the data has: {', '.join(columns)}){name_note(absent[0], columns)}"
            )
        undeclared = [c for c in columns if c not in self.schema]
        if undeclared:
            raise SchemaError(f"column '{undeclared[0]}' of the data is not in the schema")
        if columns != self.schema.names:
            self.frame = self.frame.select(self.schema.names)
        self.hierarchies = dict(self.hierarchies)
        for column, hierarchy in self.hierarchies.items():
            if column not in self.schema:
                raise HierarchyError(f"a hierarchy is given for '{column}', which is not a column")
            if not isinstance(hierarchy, Hierarchy):
                raise HierarchyError(f"the hierarchy of '{column}' is a {type(hierarchy).__name__}, not a Hierarchy")

    def validate_domains(self, columns: Sequence[str] | None = None) -> None:
        """Raise naming the first value of ``columns`` (default: every column) outside its
        declared domain: a value an ordinal attribute's declared order does not list
        (:class:`SchemaError`), a value its hierarchy does not cover (:class:`HierarchyError`).
        Reads the data: for the custodian's own commands (``check``, ``anonymize``), never before
        a charge (the DP commands handle such a value without letting it stop them); the message
        says it is a custodian-only fact (:data:`~crowdsafe.errors.CUSTODIAN_REFUSAL`)."""
        for attribute in self.schema:
            if columns is not None and attribute.name not in columns:
                continue
            if attribute.type is AttributeType.ORDINAL and attribute.order is not None:
                text = self.frame.get_column(attribute.name).cast(pl.String)
                outside = text.filter(~text.is_in(pl.Series([str(v) for v in attribute.order])) & text.is_not_null())
                if len(outside):
                    raise SchemaError(f"column '{attribute.name}' holds {outside[0]!r}, which is not in its "
                                      f"declared order{CUSTODIAN_REFUSAL}")
            hierarchy = self.hierarchies.get(attribute.name)
            if hierarchy is not None:
                try:
                    hierarchy.validate(self.frame.get_column(attribute.name), column=attribute.name)
                except HierarchyError as exc:
                    raise HierarchyError(f"{exc}{CUSTODIAN_REFUSAL}") from None

    def outside_as_missing(self) -> Dataset:
        """This table with each value a hierarchy does not list read as missing, as ``publish``
        publishes it (:meth:`~crowdsafe.data.hierarchy.Hierarchy.absorbing`), the hierarchy given
        its missing-value leaf where that happened. The original of a release (``check --original``,
        ``compare``) and an attack's targets are read so: a row outside a hierarchy neither stops
        the command nor is named, on D and on D plus that row alike. Reads the data (custodian-only)."""
        changes, hierarchies = [], {}
        for name, hierarchy in self.hierarchies.items():  # a loop over columns
            if name not in self.frame.columns:
                continue
            outside = hierarchy.outside(self.frame.get_column(name))
            if len(outside):
                column = pl.col(name)
                categories = isinstance(self.frame.schema[name], (pl.Categorical, pl.Enum))
                held = column.cast(pl.String) if categories else column
                changes.append(pl.when(held.is_in(outside.implode())).then(None).otherwise(column).alias(name))
                hierarchies[name] = hierarchy.with_missing_leaf()
        if not changes:
            return self
        return self.with_frame(self.frame.with_columns(changes)).with_hierarchies(hierarchies)

    # -- facts --------------------------------------------------------------------------

    @property
    def quasi_identifiers(self) -> list[str]:
        return self.schema.quasi_identifiers

    @property
    def sensitive(self) -> list[str]:
        return self.schema.sensitive

    @property
    def n_rows(self) -> int:
        return self.frame.height

    @property
    def columns(self) -> list[str]:
        return self.schema.names

    def __len__(self) -> int:
        return self.frame.height

    def fingerprint(self, key: bytes | None = None) -> str:
        """BLAKE2b-256 (hex) of the table's content as a multiset of rows: the column names and
        each row's values in canonical form (:mod:`crowdsafe.data.fingerprint`), rows in any order.

        The canonical form does not depend on the types a schema declares: the integer 30, the
        real 30.0 and the text ``"030"`` are one number, a date read as text or as a date one
        date, text one kind whether String, Categorical or Enum. So the same file read under any
        schema has one identity, and retyping a column after the schema draft's review keeps its
        budget. Reordering rows does not change it; changing, adding or removing a row does (up to
        the 128-bit collisions of sums of row hashes: an identity for honest bookkeeping, not a
        commitment against a forger), and so does another selection of columns. Stable across
        runs, processes, machines and library versions; independent of roles, hierarchies, the
        file name and the format (CSV or Parquet).

        A table loaded with ``missing='drop'`` is identified as given, before the policy removed
        rows (:meth:`identify_as`): the same people, so the same identity and budget as with
        ``missing='keep'``.

        With ``key`` (the ledger's secret :attr:`~crowdsafe.privacy.ledger.Ledger.identity_key`)
        the digest is keyed: without the key nobody can test a guess of the data against it.
        No fingerprint belongs in a public output, keyed or not. A ledger names a Dataset through
        :meth:`~crowdsafe.privacy.ledger.Ledger.identity_of`, which also finds a table an earlier
        crowdsafe registered (:meth:`legacy_fingerprint`).
        """
        if self._fingerprint is None:
            self._fingerprint = multiset_digest(self.frame)
        if key is None:
            return self._fingerprint
        return keyed_identity(self._fingerprint, key)

    def legacy_fingerprint(self, key: bytes | None = None) -> str:
        """The fingerprint an earlier crowdsafe gave this table (``crowdsafe-dataset-multiset-v3``,
        which hashed each column's type with its values: :mod:`crowdsafe.data.legacy_fingerprint`),
        as given (:meth:`identify_as`). Only for finding a table in a ledger written by that
        version; computed on demand, never cached."""
        from crowdsafe.data.legacy_fingerprint import legacy_digest

        plain = legacy_digest(self._given if self._given is not None else self.frame)
        return plain if key is None else keyed_identity(plain, key)

    def identify_as(self, given: pl.DataFrame) -> None:
        """Take the fingerprint of ``given`` (this table before rows were removed by the
        missing-value policy, with the same columns) as this table's (:meth:`fingerprint`)."""
        self._fingerprint = multiset_digest(given)
        self._given = given

    # -- encoding -----------------------------------------------------------------------

    def encoded(self, column: str) -> EncodedColumn:
        """The cached encoding of ``column`` (leaf codes of its hierarchy when it has one)."""
        cached = self._encoded.get(column)
        if cached is not None:
            return cached
        if column not in self.schema:
            self.schema[column]  # raises a SchemaError naming the attributes
        series = self.frame.get_column(column)
        hierarchy = self.hierarchies.get(column)
        attribute = self.schema[column]
        if hierarchy is not None:
            result = encode_with_hierarchy(series, hierarchy)
        elif attribute.type is AttributeType.ORDINAL and attribute.order is not None:
            # codes follow the declared order, so code distance is rank distance
            order = pl.Enum([str(v) for v in attribute.order])
            codes, dictionary = encode_series(series.cast(pl.String).cast(order))
            result = EncodedColumn(column, codes, dictionary.cast(pl.String).cast(series.dtype))
        else:
            codes, dictionary = encode_series(series)
            result = EncodedColumn(column, codes, dictionary)
        self._encoded[column] = result
        return result

    # -- derivation ---------------------------------------------------------------------

    def _derive(self, **changes: Any) -> Dataset:
        if "frame" in changes:
            return replace(self, **changes)
        # the same table: only hierarchies that are new or replaced are checked against it
        derived = copy.copy(self)
        for name, value in changes.items():
            setattr(derived, name, value)
        derived._encoded = {}
        derived._check()
        kept = {c: e for c, e in self._encoded.items() if c not in changes.get("hierarchies", {})}
        derived._encoded.update(kept)
        derived._fingerprint, derived._given = self._fingerprint, self._given
        return derived

    def with_roles(self, qi: Sequence[str] | None = None, sensitive: Sequence[str] | str | None = None) -> Dataset:
        """The same table with other quasi-identifiers / sensitive attributes (see Schema.with_roles)."""
        return self._derive(schema=self.schema.with_roles(qi=qi, sensitive=sensitive))

    def with_hierarchies(self, hierarchies: Mapping[str, Hierarchy]) -> Dataset:
        """The same table with these hierarchies added (or replaced); coverage is checked when a
        column is encoded (:meth:`validate_domains`)."""
        return self._derive(hierarchies={**self.hierarchies, **hierarchies})

    def with_frame(self, frame: pl.DataFrame) -> Dataset:
        """A dataset over another frame with the same columns (e.g. a sample), same schema and hierarchies."""
        return replace(self, frame=frame)

    def _checked_part(self, **changes: Any) -> Dataset:
        """A dataset over part of this one's (already validated) table, without validating again:
        a subset of values a hierarchy covers is covered. Caches start empty."""
        derived = copy.copy(self)
        for name, value in changes.items():
            setattr(derived, name, value)
        derived._encoded = {}
        derived._fingerprint = derived._given = None
        return derived

    def filter_rows(self, mask: np.ndarray | pl.Series) -> Dataset:
        """The rows where the boolean ``mask`` is true (a sample, say), same schema and hierarchies."""
        if not isinstance(mask, pl.Series):
            mask = pl.Series("mask", mask, dtype=pl.Boolean)
        if len(mask) != self.n_rows:
            raise SchemaError(f"a row mask of length {len(mask):,} for a table of {self.n_rows:,} rows")
        return self._checked_part(frame=self.frame.filter(mask))

    def select(self, names: Sequence[str] | str) -> Dataset:
        """The dataset restricted to the columns ``names`` (in that order; one name or a list), with
        their roles, hierarchies and cached encodings. It is another table: its fingerprint is its own."""
        names = [names] if isinstance(names, str) else list(names)
        derived = self._checked_part(frame=self.frame.select(names), schema=self.schema.select(names),
                                     hierarchies={c: h for c, h in self.hierarchies.items() if c in names})
        derived._encoded.update({c: e for c, e in self._encoded.items() if c in names})
        return derived

    def recode(self, levels: Mapping[str, int]) -> pl.DataFrame:
        """The frame with each column in ``levels`` replaced by its hierarchy label at that level.

        Level 0 keeps the original values. Generalized columns are Categorical text.
        """
        replacements = []
        for column, level in levels.items():
            if level == 0:
                continue
            hierarchy = self.hierarchies.get(column)
            if hierarchy is None:
                raise HierarchyError(f"column '{column}' has no hierarchy; give one to generalize it")
            codes = hierarchy.generalize(self.encoded(column).codes, level)
            labels = pl.Series(column, hierarchy.labels[level], dtype=pl.Categorical)
            replacements.append(labels.gather(codes))
        return self.frame.with_columns(replacements) if replacements else self.frame

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rows": self.n_rows,
            "schema": self.schema.to_dict(),
            "missing": self.missing.to_dict(),
            "hierarchies": {name: h.describe() for name, h in self.hierarchies.items()},
        }

    def __repr__(self) -> str:
        label = f"{self.name!r}, " if self.name else ""
        return (
            f"Dataset({label}{quantity(self.n_rows, 'row')}, {quantity(len(self.schema), 'attribute')}, "
            f"qi={self.quasi_identifiers}, sensitive={self.sensitive})"
        )
