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
    from crowdsafe.perturb.alpha_beta import Perturbation, PerturbRequest
    from crowdsafe.perturb.view import ViewOutput
    from crowdsafe.privacy.dgamma import AlphaBetaPlan
    from crowdsafe.randomness import Randomness


def plan_perturbation(engine: Engine, data: Any, request: PerturbRequest, *, schema: Any = None,
                      missing: Any = "keep") -> AlphaBetaPlan:
    """:func:`crowdsafe.api.plan_perturbation` on ``engine``: the plan for ``request`` (the
    (d, γ) target and the table's public description)."""
    return engine.plan_perturbation(engine.read_source(data, schema=schema, missing=missing), request)


def perturb(engine: Engine, data: Any, request: PerturbRequest, output: ViewOutput, *, schema: Any = None,
            missing: Any = "keep", randomness: Randomness | int | None = None, ledger: LedgerSpec = None,
            name: str | None = None, budget: tuple[float, float] | None = None) -> Perturbation:
    """:func:`crowdsafe.api.perturb` on ``engine``: ``request`` as :func:`plan_perturbation`,
    ``output`` where the view and its certificate are written; ``name`` and ``budget`` register
    the table's budget in the ledger (:func:`~crowdsafe.drivers.query.with_budget`)."""
    engine.check_perturbation(output.out, ledger)
    source = engine.read_source(data, schema=schema, missing=missing)
    with ledger_for(ledger) as book:
        if book is not None:
            dataset = engine.source_dataset(source)
            with_budget(book, engine.source_identity(source, book), name or dataset.name or "data", budget)
        result = engine.perturb(source, request, randomness=randomness, ledger=book, output=output)
    engine.write_view(result, output)
    return result
