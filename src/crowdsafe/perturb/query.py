"""Counting queries for the α-β estimator, in the same language as ``crowdsafe query``.

    count [where FILTER]

FILTER is the DP query language's filter (:mod:`crowdsafe.mechanisms.query_language`). The
estimator needs Q ∩ D as a product of per-attribute value sets, so that |Q ∩ D| is a product of
counts and D is never enumerated. A filter is accepted when it is a conjunction (``and``) of
parts that each read one attribute; a part may itself use ``or``, ``not``, ``in`` or ``between``
on that one attribute (``age < 20 or age > 60`` is fine). An ``or`` joining two attributes is
refused with a clear message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from crowdsafe.errors import QuerySyntaxError, SchemaError
from crowdsafe.mechanisms.query_language import And, Filter, compile_filter, filter_columns, parse


@dataclass(frozen=True)
class Condition:
    """One conjunct of a counting query; it reads exactly one attribute."""

    column: str
    filter: Filter

    def expression(self, dtype: pl.DataType) -> pl.Expr:
        """The condition as a Polars boolean expression on its column (of type ``dtype``)."""
        return compile_filter(self.filter, {self.column: dtype})


@dataclass(frozen=True)
class CountQuery:
    """A parsed counting query: the conjunction of its per-attribute conditions."""

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


def _conjuncts(node: Filter | None) -> list[Filter]:
    if node is None:
        return []
    if isinstance(node, And):
        return [part for operand in node.operands for part in _conjuncts(operand)]
    return [node]


def parse_count(text: str) -> CountQuery:
    """Parse ``count [where ...]`` into a :class:`CountQuery` (QuerySyntaxError when it does not
    parse or is not a conjunction of per-attribute conditions)."""
    query = parse(text)
    if query.kind != "count":
        raise QuerySyntaxError(
            f"the alpha-beta estimator answers counting queries ('count where ...'), not '{query.kind}'"
        )
    conditions = []
    for part in _conjuncts(query.where):
        columns = list(dict.fromkeys(filter_columns(part)))
        if len(columns) != 1:
            raise QuerySyntaxError(
                "the alpha-beta estimator answers conjunctions of per-attribute conditions: an 'or' "
                f"(or 'not') across attributes ({', '.join(columns)}) is not supported; "
                "join conditions on different attributes with 'and'"
            )
        conditions.append(Condition(columns[0], part))
    return CountQuery(text, tuple(conditions))
