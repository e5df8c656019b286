"""A query language small enough for a command line.

    count [where FILTER]
    sum(COLUMN) clamp LOW..HIGH [where FILTER]
    mean(COLUMN) clamp LOW..HIGH [where FILTER]            (also: avg)
    median(COLUMN) clamp LOW..HIGH [where FILTER]
    quantile(COLUMN, Q) clamp LOW..HIGH [where FILTER]
    histogram DIMENSION, DIMENSION, ... [where FILTER]      (also: table)

A DIMENSION is a column, optionally with public bins ``age[0..100 by 10]`` or a public list of
values ``race in ('White', 'Black', 'Other')``.

FILTER combines comparisons with ``and``, ``or``, ``not`` and parentheses:
``column = value`` (also ``!=``, ``<>``, ``<``, ``<=``, ``>``, ``>=``), ``column in (v, ...)``,
``column not in (...)``, ``column between a and b``, ``column is null``, ``column is not null``.
Text values are quoted ('Female' or "Female"; a quote inside is doubled); numbers are bare, in
plain decimal or scientific notation with the digits 0-9 (:mod:`crowdsafe.number_text`; a number
too large or too close to 0 for a float is refused).
Column names may contain letters, digits, ``_``, ``-`` and ``.``; quote others with backticks.
Keywords are case-insensitive. A comparison with a missing value is false (as in SQL).

:func:`parse` returns a :class:`Query`; it raises :class:`~crowdsafe.errors.QuerySyntaxError`
naming the position and what was expected. :func:`compile_filter` checks the columns against a
schema and turns the filter into a Polars expression.
"""

from __future__ import annotations

import datetime as dt
import difflib
import functools
import math
import operator
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from crowdsafe.data import unicode_forms
from crowdsafe.errors import QuerySyntaxError, SchemaError
from crowdsafe.number_text import NotANumber, read_number, read_whole

Literal = str | float | int

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<number>-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)
  | (?P<string>'(?:[^']|'')*'|"(?:[^"]|"")*")
  | (?P<backquoted>`[^`]+`)
  | (?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)
  | (?P<op>\.\.|<=|>=|!=|<>|==|[=<>(),\[\]*])
    """,
    re.VERBOSE,
)
KEYWORDS = {
    "count", "sum", "mean", "avg", "median", "quantile", "histogram", "table", "where", "and", "or",
    "not", "in", "is", "null", "between", "clamp", "by",
}
# The most public bins one dimension may have (each is a cell of the noisy histogram).
MAX_BINS = 1_000_000
COMPARISONS = {"=": "==", "==": "==", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


@dataclass(frozen=True)
class Token:
    kind: str  # number, string, name, keyword, op, end
    text: str
    position: int
    value: Any = None


def _in_word(char: str) -> bool:
    return char.isalnum() or char in "_.-" or unicodedata.category(char).startswith("M")


def _backticks(text: str, position: int) -> str:
    """The hint for an unexpected letter beyond A-Z (``ö``, ``é``, a combining accent, ``年``):
    the column name it is part of goes in backticks."""
    char = text[position]
    if not (char.isalpha() or unicodedata.category(char).startswith("M")):
        return ""
    start, end = position, position + 1
    while start > 0 and _in_word(text[start - 1]):
        start -= 1
    while end < len(text) and _in_word(text[end]):
        end += 1
    return f" (a column name with letters beyond A-Z goes in backticks: `{text[start:end]}`)"


def tokenize(text: str) -> list[Token]:
    """Split a query into tokens; an unknown character is a QuerySyntaxError."""
    tokens: list[Token] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            digit = " (write numbers in the digits 0-9)" if text[position].isdigit() else _backticks(text, position)
            raise QuerySyntaxError(
                f"query does not parse at character {position + 1}: unexpected {text[position]!r}{digit}")
        kind = match.lastgroup
        raw = match.group()
        assert kind is not None
        if kind == "number":
            try:
                value: Any = read_whole(raw) if re.fullmatch(r"-?[0-9]+", raw) else read_number(raw)
            except NotANumber as exc:
                raise QuerySyntaxError(f"query does not parse at character {position + 1}: {exc}") from None
            tokens.append(Token("number", raw, position, value))
        elif kind == "string":
            quote = raw[0]
            tokens.append(Token("string", raw, position, raw[1:-1].replace(quote * 2, quote)))
        elif kind == "backquoted":
            tokens.append(Token("name", raw, position, raw[1:-1]))
        elif kind == "name":
            lowered = raw.lower()
            if lowered in KEYWORDS:
                tokens.append(Token("keyword", lowered, position, lowered))
            else:
                tokens.append(Token("name", raw, position, raw))
        elif kind == "op":
            tokens.append(Token("op", raw, position, raw))
        position = match.end()
    tokens.append(Token("end", "end of query", len(text)))
    return tokens


# -- the syntax tree -------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    column: str
    op: str  # ==, !=, <, <=, >, >=
    value: Literal


@dataclass(frozen=True)
class InList:
    column: str
    values: tuple[Literal, ...]
    negated: bool = False


@dataclass(frozen=True)
class Between:
    column: str
    low: Literal
    high: Literal
    negated: bool = False


@dataclass(frozen=True)
class IsNull:
    column: str
    negated: bool = False


@dataclass(frozen=True)
class Not:
    operand: Filter


@dataclass(frozen=True)
class And:
    operands: tuple[Filter, ...]


@dataclass(frozen=True)
class Or:
    operands: tuple[Filter, ...]


Filter = Comparison | InList | Between | IsNull | Not | And | Or


@dataclass(frozen=True)
class Bins:
    """Public equal-width bins [low + i·width, low + (i+1)·width); values outside are clamped in."""

    low: float
    high: float
    width: float

    @property
    def count(self) -> int:
        return max(1, math.ceil((self.high - self.low) / self.width - 1e-12))

    def labels(self) -> list[str]:
        edges = [self.low + i * self.width for i in range(self.count)] + [self.high]
        return [f"[{_number(a)}, {_number(b)}{']' if i == self.count - 1 else ')'}" for i, (a, b) in
                enumerate(zip(edges[:-1], edges[1:]))]


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


@dataclass(frozen=True)
class Dimension:
    column: str
    bins: Bins | None = None
    values: tuple[Literal, ...] | None = None


@dataclass(frozen=True)
class Query:
    """A parsed query: what to compute, over which rows."""

    kind: str  # count, sum, mean, quantile, histogram
    text: str
    column: str | None = None
    q: float | None = None
    bounds: tuple[float, float] | None = None
    dimensions: tuple[Dimension, ...] = ()
    where: Filter | None = None
    columns: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        return " ".join(self.text.split())


# -- the parser --------------------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.index = 0

    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def advance(self) -> Token:
        token = self.tokens[self.index]
        if token.kind != "end":
            self.index += 1
        return token

    def error(self, expected: str) -> QuerySyntaxError:
        token = self.current
        found = "the end of the query" if token.kind == "end" else repr(token.text)
        before, after = self.tokens[self.index - 1] if self.index else None, self.tokens[self.index + 1:][:1]
        comma = ""  # 80,5: a decimal comma, as a German or French user writes it
        if (token.text == "," and before is not None and before.kind == "number" and after
                and after[0].kind == "number" and after[0].position == token.position + 1
                and before.position + len(before.text) == token.position):
            comma = f" (write numbers with a decimal point: {before.text}.{after[0].text})"
        return QuerySyntaxError(
            f"query does not parse at character {token.position + 1}: expected {expected}, found {found}{comma}"
        )

    def accept(self, kind: str, text: str | None = None) -> Token | None:
        token = self.current
        if token.kind == kind and (text is None or token.text == text):
            return self.advance()
        return None

    def expect(self, kind: str, text: str | None = None, what: str | None = None) -> Token:
        token = self.accept(kind, text)
        if token is None:
            raise self.error(what or (repr(text) if text else kind))
        return token

    # query := aggregate [where]
    def query(self) -> Query:
        head = self.current
        if head.kind != "keyword" or head.text not in {"count", "sum", "mean", "avg", "median", "quantile",
                                                      "histogram", "table"}:
            raise self.error("count, sum, mean, median, quantile or histogram")
        self.advance()
        kind = {"avg": "mean", "table": "histogram", "median": "quantile"}.get(head.text, head.text)
        column = q = bounds = None
        dimensions: tuple[Dimension, ...] = ()
        if head.text == "count":
            if self.accept("op", "("):
                self.expect("op", "*", "'*' in count(*)")
                self.expect("op", ")", "')'")
        elif head.text in ("histogram", "table"):
            dimensions = self.dimensions()
        else:
            self.expect("op", "(", f"'(' after {head.text}")
            column = self.column()
            if head.text == "quantile":
                self.expect("op", ",", "',' and the quantile, e.g. quantile(age, 0.9)")
                q = float(self.expect("number", what="a quantile between 0 and 1").value)
                if not 0.0 <= q <= 1.0:
                    raise QuerySyntaxError(f"a quantile must lie between 0 and 1, got {q:g}")
            elif head.text == "median":
                q = 0.5
            self.expect("op", ")", "')'")
            if self.accept("keyword", "clamp"):
                bounds = self.range_()
        where = None
        if self.accept("keyword", "where"):
            where = self.disjunction()
        if self.current.kind != "end":
            raise self.error("'where' or the end of the query" if where is None else "'and', 'or' or the end")
        return Query(kind=kind, text=self.text, column=column, q=q, bounds=bounds, dimensions=dimensions,
                     where=where)

    def range_(self) -> tuple[float, float]:
        low = float(self.expect("number", what="a lower bound, e.g. clamp 0..100").value)
        self.expect("op", "..", "'..' between the bounds, e.g. clamp 0..100")
        high = float(self.expect("number", what="an upper bound").value)
        return low, high

    def dimensions(self) -> tuple[Dimension, ...]:
        dims = [self.dimension()]
        while self.accept("op", ","):
            dims.append(self.dimension())
        return tuple(dims)

    def dimension(self) -> Dimension:
        column = self.column()
        if self.accept("op", "["):
            low, high = self.range_()
            self.expect("keyword", "by", "'by' and a bin width, e.g. age[0..100 by 10]")
            width = float(self.expect("number", what="a bin width").value)
            self.expect("op", "]", "']'")
            if not (high > low and width > 0):
                raise QuerySyntaxError(f"bins of '{column}' need low < high and a positive width")
            if (high - low) / width > MAX_BINS:
                raise QuerySyntaxError(f"bins of '{column}': [{low:g}, {high:g}] by {width:g} makes more than "
                                       f"{MAX_BINS:,} bins; choose a wider bin")
            return Dimension(column, bins=Bins(low, high, width))
        if self.accept("keyword", "in"):
            return Dimension(column, values=self.literal_list())
        return Dimension(column)

    def column(self) -> str:
        token = self.current
        if token.kind == "name":
            self.advance()
            return str(token.value)
        if token.kind == "keyword":
            raise self.error(f"a column name ('{token.text}' is a keyword: quote it as `{token.text}`)")
        raise self.error("a column name")

    def literal(self) -> Literal:
        token = self.current
        if token.kind in ("number", "string"):
            self.advance()
            value: Literal = token.value
            return value
        raise self.error("a value (a number or a quoted text such as 'Female')")

    def literal_list(self) -> tuple[Literal, ...]:
        self.expect("op", "(", "'(' and a list of values")
        values = [self.literal()]
        while self.accept("op", ","):
            values.append(self.literal())
        self.expect("op", ")", "')'")
        return tuple(values)

    def disjunction(self) -> Filter:
        operands = [self.conjunction()]
        while self.accept("keyword", "or"):
            operands.append(self.conjunction())
        return operands[0] if len(operands) == 1 else Or(tuple(operands))

    def conjunction(self) -> Filter:
        operands = [self.negation()]
        while self.accept("keyword", "and"):
            operands.append(self.negation())
        return operands[0] if len(operands) == 1 else And(tuple(operands))

    def negation(self) -> Filter:
        if self.accept("keyword", "not"):
            return Not(self.negation())
        if self.accept("op", "("):
            inner = self.disjunction()
            self.expect("op", ")", "')'")
            return inner
        return self.comparison()

    def comparison(self) -> Filter:
        column = self.column()
        token = self.current
        if token.kind == "op" and token.text in COMPARISONS:
            self.advance()
            return Comparison(column, COMPARISONS[token.text], self.literal())
        if self.accept("keyword", "is"):
            negated = self.accept("keyword", "not") is not None
            self.expect("keyword", "null", "'null' after 'is'")
            return IsNull(column, negated)
        negated = self.accept("keyword", "not") is not None
        if self.accept("keyword", "in"):
            return InList(column, self.literal_list(), negated)
        if self.accept("keyword", "between"):
            low = self.literal()
            self.expect("keyword", "and", "'and' in 'between a and b'")
            return Between(column, low, self.literal(), negated)
        raise self.error("a comparison (=, !=, <, <=, >, >=, in, between, is null)")


def parse(text: str) -> Query:
    """Parse a query string (see the module docstring for the language).

    The parsed query depends on the text alone and is immutable, so the last
    :data:`PARSED_QUERIES` parsed texts are kept (the text is the query, public; nothing about
    the data); a text that does not parse raises each time."""
    if not isinstance(text, str) or not text.strip():
        raise QuerySyntaxError("the query is empty; try e.g. \"count where age >= 30\"")
    return _parse(text)


PARSED_QUERIES = 256


@functools.lru_cache(maxsize=PARSED_QUERIES)
def _parse(text: str) -> Query:
    query = _Parser(text).query()
    columns: list[str] = []
    if query.column:
        columns.append(query.column)
    columns += [d.column for d in query.dimensions]
    columns += filter_columns(query.where)
    return Query(**{**query.__dict__, "columns": tuple(dict.fromkeys(columns))})


def filter_columns(node: Filter | None) -> list[str]:
    """The columns a filter reads, in order of appearance."""
    if node is None:
        return []
    if isinstance(node, (And, Or)):
        return [c for operand in node.operands for c in filter_columns(operand)]
    if isinstance(node, Not):
        return filter_columns(node.operand)
    return [node.column]


def equality_value(node: Filter | None, column: str) -> Literal | None:
    """The value v when the filter is (a conjunction containing) ``column = v``, else None.

    Used to place a query on one part of a partition by ``column``: such a query reads only rows
    with that value, whatever else the filter says.
    """
    if isinstance(node, Comparison) and node.column == column and node.op == "==":
        return node.value
    if isinstance(node, And):
        for operand in node.operands:
            value = equality_value(operand, column)
            if value is not None:
                return value
    return None


# -- compiling a filter to Polars --------------------------------------------------------------


def check_columns(query: Query, names: list[str]) -> None:
    """Every column the query names must exist; the error suggests the closest name."""
    for column in query.columns:
        if column not in names:
            twin = unicode_forms.name_note(column, names)
            close = difflib.get_close_matches(column, names, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f"; the columns are: {', '.join(names)}"
            raise SchemaError(f"the query names the unknown column '{column}'{twin or hint}")


def is_text(dtype: pl.DataType) -> bool:
    return dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum))


def reconciled_operand(column: str, dtype: pl.DataType, value: Literal, *,
                       ordering: bool = False) -> tuple[pl.Expr, Any]:
    """The column expression and the literal, with their types reconciled (or a clear error).

    Categorical columns are compared for (in)equality directly, which Polars does on the
    dictionary; ordering comparisons on text are alphabetical, on the values as strings.
    """
    expr = pl.col(column)
    if is_text(dtype):
        if not isinstance(value, str):
            # not '{value}': the number read from 01067 is 1067, and the text is the one with its zero
            raise SchemaError(f"column '{column}' holds text: compare it with a quoted value, written as the data "
                              "writes it (e.g. '01067' with its leading zeros, not 01067)")
        return (expr.cast(pl.String) if ordering and dtype != pl.String else expr), value
    if dtype.is_numeric():
        if isinstance(value, str):
            raise SchemaError(f"column '{column}' holds numbers: compare it with a number, not '{value}'")
        return expr, value
    if dtype == pl.Boolean:
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return expr, value.lower() == "true"
        raise SchemaError(f"column '{column}' holds true/false: compare it with 'true' or 'false'")
    if isinstance(dtype, (pl.Date, pl.Datetime)) and isinstance(value, str):
        return expr, _temporal_literal(column, dtype, value)
    raise SchemaError(f"column '{column}' of type {dtype} cannot be compared with {value!r}")


def _temporal_literal(column: str, dtype: pl.DataType, value: str) -> Any:
    """A quoted date (``'1990-05-17'``) or date-time read for a Date or Datetime column, compared
    as a date, never as text (``'1990'`` or ``'x'`` against dates compared letters and charged for
    a count of nothing meaningful): anything else is refused, from the query and the schema alone."""
    try:
        if isinstance(dtype, pl.Date):
            return dt.date.fromisoformat(value.strip())
        moment = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        shape = "YYYY-MM-DD" if isinstance(dtype, pl.Date) else "YYYY-MM-DD or YYYY-MM-DD HH:MM:SS"
        raise SchemaError(
            f"column '{column}' holds dates: compare it with a date written {shape}, not '{value}'") from None
    zone = getattr(dtype, "time_zone", None)
    if zone is not None and moment.tzinfo is None:
        raise SchemaError(f"column '{column}' holds date-times in {zone}: give the time zone too, e.g. "
                          f"'{moment.isoformat()}+00:00', not '{value}'")
    if zone is None and moment.tzinfo is not None:
        raise SchemaError(f"column '{column}' holds date-times without a time zone: compare it with one "
                          f"without, not '{value}'")
    return moment


_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
            ">=": operator.ge}


def compile_filter(node: Filter | None, dtypes: Mapping[str, pl.DataType]) -> pl.Expr:
    """The filter as a Polars boolean expression (True for every row when there is no filter).

    Comparisons with a missing value yield null, which a filter drops: as in SQL, a row whose
    value is missing matches neither ``x = v`` nor ``not x = v``.

    The expression depends on the filter and the types of the columns it reads alone (public:
    the query and the schema), and Polars expressions are immutable, so the last
    :data:`PARSED_QUERIES` are kept; a filter that does not compile raises each time.
    """
    if node is None:
        return pl.lit(True)
    return _compiled(repr(node), tuple((c, dtypes[c]) for c in dict.fromkeys(filter_columns(node))), node)


@functools.lru_cache(maxsize=PARSED_QUERIES)
def _compiled(key: str, dtypes: tuple[tuple[str, pl.DataType], ...], node: Filter) -> pl.Expr:
    """:func:`_compile` of ``node``, kept by its ``key`` (its repr: filters that compare equal may
    differ in a literal's type, 30 and 30.0, which the expression keeps) and the read columns'
    types."""
    return _compile(node, dict(dtypes))


def _compile(node: Filter | None, dtypes: Mapping[str, pl.DataType]) -> pl.Expr:
    """:func:`compile_filter` without the cache."""
    if node is None:
        return pl.lit(True)
    if isinstance(node, And):
        return pl.all_horizontal([_compile(o, dtypes) for o in node.operands])
    if isinstance(node, Or):
        return pl.any_horizontal([_compile(o, dtypes) for o in node.operands])
    if isinstance(node, Not):
        return ~_compile(node.operand, dtypes)
    dtype = dtypes[node.column]
    if isinstance(node, IsNull):
        is_null: pl.Expr = pl.col(node.column).is_null()
        missing: pl.Expr = ~is_null if node.negated else is_null
        return missing
    if isinstance(node, Comparison):
        ordering = node.op not in ("==", "!=")
        expr, value = reconciled_operand(node.column, dtype, node.value, ordering=ordering)
        if is_text(dtype):  # the same text in either Unicode form (NFC, NFD) matches, as the ledger's identity
            if not ordering:
                same = expr.is_in(unicode_forms.forms(value))  # null for a missing value, as ==
                return same if node.op == "==" else ~same
            expr, value = expr.cast(pl.String).str.normalize(unicode_forms.FORM), unicode_forms.normal(value)
        compared: pl.Expr = _COMPARE[node.op](expr, value)  # only the comparison asked for is built
        return compared
    if isinstance(node, InList):
        reconciled = [reconciled_operand(node.column, dtype, v) for v in node.values]
        expr = reconciled[0][0]
        values = [v for _, v in reconciled]
        if is_text(dtype):
            values = list(dict.fromkeys(f for v in values for f in unicode_forms.forms(v)))
        if dtype.is_numeric():
            values = [float(v) for v in values] if any(isinstance(v, float) for v in values) else values
            expr = expr.cast(pl.Float64) if isinstance(values[0], float) else expr
        matched = expr.is_in(values)  # null for a missing value
        return ~matched if node.negated else matched
    if isinstance(node, Between):
        expr, low = reconciled_operand(node.column, dtype, node.low, ordering=True)
        _, high = reconciled_operand(node.column, dtype, node.high, ordering=True)
        if is_text(dtype):
            expr = expr.cast(pl.String).str.normalize(unicode_forms.FORM)
            low, high = unicode_forms.normal(low), unicode_forms.normal(high)
        inside: pl.Expr = (expr >= low) & (expr <= high)
        return ~inside if node.negated else inside
    raise TypeError(f"unknown filter node {node!r}")  # pragma: no cover - exhaustive above
