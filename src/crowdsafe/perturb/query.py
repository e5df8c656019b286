"""Counting queries for the α-β estimator: conjunctions of per-attribute conditions.

    count [where CONDITION and CONDITION and ...]

A CONDITION reads one attribute: ``a = v`` (also ``!=``, ``<>``, ``<``, ``<=``, ``>``, ``>=``),
``a in (v, ...)``, ``a not in (...)``, ``a between x and y``, ``a not between x and y``,
``a is null``, ``a is not null``. Text values are quoted ('Female'; a quote inside is doubled),
numbers are bare; keywords are case-insensitive; attribute names may hold letters, digits,
``_``, ``-`` and ``.`` (backticks quote any other name). Several conditions on one attribute
are all required. A comparison with a missing value is false, as in SQL.

The estimator needs Q ∩ D as a product of per-attribute value sets (so |Q ∩ D| is a product
of counts and D is never enumerated), which is why only ``and`` joins conditions; ``or``
between attributes is refused with a clear message (alternatives of one attribute: ``in``).

This is the counting subset of the DP query language being written for ``crowdsafe query``
(:mod:`crowdsafe.query`, mechanisms issue). When that lands on main, :func:`parse_count` should
become a thin adapter: parse with the shared parser, then group its filter's atoms by attribute
(refusing disjunctions across attributes), keeping :class:`CountQuery` as the estimator's input.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

import polars as pl

from crowdsafe.errors import QuerySyntaxError, SchemaError

Literal = Union[str, int, float]

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<number>-?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?)
  | (?P<string>'(?:[^']|'')*'|"(?:[^"]|"")*")
  | (?P<quoted>`[^`]+`)
  | (?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)
  | (?P<op><=|>=|!=|<>|==|[=<>(),*])
    """,
    re.VERBOSE,
)
_KEYWORDS = {"count", "where", "and", "or", "not", "in", "between", "is", "null"}
_COMPARISONS = {"=": "==", "==": "==", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


@dataclass(frozen=True)
class Condition:
    """One per-attribute condition: ``op`` is a comparison (==, !=, <, <=, >, >=), ``in``,
    ``between`` or ``null``; ``negated`` flips ``in``, ``between`` and ``null``."""

    column: str
    op: str
    values: tuple[Literal, ...] = ()
    negated: bool = False

    def expression(self, dtype: pl.DataType) -> pl.Expr:
        """The condition as a Polars boolean expression on its column (of type ``dtype``)."""
        column = pl.col(self.column)
        if self.op == "null":
            return column.is_not_null() if self.negated else column.is_null()
        operands = [_operand(self.column, dtype, v) for v in self.values]
        column = column.cast(pl.String) if _is_text(dtype) else column
        if self.op == "in":
            matched = column.is_in(operands)
        elif self.op == "between":
            matched = (column >= operands[0]) & (column <= operands[1])
        else:
            value = operands[0]
            matched = {"==": column == value, "!=": column != value, "<": column < value,
                       "<=": column <= value, ">": column > value, ">=": column >= value}[self.op]
        return ~matched if self.negated else matched


@dataclass(frozen=True)
class CountQuery:
    """A parsed counting query: the conjunction of its conditions."""

    text: str
    conditions: tuple[Condition, ...] = ()

    @property
    def columns(self) -> list[str]:
        return list(dict.fromkeys(c.column for c in self.conditions))

    def per_attribute(self, dtypes: Mapping[str, pl.DataType]) -> dict[str, pl.Expr]:
        """One boolean expression per attribute read (the AND of its conditions)."""
        unknown = [c for c in self.columns if c not in dtypes]
        if unknown:
            raise SchemaError(
                f"the query names the unknown attribute '{unknown[0]}'; the view has: {', '.join(dtypes)}"
            )
        out: dict[str, pl.Expr] = {}
        for condition in self.conditions:
            expr = condition.expression(dtypes[condition.column])
            previous = out.get(condition.column)
            out[condition.column] = expr if previous is None else previous & expr
        return out

    def describe(self) -> str:
        return " ".join(self.text.split())


def _is_text(dtype: pl.DataType) -> bool:
    return dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum))


def _operand(column: str, dtype: pl.DataType, value: Literal) -> Any:
    if _is_text(dtype):
        if not isinstance(value, str):
            raise SchemaError(f"attribute '{column}' holds text: compare it with a quoted value, e.g. '{value}'")
        return value
    if dtype.is_numeric():
        if isinstance(value, str):
            raise SchemaError(f"attribute '{column}' holds numbers: compare it with a number, not '{value}'")
        return value
    if dtype == pl.Boolean and isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if dtype.is_temporal() and isinstance(value, str):
        return pl.lit(value).str.strptime(dtype)
    raise SchemaError(f"attribute '{column}' of type {dtype} cannot be compared with {value!r}")


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    position: int
    value: Any = None


def _tokenize(text: str) -> list[_Token]:
    tokens, position = [], 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise QuerySyntaxError(f"query does not parse at character {position + 1}: unexpected {text[position]!r}")
        kind, raw = match.lastgroup, match.group()
        if kind == "number":
            tokens.append(_Token("number", raw, position, int(raw) if re.fullmatch(r"-?\d+", raw) else float(raw)))
        elif kind == "string":
            tokens.append(_Token("string", raw, position, raw[1:-1].replace(raw[0] * 2, raw[0])))
        elif kind == "quoted":
            tokens.append(_Token("name", raw, position, raw[1:-1]))
        elif kind == "name":
            lowered = raw.lower()
            tokens.append(_Token("keyword", lowered, position) if lowered in _KEYWORDS else _Token("name", raw, position, raw))
        elif kind == "op":
            tokens.append(_Token("op", raw, position))
        position = match.end()
    tokens.append(_Token("end", "end of query", len(text)))
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.index = 0

    @property
    def current(self) -> _Token:
        return self.tokens[self.index]

    def error(self, expected: str) -> QuerySyntaxError:
        token = self.current
        found = "the end of the query" if token.kind == "end" else repr(token.text)
        return QuerySyntaxError(f"query does not parse at character {token.position + 1}: expected {expected}, found {found}")

    def accept(self, kind: str, text: str | None = None) -> _Token | None:
        token = self.current
        if token.kind == kind and (text is None or token.text == text):
            self.index += 1
            return token
        return None

    def expect(self, kind: str, text: str | None, expected: str) -> _Token:
        token = self.accept(kind, text)
        if token is None:
            raise self.error(expected)
        return token

    def query(self) -> tuple[Condition, ...]:
        self.expect("keyword", "count", "'count' (the estimator answers counting queries)")
        if self.accept("op", "("):
            self.expect("op", "*", "'*' in count(*)")
            self.expect("op", ")", "')'")
        conditions: list[Condition] = []
        if self.accept("keyword", "where"):
            conditions.append(self.condition())
            while self.accept("keyword", "and"):
                conditions.append(self.condition())
        if self.current.kind == "keyword" and self.current.text == "or":
            raise QuerySyntaxError(
                "the alpha-beta estimator answers conjunctions of per-attribute conditions: 'or' is not "
                "supported (for alternatives of one attribute use: a in (x, y))"
            )
        if self.current.kind != "end":
            raise self.error("'where'" if not conditions else "'and' or the end of the query")
        return tuple(conditions)

    def condition(self) -> Condition:
        token = self.current
        if token.kind == "keyword":
            raise self.error(f"an attribute name ('{token.text}' is a keyword: quote it as `{token.text}`)")
        column = str(self.expect("name", None, "an attribute name").value)
        token = self.current
        if token.kind == "op" and token.text in _COMPARISONS:
            self.index += 1
            return Condition(column, _COMPARISONS[token.text], (self.literal(),))
        if self.accept("keyword", "is"):
            negated = self.accept("keyword", "not") is not None
            self.expect("keyword", "null", "'null' after 'is'")
            return Condition(column, "null", (), negated)
        negated = self.accept("keyword", "not") is not None
        if self.accept("keyword", "in"):
            self.expect("op", "(", "'(' and a list of values")
            values = [self.literal()]
            while self.accept("op", ","):
                values.append(self.literal())
            self.expect("op", ")", "')'")
            return Condition(column, "in", tuple(values), negated)
        if self.accept("keyword", "between"):
            low = self.literal()
            self.expect("keyword", "and", "'and' in 'between x and y'")
            return Condition(column, "between", (low, self.literal()), negated)
        raise self.error("a comparison (=, !=, <, <=, >, >=, in, between, is null)")

    def literal(self) -> Literal:
        token = self.current
        if token.kind in ("number", "string"):
            self.index += 1
            return token.value
        raise self.error("a value (a number, or quoted text such as 'Female')")


def parse_count(text: str) -> CountQuery:
    """Parse ``count [where ...]`` into a :class:`CountQuery` (QuerySyntaxError when it does not parse)."""
    if not isinstance(text, str) or not text.strip():
        raise QuerySyntaxError("the query is empty; try e.g. \"count where age between 26 and 32\"")
    return CountQuery(text, _Parser(text).query())
