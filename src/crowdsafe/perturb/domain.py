"""The domain D = D_1 × ... × D_a of a perturbed view, and tuples as codes and mixed-radix indices.

D is never materialized: it is the list of values of each attribute. The (d, γ) guarantee
(Rastogi, Suciu, Hong 2007) holds for a domain fixed *before* the data is read, so a certified
run takes every attribute's values from a public source (:func:`public_values`): a value list
the custodian declares (``domains=``, ``--domains FILE``), the schema's declared ``order`` of an
ordinal attribute, or the leaves of a declared hierarchy (not an
:class:`~crowdsafe.data.hierarchy.ObservedHierarchy`, whose leaves are the data's values). Whether
the missing value belongs to it is decided by the missing-value policy, a parameter: it does
when the policy keeps missing values, else not, whatever the data holds (:func:`with_missing_rule`).
The *active domain* (the distinct values present in the data) discloses which values occur and
is used only in an explicitly uncertified, exploratory run.

A row of the data whose value lies outside the public domain is not refused: it is left out
of the input I (:meth:`TupleDomain.encode_within`), a per-row filter applied before the
mechanism, so the view of a table and of that table plus or minus such a row have the same
distribution; how many rows were left out is a custodian-only fact. A *view* (public) holding
a value outside its published domain is refused, naming the value (:meth:`TupleDomain.encode`).

A tuple is a row of per-attribute codes (``code = position in D_i``), or, when
m = Π |D_i| < 2^64, one unsigned 64-bit *index* in mixed radix:
index = ((c_1·|D_2| + c_2)·|D_3| + c_3)·... (the first attribute is the most significant digit;
the packing of :mod:`crowdsafe.data.packing`).

A domain travels with the view inside its certificate (:meth:`TupleDomain.to_json`), so anyone can
estimate queries from the view without the data.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data import packing
from crowdsafe.data.coerce import first_not_held
from crowdsafe.data.domain_lists import domain_lists
from crowdsafe.data.encoding import encode_series
from crowdsafe.data.missing import MissingPolicy
from crowdsafe.errors import InputError, ParameterError, SchemaError
from crowdsafe.perturb.declared_values import iso_series, refuse_mistyped, refuse_wide_integers

INDEX_LIMIT = 2**64  # m below this: tuples are uint64 mixed-radix indices


@dataclass(frozen=True)
class TupleDomain:
    """The domain of possible tuples D = D_1 × ... × D_a: per-attribute value lists;
    ``values[a][code]`` is the value a code stands for."""

    values: dict[str, pl.Series]
    active: bool = True  # True when some attribute's values were taken from the data

    def __post_init__(self) -> None:
        if not self.values:
            raise ParameterError("a domain needs at least one attribute")
        for name, series in self.values.items():
            if len(series) == 0:
                raise ParameterError(f"the domain of '{name}' is empty")
            if series.n_unique() != len(series):
                raise ParameterError(f"the domain of '{name}' lists a value twice")

    # -- facts --------------------------------------------------------------------------

    @property
    def attributes(self) -> list[str]:
        return list(self.values)

    @property
    def sizes(self) -> list[int]:
        return [len(s) for s in self.values.values()]

    @property
    def size(self) -> int:
        """m = Π |D_i|, exact (a Python int; may exceed 64 bits)."""
        return math.prod(self.sizes)

    @property
    def indexable(self) -> bool:
        """True when every tuple has a uint64 mixed-radix index (m < 2^64)."""
        return self.size < INDEX_LIMIT

    # -- construction -------------------------------------------------------------------

    @classmethod
    def active_of(cls, frame: pl.DataFrame, attributes: Sequence[str]) -> tuple[TupleDomain, dict[str, np.ndarray]]:
        """The active domain of ``attributes`` in ``frame`` (sorted values, missing last), and
        the frame's codes."""
        values, codes = {}, {}
        for name in attributes:
            codes[name], values[name] = encode_series(frame.get_column(name))
        return cls(values, active=True), codes

    @classmethod
    def declared(cls, domains: Mapping[str, Iterable[Any]], frame: pl.DataFrame) -> TupleDomain:
        """A public domain the custodian declares (value lists per attribute, in the frame's types)."""
        values = {}
        for name, listed in domains.items():
            if name not in frame.columns:
                raise SchemaError(f"a domain is given for '{name}', which is not a column of the data")
            dtype = frame.get_column(name).dtype
            listed = list(listed)
            try:
                if isinstance(dtype, pl.Date | pl.Datetime) and any(isinstance(v, str) for v in listed):
                    series = iso_series(name, listed, dtype)
                else:
                    refuse_wide_integers(name, listed, dtype)
                    given = pl.Series(name, listed, strict=False)  # whole numbers and reals: reals
                    series = exactly(given, given.cast(dtype), name, "declared domain")
            except (pl.exceptions.PolarsError, TypeError, ValueError) as exc:
                raise ParameterError(f"the declared domain of '{name}' does not fit its type {dtype}: {exc}") from None
            if series.len() == 0:
                raise ParameterError(f"the declared domain of '{name}' lists no value: list every value the "
                                     "attribute can take")
            values[name] = series.unique(maintain_order=True)  # (a value listed twice counts once)
        return cls(values, active=False)

    # -- tuples -------------------------------------------------------------------------

    def encode(self, frame: pl.DataFrame, *, what: str = "the view") -> dict[str, np.ndarray]:
        """Codes of the rows of ``frame``, a public table (a view); a value outside the domain
        is an InputError naming it (:func:`encode_against`)."""
        codes = {}
        for name, series in self.values.items():
            codes[name] = encode_against(self._column(frame, name, what), series, what=what)
        return codes

    def encode_within(self, frame: pl.DataFrame) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Codes of the rows of ``frame`` (the data) and a boolean mask of the rows whose every
        value lies in the domain; a row outside has arbitrary codes and is to be left out
        (:func:`encode_within`). Nothing is refused and no value is named."""
        codes, inside = {}, np.ones(frame.height, dtype=bool)
        for name, series in self.values.items():
            codes[name], within = encode_within(self._column(frame, name, "the data"), series)
            inside &= within
        return codes, inside

    def _column(self, frame: pl.DataFrame, name: str, what: str) -> pl.Series:
        if name not in frame.columns:
            raise SchemaError(f"{what} has no column '{name}' "
                              f"(the domain's attributes: {', '.join(self.attributes)})")
        return frame.get_column(name)

    def decode(self, codes: Mapping[str, np.ndarray]) -> pl.DataFrame:
        """The rows whose codes are given, as values (one gather per attribute)."""
        return pl.DataFrame([self.values[a].gather(pl.Series(codes[a])).alias(a) for a in self.attributes])

    def index(self, codes: Mapping[str, np.ndarray]) -> np.ndarray:
        """Mixed-radix uint64 indices of coded rows (needs m < 2^64)."""
        self._require_indexable()
        return packing.pack([codes[name] for name in self.attributes], self.sizes, np.uint64)

    def codes_of(self, index: np.ndarray) -> dict[str, np.ndarray]:
        """Per-attribute codes of mixed-radix indices (the inverse of :meth:`index`)."""
        self._require_indexable()
        columns = packing.unpack(index, self.sizes, packing.division_dtype(self.sizes))
        return {name: column.astype(np.uint32, copy=False) for name, column in zip(self.attributes, columns)}

    def _require_indexable(self) -> None:
        if not self.indexable:
            raise ParameterError(f"the domain has m = {self.size:.3e} >= 2^64 tuples: no 64-bit index")

    # -- JSON ---------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """``{attribute: {"type": ..., "values": [...]}}``; temporal values as ISO text."""
        out = {}
        for name, series in self.values.items():
            dtype = series.dtype
            if isinstance(dtype, (pl.Categorical, pl.Enum)):
                series, dtype = series.cast(pl.String), pl.String()
            if dtype.is_temporal():
                listed = series.cast(pl.String).to_list()
            else:
                listed = series.to_list()
            out[name] = {"type": _type_name(dtype), "values": listed}
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, active: bool = True) -> TupleDomain:
        if not isinstance(data, Mapping) or not data:
            raise InputError("the certificate's domain is missing or empty")
        values = {}
        for name, entry in data.items():
            try:
                values[name] = _series_from_json(name, entry["type"], entry["values"])
            except (KeyError, TypeError, ValueError, pl.exceptions.PolarsError) as exc:
                raise InputError(f"the certificate's domain of '{name}' cannot be read: {exc}") from None
        return cls(values, active=active)


_TYPES: dict[str, pl.DataType] = {
    "Int8": pl.Int8(), "Int16": pl.Int16(), "Int32": pl.Int32(), "Int64": pl.Int64(),
    "UInt8": pl.UInt8(), "UInt16": pl.UInt16(), "UInt32": pl.UInt32(), "UInt64": pl.UInt64(),
    "Float32": pl.Float32(), "Float64": pl.Float64(), "String": pl.String(), "Boolean": pl.Boolean(),
    "Date": pl.Date(), "Datetime": pl.Datetime(), "Time": pl.Time(),
}


def _type_name(dtype: pl.DataType) -> str:
    name = str(dtype.base_type())
    return name if name in _TYPES else "String"


def _series_from_json(name: str, type_name: str, listed: list[Any]) -> pl.Series:
    dtype = _TYPES.get(type_name)
    if dtype is None:
        raise ValueError(f"unknown type {type_name!r}")
    if isinstance(dtype, pl.Date | pl.Datetime | pl.Time):  # the temporal types of _TYPES
        return pl.Series(name, listed, dtype=pl.String).str.strptime(dtype) if listed else pl.Series(name, [], dtype)
    if dtype.is_float() and any(isinstance(v, str) for v in listed):
        # ±inf and NaN, which the certificate writes as the texts of str(float) (standard JSON has none)
        odd = next((v for v in listed if isinstance(v, str) and v not in _NON_FINITE), None)
        if odd is not None:
            raise ValueError(f"{odd!r} is not a number")
        return pl.Series(name, [_NON_FINITE[v] if isinstance(v, str) else v for v in listed], dtype=dtype)
    return pl.Series(name, listed, dtype=dtype)


#: The texts a certificate holds for non-finite floats (``str(float)``; :func:`crowdsafe.privacy.certificate._finite`).
_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def _text(values: pl.Series, domain: pl.DataType) -> pl.Series:
    """``values`` as the text :func:`_matched` compares: their text form, and for a timestamp
    domain with the date and the time joined by a space (a view's CSV writes ``2024-01-10T11:00:00``,
    Polars' text of a timestamp ``2024-01-10 11:00:00``)."""
    text = values.cast(pl.String)
    if isinstance(domain, pl.Datetime):
        text = text.str.replace(r"^(\d{4}-\d{2}-\d{2})T(\d)", "${1} ${2}")
    return text


def _matched(column: pl.Series, domain: pl.Series) -> tuple[np.ndarray, pl.Series, pl.Series]:
    """(each row's code among the column's distinct values, those values, their code in
    ``domain`` or null when they are outside it).

    Values are matched by their text form, so a view read back from CSV (where types may be
    inferred differently, e.g. Categorical read as text) matches its domain. A missing value
    matches a missing value in the domain."""
    codes_in, dictionary = encode_series(column)
    lookup = pl.DataFrame({
        "__value": _text(domain, domain.dtype),
        "__code": np.arange(len(domain), dtype=np.uint32),
    })
    matched = (
        pl.DataFrame({"__value": _text(dictionary, domain.dtype)})
        .join(lookup, on="__value", how="left", nulls_equal=True, maintain_order="left")
        .get_column("__code")
    )
    return codes_in, dictionary, matched


def encode_against(column: pl.Series, domain: pl.Series, *, what: str = "the view") -> np.ndarray:
    """uint32 codes of ``column``'s values in ``domain``, for a public table (a view read back,
    ``what`` names it); a value outside the domain is an InputError naming the value (the
    table is public, so naming its value discloses nothing). The data is never encoded here:
    see :func:`encode_within`."""
    codes_in, dictionary, matched = _matched(column, domain)
    if matched.null_count():
        bad = dictionary.filter(matched.is_null().to_numpy())[0]
        raise InputError(f"{what} holds the value {bad!r} in column '{column.name}', which is outside the "
                         "published domain")
    return matched.to_numpy().astype(np.uint32)[codes_in]


def encode_within(column: pl.Series, domain: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """uint32 codes of ``column``'s values in ``domain`` (0 for a value outside it) and a
    boolean mask of the rows whose value lies in it.

    For the data: a value outside the public domain is neither refused nor named (an outcome or
    a message that depends on whether one row exists would tell who is in the data); the caller
    leaves the row out of the input and counts it for the custodian only."""
    codes_in, _, matched = _matched(column, domain)
    inside = matched.is_not_null().to_numpy()
    return matched.fill_null(0).to_numpy().astype(np.uint32)[codes_in], inside[codes_in]


# -- where a public domain comes from -------------------------------------------------------------

DECLARED = "declared"  # a value list the custodian gave (domains=, --domains FILE)
SCHEMA_ORDER = "schema order"  # the declared order of an ordinal attribute
HIERARCHY = "hierarchy leaves"  # the leaves of a declared hierarchy (not built from the data)
DATA = "data (active domain)"  # the distinct values present: not public


def public_values(dataset: Any, names: Sequence[str], domains: Mapping[str, Iterable[Any]] | None = None
                  ) -> tuple[dict[str, list[Any] | pl.Series], dict[str, str]]:
    """The public value list of each attribute that has one, and where it came from.

    In order of precedence: a list in ``domains``; the schema's ``order`` of the attribute (a
    declaration: a schema file's ``order =``, or the categories of an Enum column type); the
    leaves of its hierarchy when that hierarchy is declared (``not hierarchy.observed``: a
    hierarchy file, named ``groups``, ``fanout`` over a declared ``order``, one attached in
    Python, which the custodian builds from public values). An
    :class:`~crowdsafe.data.hierarchy.ObservedHierarchy` (``widths``, ``cuts``, ``mask``,
    ``dates``, ``flat``, ``fanout`` without ``order``, the flat hierarchy of a column given
    none) lists the data's values: it is no public domain. Each list then holds the missing
    value exactly when the dataset's missing-value policy keeps missing values
    (:func:`with_missing_rule`). Attributes absent from the result have no public domain. A
    declared list whose values are not of the column's type is refused
    (:func:`~crowdsafe.perturb.declared_values.refuse_mistyped`). Nothing here reads the data's values.
    """
    domains = domain_lists(domains, "domains")  # a mapping to lists of values, none empty, never a text
    stray = [a for a in domains if a not in names]
    if stray:
        raise ParameterError(f"a domain is given for '{stray[0]}', which is not among the attributes published")
    keep = dataset.missing.policy is MissingPolicy.KEEP
    values: dict[str, list[Any] | pl.Series] = {}
    sources: dict[str, str] = {}
    schema = dataset.schema
    for name in names:
        attribute = schema[name] if name in schema else None
        hierarchy = dataset.hierarchies.get(name)
        if name in domains:
            listed = domains[name]
            if name in dataset.frame.schema:  # a number for a text column, a boolean for a number: refused
                refuse_mistyped(name, listed, dataset.frame.schema[name])
            values[name], sources[name] = with_missing_rule(listed, keep), DECLARED
        elif attribute is not None and attribute.order is not None:
            values[name], sources[name] = with_missing_rule(list(attribute.order), keep), SCHEMA_ORDER
        elif hierarchy is not None and not hierarchy.observed:
            values[name], sources[name] = with_missing_rule(hierarchy.leaves, keep), HIERARCHY
    return values, sources


def with_missing_rule(listed: list[Any] | pl.Series, keep: bool) -> list[Any] | pl.Series:
    """``listed`` with the missing value (null) last when ``keep`` (the policy keeps missing
    values: a value of its own, so it is a value of every domain), without it otherwise (no row
    can hold one: such rows were dropped or refused at load).

    A rule on parameters only: the load pipeline gives a hierarchy its missing-value leaf only
    when the column holds a missing value, so taking the leaves as they come would make m, hence
    β and the certificate, depend on whether one row has a missing value."""
    if isinstance(listed, pl.Series):
        values = listed.drop_nulls()
        return pl.concat([values, pl.Series(listed.name, [None], dtype=listed.dtype)]) if keep else values
    present = [v for v in listed if v is not None]
    return [*present, None] if keep else present


def unreviewed_domains(dataset: Any, sources: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """The schema's ``from_data`` markers (:meth:`crowdsafe.data.schema.Schema.unreviewed`) of the
    keys the public domains were taken from: a domain from the schema's order uses its ``order``,
    one from a hierarchy's leaves its ``hierarchy``; a declared list or the data's values use
    neither; every attribute's ``type`` (inferred from the values when nobody declared it) and
    ``reading`` (its numbers read with a decimal comma, or as integers or reals, by the values);
    every column's ``role`` (the roles decide the attributes published by default).
    From the schema and the sources alone (public); any makes a view not fit for release."""
    used = {SCHEMA_ORDER: "order", HIERARCHY: "hierarchy"}
    found: dict[str, tuple[str, ...]] = {}
    for name, source in sources.items():
        # how the column was typed and read decides the domain's type and the view's values too
        keys = ["type", "reading", used[source]] if source in used else ["type", "reading"]
        found.update(dataset.schema.unreviewed([name], [*keys, "role"]))  # (a role: every column's, see unreviewed)
    return found


def domain_missing_error(attributes: Sequence[str]) -> ParameterError:
    """The refusal of a certified run for attributes without a public domain."""
    listed = ", ".join(f"'{a}'" for a in attributes)
    return ParameterError(
        f"no public domain for {listed}: the (d, gamma) guarantee needs each attribute's values fixed "
        "before the data is read; declare them with domains={attribute: [values]}, an 'order' in the schema "
        "file or a hierarchy file, or pass exploratory=True for an uncertified run on the data's own values",
        parameter=("domains", "exploratory"),
    )


def uncharged_error() -> ParameterError:
    """The refusal of a ledger charge for a run with no formal guarantee (an exploratory run that
    takes n or a domain from the data): there is no ε to charge."""
    return ParameterError(
        "an exploratory run carries no guarantee to charge to a ledger: declare the public domains and "
        "max_rows=N, or run it without a ledger (ledger=None)", parameter=("max_rows", "ledger"),
    )


def public_domain(frame: pl.DataFrame, values: Mapping[str, list[Any] | pl.Series]) -> TupleDomain:
    """The :class:`TupleDomain` of public value lists, in the frame's column types."""
    out: dict[str, pl.Series] = {}
    for name, listed in values.items():
        dtype = frame.schema[name]
        series = listed if isinstance(listed, pl.Series) else None
        if series is not None and series.dtype != dtype:
            series = _cast_leaves(series, dtype, name)
        if series is None:
            out.update(TupleDomain.declared({name: listed}, frame).values)
        else:
            out[name] = series.alias(name).unique(maintain_order=True)
    return TupleDomain(out, active=False)


def _cast_leaves(leaves: pl.Series, dtype: pl.DataType, name: str) -> pl.Series:
    source = leaves.str.strip_chars() if leaves.dtype == pl.String and dtype.is_numeric() else leaves
    try:
        return exactly(source, source.cast(dtype), name, "hierarchy leaves")
    except (pl.exceptions.PolarsError, TypeError, ValueError) as exc:
        raise ParameterError(f"the hierarchy leaves of '{name}' do not fit its type {dtype}: {exc}") from None


def exactly(given: pl.Series, cast: pl.Series, name: str, what: str) -> pl.Series:
    """``cast`` (``given`` in a column's type), refused when a number changed on the way (0.5 cut to
    0 in a column of integers): a public domain is never silently narrowed. From the declared
    values and the column's type alone."""
    at = first_not_held(given, cast) if cast.dtype.is_numeric() and given.dtype.is_float() else None
    if at is not None:
        raise ParameterError(f"the {what} of '{name}': {given[at]!r} cannot be held by its column ({cast.dtype}); "
                             f"drop it, or declare '{name}' real in the schema")
    return cast
