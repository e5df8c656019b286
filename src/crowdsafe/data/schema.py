"""Attribute roles and types, and the :class:`Schema` that assigns them to a table's columns.

By default every attribute is a quasi-identifier: an attacker may know any of them from another source,
and a release is judged against the widest such knowledge (the recommendation of the sampling +
k-anonymity theory, Li, Qardaji and Su 2012). Declare fewer to study a narrower attacker.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

import polars as pl

from crowdsafe import arguments
from crowdsafe.data.builder_checks import check_declaration, declared_order
from crowdsafe.data.decimal_comma import csv_options, option
from crowdsafe.data.unicode_forms import name_note
from crowdsafe.errors import InputError, ParameterError, SchemaError
from crowdsafe.files import read_input_text


class Role(StrEnum):
    """What an attribute is to an attacker."""

    IDENTIFIER = "identifier"  # names a person directly (removed before any release)
    QUASI_IDENTIFIER = "quasi-identifier"  # may be known to an attacker and linked
    SENSITIVE = "sensitive"  # what must not be learnt about a person
    INSENSITIVE = "insensitive"  # neither known nor protected

    @classmethod
    def parse(cls, value: str, *, attribute: str = "") -> Role:
        text = str(value).strip().lower().replace("_", "-").removesuffix("-attribute")
        aliases = {"qi": "quasi-identifier", "quasi": "quasi-identifier", "id": "identifier",  # ARX's names:
                   "identifying": "identifier", "quasi-identifying": "quasi-identifier"}
        text = aliases.get(text, text)
        try:
            return cls(text)
        except ValueError:
            where = f" of attribute '{attribute}'" if attribute else ""
            hint = " (sdcMicro's key variables are quasi-identifiers; a record's key is an identifier)"
            raise SchemaError(f"unknown role {value!r}{where}; expected one of: {', '.join(r.value for r in cls)}"
                              + (hint if text.startswith("key") else "")) from None


class AttributeType(StrEnum):
    """How an attribute's values relate to one another."""

    CATEGORICAL = "categorical"  # unordered labels
    ORDINAL = "ordinal"  # ordered labels (an order may be declared)
    NUMERIC = "numeric"  # numbers with a distance
    DATE = "date"  # calendar dates

    @classmethod
    def parse(cls, value: str, *, attribute: str = "") -> AttributeType:
        text = str(value).strip().lower()
        aliases = {"nominal": "categorical", "category": "categorical", "number": "numeric",
                   **{word: "numeric" for word in NUMBER_WORDS}}
        text = aliases.get(text, text)
        try:
            return cls(text)
        except ValueError:
            where = f" of attribute '{attribute}'" if attribute else ""
            raise SchemaError(
                f"unknown type {value!r}{where}; expected one of: "
                f"{', '.join(t.value for t in cls)}"
            ) from None


class NumberKind(StrEnum):
    """How a numeric attribute holds its numbers: whole numbers (``type = "integer"``, read as
    64-bit integers; a value with a fraction is refused) or reals (``type = "real"``, read as
    64-bit floats). Declared, it fixes the column's type before the data is read
    (:mod:`crowdsafe.data.coerce`); a plain ``type = "numeric"`` leaves it to the values (a
    column of whole numbers is read as integers until one row holds 40.5), so what a release or
    an answer shows of the column can depend on one row: :meth:`Schema.unreviewed` marks it
    (:data:`NUMBERS_FROM_DATA`)."""

    INTEGER = "integer"
    REAL = "real"

    @classmethod
    def of(cls, type_name: str) -> NumberKind | None:
        """The kind a declared type name states (None: none, as ``numeric`` or ``number``)."""
        return NUMBER_WORDS.get(str(type_name).strip().lower())


#: The type names that are numeric and say how the numbers are held.
NUMBER_WORDS = {"integer": NumberKind.INTEGER, "int": NumberKind.INTEGER, "real": NumberKind.REAL,
                "float": NumberKind.REAL, "double": NumberKind.REAL, "continuous": NumberKind.REAL,
                "decimal": NumberKind.REAL}


def declared_type(type_name: str, *, attribute: str = "") -> tuple[AttributeType, NumberKind | None]:
    """The attribute type a declared type name states, and for a numeric one how its numbers are
    held (:class:`NumberKind`; None when the name does not say)."""
    kind = AttributeType.parse(type_name, attribute=attribute)
    return kind, NumberKind.of(type_name) if kind is AttributeType.NUMERIC else None


#: The schema keys a ``from_data`` marker may concern (the first word of each of its entries).
MARKED_KEYS = ("hierarchy", "order", "type", "role", "reading")
#: The marker of a column whose reading an undeclared ``"auto"`` read (a ``;`` file, no decimal separator declared)
#: left to its values (:func:`crowdsafe.data.decimal_comma.undeclared`): set from the header and the schema.
READ_DECIMAL_COMMA = "reading decimal comma"
#: The marker of an attribute nobody declared (:meth:`Schema.was_inferred`): its type was read from its values.
INFERRED_TYPE = "type inferred"
#: The marker of a numeric attribute declared without its :class:`NumberKind`: its values decide integers or reals.
NUMBERS_FROM_DATA = 'reading integers or reals by the values (declare type = "integer" or "real")'


@dataclass(frozen=True)
class Attribute:
    """One column: its name, role and type; ``order`` lists the values of an ordinal attribute,
    ``numbers`` how a numeric one holds its numbers (:class:`NumberKind`, None when not declared).

    ``from_data`` lists what a schema draft read from the data for this attribute and nobody has
    reviewed yet (``crowdsafe schema draft``: ``"hierarchy bounds"``, ``"hierarchy groups"``...,
    ``"type integer"``, ``"type date"``... for a type its values chose; each entry starts with the key it
    concerns, :data:`MARKED_KEYS`). A release that uses a marked key of a column it publishes is
    certified not fit for release (:meth:`Schema.unreviewed`); the custodian resolves a marker by
    deleting it from the schema file once the value is checked to be public."""

    name: str
    role: Role = Role.QUASI_IDENTIFIER
    type: AttributeType = AttributeType.CATEGORICAL
    order: tuple[Any, ...] | None = None
    hierarchy: Any = None  # a hierarchy specification from a TOML file (path or builder table)
    from_data: tuple[str, ...] = ()
    numbers: NumberKind | None = None  # a numeric attribute's integers or reals, when declared

    def __post_init__(self) -> None:  # shapes no table can fix, refused before anything is read
        check_declaration(self.name, self.hierarchy, self.order)


def infer_type(dtype: pl.DataType) -> AttributeType:
    """The attribute type a Polars column type suggests."""
    if dtype.is_numeric():
        return AttributeType.NUMERIC
    if dtype in (pl.Date, pl.Datetime) or isinstance(dtype, pl.Datetime):
        return AttributeType.DATE
    if isinstance(dtype, pl.Enum):
        return AttributeType.ORDINAL
    return AttributeType.CATEGORICAL


def number_kind_of(dtype: pl.DataType) -> NumberKind | None:
    """How a Polars column type holds numbers: integers, reals, or None (not numbers)."""
    if dtype.is_integer():
        return NumberKind.INTEGER
    return NumberKind.REAL if dtype.is_float() or dtype.is_decimal() else None


def _typed(kind: AttributeType | str, name: str) -> tuple[AttributeType, NumberKind | None]:
    return (kind, None) if isinstance(kind, AttributeType) else declared_type(str(kind), attribute=name)


@dataclass(frozen=True)
class Schema:
    """The ordered attributes of a table, each with a role and a type.

    ``person_id`` names the column identifying the person a row belongs to when one person may
    own several rows (the privacy unit is then the person, not the row); ``None`` when every row
    is a different person. ``source`` says where the schema came from ("declared", "inferred",
    or the TOML file: a label for reports, never a provenance test; ``bundled`` is set only by
    :mod:`crowdsafe.datasets`). ``undeclared`` names the attributes a partial declared schema did
    not mention, whose role and type were inferred (:func:`complete_schema`; :meth:`was_inferred`).
    ``decimal_comma``: how a CSV file writes its numbers (``[csv] decimal_comma = true`` in a
    schema file; :mod:`crowdsafe.data.decimal_comma`): True, with a decimal comma; False, with a
    decimal point only; None, not said (a ``;``-separated file's are then found). A schema that
    declares no attribute only says how to read (:meth:`reading`): the table is read as without a schema.
    """

    attributes: tuple[Attribute, ...]
    person_id: str | None = None
    source: str = "declared"
    undeclared: frozenset[str] = frozenset()
    decimal_comma: bool | None = None
    bundled: bool = False
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index: dict[str, int] = {}
        for position, attribute in enumerate(self.attributes):
            if attribute.name in index:
                raise SchemaError(f"attribute '{attribute.name}' is declared twice in the schema")
            index[attribute.name] = position
        object.__setattr__(self, "_index", index)
        if self.person_id is not None and self.person_id not in index:
            raise SchemaError(
                f"person_id names '{self.person_id}', which is not an attribute of the schema"
            )

    def was_inferred(self, name: str) -> bool:
        """Whether nobody declared attribute ``name``: the whole schema was inferred, or a partial
        schema left it out and :func:`complete_schema` inferred it. From the names alone."""
        return self.source == "inferred" or name in self.undeclared

    # -- construction -------------------------------------------------------------------

    @classmethod
    def reading(cls, schema: Schema | str | os.PathLike[str] | None, *,
                decimal_comma: bool | None) -> Schema | str | os.PathLike[str] | None:
        """``schema`` (a Schema, a TOML file or None) with the reading option ``decimal_comma``
        set; None leaves ``schema`` as given. Without a schema, a Schema that declares no
        attribute carries the option (:func:`declared_and_reading` takes it apart again); a
        ``decimal_comma`` that is none of these is refused (:func:`~crowdsafe.data.decimal_comma.option`),
        and so is a ``schema`` that is none of these (:func:`crowdsafe.arguments.schema`)."""
        schema = arguments.schema(schema)
        if option(decimal_comma) is None:
            return schema
        declared = cls.from_toml(Path(schema)) if isinstance(schema, (str, os.PathLike)) else schema
        if declared is None:
            return cls((), source="inferred", decimal_comma=decimal_comma)
        return replace(declared, decimal_comma=decimal_comma)

    @classmethod
    def of(
        cls,
        types: Mapping[str, AttributeType | str],
        *,
        qi: Sequence[str] | None = None,
        sensitive: Sequence[str] | str | None = None,
        identifiers: Sequence[str] | str = (),
        person_id: str | None = None,
    ) -> Schema:
        """Declare a schema in Python: ``Schema.of({"age": "numeric", "zip": "categorical"})``.

        Roles default to quasi-identifier for every attribute; ``qi``/``sensitive`` narrow them
        exactly as :meth:`with_roles` does; ``identifiers`` (one name or a list) are direct identifiers.
        """
        if not isinstance(types, Mapping):  # (a list of names raised "'list' object has no attribute 'items'")
            raise ParameterError(f"types must map each column to its type, e.g. Schema.of({{'age': 'integer'}}); "
                                 f"got {arguments.kind(types)}", parameter="types")
        identifiers = arguments.names(identifiers, "identifiers") or ()  # one name, not its characters
        typed = {name: _typed(kind, name) for name, kind in types.items()}
        attributes = tuple(Attribute(name, Role.QUASI_IDENTIFIER, kind, numbers=numbers)
                           for name, (kind, numbers) in typed.items())
        schema = cls(attributes, person_id=None, source="declared")
        if identifiers:
            schema = schema.with_role(identifiers, Role.IDENTIFIER)
        schema = schema.with_roles(qi=qi, sensitive=sensitive)
        return replace(schema, person_id=person_id) if person_id else schema

    @classmethod
    def infer(cls, frame: pl.DataFrame, *, echo: bool = False) -> Schema:
        """Infer a schema from column types: every attribute a quasi-identifier.

        Numbers become numeric, dates date, Enum columns ordinal, everything else categorical.
        With ``echo=True`` the :meth:`summary` is printed to standard error, so a user who did
        not declare a schema sees what was assumed.
        """
        attributes = tuple(
            Attribute(name, Role.QUASI_IDENTIFIER, infer_type(dtype),
                      order=tuple(dtype.categories.to_list()) if isinstance(dtype, pl.Enum) else None,
                      numbers=number_kind_of(dtype))
            for name, dtype in frame.schema.items()
        )
        schema = cls(attributes, source="inferred")
        if echo:
            import sys

            print(schema.summary(), file=sys.stderr)
        return schema

    @classmethod
    def from_toml(cls, path: str | Path) -> Schema:
        """Read a schema from a TOML file.

        Format (attributes in column order; ``role`` defaults to quasi-identifier, ``type`` is
        required but for an ``identifier``, read as text without one: it is never published)::

            person_id = "household"          # optional
            [attributes.age]
            type = "numeric"
            hierarchy = { widths = [5, 10, 20] }      # optional, see crowdsafe.data.hierarchy
            [attributes.education]
            type = "ordinal"
            order = ["Preschool", "1st-4th", "HS-grad"]
            hierarchy = "education.csv"      # an ARX-style hierarchy file, relative to this file
            [attributes.income]
            role = "sensitive"
            type = "categorical"

        ``from_data = ["hierarchy groups"]`` (written by ``crowdsafe schema draft``) marks what was
        read from the data and not yet reviewed (:attr:`Attribute.from_data`).
        """
        path = Path(path)
        try:
            text = read_input_text(path, "schema file")  # a FIFO, a device or over 64 MiB: refused
        except FileNotFoundError:
            raise InputError(f"schema file not found: {path}") from None
        except UnicodeDecodeError:
            raise InputError(f"schema file {path} is not UTF-8 text") from None
        except OSError as exc:
            raise InputError(f"cannot read schema file {path}: {exc.strerror}") from None
        try:
            document = tomllib.loads(text.removeprefix("\ufeff"))  # a BOM, as Windows editors write one
        except tomllib.TOMLDecodeError as exc:
            raise SchemaError(f"schema file {path} is not valid TOML: {exc}") from None
        except RecursionError:  # the parser recurses on nested arrays and inline tables
            raise SchemaError(f"schema file {path} is nested too deeply (more than {MAX_NESTING} levels of "
                              "tables and lists): a schema needs a few") from None
        _check_document(document, f"schema file {path}")
        table = document.get("attributes")
        if not isinstance(table, dict) or not table:
            raise SchemaError(f"schema file {path} declares no [attributes.<name>] tables")
        unknown_keys = set(document) - {"attributes", "person_id", "csv"}
        if unknown_keys:
            raise SchemaError(f"schema file {path}: unknown top-level key(s) {sorted(unknown_keys)}")
        attributes = []
        for name, spec in table.items():
            if not isinstance(spec, dict):
                raise SchemaError(f"schema file {path}: attribute '{name}' must be a table")
            extra = set(spec) - {"role", "type", "order", "hierarchy", "from_data"}
            if extra:
                raise SchemaError(f"schema file {path}: attribute '{name}' has unknown key(s) {sorted(extra)}")
            role = Role.parse(spec.get("role", Role.QUASI_IDENTIFIER), attribute=name)
            if "type" not in spec and role is not Role.IDENTIFIER:  # an identifier's is optional: read as text
                raise SchemaError(f"schema file {path}: attribute '{name}' has no type; add a line type = \"...\" "
                                  "(categorical, ordinal, integer, real or date)")
            hierarchy = spec.get("hierarchy")
            if isinstance(hierarchy, str):
                hierarchy = str((path.parent / hierarchy).resolve())
            order = declared_order(name, spec.get("order"))  # a list of values, or None
            kind, numbers = declared_type(spec.get("type", "categorical"), attribute=name)
            attributes.append(
                Attribute(
                    name=name,
                    role=role,
                    type=kind,
                    numbers=numbers,
                    order=order,
                    hierarchy=hierarchy,
                    from_data=_markers(spec.get("from_data", []), f"schema file {path}: attribute '{name}'"),
                )
            )
        source = str(path) if str(path) not in ("inferred", "declared") else os.path.join(".", path)  # a file
        return cls(tuple(attributes), person_id=document.get("person_id"), source=source,
                   decimal_comma=csv_options(document.get("csv", {}), f"schema file {path}"))

    def marked_read(self, columns: Iterable[str]) -> Schema:
        """This schema with :data:`READ_DECIMAL_COMMA` among the markers of ``columns`` (whose
        reading, a decimal comma or not, the values decide): how they are read depends on the data."""
        chosen = set(columns)
        if not chosen:
            return self
        attributes = tuple(
            replace(a, from_data=(*a.from_data, READ_DECIMAL_COMMA))
            if a.name in chosen and READ_DECIMAL_COMMA not in a.from_data else a for a in self.attributes)
        return replace(self, attributes=attributes)

    def unreviewed(self, names: Iterable[str], keys: Iterable[str] | None = None) -> dict[str, tuple[str, ...]]:
        """The ``from_data`` markers (:attr:`Attribute.from_data`) of the attributes ``names`` (in
        that order; names not in the schema are skipped) that concern one of ``keys`` (None: any
        key), per attribute that has one. An attribute nobody declared (:meth:`was_inferred`) has
        :data:`INFERRED_TYPE` among its markers when ``type`` is wanted: its type was read from its
        values (one non-number makes a column of numbers text), so what a release shows of it can
        depend on a row the release does not publish. A numeric attribute declared without its
        :class:`NumberKind` has :data:`NUMBERS_FROM_DATA` when ``reading`` is wanted, for the same
        reason (one value with a fraction makes a column of whole numbers reals). A role marker
        (``"role identifier"``) counts whichever attributes are named: the role decides which
        columns are published at all. Read from the schema alone: public."""
        wanted = set(MARKED_KEYS if keys is None else keys)
        found: dict[str, tuple[str, ...]] = {}
        for name in names:
            if name in self._index:
                attribute = self[name]
                marks = tuple(m for m in attribute.from_data if m.split()[0] in wanted)
                if "type" in wanted and self.was_inferred(name):
                    marks = (*marks, INFERRED_TYPE)
                elif ("reading" in wanted and attribute.type is AttributeType.NUMERIC and attribute.numbers is None
                      and NUMBERS_FROM_DATA not in marks):
                    marks = (*marks, NUMBERS_FROM_DATA)
                if marks:
                    found[name] = marks
        roles = {a.name: r for a in self.attributes if (r := tuple(m for m in a.from_data if m.split()[0] == "role"))}
        return {**roles, **found} if "role" in wanted else found

    # -- access -------------------------------------------------------------------------

    def __getitem__(self, name: str) -> Attribute:
        try:
            return self.attributes[self._index[name]]
        except KeyError:
            raise SchemaError(
                f"no attribute named '{name}'; the attributes are: {', '.join(self.names)}"
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __iter__(self) -> Iterator[Attribute]:
        return iter(self.attributes)

    def __len__(self) -> int:
        return len(self.attributes)

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.attributes]

    def with_role_of(self, role: Role) -> list[str]:
        return [a.name for a in self.attributes if a.role is role]

    @property
    def quasi_identifiers(self) -> list[str]:
        return self.with_role_of(Role.QUASI_IDENTIFIER)

    @property
    def sensitive(self) -> list[str]:
        return self.with_role_of(Role.SENSITIVE)

    @property
    def identifiers(self) -> list[str]:
        return self.with_role_of(Role.IDENTIFIER)

    # -- derivation ---------------------------------------------------------------------

    def _check_names(self, names: Iterable[str] | str, what: str, parameter: str | None = None) -> list[str]:
        names = [names] if isinstance(names, str) else list(names)  # one name, not its characters
        missing = [n for n in names if n not in self._index]
        if missing:
            raise SchemaError(
                f"{what} names unknown attribute '{missing[0]}'{name_note(missing[0], self.names)}; "
                f"the attributes are: {', '.join(self.names)}",
                parameter=parameter,
            )
        return names

    def with_role(self, names: Iterable[str] | str, role: Role) -> Schema:
        chosen = set(self._check_names(names, f"role {role.value}"))
        return replace(
            self,
            attributes=tuple(replace(a, role=role) if a.name in chosen else a for a in self.attributes),
        )

    def with_roles(
        self,
        qi: Sequence[str] | None = None,
        sensitive: Sequence[str] | str | None = None,
    ) -> Schema:
        """Return a schema with the given quasi-identifiers and sensitive attributes.

        When ``qi`` is given, exactly those attributes are quasi-identifiers (former
        quasi-identifiers not listed become insensitive); when ``sensitive`` is given, exactly
        those are sensitive (former sensitive attributes not listed become insensitive). An
        attribute cannot be both, and neither may name an identifier (a ``SchemaError``: a direct
        identifier is dropped before any release). ``None`` leaves that role as it is.
        """
        sensitive = [sensitive] if isinstance(sensitive, str) else sensitive  # one name, not its characters
        qi = [qi] if isinstance(qi, str) else qi
        sensitive_set = (
            set(self._check_names(sensitive, "the sensitive parameter", "sensitive")) if sensitive is not None else None
        )
        qi_set = set(self._check_names(qi, "the qi parameter", "qi")) if qi is not None else None
        if qi_set is not None and sensitive_set is not None and sensitive_set & qi_set:
            both = sorted(sensitive_set & qi_set)[0]
            raise SchemaError(f"attribute '{both}' cannot be both a quasi-identifier and sensitive")
        for chosen, parameter in ((qi_set, "qi"), (sensitive_set, "sensitive")):
            declared = sorted((chosen or set()) & set(self.identifiers))
            if declared:  # an identifier is dropped before any release: never made a QI or sensitive here
                raise SchemaError(f"the {parameter} parameter names '{declared[0]}', which the schema declares "
                                  "a direct identifier (role = \"identifier\"): identifiers are never published or "
                                  "used; remove it, or change its role in the schema", parameter=parameter)
        attributes = []
        for a in self.attributes:
            role = a.role
            if qi_set is not None:
                if a.name in qi_set:
                    role = Role.QUASI_IDENTIFIER
                elif role is Role.QUASI_IDENTIFIER:
                    role = Role.INSENSITIVE
            if sensitive_set is not None:
                if a.name in sensitive_set:
                    role = Role.SENSITIVE
                elif role is Role.SENSITIVE:
                    role = Role.INSENSITIVE
            attributes.append(replace(a, role=role))
        return replace(self, attributes=tuple(attributes))

    def with_types(self, types: Mapping[str, AttributeType | str]) -> Schema:
        """Return a schema with some attribute types replaced."""
        self._check_names(types, "type override")
        return replace(
            self,
            attributes=tuple(
                replace(a, type=_typed(types[a.name], a.name)[0], numbers=_typed(types[a.name], a.name)[1])
                if a.name in types else a
                for a in self.attributes
            ),
        )

    def select(self, names: Sequence[str] | str) -> Schema:
        """The schema restricted to ``names`` (in that order; one name or a list)."""
        names = self._check_names(names, "selection")
        person = self.person_id if self.person_id in names else None
        return replace(self, attributes=tuple(self[n] for n in names), person_id=person,
                       undeclared=self.undeclared & frozenset(names))

    # -- presentation -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "person_id": self.person_id,
            "attributes": [
                {"name": a.name, "role": a.role.value, "type": a.type.value,
                 **({"numbers": a.numbers.value} if a.numbers else {}),
                 **({"from_data": list(a.from_data)} if a.from_data else {})} for a in self.attributes
            ],
        }

    def summary(self) -> str:
        """A short human-readable account of the schema (printed when it was inferred)."""
        width = max(len(n) for n in self.names) if self.attributes else 4
        head = (
            "schema inferred from the data (every attribute a quasi-identifier; "
            "declare roles with --qi/--sensitive or --schema FILE):"
            if self.source == "inferred" else f"schema ({self.source}):"
        )
        lines = [head]
        for a in self.attributes:
            marked = f"  (from the data, unreviewed: {', '.join(a.from_data)})" if a.from_data else ""
            kind = f"{a.type.value} ({a.numbers.value})" if a.numbers else a.type.value
            lines.append(f"  {a.name:<{width}}  {a.role.value:<16}  {kind}{marked}")
        if self.person_id:
            lines.append(f"  person identifier: {self.person_id}")
        return "\n".join(lines)


#: How deeply tables and lists may nest in a schema file (a schema needs about 7).
MAX_NESTING = 32


def _check_document(document: dict[str, Any], where: str) -> None:
    """Refuse a schema document nested deeper than :data:`MAX_NESTING` or holding a NaN or an
    infinity anywhere (widths, cuts, bottom, top, origin, an order...), naming the key."""
    stack: list[tuple[Any, str, int]] = [(document, "", 0)]
    while stack:
        value, key, depth = stack.pop()
        if depth > MAX_NESTING:
            raise SchemaError(f"{where} is nested too deeply (more than {MAX_NESTING} levels of tables and "
                              "lists): a schema needs a few")
        if isinstance(value, float) and not math.isfinite(value):
            raise SchemaError(f"{where}: {key} is {value}; numbers in a schema must be finite")
        if isinstance(value, dict):
            stack.extend((v, f"{key}.{k}" if key else str(k), depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{key}[{i}]", depth + 1) for i, v in enumerate(value))


def declared_and_reading(schema: Schema | None, decimal_comma: bool | None = None) -> tuple[Schema | None, bool | None]:
    """The schema as declared, with the decimal-comma option read by (None when it declares no
    attribute: it only said how to read, :meth:`Schema.reading`), and that option:
    ``decimal_comma`` when given, else the schema's."""
    if schema is None:
        return None, decimal_comma
    reading = schema.decimal_comma if decimal_comma is None else decimal_comma
    if not schema.attributes:
        return None, reading
    return (schema if schema.decimal_comma == reading else replace(schema, decimal_comma=reading)), reading


def _markers(value: Any, where: str) -> tuple[str, ...]:
    """A ``from_data`` list read from a schema file: strings, each starting with a schema key."""
    if not isinstance(value, list) or not all(isinstance(m, str) and m.strip() for m in value):
        raise SchemaError(f"{where}: from_data must be a list of what was read from the data, "
                          'e.g. from_data = ["hierarchy groups"]')
    for marker in value:
        if marker.split()[0] not in MARKED_KEYS:
            raise SchemaError(f"{where}: from_data entry {marker!r} must start with the key it concerns "
                              f"({', '.join(MARKED_KEYS)})")
    return tuple(" ".join(m.split()) for m in value)


def complete_schema(schema: Schema, frame: pl.DataFrame) -> Schema:
    """Apply a declared ``schema`` to ``frame``: every column it names must be in the data; the
    data's columns it does not declare are added, inferred (:meth:`Schema.infer`: each a
    quasi-identifier) and listed in ``undeclared``. Raises :class:`~crowdsafe.errors.SchemaError`
    naming the first absent one."""
    absent = [n for n in schema.names if n not in frame.columns]
    if absent:
        raise SchemaError(
            f"column '{absent[0]}' is named in the schema but not in the data "
            f"(the data has: {', '.join(frame.columns)}){name_note(absent[0], frame.columns)}"
        )
    extra = [c for c in frame.columns if c not in schema]
    if not extra:
        return schema
    inferred = Schema.infer(frame.select(extra))
    return replace(schema, attributes=schema.attributes + inferred.attributes,
                   undeclared=schema.undeclared | frozenset(extra))
