"""The query driver: a DP query on any engine.

Order: the ``budget`` pair and the query's parameters checked (:func:`check_before_reading`: its
text, ε, δ, its ``domain``..., and the whole plan on the declared schema when it fixes the types
read) → the table read and the query checked against its schema (bad input raises before the
ledger is touched) → a missing budget refused → the ledger charged (a new budget registered in
the charge's own transaction, so a refused query registers none) and the noise drawn by
:func:`crowdsafe.mechanisms.queries.answer_query` (an over-budget query raises before any
noise). A query reading a column the schema declares a direct identifier is refused with the
bad input; with an inferred schema, a column whose name looks like one adds a warning to the
answer's notes (:func:`crowdsafe.data.identifiers.name_warnings`: from the names alone). The
engine supplies the table and the exact aggregate; the mechanism, the charge and the answer are
the same code for every engine.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from crowdsafe.data.identifiers import name_warnings, refuse_identifier_columns
from crowdsafe.errors import LEDGER_REFUSAL, BudgetExceeded, CrowdsafeError, ParameterError
from crowdsafe.privacy.ledger import Ledger, LedgerSpec, ledger_for
from crowdsafe.privacy.ledger_budget import budget_parameter, other_data

if TYPE_CHECKING:
    from crowdsafe.data import Dataset
    from crowdsafe.engines.protocol import Engine
    from crowdsafe.mechanisms.query_plan import QueryAnswer, QueryRequest
    from crowdsafe.randomness import Randomness


def with_budget(book: Ledger, identity: str, label: str, budget: tuple[float, float] | None,
                polars_identity: bool = True) -> None:
    """Register ``budget`` for the table the ledger knows as ``identity`` (keyed), or refuse,
    before anything is read or charged, a table that has no budget yet (``polars_identity``:
    whether the engine that identified it uses the Polars engine's identity, :func:`no_budget_error`)."""
    if budget is not None:
        book.set_budget(identity, label, *budget)
    elif book.budget(identity) is None:
        raise no_budget_for(book, label, polars_identity=polars_identity)


def no_budget_for(book: Ledger, label: str, *, budget_parameter: bool = True, polars_identity: bool = True
                  ) -> CrowdsafeError:
    """The refusal of a table without a budget in ``book``: when its ``label`` is the name of
    another table's budget, that the name belongs to other data (what registering it under the
    name would say: following "set one" would fail so), else :func:`no_budget_error`."""
    if book.budget(label) is not None:  # the name is known, for other rows
        return ParameterError(other_data(label, book.holds_earlier_identities), parameter=("name", "engine"))
    return no_budget_error(label, book.path, budget_parameter=budget_parameter, polars_identity=polars_identity)


def no_budget_error(label: str, path: object, *, budget_parameter: bool = True, polars_identity: bool = True
                    ) -> BudgetExceeded:
    """The refusal of a run on a table with no budget in the ledger at ``path``, naming the table
    by its ``label`` (its file or given name; never by its identity, a digest of the data).
    ``budget_parameter``: whether the caller takes a ``budget`` to register (``report --before``
    does not: it says to set one first). Custodian-only: whether the ledger holds a budget for a
    table is found from its rows, so D may be refused where D plus a row is not.

    On an engine with its own identity (``polars_identity`` False: Spark) the only way is
    ``budget``: ``set_budget`` (``crowdsafe ledger init``) registers a table by the Polars
    engine's identity, which a Spark run does not find, so
    following that advice led to "the name already belongs to other data" (docs/spark.md)."""
    if not polars_identity and budget_parameter:
        return BudgetExceeded(
            f"no privacy budget is set for '{label}' in the ledger {path}; pass budget=(ε, δ) to set one (set_budget "
            "registers a table by the Polars engine's identity, which engine='spark' does not find: docs/spark.md)"
            + LEDGER_REFUSAL, parameter=("budget", "engine"),
        )
    fix = ", or pass budget=(ε, δ)" if budget_parameter else " first, then run this again"
    return BudgetExceeded(
        f"no privacy budget is set for '{label}' in the ledger {path}; set one with "
        f"set_budget('{label}', epsilon=E, delta=D){fix}" + LEDGER_REFUSAL, parameter="budget",
    )


def refuse_a_new_ledger_without_budget(spec: LedgerSpec, label: str, budget: tuple[float, float] | None,
                                       polars_identity: bool = True) -> None:
    """:func:`with_budget`'s refusal, before the ledger is opened, when the ledger file does not
    exist yet and no budget is given: opening it would make an empty ledger only to refuse."""
    if budget is not None or spec is None or isinstance(spec, Ledger):
        return
    from crowdsafe.privacy.ledger_storage import ledger_path

    path = ledger_path(spec)
    if not path.exists():
        raise no_budget_error(label, path, polars_identity=polars_identity)


class BudgetAtCharge:
    """The ledger ``book``, registering the table's ``budget`` at its first charge rather than
    before the run: a run refused after the table is read and before the charge (its plan, an
    exploratory run given a ledger) leaves the ledger as it was, so the user can retry with
    another budget. Everything else is the ledger's own (attribute look-ups pass through)."""

    def __init__(self, book: Ledger, identity: str, label: str, budget: tuple[float, float]) -> None:
        self._book, self._identity, self._label = book, identity, label
        self._budget: tuple[float, float] | None = budget

    def __getattr__(self, name: str) -> Any:
        return getattr(self._book, name)

    def charge(self, *args: Any, **kwargs: Any) -> Any:
        # registered in the charge's own transaction: a refused charge (over the new budget, say)
        # registers nothing either
        if self._budget is not None:
            kwargs["register"] = (self._label, *self._budget)
        return self._book.charge(*args, **kwargs)

    def check(self, *args: Any, **kwargs: Any) -> Any:
        if self._budget is not None:
            kwargs["register"] = (self._label, *self._budget)
        return self._book.check(*args, **kwargs)


def budget_at_charge(book: Ledger, identity: str, label: str, budget: tuple[float, float] | None,
                     polars_identity: bool = True) -> Ledger | BudgetAtCharge:
    """:func:`with_budget`, the registration of a new budget put off to the first charge
    (:class:`BudgetAtCharge`). A table without a budget and none given, or one whose budget is
    already set, is handled by :func:`with_budget` now, before anything is read further."""
    if budget is None or book.budget(identity) is not None:
        with_budget(book, identity, label, budget, polars_identity)
        return book
    return BudgetAtCharge(book, identity, label, budget)


def query(
    engine: Engine,
    data: Any,
    request: QueryRequest,
    *,
    schema: Any = None,
    missing: Any = "keep",
    randomness: Randomness | int | None = None,
    ledger: LedgerSpec = None,
    name: str | None = None,
    budget: tuple[float, float] | None = None,
) -> QueryAnswer:
    """:func:`crowdsafe.api.query` on ``engine``: ``request`` is the query and its public
    parameters (:class:`~crowdsafe.mechanisms.query_plan.QueryRequest`), checked against the
    table's schema before the ledger is touched; ``name`` and ``budget`` register the table's
    budget in the ledger (:func:`with_budget`)."""
    from crowdsafe.data.column_types import reading_only
    from crowdsafe.mechanisms.queries import answer_query, check_query

    budget = budget_parameter(budget)  # a pair of numbers: before the table is read or a ledger made
    check_before_reading(data, request, schema)
    with reading_only(query_columns(request)):  # a column the query does not name is not needed
        source = engine.read_query_source(data, schema=schema, missing=missing, name=name)
    dataset = engine.source_dataset(source)
    aggregate = engine.aggregate(source)
    check_query(dataset, request)
    read = query_columns(request)
    refuse_identifier_columns(dataset.schema, read, "the query")
    warnings = name_warnings(dataset.schema, read)
    refuse_a_new_ledger_without_budget(ledger, name or dataset.name or "data", budget, engine.polars_identity)
    with ledger_for(ledger) as book:
        fingerprint, charged = None, None
        if book is not None:  # a new budget is registered with the charge: a refused query leaves none
            fingerprint = engine.source_identity(source, book)  # the ledger's keyed identity, never shown
            charged = budget_at_charge(book, fingerprint, name or dataset.name or "data", budget,
                                       engine.polars_identity)
        answer = answer_query(dataset, request, randomness=randomness, ledger=cast("Ledger | None", charged),
                              fingerprint=fingerprint, aggregate=aggregate)
    answer.notes.extend(warnings)
    return answer


def check_before_reading(data: Any, request: QueryRequest, schema: Any) -> None:
    """The query's checks that need no row, made before the table is read, so that a parameter
    mistake is refused alike on every table (never replaced by a refusal of the data, such as
    ``missing='error'``'s, on a neighbour): every parameter and the query text
    (:func:`~crowdsafe.mechanisms.queries.check_parameters`), then, when a file is read under a
    declared schema that fixes the type of every column the query reads, the whole plan on a
    table of no rows with the schema's types (a histogram without a public domain, a direct
    identifier read, a cell the column's type cannot hold...)."""
    from crowdsafe.mechanisms.queries import check_parameters, check_query

    check_parameters(request)
    read = query_columns(request)
    shell = declared_shell(data, schema, read)
    if shell is not None:
        check_query(shell, request)
        refuse_identifier_columns(shell.schema, read, "the query")


def declared_shell(data: Any, schema: Any, read: Sequence[str]) -> Dataset | None:
    """A table with no rows typed as the declared ``schema`` (a Schema or a TOML file), when
    ``data`` is a file and the schema fixes the type of every column in ``read`` (and of the
    person identifier) as the reader will read it: categorical and ordinal text, dates, integers,
    reals. Else None (a type left to the values is known only once the table is read)."""
    import polars as pl

    from crowdsafe.data import Dataset, Schema
    from crowdsafe.data.schema import AttributeType, NumberKind

    if not isinstance(data, (str, os.PathLike)) or schema is None:
        return None
    if isinstance(schema, (str, os.PathLike)):
        schema = Schema.from_toml(Path(schema))
    if not isinstance(schema, Schema) or schema.bundled:
        return None
    fixed = {AttributeType.CATEGORICAL: pl.String, AttributeType.ORDINAL: pl.String, AttributeType.DATE: pl.Date}
    numbers = {NumberKind.INTEGER: pl.Int64, NumberKind.REAL: pl.Float64}
    dtypes = {a.name: (numbers.get(a.numbers) if a.numbers is not None else None)
              if a.type is AttributeType.NUMERIC else fixed.get(a.type) for a in schema}
    needed = [*read, *([schema.person_id] if schema.person_id else [])]
    if any(c not in dtypes or dtypes[c] is None or schema.was_inferred(c) for c in needed):
        return None
    frame = pl.DataFrame(schema={name: dtype or pl.String for name, dtype in dtypes.items()})
    return Dataset(frame, schema, {}, "the table")


def query_columns(request: QueryRequest) -> list[str]:
    """The columns ``request`` reads (its column, dimensions, filter and partition), from its text."""
    from crowdsafe.mechanisms.query_language import parse

    parsed = parse(request.query) if isinstance(request.query, str) else request.query
    return list(dict.fromkeys([*parsed.columns, *([request.partition] if request.partition else [])]))
