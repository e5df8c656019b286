"""The perturbation driver: the α-β algorithm on any engine.

Order: what the engine cannot honour (a view path, a ledger) refused before the data is read →
the table read → the budget registered or refused → the plan, the ledger charge and the draw
(:func:`crowdsafe.perturb.perturb`, whose plan is fixed from public domains before the data's
rows are used) → the view and its certificate written. The engine supplies the reading, the
α-β stages and the writing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crowdsafe.drivers.query import with_budget
from crowdsafe.privacy.ledger import LedgerSpec, ledger_for

if TYPE_CHECKING:
    from crowdsafe.engines.protocol import Engine


def plan_perturbation(engine: Engine, data: Any, *, schema: Any = None, missing: Any = "keep",
                      **request: Any) -> Any:
    """:func:`crowdsafe.api.plan_perturbation` on ``engine`` (``request``: attributes, domains,
    max_rows, exploratory, duplicates, failure and the target)."""
    return engine.plan_perturbation(engine.read_source(data, schema=schema, missing=missing), **request)


def perturb(engine: Engine, data: Any, *, schema: Any = None, missing: Any = "keep", out: Any = None,
            certificate: Any = None, ledger: LedgerSpec = None, name: str | None = None,
            budget: tuple[float, float] | None = None, escape_formulas: bool = True, **request: Any) -> Any:
    """:func:`crowdsafe.api.perturb` on ``engine`` (``request``: as :func:`plan_perturbation`,
    with ``randomness``)."""
    engine.check_perturbation(out, ledger)
    source = engine.read_source(data, schema=schema, missing=missing)
    with ledger_for(ledger) as book:
        if book is not None:
            dataset = engine.source_dataset(source)
            with_budget(book, engine.source_identity(source, book), name or dataset.name or "data", budget)
        result = engine.perturb(source, ledger=book, out=out, certificate=certificate, **request)
    engine.write_view(result, out, certificate, escape_formulas=escape_formulas)
    return result
